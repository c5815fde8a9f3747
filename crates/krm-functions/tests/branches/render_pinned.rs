//! Renders of pipelines pinned to the 2021 kustomize-based releases
//! (`set-namespace:v0.2.0`, `set-labels:v0.1.5`, as many of kpt's own render
//! cases pin them): the whole package, Kptfiles and a subpackage included.

use kpt::package::PackageFiles;
use kpt::render::{RenderOptions, render};
use kpt::runtime::RunOptions;
use krm_functions::Builtins;

const NS: &str = "ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.2.0";
const LABELS: &str = "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.1.5";

fn kptfile(name: &str, ns_selectors: &str, namespace: &str, label: &str) -> String {
    format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\npipeline:\n  mutators:\n    - image: {NS}\n      configMap:\n        namespace: {namespace}\n{ns_selectors}    - image: {LABELS}\n      configMap:\n        {label}\n"
    )
}

fn render_files(files: PackageFiles) -> kpt::render::RenderOutput {
    let runtime = Builtins;
    let opts = RenderOptions {
        runtime: &runtime,
        run: RunOptions::default(),
        root_name: "app".into(),
        write_status: true,
    };
    render(&files, &opts)
}

const APP: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
spec:
  replicas: 3
---
apiVersion: custom.io/v1
kind: Custom
metadata:
  name: custom
spec:
  image: nginx:1.2.3
";

const DB: &str = "\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 3
";

#[test]
fn package_and_subpackage_as_the_old_releases_edit_them() {
    let mut files = PackageFiles::new();
    files.insert("Kptfile", kptfile("app", "", "staging", "tier: db"));
    files.insert("resources.yaml", APP);
    files.insert("db/Kptfile", kptfile("db", "", "db", "app: backend"));
    files.insert("db/resources.yaml", DB);
    let out = render_files(files);
    assert!(out.error.is_none(), "{:?}", out.log);
    assert_eq!(out.mutation_steps.len(), 4);
    for step in &out.mutation_steps {
        assert_eq!(step.exit_code, 0);
        assert!(step.results.is_empty(), "no results: {:?}", step.results);
    }
    assert_eq!(
        out.files.get_text("resources.yaml"),
        Some(
            "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
  namespace: staging
  labels:
    tier: db
spec:
  replicas: 3
  selector:
    matchLabels:
      tier: db
  template:
    metadata:
      labels:
        tier: db
---
apiVersion: custom.io/v1
kind: Custom
metadata:
  name: custom
  namespace: staging
  labels:
    tier: db
spec:
  image: nginx:1.2.3
"
        )
    );
    // The subpackage's own pipeline first, then the parent's over it.
    assert_eq!(
        out.files.get_text("db/resources.yaml"),
        Some(
            "\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: staging
  labels:
    app: backend
    tier: db
spec:
  replicas: 3
  selector:
    matchLabels:
      app: backend
      tier: db
  template:
    metadata:
      labels:
        app: backend
        tier: db
"
        )
    );
    // Both Kptfiles are edited as resources: namespace and labels.
    let root = out.files.get_text("Kptfile").unwrap_or_default();
    assert!(
        root.starts_with(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n  namespace: staging\n  labels:\n    tier: db\n"
        ),
        "{root}"
    );
    let db = out.files.get_text("db/Kptfile").unwrap_or_default();
    assert!(
        db.starts_with(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: db\n  namespace: staging\n  labels:\n    app: backend\n    tier: db\n"
        ),
        "{db}"
    );
}

#[test]
fn a_selected_set_namespace_leaves_the_rest_and_set_labels_still_labels_all() {
    let selectors =
        "      selectors:\n        - name: nginx-deployment\n          kind: Deployment\n";
    let mut files = PackageFiles::new();
    files.insert(
        "Kptfile",
        kptfile("app", selectors, "staging", "tier: backend"),
    );
    files.insert("resources.yaml", APP);
    let out = render_files(files);
    assert!(out.error.is_none(), "{:?}", out.log);
    let res = out.files.get_text("resources.yaml").unwrap_or_default();
    assert!(
        res.contains(
            "  name: nginx-deployment\n  namespace: staging\n  labels:\n    tier: backend\n"
        ),
        "{res}"
    );
    assert!(
        res.contains("  name: custom\n  labels:\n    tier: backend\nspec:"),
        "{res}"
    );
    let root = out.files.get_text("Kptfile").unwrap_or_default();
    assert!(
        root.starts_with(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n  labels:\n    tier: backend\npipeline:"
        ),
        "{root}"
    );
}

#[test]
fn a_config_error_of_an_old_release_fails_the_render_with_one_result() {
    let mut files = PackageFiles::new();
    let kf = format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n    - image: {LABELS}\n      configMap:\n        {{}}\n"
    )
    .replace("configMap:\n        {}", "configMap: {}");
    files.insert("Kptfile", kf);
    files.insert("resources.yaml", APP);
    let out = render_files(files);
    assert!(out.error.is_some());
    let step = &out.mutation_steps[0];
    assert_eq!(step.exit_code, 1);
    let messages: Vec<&str> = step.results.iter().map(|r| r.message.as_str()).collect();
    assert_eq!(
        messages,
        vec!["failed to configure function: input label list cannot be empty"]
    );
    assert_eq!(out.files.get_text("resources.yaml"), Some(APP));
}
