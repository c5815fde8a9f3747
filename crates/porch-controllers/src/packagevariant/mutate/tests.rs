//! `apply` as the controller calls it: all mutations together and change detection
//! (upstream `calculateDraftResources`).

use super::testing::{Cluster, files_of, pv_from_yaml, text_of};
use super::*;

const PV: &str = "apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: my-pv
  namespace: default
spec:
  upstream:
    repo: blueprints
    package: foo
  downstream:
    repo: deployments
    package: bar
  packageContext:
    data:
      region: us-east1
  pipeline:
    mutators:
    - name: set-namespace
      image: set-namespace:v0.4
      configMap:
        namespace: my-ns
  injectors:
  - name: us-east1-endpoints
";

const KPTFILE: &str = "# the blueprint
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: bar
info:
  description: Example # keep me
pipeline:
  mutators:
    - image: set-labels:v0.1
      configMap:
        app: foo
";

const CONTEXT: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: kptfile.kpt.dev
data:
  name: bar
";

const ENDPOINTS: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: endpoints
  annotations:
    kpt.dev/config-injection: required
data:
  db: example
";

fn package() -> PackageFiles {
    files_of(&[
        ("Kptfile", KPTFILE),
        ("package-context.yaml", CONTEXT),
        ("endpoints.yaml", ENDPOINTS),
        ("README.md", "# bar\n"),
    ])
}

#[tokio::test]
async fn applies_all_mutations_then_converges() {
    let pv = pv_from_yaml(PV);
    let cluster = Cluster::upstream_fake();
    let mut files = package();
    assert_eq!(apply(&pv, &mut files, &cluster).await, Ok(true));
    assert_eq!(
        text_of(&files, "Kptfile"),
        "# the blueprint
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: bar
info:
  readinessGates:
    - conditionType: config.injection.ConfigMap.endpoints
  description: Example # keep me
pipeline:
  mutators:
    - name: PackageVariant.my-pv.set-namespace.0
      image: set-namespace:v0.4
      configMap:
        namespace: my-ns
    - image: set-labels:v0.1
      configMap:
        app: foo
status:
  conditions:
    - type: config.injection.ConfigMap.endpoints
      status: \"True\"
      message: injected resource \"us-east1-endpoints\" from cluster
      reason: ConfigInjected
"
    );
    assert_eq!(
        text_of(&files, "package-context.yaml"),
        format!("{CONTEXT}  region: us-east1\n")
    );
    assert_eq!(
        text_of(&files, "endpoints.yaml"),
        "apiVersion: v1
kind: ConfigMap
metadata:
  name: endpoints
  annotations:
    kpt.dev/config-injection: required
    kpt.dev/injected-resource: us-east1-endpoints
data:
  db: db.us-east1.example.com
"
    );
    assert_eq!(text_of(&files, "README.md"), "# bar\n");

    // converged: no change reported, every byte kept
    let converged = files.clone();
    assert_eq!(apply(&pv, &mut files, &cluster).await, Ok(false));
    assert_eq!(files, converged);
}

#[tokio::test]
async fn nothing_to_do_changes_nothing() {
    let pv = pv_from_yaml(
        "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: my-pv\n  namespace: default\nspec: {}\n",
    );
    let mut files = files_of(&[("Kptfile", KPTFILE), ("package-context.yaml", CONTEXT)]);
    let before = files.clone();
    assert_eq!(apply(&pv, &mut files, &Cluster::default()).await, Ok(false));
    assert_eq!(files, before);
}

#[tokio::test]
async fn kptfile_text_only_changes_are_not_changes() {
    // Dropping `mutators: []` rewrites the Kptfile but not its content: upstream compares
    // Kptfiles semantically, and the original bytes are kept.
    let kptfile = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: bar\npipeline:\n  mutators: []\n  validators:\n  - image: v\n";
    let pv = pv_from_yaml(
        "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: my-pv\n  namespace: default\nspec: {}\n",
    );
    let mut files = files_of(&[("Kptfile", kptfile)]);
    let mut probe = files.clone();
    pipeline::ensure_krm_functions(
        &pv,
        &files::Prr {
            namespace: "default",
            name: "",
        },
        &mut probe,
    )
    .expect("mutates");
    assert_ne!(probe, files, "the pipeline edit does rewrite the text");
    assert_eq!(apply(&pv, &mut files, &Cluster::default()).await, Ok(false));
    assert_eq!(text_of(&files, "Kptfile"), kptfile);
}

#[tokio::test]
async fn errors_leave_files_untouched() {
    let pv = pv_from_yaml(PV);
    let mut files = package();
    files.insert("dup.yaml".into(), ENDPOINTS.as_bytes().to_vec());
    let before = files.clone();
    assert_eq!(
        apply_to_revision(&pv, "deployments.bar.packagevariant-1", &mut files, &Cluster::upstream_fake()).await,
        Err(MutationError(
            "errors in injection points: duplicate injection conditionType \"config.injection.ConfigMap.endpoints\" (dup.yaml and endpoints.yaml)".into()
        ))
    );
    // the package context and pipeline edits made before the failure are undone
    assert_eq!(files, before);

    let mut files = package();
    files.remove("package-context.yaml");
    let err = apply_to_revision(
        &pv,
        "deployments.bar.packagevariant-1",
        &mut files,
        &Cluster::upstream_fake(),
    )
    .await
    .err();
    assert_eq!(
        err.as_ref().map(|e| e.0.as_str()),
        Some(
            "\"package-context.yaml\" not found in PackageRevisionResources 'default/deployments.bar.packagevariant-1'"
        )
    );
    assert_eq!(err.map(|e| e.kind()), Some(porch_core::ErrorKind::Invalid));
    // without the revision's name the text still names the namespace
    let err = apply(&pv, &mut files, &Cluster::upstream_fake())
        .await
        .err();
    assert_eq!(
        err.map(|e| e.0),
        Some("\"package-context.yaml\" not found in PackageRevisionResources 'default/'".into())
    );
}
