//! `porchctl fn render` / `fn eval` with function images that no built-in provides: pulled
//! from a real registry on loopback, cached, run in the bubblewrap sandbox.

use std::path::Path;
use std::process::Command;

use porch_testkit::registry::{Registry, function_image};

mod pkgfix;

const SET_LABEL: &str = "sed 's/^  metadata:$/  metadata:\\n    labels:\\n      color: blue/'\n";

fn porchctl(args: &[&str], dir: &Path, cache: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_porchctl"))
        .args(args)
        .current_dir(dir)
        .env("PORCHCTL_FN_CACHE_DIR", cache)
        .output()
        .expect("porchctl runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn render_and_eval_run_container_images_after_built_ins() {
    let registry = Registry::start();
    let label = registry.push(&function_image(SET_LABEL), "fn/set-label:v1", false);
    let fail = registry.push(
        &function_image("echo 'boom: no way' >&2\nexit 3\n"),
        "fn/fail:v1",
        false,
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let pkg = tmp.path().join("pkg");
    std::fs::create_dir_all(&pkg).expect("mkdir");
    std::fs::write(
        pkg.join("Kptfile"),
        format!(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n\
             \x20   - image: set-namespace:v0.4\n      configMap:\n        namespace: prod\n\
             \x20   - image: {label}\n"
        ),
    )
    .expect("Kptfile");
    std::fs::write(
        pkg.join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n",
    )
    .expect("cm");
    let cache = tmp.path().join("cache");

    let (code, stderr) = porchctl(&["fn", "render", "pkg"], tmp.path(), &cache);
    assert_eq!(code, 0, "{stderr}");
    let cm = std::fs::read_to_string(pkg.join("cm.yaml")).expect("cm");
    assert!(cm.contains("color: blue"), "{cm}");
    assert!(cm.contains("namespace: prod"), "{cm}");
    assert!(cache.join("images").read_dir().expect("cache").count() == 1);

    let (code, stderr) = porchctl(&["fn", "eval", "pkg", "--image", &fail], tmp.path(), &cache);
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("boom: no way"), "{stderr}");
}

/// `--image-pull-policy` as kpt's: `Never` refuses an image not cached, `IfNotPresent` keeps
/// the cached image after its tag moved, `Always` pulls the moved tag.
#[test]
fn the_image_pull_policy_flag_is_honoured() {
    let registry = Registry::start();
    let image = registry.push(
        &function_image("echo first >&2\ncat\n"),
        "fn/moving:v1",
        false,
    );
    let (tmp, _) = pkgfix::package(&[(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n",
    )]);
    let cache = tmp.path().join("cache");
    let eval = |policy: &str| {
        porchctl(
            &[
                "fn",
                "eval",
                "pkg",
                "--image",
                &image,
                "--image-pull-policy",
                policy,
            ],
            tmp.path(),
            &cache,
        )
    };

    let (code, stderr) = eval("Never");
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("pull policy is Never"), "{stderr}");
    let (code, stderr) = eval("IfNotPresent");
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("first"), "{stderr}");

    registry.push(
        &function_image("echo second >&2\ncat\n"),
        "fn/moving:v1",
        false,
    );
    let (code, stderr) = eval("IfNotPresent");
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("first"), "{stderr}");
    let (code, stderr) = eval("Always");
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("second"), "{stderr}");

    let (code, stderr) = eval("Sometimes");
    assert_ne!(code, 0, "{stderr}");
    assert!(
        stderr.contains("must must be one of Always, IfNotPresent, Never"),
        "{stderr}"
    );
}

/// kpt HEAD's tag resolver: a step's `tag:` that is a version constraint takes the
/// highest tag of the registry that satisfies it (signature tags, words and
/// pre-releases aside); `fn render` shows and records the resolved image, and a
/// constraint no tag satisfies fails the step naming the constraint.
#[test]
fn a_tag_constraint_runs_the_highest_matching_registry_tag() {
    let registry = Registry::start();
    let mut repo = String::new();
    for (tag, color) in [
        ("v0.1.9", "old"),
        ("v0.2.1", "low"),
        ("v0.2.10", "picked"),
        ("v0.3.0", "newer"),
        ("v0.2.11-rc.1", "pre"),
        ("latest", "word"),
    ] {
        let script =
            format!("sed 's/^  metadata:$/  metadata:\\n    labels:\\n      color: {color}/'\n");
        let pushed = registry.push(&function_image(&script), &format!("fn/tagged:{tag}"), false);
        repo = pushed
            .rsplit_once(':')
            .map(|(r, _)| r.to_string())
            .expect("tag");
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let pkg = tmp.path().join("pkg");
    std::fs::create_dir_all(&pkg).expect("mkdir");
    let kptfile = |tag: &str| {
        format!(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n\
             \x20   - image: {repo}:v0.0.1\n      tag: \"{tag}\"\n"
        )
    };
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n";
    std::fs::write(pkg.join("Kptfile"), kptfile("~0.2")).expect("Kptfile");
    std::fs::write(pkg.join("cm.yaml"), cm).expect("cm");
    let cache = tmp.path().join("cache");

    let (code, stderr) = porchctl(&["fn", "render", "pkg"], tmp.path(), &cache);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(&format!("[PASS] \"{repo}:v0.2.10\"")),
        "{stderr}"
    );
    let out = std::fs::read_to_string(pkg.join("cm.yaml")).expect("cm");
    assert!(out.contains("color: picked"), "{out}");
    let status = std::fs::read_to_string(pkg.join("Kptfile")).expect("Kptfile");
    assert!(
        status.contains(&format!("      - image: {repo}:v0.2.10\n")),
        "{status}"
    );

    std::fs::write(pkg.join("Kptfile"), kptfile(">=0.4")).expect("Kptfile");
    std::fs::write(pkg.join("cm.yaml"), cm).expect("cm");
    let (code, stderr) = porchctl(&["fn", "render", "pkg"], tmp.path(), &cache);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("no tag could be found matching the version constraint \">=0.4\""),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(pkg.join("cm.yaml")).expect("cm"),
        cm
    );
}

/// `fn eval -e/--env` and `--mount` reach a container function: its stderr shows the
/// variables and the mounted host file, in both flag spellings.
#[test]
fn eval_env_and_mount_flags_reach_the_container() {
    let registry = Registry::start();
    let image = registry.push(
        &function_image("echo \"mode=$FN_MODE extra=$EXTRA\" >&2\ncat /in/in.txt >&2\ncat\n"),
        "fn/env:v1",
        false,
    );
    let (tmp, _) = pkgfix::package(&[(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
    )]);
    let host = tmp.path().join("host");
    std::fs::create_dir_all(&host).expect("mkdir");
    std::fs::write(host.join("in.txt"), "host file").expect("write");
    let cache = tmp.path().join("cache");
    let mount = format!("type=bind,source={},target=/in", host.display());
    let (code, stderr) = porchctl(
        &[
            "fn",
            "eval",
            "pkg",
            "--image",
            &image,
            "-e",
            "FN_MODE=flag",
            "--env=EXTRA=1",
            "--mount",
            &mount,
        ],
        tmp.path(),
        &cache,
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("\"mode=flag extra=1\""), "{stderr}");
    assert!(stderr.contains("\"host file\""), "{stderr}");
}
