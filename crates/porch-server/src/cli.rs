//! Command-line flags.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::BoolishValueParser;
use clap::{ArgAction, Parser, Subcommand, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// The Porch API server. With no flags it runs standalone: data under ./.porch, HTTPS on
/// 127.0.0.1:9443, and a kubeconfig at ./.porch/kubeconfig for kubectl and porchctl.
#[derive(Debug, Clone, Parser)]
#[command(name = "porch-server", version)]
pub struct Args {
    /// Directory holding the store, the certificates, the admin token and the kubeconfig.
    #[arg(long, env = "PORCH_DATA_DIR", default_value = ".porch", global = true)]
    pub data_dir: PathBuf,

    /// Address to listen on (port 0 picks a free port; the kubeconfig records the real one).
    #[arg(long, env = "PORCH_LISTEN", default_value = "127.0.0.1:9443")]
    pub listen: SocketAddr,

    /// Serve plain HTTP instead of HTTPS. Only allowed on a loopback address.
    #[arg(long)]
    pub insecure_http: bool,

    /// `RBAC` enforces the `rbac.authorization.k8s.io` objects on every request (members of
    /// `system:masters`, such as the admin token's holder, may do everything); `AlwaysAllow`
    /// lets every authenticated request in.
    #[arg(long, default_value = "RBAC", value_parser = ["RBAC", "AlwaysAllow"])]
    pub authorization_mode: String,

    /// Serving certificate (PEM). Without it a local CA and certificate are generated.
    #[arg(long, requires = "tls_key_file")]
    pub tls_cert_file: Option<PathBuf>,

    /// Private key of --tls-cert-file (PEM).
    #[arg(long, requires = "tls_cert_file")]
    pub tls_key_file: Option<PathBuf>,

    /// CA that signed --tls-cert-file, written into the kubeconfig for clients.
    #[arg(long)]
    pub tls_ca_file: Option<PathBuf>,

    /// Where to write the kubeconfig (default: <data-dir>/kubeconfig).
    #[arg(long, global = true)]
    pub kubeconfig_out: Option<PathBuf>,

    /// Bearer tokens of users, in kube-apiserver's CSV format (`token,user,uid,"g1,g2"`);
    /// re-read when the file changes.
    #[arg(long)]
    pub token_auth_file: Option<PathBuf>,

    /// CA whose client certificates authenticate (CN = user, O = groups). Default: the local
    /// CA, when the server generated its own certificate.
    #[arg(long)]
    pub client_ca_file: Option<PathBuf>,

    /// Requests without credentials are `system:anonymous` (group `system:unauthenticated`)
    /// instead of 401. Off by default, unlike kube-apiserver (see COMPATIBILITY.md).
    #[arg(
        long,
        action = ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        default_value = "false",
        value_parser = BoolishValueParser::new(),
    )]
    pub anonymous_auth: bool,

    /// `iss` of the ServiceAccount tokens this server issues.
    #[arg(long, default_value = "https://porch-server.local")]
    pub service_account_issuer: String,

    /// Audiences a token must name to authenticate here (default: the ServiceAccount issuer).
    #[arg(long, value_delimiter = ',')]
    pub api_audiences: Vec<String>,

    /// OIDC issuer URL (https; http only on a loopback host). Enables OIDC ID tokens.
    #[arg(long, requires = "oidc_client_id")]
    pub oidc_issuer_url: Option<String>,

    /// The audience (`aud`) ID tokens must carry.
    #[arg(long, requires = "oidc_issuer_url")]
    pub oidc_client_id: Option<String>,

    /// The claim naming the user.
    #[arg(long, default_value = "sub")]
    pub oidc_username_claim: String,

    /// Put before user names (default `<issuer>#` unless the claim is `email`; `-` for none).
    #[arg(long)]
    pub oidc_username_prefix: Option<String>,

    /// The claim listing the user's groups.
    #[arg(long)]
    pub oidc_groups_claim: Option<String>,

    /// Put before every group name.
    #[arg(long, default_value = "")]
    pub oidc_groups_prefix: String,

    /// CA of the issuer's HTTPS endpoint (default: the system roots).
    #[arg(long)]
    pub oidc_ca_file: Option<PathBuf>,

    /// The issuer's key set (JWKS) from a file instead of its discovery document (offline).
    #[arg(long)]
    pub oidc_jwks_file: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Option<Command>,

    /// Largest request body accepted, in bytes (413 beyond).
    #[arg(long, default_value_t = 6 * 1024 * 1024)]
    pub max_request_body_size: usize,

    /// The metadata store: `redb` (an embedded file under --data-dir) or a PostgreSQL URL
    /// (`postgres://user@host:port/db`), which several replicas can share.
    #[arg(long, env = "PORCH_STORE", default_value = "redb")]
    pub store: String,

    /// Connections each replica keeps to PostgreSQL at most.
    #[arg(long, default_value_t = 16)]
    pub store_max_connections: usize,

    /// How many store events are kept for watch resumption (older resourceVersions get 410).
    #[arg(long, default_value_t = 50_000)]
    pub event_retention: u64,

    /// Page cache of the store, in MiB.
    #[arg(long, default_value_t = 64)]
    pub store_cache_mb: usize,

    /// Seconds to let open requests finish on SIGTERM before closing them.
    #[arg(long, default_value_t = 10)]
    pub shutdown_grace_seconds: u64,

    /// Let Kptfile pipelines run `exec:` functions (any executable on this machine, as the
    /// server's user). Off by default: package content would otherwise choose what runs.
    #[arg(long)]
    pub allow_exec_functions: bool,

    /// Where pulled function images are unpacked (default: `<data-dir>/function-images`).
    #[arg(long, env = "PORCH_FUNCTION_CACHE_DIR")]
    pub function_cache_dir: Option<std::path::PathBuf>,

    /// Bound of the function image cache in MiB (least recently used images are evicted).
    #[arg(long, default_value_t = 10 * 1024)]
    pub function_cache_max_mb: u64,

    /// A registry (`host[:port]`) reached over plain HTTP; repeatable. Loopback registries
    /// always are.
    #[arg(
        long = "insecure-registry",
        env = "PORCH_INSECURE_REGISTRIES",
        value_delimiter = ','
    )]
    pub insecure_registries: Vec<String>,

    /// Let function containers use the network (off: they get no network at all).
    #[arg(long)]
    pub allow_function_network: bool,

    /// Send every image function of server-side rendering to this function runner
    /// (`host:port` or `http://host:port`, Porch's `evaluator.FunctionEvaluator` gRPC API:
    /// `porch-fn-runner` or Porch's function runner) instead of running it in process.
    /// `exec:` functions still run here (when allowed).
    #[arg(long, env = "PORCH_FUNCTION_RUNNER")]
    pub function_runner: Option<String>,

    /// Address-space limit of one function container, in MiB (0: none).
    #[arg(long, default_value_t = 2048)]
    pub function_memory_mb: u64,

    /// Directory relative FunctionConfig `binaryExecutor` paths are found in (Porch's
    /// function-runner `--functions`); default `<data-dir>/functions`.
    #[arg(long, env = "PORCH_FUNCTIONS_DIR")]
    pub functions_dir: Option<std::path::PathBuf>,

    /// Also keep every draft and proposed revision on a Porch-layout git branch
    /// (`drafts/<package>/<workspace>`, `proposed/<package>/<workspace>`), as Porch's
    /// `--db-push-drafts-to-git`. The store stays the source of truth: a failed push does
    /// not fail the request, it is retried. `--db-push-drafts-to-git` is accepted too.
    #[arg(
        long,
        alias = "db-push-drafts-to-git",
        env = "PORCH_PUSH_DRAFTS_TO_GIT",
        action = ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        default_value = "false",
        value_parser = BoolishValueParser::new(),
    )]
    pub push_drafts_to_git: bool,

    /// Wall-clock budget of one render (create, resources update, metadata edit, propose),
    /// in seconds; 0 is unlimited. A render over it fails (422) and saves nothing.
    #[arg(long, env = "PORCH_RENDER_TIMEOUT_SECONDS", default_value_t = 60)]
    pub render_timeout_seconds: u64,

    /// Most resources one pipeline function may output; 0 is unlimited.
    #[arg(long, default_value_t = 250_000)]
    pub render_max_resources: usize,

    /// Most bytes one exec function may write on stdout; 0 is unlimited.
    #[arg(long, default_value_t = 512 << 20)]
    pub render_max_output_bytes: usize,

    /// Most heap, in MiB, one starlark program may use; 0 is unlimited.
    #[arg(long, default_value_t = 1024)]
    pub render_max_memory_mb: usize,

    /// Most steps (calls and loop iterations) one starlark program may take; 0 is unlimited.
    #[arg(long, default_value_t = 0)]
    pub render_max_steps: u64,

    /// Wall-clock limit of one git network command (ls-remote, fetch, clone, push): a remote
    /// that does not answer within it marks its Repository not Ready. Seconds, or a number
    /// with `ms`, `s` or `m`.
    #[arg(long, env = "PORCH_GIT_TIMEOUT", default_value = "20s", value_parser = parse_duration)]
    pub git_timeout: Duration,

    /// How long an Event is kept after its last occurrence (kube-apiserver's `--event-ttl`).
    /// Seconds, or a number with `ms`, `s` or `m`.
    #[arg(long, default_value = "60m", value_parser = parse_duration)]
    pub event_ttl: Duration,

    /// Log format on stderr.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// `audit.k8s.io/v1` Policy deciding what is audited and at which level (with
    /// --audit-log-path; without a policy nothing is audited).
    #[arg(long)]
    pub audit_policy_file: Option<PathBuf>,

    /// Where audit events are written as JSON lines; `-` is standard output.
    #[arg(long)]
    pub audit_log_path: Option<PathBuf>,

    /// Size in megabytes (MiB; fractions allowed) at which the audit log is rotated
    /// (0: never).
    #[arg(long, default_value_t = 100.0)]
    pub audit_log_maxsize: f64,

    /// Rotated audit logs kept (0: all, as kube-apiserver).
    #[arg(long, default_value_t = 0)]
    pub audit_log_maxbackup: usize,

    /// A directory under which `file://` and plain-path repository URLs are allowed;
    /// repeatable. None by default: such a URL would let anyone who may register a
    /// Repository read any git repository this server's user can read.
    #[arg(long = "allow-local-repositories", value_name = "DIR")]
    pub allow_local_repositories: Vec<PathBuf>,
}

/// Commands besides serving.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Users authenticated by client certificates of the local CA.
    #[command(subcommand)]
    Users(UsersCommand),
}

#[derive(Debug, Clone, Subcommand)]
pub enum UsersCommand {
    /// Issues a client certificate (CN = name, O = groups) and writes a kubeconfig for it.
    Add {
        name: String,
        /// A group of the user; repeatable.
        #[arg(long = "group")]
        groups: Vec<String>,
        /// Validity of the certificate, in days.
        #[arg(long, default_value_t = 365)]
        days: u32,
        /// Where to write the kubeconfig (default: `<data-dir>/users/<name>.kubeconfig`).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

impl Args {
    /// The render budget the flags describe (0 meaning unlimited).
    pub fn render_limits(&self) -> porch_engine::RenderLimits {
        let some = |n: usize| (n > 0).then_some(n);
        porch_engine::RenderLimits {
            timeout: (self.render_timeout_seconds > 0)
                .then(|| std::time::Duration::from_secs(self.render_timeout_seconds)),
            max_output_items: some(self.render_max_resources),
            max_output_bytes: some(self.render_max_output_bytes),
            max_memory_bytes: some(self.render_max_memory_mb.saturating_mul(1 << 20)),
            max_steps: (self.render_max_steps > 0).then_some(self.render_max_steps),
        }
    }
}

/// `20`, `20s`, `500ms`, `2m`; at least 1 ms.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (number, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (e.g. 20s, 500ms, 2m)"))?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.saturating_mul(60)),
        _ => return Err(format!("{s:?}: unit must be ms, s or m")),
    };
    if d.is_zero() {
        return Err("the timeout must be positive".into());
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_timeout_defaults_to_20s_and_takes_units() {
        let t = |args: &[&str]| {
            let mut all = vec!["porch-server"];
            all.extend_from_slice(args);
            Args::try_parse_from(all).map(|a| a.git_timeout)
        };
        assert_eq!(t(&[]).ok(), Some(Duration::from_secs(20)));
        assert_eq!(
            t(&["--git-timeout", "5"]).ok(),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            t(&["--git-timeout=750ms"]).ok(),
            Some(Duration::from_millis(750))
        );
        assert_eq!(
            t(&["--git-timeout", "2m"]).ok(),
            Some(Duration::from_secs(120))
        );
        assert!(t(&["--git-timeout", "0"]).is_err());
        assert!(t(&["--git-timeout", "soon"]).is_err());
        assert!(t(&["--git-timeout", "3h"]).is_err());
    }

    #[test]
    fn event_ttl_defaults_to_kubes_hour() {
        let t = |args: &[&str]| {
            let mut all = vec!["porch-server"];
            all.extend_from_slice(args);
            Args::try_parse_from(all).map(|a| a.event_ttl)
        };
        assert_eq!(t(&[]).ok(), Some(Duration::from_secs(3600)));
        assert_eq!(
            t(&["--event-ttl", "5m"]).ok(),
            Some(Duration::from_secs(300))
        );
        assert!(t(&["--event-ttl", "0"]).is_err());
    }

    #[test]
    fn anonymous_auth_is_off_unless_asked_for() {
        let parse = |args: &[&str]| {
            let mut all = vec!["porch-server"];
            all.extend_from_slice(args);
            Args::try_parse_from(all).map(|a| a.anonymous_auth)
        };
        assert_eq!(parse(&[]).ok(), Some(false));
        assert_eq!(parse(&["--anonymous-auth"]).ok(), Some(true));
        assert_eq!(parse(&["--anonymous-auth=false"]).ok(), Some(false));
        // OIDC needs both the issuer and the client id.
        assert!(
            Args::try_parse_from(["porch-server", "--oidc-issuer-url", "https://idp"]).is_err()
        );
    }

    #[test]
    fn users_add_takes_groups_and_a_global_data_dir() {
        let a = Args::try_parse_from([
            "porch-server",
            "users",
            "add",
            "alice",
            "--group",
            "a",
            "--group",
            "b",
            "--data-dir",
            "/tmp/x",
        ])
        .expect("valid arguments");
        assert_eq!(a.data_dir, PathBuf::from("/tmp/x"));
        match a.command {
            Some(Command::Users(UsersCommand::Add {
                name, groups, days, ..
            })) => {
                assert_eq!(name, "alice");
                assert_eq!(groups, vec!["a", "b"]);
                assert_eq!(days, 365);
            }
            other => panic!("{other:?}"),
        }
    }

    fn push(args: &[&str]) -> bool {
        let mut all = vec!["porch-server"];
        all.extend_from_slice(args);
        Args::try_parse_from(all)
            .expect("valid arguments")
            .push_drafts_to_git
    }

    #[test]
    fn push_drafts_to_git_takes_porch_spellings() {
        assert!(!push(&[]));
        assert!(push(&["--push-drafts-to-git"]));
        assert!(push(&["--push-drafts-to-git=true"]));
        assert!(!push(&["--push-drafts-to-git=false"]));
        assert!(push(&["--db-push-drafts-to-git=true"]));
        assert!(push(&["--db-push-drafts-to-git", "--insecure-http"]));
        assert!(Args::try_parse_from(["porch-server", "--push-drafts-to-git=maybe"]).is_err());
    }
}
