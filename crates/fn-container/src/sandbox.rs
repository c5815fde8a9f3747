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
    /// kpt's `--env`: set over the image's environment.
    pub env: Vec<EnvVar>,
    /// kpt's `--mount`: host paths and tmpfs made visible to the function.
    pub mounts: Vec<StorageMount>,
}

/// One `--env` item: `KEY=VALUE`, or `KEY` alone (docker's `-e KEY`: the host's value
/// when it has one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvVar {
    /// `KEY=VALUE`.
    Set(String, String),
    /// `KEY`: exported from the host's environment.
    Export(String),
}

/// kpt's `NewContainerEnvFromStringSlice` + kyaml's `GetDockerFlags`: each `KEY=VALUE`
/// (split at the first `=`, a later one for the same key winning) in key order, then
/// each bare `KEY` in the order given.
pub fn parse_env(items: &[String]) -> Vec<EnvVar> {
    let mut set = std::collections::BTreeMap::new();
    let mut export = Vec::new();
    for item in items {
        match item.split_once('=') {
            Some((k, v)) => {
                set.insert(k.to_string(), v.to_string());
            }
            None => export.push(EnvVar::Export(item.clone())),
        }
    }
    set.into_iter()
        .map(|(k, v)| EnvVar::Set(k, v))
        .chain(export)
        .collect()
}

/// kyaml's `runtimeutil.StorageMount`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StorageMount {
    /// `type=`: `bind`, `volume` or `tmpfs`.
    pub mount_type: String,
    /// `src=`/`source=`.
    pub src: String,
    /// `dst=`/`target=`.
    pub dst: String,
    /// `rw=true`; mounts are read-only otherwise.
    pub read_write: bool,
}

impl StorageMount {
    /// kyaml's `StringToStorageMount`: comma-separated `key=value` options; unknown
    /// keys and options without `=` are ignored, nothing is refused here.
    pub fn parse(s: &str) -> StorageMount {
        let mut m = StorageMount::default();
        for option in s.split(',') {
            let Some((key, value)) = option.split_once('=') else {
                continue;
            };
            match key {
                "type" => m.mount_type = value.to_string(),
                "src" | "source" => m.src = value.to_string(),
                "dst" | "target" => m.dst = value.to_string(),
                "rw" if value == "true" => m.read_write = true,
                _ => {}
            }
        }
        m
    }

    /// The bwrap arguments for this mount, or why it cannot be made: a bind mount of
    /// a host path (read-only unless `rw=true`; a relative source is taken from the
    /// working directory, as the docker CLI does) or a private tmpfs. Named docker
    /// volumes have no equivalent here.
    pub fn bwrap_args(&self) -> Result<Vec<String>, String> {
        if self.dst.is_empty() || !self.dst.starts_with('/') {
            return Err(format!(
                "invalid mount target {:?}: mount path must be absolute",
                self.dst
            ));
        }
        match self.mount_type.as_str() {
            "bind" => {
                if self.src.is_empty() {
                    return Err(
                        "invalid mount config for type \"bind\": field Source must not be empty"
                            .into(),
                    );
                }
                let src = std::path::absolute(&self.src)
                    .map_err(|e| format!("invalid mount source {:?}: {e}", self.src))?;
                let flag = if self.read_write {
                    "--bind"
                } else {
                    "--ro-bind"
                };
                Ok(vec![
                    flag.into(),
                    src.to_string_lossy().into_owned(),
                    self.dst.clone(),
                ])
            }
            "tmpfs" => Ok(vec!["--tmpfs".into(), self.dst.clone()]),
            other => Err(format!(
                "mount type {other:?} is not supported (only bind and tmpfs mounts are)"
            )),
        }
    }
}

/// argv of the sandboxed run of `config`'s entrypoint inside `rootfs`; an error when a
/// mount cannot be made.
pub fn command(
    rootfs: &Path,
    config: &RunConfig,
    uid: u32,
    gid: u32,
    options: &SandboxOptions,
) -> Result<Vec<String>, String> {
    // Checked before anything else is read: a mount that cannot be made fails the run.
    let mount_args: Vec<String> = options
        .mounts
        .iter()
        .map(StorageMount::bwrap_args)
        .collect::<Result<Vec<_>, _>>()?
        .concat();
    let mut argv: Vec<String> = Vec::new();
    if let Some(limit) = options.memory_limit {
        argv.extend(["prlimit".into(), format!("--as={limit}"), "--".into()]);
    }
    argv.push(options.bwrap.clone());
    argv.push("--unshare-all".into());
    if options.allow_network {
        argv.push("--share-net".into());
    }
    for a in ["--die-with-parent", "--new-session", "--cap-drop", "ALL"] {
        argv.push(a.to_string());
    }
    if options.mounts.is_empty() {
        argv.extend([
            "--ro-bind".into(),
            rootfs.to_string_lossy().into_owned(),
            "/".into(),
        ]);
    } else {
        // The read-only image root has no mount points for the user's targets (docker
        // makes them in the container's layer): build `/` as a tmpfs holding the
        // image's top-level entries, bound read-only, and make it read-only once the
        // mounts are in place.
        argv.extend(["--tmpfs".into(), "/".into()]);
        argv.extend(root_entries(rootfs)?);
    }
    for a in ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"] {
        argv.push(a.to_string());
    }
    argv.extend(mount_args);
    if !options.mounts.is_empty() {
        argv.extend(["--remount-ro".into(), "/".into()]);
    }
    argv.push("--clearenv".into());
    for (k, v) in config.env() {
        argv.extend(["--setenv".into(), k, v]);
    }
    for e in &options.env {
        match e {
            EnvVar::Set(k, v) => argv.extend(["--setenv".into(), k.clone(), v.clone()]),
            EnvVar::Export(k) => match std::env::var(k) {
                Ok(v) => argv.extend(["--setenv".into(), k.clone(), v]),
                Err(_) => argv.extend(["--unsetenv".into(), k.clone()]),
            },
        }
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
    Ok(argv)
}

/// bwrap arguments recreating each top-level entry of `rootfs` under `/`: symlinks as
/// symlinks, everything else bound read-only (sorted, for a stable command line).
fn root_entries(rootfs: &Path) -> Result<Vec<String>, String> {
    let read = |e: std::io::Error| format!("reading the image root {}: {e}", rootfs.display());
    let mut names = std::fs::read_dir(rootfs)
        .map_err(read)?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(read)?;
    names.sort();
    let mut args = Vec::new();
    for name in names {
        let host = rootfs.join(&name);
        let inside = format!("/{}", name.to_string_lossy());
        match std::fs::read_link(&host) {
            Ok(target) => {
                args.extend([
                    "--symlink".into(),
                    target.to_string_lossy().into_owned(),
                    inside,
                ]);
            }
            Err(_) => args.extend([
                "--ro-bind".into(),
                host.to_string_lossy().into_owned(),
                inside,
            ]),
        }
    }
    Ok(args)
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
            env: Vec::new(),
            mounts: Vec::new(),
        };
        let argv = command(Path::new("/r"), &config, 1, 2, &base).expect("argv");
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
        )
        .expect("argv");
        assert_eq!(&argv[..2], &["prlimit", "--as=1048576"]);
        assert!(argv.contains(&"--share-net".to_string()));
    }

    fn base() -> SandboxOptions {
        SandboxOptions {
            bwrap: "bwrap".into(),
            allow_network: false,
            memory_limit: None,
            env: Vec::new(),
            mounts: Vec::new(),
        }
    }

    fn config() -> RunConfig {
        RunConfig {
            entrypoint: Some(vec!["/fn".into()]),
            env: Some(vec!["A=image".into(), "B=image".into()]),
            ..RunConfig::default()
        }
    }

    /// The pairs `--setenv K V` of an argv, in order.
    fn setenvs(argv: &[String]) -> Vec<(String, String)> {
        argv.windows(3)
            .filter(|w| w[0] == "--setenv")
            .map(|w| (w[1].clone(), w[2].clone()))
            .collect()
    }

    #[test]
    fn env_items_are_sorted_pairs_then_exports_and_override_the_image() {
        let items: Vec<String> = ["Z=1", "A=x=y", "HOME_OF_NOBODY", "A=2"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            parse_env(&items),
            vec![
                EnvVar::Set("A".into(), "2".into()),
                EnvVar::Set("Z".into(), "1".into()),
                EnvVar::Export("HOME_OF_NOBODY".into()),
            ]
        );
        let argv = command(
            Path::new("/r"),
            &config(),
            1,
            2,
            &SandboxOptions {
                env: parse_env(&["A=flag".to_string()]),
                ..base()
            },
        )
        .expect("argv");
        // The flag's value comes after the image's, so it is the one the process sees.
        let set = setenvs(&argv);
        let a: Vec<_> = set.iter().filter(|(k, _)| k == "A").collect();
        assert_eq!(a.last().map(|(_, v)| v.as_str()), Some("flag"));
        assert!(set.contains(&("B".into(), "image".into())));
    }

    #[test]
    fn a_bare_key_takes_the_hosts_value_or_unsets_it() {
        let path = std::env::var("PATH").expect("PATH is set for tests");
        let argv = command(
            Path::new("/r"),
            &config(),
            1,
            2,
            &SandboxOptions {
                env: parse_env(&["PATH".into(), "PORCH_SURELY_UNSET_VAR_42".into()]),
                ..base()
            },
        )
        .expect("argv");
        assert!(setenvs(&argv).contains(&("PATH".into(), path)));
        let unset = argv
            .windows(2)
            .any(|w| w[0] == "--unsetenv" && w[1] == "PORCH_SURELY_UNSET_VAR_42");
        assert!(unset, "{argv:?}");
    }

    #[test]
    fn mounts_parse_as_kyaml_does() {
        assert_eq!(
            StorageMount::parse("type=bind,source=/a,target=/b,rw=true"),
            StorageMount {
                mount_type: "bind".into(),
                src: "/a".into(),
                dst: "/b".into(),
                read_write: true,
            }
        );
        let m = StorageMount::parse("type=bind,src=/a,dst=/b,rw=false,junk,x=y");
        assert!(!m.read_write);
        assert_eq!((m.src.as_str(), m.dst.as_str()), ("/a", "/b"));
    }

    #[test]
    fn bind_mounts_are_read_only_unless_rw_and_tmpfs_is_private() {
        let ro = StorageMount::parse("type=bind,src=/data,dst=/in");
        assert_eq!(
            ro.bwrap_args(),
            Ok(vec!["--ro-bind".into(), "/data".into(), "/in".into()])
        );
        let rw = StorageMount::parse("type=bind,src=/data,dst=/in,rw=true");
        assert_eq!(
            rw.bwrap_args(),
            Ok(vec!["--bind".into(), "/data".into(), "/in".into()])
        );
        let tmp = StorageMount::parse("type=tmpfs,dst=/scratch");
        assert_eq!(
            tmp.bwrap_args(),
            Ok(vec!["--tmpfs".into(), "/scratch".into()])
        );
        let rel = StorageMount::parse("type=bind,src=data,dst=/in");
        let args = rel.bwrap_args().expect("relative source");
        assert!(Path::new(&args[1]).is_absolute() && args[1].ends_with("/data"));
    }

    #[test]
    fn mounts_that_cannot_be_made_are_refused() {
        for (spec, why) in [
            ("type=volume,src=v,dst=/in", "not supported"),
            ("type=bind,src=/a,dst=in", "must be absolute"),
            ("type=bind,src=/a", "must be absolute"),
            ("type=bind,dst=/in", "Source must not be empty"),
        ] {
            let e = StorageMount::parse(spec).bwrap_args().expect_err(spec);
            assert!(e.contains(why), "{spec}: {e}");
        }
        let e = command(
            Path::new("/r"),
            &config(),
            1,
            2,
            &SandboxOptions {
                mounts: vec![StorageMount::parse("type=volume,src=v,dst=/in")],
                ..base()
            },
        )
        .expect_err("volume");
        assert!(e.contains("volume"));
    }

    #[test]
    fn mounts_come_after_the_root_and_before_the_entrypoint() {
        let root = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(root.path().join("bin")).expect("mkdir");
        std::os::unix::fs::symlink("bin", root.path().join("sbin")).expect("symlink");
        let argv = command(
            root.path(),
            &config(),
            1,
            2,
            &SandboxOptions {
                mounts: vec![StorageMount::parse("type=bind,src=/data,dst=/in")],
                ..base()
            },
        )
        .expect("argv");
        let at = |w: &[&str]| {
            argv.windows(w.len())
                .position(|x| x.iter().zip(w).all(|(a, b)| a == b))
                .unwrap_or_else(|| panic!("{w:?} in {argv:?}"))
        };
        let bin = root.path().join("bin").display().to_string();
        let tmp_root = at(&["--tmpfs", "/"]);
        let entry = at(&["--ro-bind", &bin, "/bin"]);
        let link = at(&["--symlink", "bin", "/sbin"]);
        let bind = at(&["--ro-bind", "/data", "/in"]);
        let ro = at(&["--remount-ro", "/"]);
        let end = at(&["--"]);
        assert!(tmp_root < entry && entry < link && link < bind && bind < ro && ro < end);
        // Without mounts the image root is bound as `/` directly.
        let plain = command(root.path(), &config(), 1, 2, &base()).expect("argv");
        assert!(!plain.contains(&"--remount-ro".to_string()));
    }
}
