//! Flags: Porch's function runner's (`--port`, `--max-request-body-size`,
//! `--disable-runtimes`, `--log-level`, `--functions`, `--config`,
//! `--enable-private-registries`, `--registry-auth-secret-path`) plus the sandbox's.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;

use crate::exec_config::ExecEvaluator;
use crate::service::EvaluatorOptions;

/// The runtime name Porch uses for its executable evaluator.
const EXEC: &str = "exec";
/// Porch's name for its pod evaluator; here the sandboxed container runtime takes its place.
const POD: &str = "pod";

#[derive(Debug, Parser)]
#[command(
    name = "porch-fn-runner",
    version,
    about = "Porch's function-runner gRPC service"
)]
pub struct Args {
    /// The server port (0: any free port, printed on stdout).
    #[arg(long, default_value_t = 9445)]
    pub port: u16,

    /// The address to listen on (Porch listens on all interfaces).
    #[arg(long, default_value = "0.0.0.0")]
    pub bind_address: IpAddr,

    /// Maximum size of gRPC messages in bytes, received and sent. Keep in sync with
    /// porch-server's `--max-request-body-size`.
    #[arg(long, default_value_t = porch_fn_proto::wire::DEFAULT_MAX_MESSAGE_BYTES)]
    pub max_request_body_size: usize,

    /// The runtime(s) to disable, separated by `,`: `exec`, `pod` (the container sandbox).
    #[arg(long, default_value = "")]
    pub disable_runtimes: String,

    /// The verbosity of the logs (0-5; `RUST_LOG` overrides it).
    #[arg(long, default_value_t = 2)]
    pub log_level: u8,

    /// Directory of the exec runtime's function binaries.
    #[arg(long, default_value = "./functions")]
    pub functions: PathBuf,

    /// The exec runtime's configuration (`functions: [{function, images}]`): which binary
    /// under `--functions` runs which images. Without it the exec runtime has no functions.
    #[arg(long)]
    pub config: Option<PathBuf>,

    /// Where pulled function images are unpacked.
    #[arg(
        long,
        env = "PORCH_FUNCTION_CACHE_DIR",
        default_value = "./function-images"
    )]
    pub function_cache_dir: PathBuf,

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

    /// Pull function images with the credentials of `--registry-auth-secret-path` (Porch's
    /// flag; without it the docker config of `$DOCKER_CONFIG` or `~/.docker` is used). The
    /// gRPC request carries no credentials, so FunctionConfig pull Secrets do not reach a
    /// runner: its docker config must hold every private registry's login.
    #[arg(long)]
    pub enable_private_registries: bool,

    /// The docker config (`.dockerconfigjson` of a mounted `kubernetes.io/dockerconfigjson`
    /// Secret) read with `--enable-private-registries`.
    #[arg(long, default_value = "/var/tmp/config-secret/.dockerconfigjson")]
    pub registry_auth_secret_path: PathBuf,

    /// Let function containers use the network (off: they get no network at all).
    #[arg(long)]
    pub allow_function_network: bool,

    /// Address-space limit of one function container, in MiB (0: none).
    #[arg(long, default_value_t = 2048)]
    pub function_memory_mb: u64,

    /// Longest one evaluation may run, in seconds; a caller's gRPC deadline shortens it.
    #[arg(long, default_value_t = 300)]
    pub function_timeout_seconds: u64,

    /// Most resources one function may output; 0 is unlimited.
    #[arg(long, default_value_t = 250_000)]
    pub max_output_resources: usize,
}

impl Args {
    /// The tracing filter for `--log-level` (klog's 0-5 mapped onto levels).
    pub fn log_filter(&self) -> &'static str {
        match self.log_level {
            0 => "error",
            1 => "warn",
            2 | 3 => "info",
            4 => "debug",
            _ => "trace",
        }
    }

    fn disabled(&self, name: &str) -> bool {
        self.disable_runtimes.split(',').any(|r| r.trim() == name)
    }

    /// Built-ins, then exec, then the container sandbox: porch-server's order in process.
    pub fn runtimes(&self) -> anyhow::Result<kpt::runtime::Runtimes> {
        let mut runtimes = kpt::runtime::Runtimes::new().with(krm_functions::Builtins);
        if !self.disabled(EXEC)
            && let Some(config) = &self.config
        {
            let exec = ExecEvaluator::load(config, &self.functions)
                .with_context(|| "failed to initialize executable evaluator")?;
            runtimes = runtimes.with(exec);
        }
        if !self.disabled(POD) {
            let mut options = fn_container::ContainerOptions::new(&self.function_cache_dir);
            options.max_cache_bytes = self.function_cache_max_mb.saturating_mul(1 << 20);
            options.insecure_registries = self.insecure_registries.clone();
            if self.enable_private_registries {
                options.docker_config = Some(self.registry_auth_secret_path.clone());
            }
            options.allow_network = self.allow_function_network;
            options.memory_limit = (self.function_memory_mb > 0)
                .then(|| self.function_memory_mb.saturating_mul(1 << 20));
            runtimes = runtimes.with(fn_container::LazyContainerRuntime::new(options));
        }
        Ok(runtimes)
    }

    pub fn evaluator_options(&self) -> EvaluatorOptions {
        EvaluatorOptions {
            timeout: Duration::from_secs(self.function_timeout_seconds),
            max_output_bytes: self.max_request_body_size,
            max_output_items: (self.max_output_resources > 0).then_some(self.max_output_resources),
        }
    }
}
