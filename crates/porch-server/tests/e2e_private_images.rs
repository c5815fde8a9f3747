//! Function images on a registry behind basic auth (distribution's htpasswd), pulled by
//! server-side rendering with the credentials of the Secrets a FunctionConfig names
//! (`spec.imagePullSecrets`, a porch-rs extension): without them the render fails naming the
//! registry; with a `kubernetes.io/dockerconfigjson` or `kubernetes.io/basic-auth` Secret it
//! succeeds; the Secret is read at each pull, so a corrected one works at once. Also
//! `spec.imagePullPolicy: Never`, which refuses an image the cache lacks.

mod common;

use common::porch::*;
use kube::api::{Api, DynamicObject, PostParams};
use porch_testkit::registry::{PASSWORD, Registry, USER, function_image};
use serde_json::{Value, json};

const NS: &str = "default";

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n";

/// Rewrites the ConfigMap's value, so a successful render shows the image ran.
const PULLED: &str = "sed 's/k: v$/k: pulled/'\n";

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

fn kptfile(image: &str) -> String {
    format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\npipeline:\n  mutators:\n    - image: {image}\n"
    )
}

async fn render(prrs: &Api<DynamicObject>, image: &str) -> Result<DynamicObject, kube::Error> {
    put_files(
        prrs,
        "git.app.ws",
        &[("Kptfile", &kptfile(image)), ("cm.yaml", CM)],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_private_image_is_pulled_with_the_secrets_its_function_config_names() {
    let registry = Registry::start_with_auth();
    let image = function_image(PULLED);
    let docker = registry.push(&image, "fns/docker-auth:v1", false);
    let basic = registry.push(&image, "fns/basic-auth:v1", false);
    let never = registry.push(&image, "fns/never:v1", false);
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    let prrs = env.prrs(NS);
    init(&prs, "git", "app", "ws").await;
    let addr = registry.addr.to_string();
    let s = &env.server;

    // No FunctionConfig, no docker config: the registry refuses, and the error says which
    // registry and what to do. Nothing is saved.
    let (code, msg) = api_err(render(&prrs, &docker).await);
    assert_eq!(code, 422, "{msg}");
    assert!(
        msg.contains(&format!(
            "registry {addr} denied access without credentials"
        )),
        "{msg}"
    );
    assert!(msg.contains("spec.imagePullSecrets"), "{msg}");
    assert!(!files_of(&prrs, "git.app.ws").await.contains_key("cm.yaml"));

    // A kubernetes.io/dockerconfigjson Secret, as `kubectl create secret docker-registry`.
    s.kubectl_ok(&[
        "create",
        "secret",
        "docker-registry",
        "regcred",
        "-n",
        NS,
        &format!("--docker-server={addr}"),
        &format!("--docker-username={USER}"),
        &format!("--docker-password={PASSWORD}"),
    ]);
    configure(
        &env,
        "docker-auth",
        json!({"image": "docker-auth", "prefixes": [format!("{addr}/fns")],
               "podExecutor": {}, "imagePullSecrets": [{"name": "regcred"}]}),
    )
    .await;
    render(&prrs, &docker)
        .await
        .expect("pulled with the dockerconfigjson Secret");
    let cm = files_of(&prrs, "git.app.ws").await["cm.yaml"].clone();
    assert!(cm.as_str().is_some_and(|t| t.contains("k: pulled")), "{cm}");

    // A kubernetes.io/basic-auth Secret with a wrong password: refused, saying credentials
    // were given; corrected, the next render pulls (the Secret is read at each pull).
    s.kubectl_ok(&[
        "create",
        "secret",
        "generic",
        "basic",
        "-n",
        NS,
        "--type=kubernetes.io/basic-auth",
        &format!("--from-literal=username={USER}"),
        "--from-literal=password=wrong",
    ]);
    configure(
        &env,
        "basic-auth",
        json!({"image": "basic-auth", "prefixes": [format!("{addr}/fns")],
               "podExecutor": {}, "imagePullSecrets": [{"name": "basic"}]}),
    )
    .await;
    let (code, msg) = api_err(render(&prrs, &basic).await);
    assert_eq!(code, 422, "{msg}");
    assert!(
        msg.contains(&format!(
            "registry {addr} denied access with the credentials given"
        )),
        "{msg}"
    );
    let fixed = format!(r#"{{"data":{{"password":"{}"}}}}"#, base64_of(PASSWORD));
    s.kubectl_ok(&["patch", "secret", "basic", "-n", NS, "-p", &fixed]);
    render(&prrs, &basic)
        .await
        .expect("pulled with the corrected basic-auth Secret");

    // imagePullPolicy Never: an image the cache lacks is not pulled, credentials or not.
    configure(
        &env,
        "never",
        json!({"image": "never", "prefixes": [format!("{addr}/fns")],
               "podExecutor": {}, "imagePullSecrets": [{"name": "regcred"}],
               "imagePullPolicy": "Never"}),
    )
    .await;
    let (code, msg) = api_err(render(&prrs, &never).await);
    assert_eq!(code, 422, "{msg}");
    assert!(msg.contains("image pull policy is Never"), "{msg}");

    // A Secret that does not exist is named in the error, with its FunctionConfig.
    configure(
        &env,
        "missing",
        json!({"image": "missing", "prefixes": [format!("{addr}/fns")],
               "podExecutor": {}, "imagePullSecrets": [{"name": "nope"}]}),
    )
    .await;
    let (code, msg) = api_err(render(&prrs, &format!("{addr}/fns/missing:v1")).await);
    assert_eq!(code, 422, "{msg}");
    assert!(
        msg.contains("pull Secret \\\"nope\\\" of FunctionConfig default/missing")
            || msg.contains("pull Secret \"nope\" of FunctionConfig default/missing"),
        "{msg}"
    );
}

fn base64_of(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}
