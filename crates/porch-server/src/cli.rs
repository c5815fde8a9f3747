//! Command-line flags.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::BoolishValueParser;
use clap::{ArgAction, Parser, ValueEnum};

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
    #[arg(long, env = "PORCH_DATA_DIR", default_value = ".porch")]
    pub data_dir: PathBuf,

    /// Address to listen on (port 0 picks a free port; the kubeconfig records the real one).
    #[arg(long, env = "PORCH_LISTEN", default_value = "127.0.0.1:9443")]
    pub listen: SocketAddr,

    /// Serve plain HTTP instead of HTTPS. Only allowed on a loopback address.
    #[arg(long)]
    pub insecure_http: bool,

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
    #[arg(long)]
    pub kubeconfig_out: Option<PathBuf>,

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

    /// Address-space limit of one function container, in MiB (0: none).
    #[arg(long, default_value_t = 2048)]
    pub function_memory_mb: u64,

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
