//! kpt HEAD's `configRef`: a pipeline step takes a resource of its package, named by kind
//! and name (apiVersion and namespace when given), as its function config. Fixtures are
//! written here: the referenced config is used wherever it lives in the package, a
//! reference to nothing or to more than one resource fails before anything is written, it
//! excludes `configMap`/`configPath`, and a validator does not see its own referenced config.

use std::path::Path;

const SET_NAMESPACE: &str = "ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1";
const SET_LABELS: &str = "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0";
const STARLARK: &str = "ghcr.io/kptdev/krm-functions-catalog/starlark:v0.5.0";

const SERVICE: &str = "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n  namespace: old\n";

mod pkgfix;
use pkgfix::package;

fn render(cwd: &Path) -> (i32, String) {
    let (code, _, err) = pkgfix::porchctl(cwd, &["fn", "render", "pkg"]);
    (code, err)
}

fn kptfile(step: &str) -> String {
    format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n    - image: {SET_NAMESPACE}\n{step}"
    )
}

fn ns_config(name: &str, namespace: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  namespace: {namespace}\n"
    )
}

#[test]
fn a_referenced_config_in_any_file_of_the_package_configures_the_step() {
    let step = "      configRef:\n        apiVersion: v1\n        kind: ConfigMap\n        name: ns-config\n";
    let (tmp, dir) = package(&[
        ("Kptfile", &kptfile(step)),
        ("svc.yaml", SERVICE),
        ("config/settings.yaml", &ns_config("ns-config", "prod")),
        ("other.yaml", &ns_config("unrelated", "wrong")),
    ]);
    let (code, err) = render(tmp.path());
    assert_eq!(code, 0, "{err}");
    let svc = std::fs::read_to_string(dir.join("svc.yaml")).expect("read");
    assert!(svc.contains("namespace: prod"), "{svc}");
}

#[test]
fn a_reference_to_nothing_fails_and_writes_nothing() {
    let step = "      configRef:\n        kind: ConfigMap\n        name: missing\n";
    let (tmp, dir) = package(&[("Kptfile", &kptfile(step)), ("svc.yaml", SERVICE)]);
    let (code, err) = render(tmp.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("pipeline.mutators[0].configRef"), "{err}");
    assert!(err.contains("ConfigMap missing"), "{err}");
    let svc = std::fs::read_to_string(dir.join("svc.yaml")).expect("read");
    assert_eq!(svc, SERVICE, "nothing is written");
}

#[test]
fn a_reference_matching_two_resources_is_ambiguous_until_narrowed() {
    let two = format!(
        "{}---\n{}",
        ns_config("ns-config", "a")
            .replace("  name: ns-config\n", "  name: ns-config\n  namespace: x\n"),
        ns_config("ns-config", "b")
            .replace("  name: ns-config\n", "  name: ns-config\n  namespace: y\n"),
    );
    let broad = "      configRef:\n        kind: ConfigMap\n        name: ns-config\n";
    let (tmp, _) = package(&[
        ("Kptfile", &kptfile(broad)),
        ("svc.yaml", SERVICE),
        ("cfg.yaml", &two),
    ]);
    let (code, err) = render(tmp.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("matches 2 resources"), "{err}");

    let narrow = "      configRef:\n        kind: ConfigMap\n        name: ns-config\n        namespace: y\n";
    let (tmp, dir) = package(&[
        ("Kptfile", &kptfile(narrow)),
        ("svc.yaml", SERVICE),
        ("cfg.yaml", &two),
    ]);
    let (code, err) = render(tmp.path());
    assert_eq!(code, 0, "{err}");
    let svc = std::fs::read_to_string(dir.join("svc.yaml")).expect("read");
    assert!(svc.contains("namespace: b"), "{svc}");
}

#[test]
fn config_ref_excludes_the_other_config_sources_and_needs_kind_and_name() {
    for (step, want) in [
        (
            "      configRef:\n        kind: ConfigMap\n        name: c\n      configMap:\n        namespace: x\n",
            "Field: `pipeline.mutators[0]`\nReason: functionConfig must specify at most one of `configMap`, `configPath`, or `configRef`\n",
        ),
        (
            "      configRef:\n        kind: ConfigMap\n        name: c\n      configPath: c.yaml\n",
            "Reason: functionConfig must specify at most one of `configMap`, `configPath`, or `configRef`\n",
        ),
        (
            "      configRef:\n        name: c\n",
            "Field: `pipeline.mutators[0].configRef.kind`\nReason: configRef must specify `kind`\n",
        ),
        (
            "      configRef:\n        kind: ConfigMap\n",
            "Field: `pipeline.mutators[0].configRef.name`\nReason: configRef must specify `name`\n",
        ),
        (
            "      configRef:\n        kind: ConfigMap\n        nmae: c\n",
            "field nmae not found",
        ),
    ] {
        let (tmp, _) = package(&[
            ("Kptfile", &kptfile(step)),
            ("svc.yaml", SERVICE),
            ("c.yaml", &ns_config("c", "x")),
        ]);
        let (code, err) = render(tmp.path());
        assert_eq!(code, 1, "{step}: {err}");
        assert!(err.contains(want), "{step}: want {want:?} in {err}");
    }
}

#[test]
fn a_validator_does_not_see_its_own_referenced_config() {
    // The starlark validator fails on any resource named `own` in its input, itself included.
    let script = "def check(items):\n  for r in items:\n    if r[\"metadata\"][\"name\"] == \"own\":\n      fail(\"saw \" + r[\"kind\"] + \" own\")\ncheck(ctx.resource_list[\"items\"])\n";
    let own = format!(
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: own\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nsource: |\n{}",
        script
            .lines()
            .map(|l| format!("  {l}\n"))
            .collect::<String>()
    );
    let pipeline = format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n    - image: {SET_LABELS}\n      configMap:\n        team: a\n  validators:\n    - image: {STARLARK}\n      configRef:\n        kind: StarlarkRun\n        name: own\n"
    );
    let (tmp, _) = package(&[
        ("Kptfile", &pipeline),
        ("svc.yaml", SERVICE),
        ("check.yaml", &own),
    ]);
    let (code, err) = render(tmp.path());
    assert_eq!(code, 0, "the validator never saw its own config: {err}");
    // A ConfigMap named `own` next to the StarlarkRun `own`: the reference is by kind, so
    // only the StarlarkRun leaves the validator's input.
    let (tmp, _) = package(&[
        ("Kptfile", &pipeline),
        ("svc.yaml", SERVICE),
        ("check.yaml", &own),
        ("cm.yaml", &ns_config("own", "x")),
    ]);
    let (code, err) = render(tmp.path());
    assert_eq!(code, 1, "a ConfigMap of the same name is still seen: {err}");
    assert!(err.contains("saw ConfigMap own"), "{err}");
}
