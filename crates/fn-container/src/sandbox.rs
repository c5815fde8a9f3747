//! The bubblewrap command line that runs an image's entrypoint.
//!
//! The rootfs is bound read-only as `/`, with a fresh `/proc`, a minimal `/dev` and a
//! private tmpfs `/tmp`; every namespace is unshared (network too, unless allowed), the
//! process gets its own session (no terminal injection) and dies with its parent, the
//! environment is exactly the image's, and all capabilities are dropped. The memory limit
//! is RLIMIT_AS set by util-linux `prlimit` before bwrap starts: it is inherited by every
//! process of the sandbox and needs no privileges, where cgroups would need a writable
//! delegated hierarchy that servers in containers rarely have.

use std::path::Path;

use crate::image::RunConfig;

/// How one function is sandboxed.
#[derive(Debug, Clone)]
pub struct SandboxOptions {
    /// The bwrap program.
    pub bwrap: String,
    /// The function may use the host's network.
    pub allow_network: bool,
    /// RLIMIT_AS for the function's processes.
    pub memory_limit: Option<u64>,
}

/// argv of the sandboxed run of `config`'s entrypoint inside `rootfs`.
pub fn command(
    rootfs: &Path,
    config: &RunConfig,
    uid: u32,
    gid: u32,
    options: &SandboxOptions,
) -> Vec<String> {
    let mut argv: Vec<String> = Vec::new();
    if let Some(limit) = options.memory_limit {
        argv.extend(["prlimit".into(), format!("--as={limit}"), "--".into()]);
    }
    argv.push(options.bwrap.clone());
    argv.push("--unshare-all".into());
    if options.allow_network {
        argv.push("--share-net".into());
    }
    let rootfs = rootfs.to_string_lossy().into_owned();
    for a in [
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        &rootfs,
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "--clearenv",
    ] {
        argv.push(a.to_string());
    }
    for (k, v) in config.env() {
        argv.extend(["--setenv".into(), k, v]);
    }
    argv.extend([
        "--uid".into(),
        uid.to_string(),
        "--gid".into(),
        gid.to_string(),
        "--chdir".into(),
        config.working_dir().to_string(),
        "--".into(),
    ]);
    argv.extend(config.argv());
    argv
}

/// One word quoted so that kpt's exec command splitter gives it back unchanged.
pub fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_the_exec_splitter() {
        let words = ["a b", "it's", "", "$HOME", "\"q\"", "back\\slash"];
        let line = words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ");
        assert_eq!(
            kpt::runtime::exec::split_command(&line).expect("valid"),
            words.to_vec()
        );
    }

    #[test]
    fn network_and_memory_are_options() {
        let config = RunConfig {
            entrypoint: Some(vec!["/fn".into()]),
            ..RunConfig::default()
        };
        let base = SandboxOptions {
            bwrap: "bwrap".into(),
            allow_network: false,
            memory_limit: None,
        };
        let argv = command(Path::new("/r"), &config, 1, 2, &base);
        assert_eq!(argv.first().map(String::as_str), Some("bwrap"));
        assert!(!argv.contains(&"--share-net".to_string()));
        assert_eq!(argv.last().map(String::as_str), Some("/fn"));
        let argv = command(
            Path::new("/r"),
            &config,
            1,
            2,
            &SandboxOptions {
                allow_network: true,
                memory_limit: Some(1 << 20),
                ..base
            },
        );
        assert_eq!(&argv[..2], &["prlimit", "--as=1048576"]);
        assert!(argv.contains(&"--share-net".to_string()));
    }
}
