//! Functions on the server through the real binary: FunctionConfig choosing the executor
//! and the limits of an image, the `functions` discovery resource (built-ins, FunctionConfig
//! images, a registry-backed function repository), and repository guardrails
//! (`spec.mutators` applied on every change, a failing validator refusing approval).

mod common;

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use common::porch::*;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

const NS: &str = "default";

fn function_configs(client: &kube::Client) -> Api<DynamicObject> {
    let ar = kube::api::ApiResource {
        group: "config.porch.kpt.dev".into(),
        version: "v1alpha1".into(),
        api_version: "config.porch.kpt.dev/v1alpha1".into(),
        kind: "FunctionConfig".into(),
        plural: "functionconfigs".into(),
    };
    Api::namespaced_with(client.clone(), NS, &ar)
}

/// Writes an executable script into the server's functions directory.
fn script(env: &Env, name: &str, body: &str) {
    // On every replica: a render may run on any of them.
    for data in env.server.data_dirs() {
        let dir = data.join("functions");
        std::fs::create_dir_all(&dir).expect("functions dir");
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).expect("script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
}

/// Creates a FunctionConfig and waits until the server's renders use it.
async fn configure(env: &Env, name: &str, spec: Value) {
    let api = function_configs(&env.client);
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "FunctionConfig",
        "metadata": {"name": name, "namespace": NS}, "spec": spec,
    }))
    .expect("object");
    api.create(&PostParams::default(), &obj)
        .await
        .unwrap_or_else(|e| panic!("create FunctionConfig {name}: {e:?}"));
    eventually(&format!("FunctionConfig {name} applied"), || {
        let api = api.clone();
        async move {
            let o = api.get(name).await.expect("get");
            o.data["status"]["apiServerObservedGeneration"] == json!(1)
        }
    })
    .await;
}

fn kptfile(name: &str, mutators: &str) -> String {
    format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\npipeline:\n  mutators:\n{mutators}"
    )
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn function_config_chooses_the_executor_and_limits_of_an_image() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    let prrs = env.prrs(NS);
    for p in ["hang", "aliased", "shadowed"] {
        init(&prs, "git", p, "ws").await;
    }
    script(&env, "hang.sh", "exec sleep 30\n");
    script(
        &env,
        "ns-binary.sh",
        "echo 'ran the binary, not the built-in' >&2\nexit 1\n",
    );
    configure(
        &env,
        "hang",
        json!({"image": "hang", "prefixes": ["example.com/fns"],
               "binaryExecutor": {"tags": ["v1"], "path": "hang.sh"},
               "limits": {"timeout": "2s"}}),
    )
    .await;
    configure(
        &env,
        "labeler",
        json!({"image": "labeler", "prefixes": ["example.com/fns"],
               "goExecutor": {"tags": ["v1"], "id": "set-labels"}}),
    )
    .await;
    configure(
        &env,
        "set-namespace",
        json!({"image": "set-namespace", "prefixes": [""],
               "binaryExecutor": {"tags": ["v9"], "path": "ns-binary.sh"}}),
    )
    .await;

    // A hanging function is stopped by its FunctionConfig's 2 s, far below the server's
    // 60 s render budget; nothing is saved.
    let started = Instant::now();
    let kf = kptfile("hang", "    - image: example.com/fns/hang:v1\n");
    let (code, msg) =
        api_err(put_files(&prrs, "git.hang.ws", &[("Kptfile", &kf), ("cm.yaml", CM)]).await);
    assert_eq!(code, 422, "{msg}");
    assert!(msg.contains("time limit of 2s"), "{msg}");
    assert!(msg.contains("example.com/fns/hang:v1"), "{msg}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "stopped after {:?}",
        started.elapsed()
    );
    assert!(!files_of(&prrs, "git.hang.ws").await.contains_key("cm.yaml"));

    // goExecutor: an image no built-in has runs the built-in the config names.
    let kf = kptfile(
        "aliased",
        "    - image: example.com/fns/labeler:v1\n      configMap:\n        team: blue\n",
    );
    put_files(
        &prrs,
        "git.aliased.ws",
        &[("Kptfile", &kf), ("cm.yaml", CM)],
    )
    .await
    .expect("render through the aliased built-in");
    let cm = files_of(&prrs, "git.aliased.ws").await["cm.yaml"].clone();
    assert!(
        cm.as_str().is_some_and(|s| s.contains("team: blue")),
        "{cm}"
    );

    // A FunctionConfig overrides the built-in for the tags it names; other tags stay built-in.
    let kf = kptfile(
        "shadowed",
        "    - image: set-namespace:v9\n      configMap:\n        namespace: x\n",
    );
    let (code, msg) = api_err(
        put_files(
            &prrs,
            "git.shadowed.ws",
            &[("Kptfile", &kf), ("cm.yaml", CM)],
        )
        .await,
    );
    assert_eq!(code, 422, "{msg}");
    assert!(msg.contains("ran the binary, not the built-in"), "{msg}");
    let kf = kptfile(
        "shadowed",
        "    - image: set-namespace:v0.4.1\n      configMap:\n        namespace: x\n",
    );
    put_files(
        &prrs,
        "git.shadowed.ws",
        &[("Kptfile", &kf), ("cm.yaml", CM)],
    )
    .await
    .expect("the built-in still runs other tags");

    // An invalid FunctionConfig is refused.
    let bad: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "FunctionConfig",
        "metadata": {"name": "bad", "namespace": NS},
        "spec": {"image": "x", "limits": {"timeout": "soon"}},
    }))
    .expect("object");
    let (code, msg) = api_err(
        function_configs(&env.client)
            .create(&PostParams::default(), &bad)
            .await,
    );
    assert_eq!(code, 422, "{msg}");
    assert!(
        msg.contains("At least one configuration must be specified"),
        "{msg}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kubectl_get_functions_lists_builtins_configured_and_registry_images() {
    let env = Env::start().await;
    let s = &env.server;
    let all = s.kubectl_ok(&["get", "functions", "-n", NS]);
    assert!(all.starts_with("NAME"), "{all}");
    assert!(all.contains("CREATED AT"), "{all}");
    assert!(all.contains("builtin:set-labels:v0.2.0"), "{all}");
    assert!(all.contains("builtin:starlark:v0.5.0"), "{all}");

    let validators = s.kubectl_ok(&[
        "get",
        "functions",
        "-n",
        NS,
        "--field-selector",
        "spec.functionTypes=validator",
        "-o",
        "name",
    ]);
    assert_eq!(
        validators.trim(),
        "function.porch.kpt.dev/builtin:starlark:v0.5.0"
    );
    let labels = s.kubectl_ok(&[
        "get",
        "functions",
        "-n",
        NS,
        "--field-selector",
        "spec.keywords=labels",
        "-o",
        "name",
    ]);
    assert_eq!(
        labels.trim(),
        "function.porch.kpt.dev/builtin:set-labels:v0.2.0"
    );
    let one = s.kubectl_ok(&[
        "get",
        "function",
        "builtin:set-namespace:v0.4.1",
        "-n",
        NS,
        "-o",
        "jsonpath={.spec.image} {.spec.functionConfigs[1].kind}",
    ]);
    assert_eq!(
        one,
        "ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1 SetNamespace"
    );
    let refused = s.kubectl(&["delete", "function", "builtin:no-op:v0.1.0", "-n", NS]);
    assert!(!refused.status.success());

    // FunctionConfig images are listed.
    configure(
        &env,
        "kubeconform",
        json!({"image": "kubeconform", "podExecutor": {"tags": ["v0.1"]}}),
    )
    .await;
    let listed = s.kubectl_ok(&["get", "functions", "-n", NS, "-o", "name"]);
    assert!(
        listed.contains("function.porch.kpt.dev/functionconfig:kubeconform:v0.1"),
        "{listed}"
    );

    // A function repository on a registry lists the images pushed there.
    let registry = porch_testkit::registry::Registry::start();
    let script = "cat\n";
    let image = porch_testkit::registry::function_image(script);
    registry.push(&image, "fns/set-labels:v1", false);
    registry.push(&image, "fns/validate-owner:v2", false);
    registry.push(&image, "other/ignored:v1", false);
    let repo: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
        "metadata": {"name": "fns", "namespace": NS},
        "spec": {"type": "oci", "content": "Function",
                 "oci": {"registry": format!("{}/fns", registry.addr)}},
    }))
    .expect("repo");
    env.repos(NS)
        .create(&PostParams::default(), &repo)
        .await
        .expect("register the function repository");
    wait_ready(&env.client, NS, "fns").await;
    let names = s.kubectl_ok(&[
        "get",
        "functions",
        "-n",
        NS,
        "--field-selector",
        "spec.repositoryRef.name=fns",
        "-o",
        "name",
    ]);
    assert_eq!(
        names.trim(),
        "function.porch.kpt.dev/fns:set-labels:v1\nfunction.porch.kpt.dev/fns:validate-owner:v2"
    );
    let image_of = s.kubectl_ok(&[
        "get",
        "function",
        "fns:validate-owner:v2",
        "-n",
        NS,
        "-o",
        "jsonpath={.spec.image}",
    ]);
    assert_eq!(image_of, format!("{}/fns/validate-owner:v2", registry.addr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn repository_guardrails_mutate_every_change_and_validators_block_approval() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(
        NS,
        "git",
        &url,
        json!({"mutators": [{"image": "set-labels:v0.2.0", "configMap": {"guarded": "yes"}}]}),
    )
    .await;
    let prs = env.prs(NS);
    let prrs = env.prrs(NS);
    init(&prs, "git", "app", "ws").await;
    let updated = put_files(&prrs, "git.app.ws", &[("cm.yaml", CM)])
        .await
        .expect("update under the guardrail mutator");
    let cm = files_of(&prrs, "git.app.ws").await["cm.yaml"].clone();
    assert!(
        cm.as_str()
            .is_some_and(|s| s.contains("guarded: \"yes\"") || s.contains("guarded: yes")),
        "{cm}"
    );
    let status = serde_json::to_string(&updated.data["status"]["renderStatus"]).expect("json");
    assert!(
        status.contains("set-labels:v0.2.0"),
        "renderStatus: {status}"
    );
    propose(&prs, "git.app.ws").await;

    // A validator added to the repository refuses the approval of what it rejects.
    script(
        &env,
        "deny.sh",
        "echo 'policy violation: every package needs an owner' >&2\nexit 1\n",
    );
    configure(
        &env,
        "require-owner",
        json!({"image": "require-owner", "prefixes": ["example.com/policy"],
               "binaryExecutor": {"tags": ["v1"], "path": "deny.sh"}}),
    )
    .await;
    env.repos(NS)
        .patch(
            "git",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"validators": [{"image": "example.com/policy/require-owner:v1"}]}}),
            ),
        )
        .await
        .expect("add a validator");
    // The validator applies once the controller has reopened the repository with it.
    let repos = env.repos(NS);
    eventually("the repository reopened with its validator", || {
        let repos = repos.clone();
        async move {
            let r = repos.get("git").await.expect("get repository");
            let ready = r.data["status"]["conditions"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            });
            ready && r.data["status"]["observedGeneration"] == json!(r.metadata.generation)
        }
    })
    .await;
    let (code, msg) = api_err(set_approval(&prs, "git.app.ws", "Published").await);
    assert_eq!(code, 422, "{msg}");
    assert!(msg.contains("every package needs an owner"), "{msg}");
    assert!(
        msg.contains("repository validator \"example.com/policy/require-owner:v1\""),
        "{msg}"
    );
    assert_eq!(
        spec(&prs.get("git.app.ws").await.expect("get"))["lifecycle"],
        "Proposed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn function_config_runs_an_image_over_a_builtin_within_its_memory_limit() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    let prrs = env.prrs(NS);
    init(&prs, "git", "app", "ws").await;
    // An image named like a built-in, which allocates 100 MB and then fails saying so.
    let registry = porch_testkit::registry::Registry::start();
    let hog = porch_testkit::registry::function_image(
        "x=$(head -c 100000000 /dev/zero | tr '\\0' a)\necho allocated ${#x} >&2\nexit 1\n",
    );
    let free = registry.push(&hog, "fns/set-labels:v1", false);
    let tight = registry.push(&hog, "tight/set-labels:v1", false);
    let step = |image: &str| {
        kptfile(
            "app",
            &format!("    - image: {image}\n      configMap:\n        team: blue\n"),
        )
    };

    // Without a FunctionConfig the built-in wins for its name, whatever the registry.
    put_files(
        &prrs,
        "git.app.ws",
        &[("Kptfile", &step(&free)), ("cm.yaml", CM)],
    )
    .await
    .expect("the built-in set-labels runs");

    // podExecutor: the image itself runs, in the sandbox, with the server's memory limit.
    configure(
        &env,
        "free",
        json!({"image": "set-labels", "prefixes": [format!("{}/fns", registry.addr)],
               "podExecutor": {"tags": ["v1"]}}),
    )
    .await;
    let (code, msg) = api_err(put_files(&prrs, "git.app.ws", &[("Kptfile", &step(&free))]).await);
    assert_eq!(code, 422, "{msg}");
    assert!(msg.contains("allocated 100000000"), "{msg}");

    // The FunctionConfig's memory limit stops the same image.
    configure(
        &env,
        "tight",
        json!({"image": "set-labels", "prefixes": [format!("{}/tight", registry.addr)],
               "podExecutor": {"tags": ["v1"]}, "limits": {"memory": "32Mi"}}),
    )
    .await;
    let (code, msg) = api_err(put_files(&prrs, "git.app.ws", &[("Kptfile", &step(&tight))]).await);
    assert_eq!(code, 422, "{msg}");
    assert!(!msg.contains("allocated"), "{msg}");
    assert!(msg.contains(&tight), "{msg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn function_config_budget_stops_a_builtin_the_server_budget_allows() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    let prrs = env.prrs(NS);
    init(&prs, "git", "loop", "ws").await;
    // The server has no step limit; this FunctionConfig gives starlark one.
    configure(
        &env,
        "starlark",
        json!({"image": "starlark", "prefixes": [""],
               "goExecutor": {"tags": ["v0.4.3"]},
               "limits": {"maxSteps": 100000}}),
    )
    .await;
    let kf = kptfile(
        "loop",
        "    - image: starlark:v0.4.3\n      configPath: star.yaml\n",
    );
    let star = "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: run\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nsource: |\n  for i in range(2147483647):\n    pass\n";
    let started = Instant::now();
    let (code, msg) = api_err(
        put_files(
            &prrs,
            "git.loop.ws",
            &[("Kptfile", &kf), ("star.yaml", star)],
        )
        .await,
    );
    assert_eq!(code, 422, "{msg}");
    assert!(msg.contains("exceeded the limit of 100000 steps"), "{msg}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}
