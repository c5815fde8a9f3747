//! The container runtime against a real registry, real images and the real sandbox.

use std::time::{Duration, Instant};

use fn_container::{ContainerOptions, ContainerRuntime};
use kpt::resource_list::ResourceList;
use kpt::runtime::{
    Budget, BudgetExceeded, FunctionOutput, FunctionRef, FunctionRuntime, RunOptions, RuntimeError,
};
use porch_testkit::registry::{Registry, function_image, multi_arch_image};

fn temp() -> (tempfile::TempDir, std::path::PathBuf) {
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path().to_path_buf();
    (d, p)
}

const INPUT: &str = "apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: cm
  data:
    a: b
";

/// Adds a label with sed and reports who it runs as and what it sees.
const SET_LABEL: &str = r#"
echo "uid=$(id -u) gid=$(id -g) pwd=$(pwd) mode=$FN_MODE home=${HOME:-unset}" >&2
test -e /etc/junk && echo "whiteout not applied" >&2
sed 's/^  metadata:$/  metadata:\n    labels:\n      color: blue/'
"#;

fn runtime(cache: &std::path::Path) -> ContainerRuntime {
    ContainerRuntime::new(ContainerOptions {
        memory_limit: Some(512 << 20),
        ..ContainerOptions::new(cache)
    })
    .expect("runtime")
}

fn run(rt: &ContainerRuntime, image: &str, budget: Budget) -> Result<FunctionOutput, RuntimeError> {
    rt.run(
        &FunctionRef::Image(image.to_string()),
        ResourceList::from_yaml(INPUT).expect("input"),
        &RunOptions {
            budget,
            ..RunOptions::default()
        },
    )
}

#[test]
fn pulls_caches_and_runs_a_function_image() {
    let registry = Registry::start();
    let oci = registry.push(&function_image(SET_LABEL), "fn/set-label:v1", false);
    let docker = registry.push(&function_image(SET_LABEL), "fn/set-label-docker:v1", true);
    let (_d, cache) = temp();
    let rt = runtime(&cache);

    for image in [&oci, &docker] {
        let out = run(&rt, image, Budget::default()).expect("ran");
        assert_eq!(out.exit_code, 0, "{}", out.stderr);
        let yaml = out.list.to_yaml();
        assert!(yaml.contains("color: blue"), "{yaml}");
        assert!(yaml.contains("name: cm"), "{yaml}");
        // The image's user, working dir and env only; the lower layer's file whited out.
        assert!(
            out.stderr
                .contains("uid=65532 gid=65532 pwd=/work mode=test home=unset"),
            "{}",
            out.stderr
        );
        assert!(!out.stderr.contains("whiteout"), "{}", out.stderr);
    }
    let images = std::fs::read_dir(cache.join("images"))
        .expect("images")
        .count();
    // The two formats are different manifests of the same layers.
    assert_eq!(images, 2);

    // With the registry gone, the cached images still run.
    drop(registry);
    let out = run(&rt, &oci, Budget::default()).expect("ran from the cache");
    assert!(out.list.to_yaml().contains("color: blue"));
    // An image never pulled now fails with the registry's error, naming the image.
    let missing = oci.replace("set-label", "other");
    let err = run(&rt, &missing, Budget::default()).expect_err("registry down");
    assert!(matches!(err, RuntimeError::Start { .. }), "{err}");
    assert!(err.to_string().contains("fn/other"), "{err}");
}

#[test]
fn concurrent_runs_of_a_new_image_pull_it_once() {
    let registry = Registry::start();
    let image = registry.push(&function_image(SET_LABEL), "fn/concurrent:v1", false);
    let (_d, cache) = temp();
    let rt = runtime(&cache);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(|| run(&rt, &image, Budget::default())))
            .collect();
        for h in handles {
            let out = h.join().expect("thread").expect("ran");
            assert!(out.list.to_yaml().contains("color: blue"), "{}", out.stderr);
        }
    });
    assert_eq!(
        std::fs::read_dir(cache.join("images"))
            .expect("images")
            .count(),
        1
    );
    // No staging directory left behind.
    assert_eq!(
        std::fs::read_dir(cache.join("tmp")).expect("tmp").count(),
        0
    );
}

#[test]
fn the_sandbox_has_no_network_unless_allowed() {
    let registry = Registry::start();
    let script = format!(
        "if nc -w 2 127.0.0.1 {} </dev/null; then echo connected >&2; exit 0; fi\n\
         echo no-network >&2; exit 7\n",
        registry.addr.port()
    );
    let image = registry.push(&function_image(&script), "fn/net:v1", false);
    let (_d, cache) = temp();
    let out = run(&runtime(&cache), &image, Budget::default()).expect("ran");
    assert_eq!(out.exit_code, 7, "{}", out.stderr);
    assert!(out.stderr.contains("no-network"), "{}", out.stderr);

    let open = ContainerRuntime::new(ContainerOptions {
        allow_network: true,
        ..ContainerOptions::new(&cache)
    })
    .expect("runtime");
    let out = run(&open, &image, Budget::default()).expect("ran");
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
}

#[test]
fn the_sandbox_cannot_see_or_write_host_files() {
    let registry = Registry::start();
    let (_secret_dir, secret_dir) = temp();
    let secret = secret_dir.join("secret.txt");
    std::fs::write(&secret, "host secret").expect("write");
    let script = format!(
        "cat {} /etc/hostname /root/.bashrc >&2\n\
         touch /written && echo wrote-root >&2\n\
         touch /tmp/ok && echo tmp-writable >&2\n\
         exit 4\n",
        secret.display()
    );
    let image = registry.push(&function_image(&script), "fn/files:v1", false);
    let (_d, cache) = temp();
    let out = run(&runtime(&cache), &image, Budget::default()).expect("ran");
    assert_eq!(out.exit_code, 4);
    assert!(!out.stderr.contains("host secret"), "{}", out.stderr);
    assert!(out.stderr.contains("No such file"), "{}", out.stderr);
    assert!(!out.stderr.contains("wrote-root"), "{}", out.stderr);
    assert!(out.stderr.contains("tmp-writable"), "{}", out.stderr);
    assert!(
        !cache.join("images").read_dir().expect("dir").any(|e| e
            .expect("entry")
            .path()
            .join("rootfs/written")
            .exists())
    );
}

#[test]
fn budget_timeout_memory_and_output_limits_stop_functions() {
    let registry = Registry::start();
    let sleeper = registry.push(&function_image("sleep 30\n"), "fn/sleep:v1", false);
    let flood = registry.push(&function_image("yes\n"), "fn/flood:v1", false);
    let hog = registry.push(
        &function_image(
            "x=$(head -c 100000000 /dev/zero | tr '\\0' a)\necho allocated ${#x} >&2\n",
        ),
        "fn/hog:v1",
        false,
    );
    let (_d, cache) = temp();
    let rt = runtime(&cache);
    // Pull first so the limits below measure the run, not the pull.
    rt.ensure_image(&sleeper, &RunOptions::default())
        .expect("pulled");

    let started = Instant::now();
    let err = run(
        &rt,
        &sleeper,
        Budget::default().with_time_limit(Duration::from_millis(500)),
    )
    .expect_err("deadline");
    assert!(
        matches!(err, RuntimeError::Budget { reason: BudgetExceeded::Time(_), ref function } if function == &sleeper),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));

    let err = rt
        .run(
            &FunctionRef::Image(sleeper.clone()),
            ResourceList::default(),
            &RunOptions {
                timeout: Duration::from_millis(300),
                ..RunOptions::default()
            },
        )
        .expect_err("timeout");
    assert!(matches!(err, RuntimeError::Timeout { .. }), "{err}");

    let err = run(
        &rt,
        &flood,
        Budget {
            max_output_bytes: Some(1 << 20),
            ..Budget::default()
        },
    )
    .expect_err("flood");
    assert!(
        matches!(
            err,
            RuntimeError::Budget {
                reason: BudgetExceeded::Bytes(1_048_576),
                ..
            }
        ),
        "{err}"
    );

    let limited = ContainerRuntime::new(ContainerOptions {
        memory_limit: Some(32 << 20),
        ..ContainerOptions::new(&cache)
    })
    .expect("runtime");
    let out = run(&limited, &hog, Budget::default()).expect("ran");
    assert_ne!(out.exit_code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("allocated"), "{}", out.stderr);
    let unlimited = ContainerRuntime::new(ContainerOptions {
        memory_limit: None,
        ..ContainerOptions::new(&cache)
    })
    .expect("runtime");
    let out = run(&unlimited, &hog, Budget::default()).expect("ran");
    assert!(out.stderr.contains("allocated 100000000"), "{}", out.stderr);
}

#[test]
fn a_failing_function_reports_its_stderr_and_exit_code() {
    let registry = Registry::start();
    let image = registry.push(
        &function_image("echo 'boom: bad config' >&2\nexit 3\n"),
        "fn/fail:v1",
        false,
    );
    let (_d, cache) = temp();
    let out = run(&runtime(&cache), &image, Budget::default()).expect("ran");
    assert_eq!(out.exit_code, 3);
    assert!(out.stderr.contains("boom: bad config"), "{}", out.stderr);
}

#[test]
fn an_image_index_resolves_to_linux_amd64() {
    let registry = Registry::start();
    let image = registry.push_all(
        &multi_arch_image("echo amd64 >&2\nexit 0\n", "echo arm64 >&2\nexit 9\n"),
        "fn/multi:v1",
    );
    let (_d, cache) = temp();
    let out = run(&runtime(&cache), &image, Budget::default()).expect("ran");
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("amd64"), "{}", out.stderr);
}

#[test]
fn a_digest_reference_pulls_that_manifest() {
    let registry = Registry::start();
    let image = registry.push(&function_image("echo pinned >&2\n"), "fn/pinned:v1", false);
    let (_d1, first_cache) = temp();
    let first = runtime(&first_cache)
        .ensure_image(&image, &RunOptions::default())
        .expect("pulled by tag");
    let by_digest = format!("{}@{}", image.trim_end_matches(":v1"), first.digest);
    let (_d2, cache) = temp();
    let rt = runtime(&cache);
    let out = run(&rt, &by_digest, Budget::default()).expect("ran by digest");
    assert!(out.stderr.contains("pinned"), "{}", out.stderr);
    let again = rt
        .ensure_image(&by_digest, &RunOptions::default())
        .expect("cached");
    assert_eq!(again.digest, first.digest);
}

#[test]
fn credentials_come_from_the_docker_config() {
    use base64::Engine;
    let registry = Registry::start_with_auth();
    let image = registry.push(&function_image("echo authed >&2\n"), "fn/private:v1", false);
    let (_d, cache) = temp();
    let anonymous = ContainerRuntime::new(ContainerOptions {
        docker_config: None,
        ..ContainerOptions::new(&cache)
    })
    .expect("runtime");
    let err = run(&anonymous, &image, Budget::default()).expect_err("needs credentials");
    assert!(matches!(err, RuntimeError::Start { .. }), "{err}");

    let config = cache.join("docker-config.json");
    let auth = base64::engine::general_purpose::STANDARD.encode(format!(
        "{}:{}",
        porch_testkit::registry::USER,
        porch_testkit::registry::PASSWORD
    ));
    std::fs::write(
        &config,
        format!(r#"{{"auths":{{"{}":{{"auth":"{auth}"}}}}}}"#, registry.addr),
    )
    .expect("docker config");
    let authed = ContainerRuntime::new(ContainerOptions {
        docker_config: Some(config),
        ..ContainerOptions::new(&cache)
    })
    .expect("runtime");
    let out = run(&authed, &image, Budget::default()).expect("ran");
    assert!(out.stderr.contains("authed"), "{}", out.stderr);
}

#[test]
fn one_image_s_pull_settings_override_the_runtime_s() {
    use fn_container::auth::Credentials;
    use fn_container::{ImagePull, PullPolicy};
    use porch_testkit::registry::{PASSWORD, USER};
    let registry = Registry::start_with_auth();
    let image = registry.push(&function_image("echo authed >&2\n"), "fn/private:v1", false);
    let other = registry.push(&function_image("echo other >&2\n"), "fn/other:v1", false);
    let (_d, cache) = temp();
    let rt = ContainerRuntime::new(ContainerOptions {
        docker_config: None,
        ..ContainerOptions::new(&cache)
    })
    .expect("runtime");
    let run_with = |image: &str, pull: &ImagePull| {
        rt.run_with(
            &FunctionRef::Image(image.to_string()),
            ResourceList::from_yaml(INPUT).expect("input"),
            &RunOptions::default(),
            pull,
        )
    };
    let wrong = ImagePull {
        credentials: Credentials::basic(USER, "wrong"),
        policy: None,
    };
    let err = run_with(&image, &wrong).expect_err("wrong password");
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "registry {} denied access with the credentials given",
            registry.addr
        )),
        "{text}"
    );
    let right = ImagePull {
        credentials: Credentials::basic(USER, PASSWORD),
        policy: None,
    };
    let out = run_with(&image, &right).expect("pulled with the image's login");
    assert!(out.stderr.contains("authed"), "{}", out.stderr);
    // Cached now: Never runs it, and refuses an image the cache lacks, logins or not.
    let never = ImagePull {
        policy: Some(PullPolicy::Never),
        ..right.clone()
    };
    run_with(&image, &never).expect("cached image under Never");
    let err = run_with(&other, &never).expect_err("not cached");
    assert!(err.to_string().contains("pull policy is Never"), "{err}");
}

/// Processes of this machine whose command line contains `needle`.
fn processes_with(needle: &str) -> usize {
    std::fs::read_dir("/proc")
        .expect("proc")
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|c| {
            String::from_utf8_lossy(c)
                .replace('\0', " ")
                .contains(needle)
        })
        .count()
}

#[test]
fn a_stopped_function_leaves_no_process_behind() {
    let registry = Registry::start();
    // A child of the function's shell, so the whole sandbox must go, not just its leader.
    let marker = format!("{}", 1_000_000 + std::process::id());
    let image = registry.push(
        &function_image(&format!("sleep {marker} &\nwait\n")),
        "fn/orphan:v1",
        false,
    );
    let (_d, cache) = temp();
    let rt = runtime(&cache);
    rt.ensure_image(&image, &RunOptions::default())
        .expect("pulled");
    let needle = format!("sleep {marker}");
    std::thread::scope(|s| {
        let running = s.spawn(|| {
            run(
                &rt,
                &image,
                Budget::default().with_time_limit(Duration::from_secs(3)),
            )
        });
        let started = Instant::now();
        while processes_with(&needle) == 0 {
            assert!(
                started.elapsed() < Duration::from_secs(3),
                "the function's process never appeared"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let err = running.join().expect("thread").expect_err("deadline");
        assert!(matches!(err, RuntimeError::Budget { .. }), "{err}");
    });
    let stopped = Instant::now();
    while processes_with(&needle) > 0 {
        assert!(
            stopped.elapsed() < Duration::from_secs(5),
            "a sandboxed process outlived its function"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// kpt's `--image-pull-policy`: `IfNotPresent` keeps using a cached tag after the registry's
/// tag moved, `Always` pulls the moved tag, `Never` runs only what is cached.
#[test]
fn the_image_pull_policy_decides_when_the_registry_is_asked() {
    use fn_container::PullPolicy;
    let registry = Registry::start();
    let first = registry.push(
        &function_image("echo first >&2\ncat\n"),
        "fn/moving:v1",
        false,
    );
    let (_d, cache) = temp();
    let with = |pull_policy: PullPolicy| {
        ContainerRuntime::new(ContainerOptions {
            pull_policy,
            ..ContainerOptions::new(&cache)
        })
        .expect("runtime")
    };
    let stderr_of = |rt: &ContainerRuntime| {
        let out = run(rt, &first, Budget::default()).expect("ran");
        assert_eq!(out.exit_code, 0, "{}", out.stderr);
        out.stderr.trim().to_owned()
    };
    // Never, before anything is cached: refused, naming the policy.
    let err = run(&with(PullPolicy::Never), &first, Budget::default()).expect_err("not cached");
    assert!(err.to_string().contains("pull policy is Never"), "{err}");
    assert_eq!(stderr_of(&with(PullPolicy::IfNotPresent)), "first");

    // The tag moves to another image.
    let moved = registry.push(
        &function_image("echo second >&2\ncat\n"),
        "fn/moving:v1",
        false,
    );
    assert_eq!(moved, first);
    assert_eq!(stderr_of(&with(PullPolicy::IfNotPresent)), "first");
    assert_eq!(stderr_of(&with(PullPolicy::Never)), "first");
    assert_eq!(stderr_of(&with(PullPolicy::Always)), "second");
    // What Always pulled is now the cached image of the tag.
    assert_eq!(stderr_of(&with(PullPolicy::Never)), "second");

    // Never works without the registry at all.
    drop(registry);
    assert_eq!(stderr_of(&with(PullPolicy::Never)), "second");
    let err = run(&with(PullPolicy::Always), &first, Budget::default()).expect_err("no registry");
    assert!(matches!(err, RuntimeError::Start { .. }), "{err}");
}

#[test]
fn pull_policies_parse_as_kpt_spells_them() {
    use fn_container::PullPolicy;
    assert_eq!("Always".parse::<PullPolicy>(), Ok(PullPolicy::Always));
    assert_eq!(
        "IfNotPresent".parse::<PullPolicy>(),
        Ok(PullPolicy::IfNotPresent)
    );
    assert_eq!("never".parse::<PullPolicy>(), Ok(PullPolicy::Never));
    assert!("Sometimes".parse::<PullPolicy>().is_err());
}

/// kpt's `fn eval --env` and `--mount` reach the function: a `KEY=VALUE` overrides the
/// image's value, a bare `KEY` takes the host's, a bind mount shows the host path
/// read-only unless `rw=true`, and a tmpfs is writable.
#[test]
fn env_and_mounts_are_applied_to_the_function() {
    use fn_container::sandbox::{StorageMount, parse_env};
    let registry = Registry::start();
    let (_ro_dir, ro) = temp();
    let (_rw_dir, rw) = temp();
    std::fs::write(ro.join("in.txt"), "from host").expect("write");
    let script = "echo \"mode=$FN_MODE path=${PATH:+set} extra=$EXTRA\" >&2\n\
         cat /in/in.txt >&2\n\
         touch /in/x 2>/dev/null && echo ro-writable >&2\n\
         echo out > /out/made && echo rw-written >&2\n\
         touch /scratch/y && echo tmpfs-writable >&2\n\
         touch /written 2>/dev/null && echo root-writable >&2\n\
         exit 0\n";
    let image = registry.push(&function_image(script), "fn/envmount:v1", false);
    let (_d, cache) = temp();
    let rt = ContainerRuntime::new(ContainerOptions {
        env: parse_env(&["FN_MODE=flag".into(), "EXTRA=1".into(), "PATH".into()]),
        mounts: vec![
            StorageMount::parse(&format!("type=bind,src={},dst=/in", ro.display())),
            StorageMount::parse(&format!("type=bind,src={},dst=/out,rw=true", rw.display())),
            StorageMount::parse("type=tmpfs,dst=/scratch"),
        ],
        ..ContainerOptions::new(&cache)
    })
    .expect("runtime");
    let out = run(&rt, &image, Budget::default()).expect("ran");
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("mode=flag path=set extra=1"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("from host"), "{}", out.stderr);
    assert!(!out.stderr.contains("ro-writable"), "{}", out.stderr);
    assert!(out.stderr.contains("rw-written"), "{}", out.stderr);
    assert!(out.stderr.contains("tmpfs-writable"), "{}", out.stderr);
    assert!(!out.stderr.contains("root-writable"), "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(rw.join("made")).expect("made"),
        "out\n"
    );
    assert!(!ro.join("x").exists());

    let volume = ContainerRuntime::new(ContainerOptions {
        mounts: vec![StorageMount::parse("type=volume,src=v,dst=/in")],
        ..ContainerOptions::new(&cache)
    })
    .expect("runtime");
    match run(&volume, &image, Budget::default()) {
        Err(RuntimeError::Start { reason, .. }) => {
            assert!(reason.contains("not supported"), "{reason}")
        }
        other => panic!("a volume mount must be refused: {other:?}"),
    }
}
