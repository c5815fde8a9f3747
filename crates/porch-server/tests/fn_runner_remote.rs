//! porch-server with `--function-runner`: server-side rendering sends every image function
//! to a separate `porch-fn-runner` process over Porch's gRPC API. The result is the same as
//! rendering in process; a failing or hanging function fails the render with a clear
//! message and saves nothing.

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use common::porch::*;
use serde_json::{Value, json};

const NS: &str = "default";

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  key: original\n";

/// A function runner process on a free loopback port; killed on drop.
struct Runner {
    child: Child,
    address: String,
    dir: tempfile::TempDir,
}

/// The runner binary, next to porch-server's (built by a workspace build; built here if not).
fn runner_binary() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_BIN_EXE_porch-server")).with_file_name("porch-fn-runner");
    if !path.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "porch-fn-runner"])
            .status()
            .expect("cargo build -p porch-fn-runner");
        assert!(status.success(), "building porch-fn-runner failed");
    }
    path
}

impl Runner {
    fn start() -> Runner {
        Self::start_with(&[])
    }

    fn start_with(flags: &[&str]) -> Runner {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = std::fs::File::create(dir.path().join("runner.log")).expect("log");
        let mut child = Command::new(runner_binary())
            .args(["--port", "0", "--bind-address", "127.0.0.1"])
            .args(flags)
            // The user's own docker config stays out of it.
            .env("DOCKER_CONFIG", dir.path())
            .arg("--function-cache-dir")
            .arg(dir.path().join("images"))
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("spawn porch-fn-runner");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read");
        let address = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Runner {
            child,
            address,
            dir,
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("runner.log")).unwrap_or_default()
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A draft `git.fn-pkg.ws` on a fresh server started with `flags`.
async fn draft(flags: &[&str]) -> Env {
    let env = Env::start_with(flags).await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    init(&env.prs(NS), "git", "fn-pkg", "ws").await;
    env
}

/// Adds a pipeline and a ConfigMap to the draft's Kptfile; the update's outcome.
async fn update(env: &Env, pipeline: &str) -> Result<kube::api::DynamicObject, kube::Error> {
    let prrs = env.prrs(NS);
    let kf = files_of(&prrs, "git.fn-pkg.ws").await["Kptfile"]
        .as_str()
        .expect("Kptfile")
        .to_owned();
    put_files(
        &prrs,
        "git.fn-pkg.ws",
        &[("Kptfile", &format!("{kf}{pipeline}")), ("cm.yaml", CM)],
    )
    .await
}

const BUILTIN_PIPELINE: &str = "pipeline:\n  mutators:\n  - image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0\n    configMap:\n      app: demo\n  - image: gcr.io/kpt-fn/starlark:v0.4.3\n    configMap:\n      source: |\n        for r in ctx.resource_list[\"items\"]:\n          if r[\"metadata\"][\"name\"] == \"cm\":\n            r[\"data\"][\"starlark\"] = \"ran\"\n  - image: gcr.io/kpt-fn/set-namespace:v0.4.1\n    configMap:\n      namespace: bucket-namespace\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rendering_through_a_runner_gives_the_in_process_result() {
    let runner = Runner::start();
    let remote = draft(&["--function-runner", &runner.address]).await;
    let local = draft(&[]).await;
    for env in [&remote, &local] {
        let updated = update(env, BUILTIN_PIPELINE).await.expect("render");
        assert_eq!(updated.data["status"]["renderStatus"]["error"], "");
    }
    let through_runner = files_of(&remote.prrs(NS), "git.fn-pkg.ws").await;
    let in_process = files_of(&local.prrs(NS), "git.fn-pkg.ws").await;
    assert_eq!(through_runner, in_process);
    let cm: Value =
        serde_yaml::from_str(through_runner["cm.yaml"].as_str().expect("cm")).expect("yaml");
    assert_eq!(cm["metadata"]["labels"]["app"], "demo", "{cm}");
    assert_eq!(cm["metadata"]["namespace"], "bucket-namespace", "{cm}");
    assert_eq!(cm["data"]["starlark"], "ran", "{cm}");
    // Every step went to the runner.
    let log = runner.log();
    for image in [
        "set-labels:v0.2.0",
        "starlark:v0.4.3",
        "set-namespace:v0.4.1",
    ] {
        assert!(
            log.contains(image),
            "{image} not evaluated by the runner: {log}"
        );
    }
}

/// The draft's files are as `init` left them: the failed update saved nothing.
async fn assert_unchanged(env: &Env) {
    let files = files_of(&env.prrs(NS), "git.fn-pkg.ws").await;
    assert!(!files.contains_key("cm.yaml"), "{files:?}");
    let kf = files["Kptfile"].as_str().expect("Kptfile");
    assert!(!kf.contains("pipeline"), "{kf}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_function_on_the_runner_fails_the_render_and_changes_nothing() {
    let runner = Runner::start();
    let registry = porch_testkit::registry::Registry::start();
    let failing = registry.push(
        &porch_testkit::registry::function_image("echo 'quota exceeded for team-a' >&2\nexit 3\n"),
        "fn/failing:v1",
        false,
    );
    let env = draft(&["--function-runner", &runner.address]).await;
    // A built-in reporting an error, and a container function exiting non-zero.
    for (pipeline, expected) in [
        (
            "pipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/starlark:v0.4.3\n    configMap:\n      source: |\n        fail(\"no way\")\n".to_owned(),
            "no way",
        ),
        (
            format!("pipeline:\n  mutators:\n  - image: {failing}\n"),
            "quota exceeded for team-a",
        ),
    ] {
        let (code, msg) = api_err(update(&env, &pipeline).await);
        assert_eq!(code, 422, "{msg}");
        assert!(msg.contains(expected), "{msg}");
        assert_unchanged(&env).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hanging_function_on_the_runner_is_stopped_at_the_render_time_limit() {
    let runner = Runner::start();
    let registry = porch_testkit::registry::Registry::start();
    let hanging = registry.push(
        &porch_testkit::registry::function_image("sleep 600\n"),
        "fn/hanging:v1",
        false,
    );
    let env = draft(&[
        "--function-runner",
        &runner.address,
        "--render-timeout-seconds",
        "4",
    ])
    .await;
    let started = std::time::Instant::now();
    let (code, msg) = api_err(
        update(
            &env,
            &format!("pipeline:\n  mutators:\n  - image: {hanging}\n"),
        )
        .await,
    );
    assert_eq!(code, 422, "{msg}");
    assert!(msg.contains("time limit of 4s"), "{msg}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the render waited {:?}",
        started.elapsed()
    );
    assert_unchanged(&env).await;
    // The runner killed the function: no sleeping sandbox is left behind.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let ps = Command::new("pgrep")
            .args(["-f", "sleep 600"])
            .output()
            .expect("pgrep");
        let left: Vec<u32> = String::from_utf8_lossy(&ps.stdout)
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .filter(|pid| is_descendant(*pid, runner.child.id()))
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the runner left the function running: {left:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_runner_pulls_private_images_with_its_registry_auth_file() {
    use base64::Engine;
    use porch_testkit::registry::{PASSWORD, USER};
    let registry = porch_testkit::registry::Registry::start_with_auth();
    let private = registry.push(
        &porch_testkit::registry::function_image("sed 's/key: original$/key: pulled/'\n"),
        "fn/private:v1",
        false,
    );
    // Porch's flags: the `.dockerconfigjson` of a mounted Secret. The gRPC request carries
    // no credentials, so this file is the runner's only source of them.
    let secret_dir = tempfile::tempdir().expect("tempdir");
    let auth_file = secret_dir.path().join(".dockerconfigjson");
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"));
    std::fs::write(
        &auth_file,
        format!(r#"{{"auths":{{"{}":{{"auth":"{auth}"}}}}}}"#, registry.addr),
    )
    .expect("auth file");
    let pipeline = format!("pipeline:\n  mutators:\n  - image: {private}\n");

    let anonymous = Runner::start();
    let env = draft(&["--function-runner", &anonymous.address]).await;
    let (code, msg) = api_err(update(&env, &pipeline).await);
    assert_eq!(code, 422, "{msg}");
    assert!(
        msg.contains(&format!(
            "registry {} denied access without credentials",
            registry.addr
        )),
        "{msg}"
    );
    assert_unchanged(&env).await;

    let authed = Runner::start_with(&[
        "--enable-private-registries",
        "--registry-auth-secret-path",
        auth_file.to_str().expect("utf-8 path"),
    ]);
    let env = draft(&["--function-runner", &authed.address]).await;
    update(&env, &pipeline).await.expect("pulled by the runner");
    let cm = files_of(&env.prrs(NS), "git.fn-pkg.ws").await["cm.yaml"].clone();
    assert!(
        cm.as_str().is_some_and(|t| t.contains("key: pulled")),
        "{cm}"
    );
}

/// Whether `pid` descends from `ancestor` (through /proc's parent links).
fn is_descendant(mut pid: u32, ancestor: u32) -> bool {
    for _ in 0..64 {
        if pid == ancestor {
            return true;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // The parent pid is the second field after the parenthesized command name.
        let Some(after) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            return false;
        };
        match after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            Some(parent) if parent > 1 => pid = parent,
            _ => return false,
        }
    }
    false
}
