use super::super::testing::{Cluster, files_of, pv_from_yaml, text_of};
use super::*;

const KPTFILE: &str = "apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: prr
  annotations:
    config.kubernetes.io/local-config: \"true\"
info:
  description: Example
";

const CONTEXT: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: kptfile.kpt.dev
  annotations:
    config.kubernetes.io/local-config: \"true\"
data:
  name: example
";

const PV_BASE: &str = "apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: my-pv
  namespace: default
  uid: pv-uid
spec:
  upstream:
    repo: blueprints
    package: foo
    revision: 1
  downstream:
    repo: deployments
    package: bar
";

const PRR: Prr<'static> = Prr {
    namespace: "default",
    name: "prr",
};

fn package(extra: &[(&str, &str)]) -> PackageFiles {
    let mut files = files_of(&[("Kptfile", KPTFILE), ("package-context.yaml", CONTEXT)]);
    files.extend(files_of(extra));
    files
}

/// (condition type, file, required, errors) of a point.
type PointSummary = (String, String, bool, Vec<String>);

/// The summary of every point, sorted by condition type.
fn points_of(files: &PackageFiles) -> Result<Vec<PointSummary>, String> {
    let parsed = parse_files(files)?;
    let mut points: Vec<_> = find_injection_points(&parsed)
        .into_iter()
        .map(|p| (p.condition_type, p.file, p.required, p.errors))
        .collect();
    points.sort();
    Ok(points)
}

const CM_FOO_REQUIRED: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: foo
  annotations:
    kpt.dev/config-injection: required
data:
  foo: bar
";

const MYTYPE_FOO_OPTIONAL: &str = "apiVersion: bigco.com/v2
kind: MyType
metadata:
  name: foo
  annotations:
    kpt.dev/config-injection: optional
spec:
  foo: bar
  bar: foofoo
";

/// Upstream `TestFindInjectionPoints`, every table case.
#[test]
fn find_injection_points_table() {
    let ct = |s: &str| s.to_string();
    assert_eq!(
        points_of(&package(&[("junk.yaml", "baddata")])),
        Err("junk.yaml: failed to extract objects: unhandled node kind 8".into())
    );
    assert_eq!(points_of(&package(&[])), Ok(vec![]));
    let optional = "apiVersion: v1
kind: ConfigMap
metadata:
  name: foo
  annotations:
    config.kubernetes.io/local-config: \"true\"
    kpt.dev/config-injection: optional
data:
  foo: bar
";
    assert_eq!(
        points_of(&package(&[("file.yaml", optional)])),
        Ok(vec![(
            ct("config.injection.ConfigMap.foo"),
            ct("file.yaml"),
            false,
            vec![]
        )])
    );
    let invalid = optional.replace("injection: optional", "injection: invalid");
    assert_eq!(
        points_of(&package(&[("file.yaml", &invalid)])),
        Ok(vec![(
            ct("config.injection.ConfigMap.foo"),
            ct("file.yaml"),
            false,
            vec![ct(
                "file.yaml: ConfigMap/foo has invalid \"kpt.dev/config-injection\" annotation value of \"invalid\""
            )]
        )])
    );
    assert_eq!(
        points_of(&package(&[("file2.yaml", CM_FOO_REQUIRED)])),
        Ok(vec![(
            ct("config.injection.ConfigMap.foo"),
            ct("file2.yaml"),
            true,
            vec![]
        )])
    );
    let both = format!("{CM_FOO_REQUIRED}---\n{MYTYPE_FOO_OPTIONAL}");
    let in_one_file = vec![
        (
            ct("config.injection.ConfigMap.foo"),
            ct("file.yaml"),
            true,
            vec![],
        ),
        (
            ct("config.injection.MyType.foo"),
            ct("file.yaml"),
            false,
            vec![],
        ),
    ];
    assert_eq!(
        points_of(&package(&[("file.yaml", &both)])),
        Ok(in_one_file.clone())
    );
    let foo2 = MYTYPE_FOO_OPTIONAL
        .replace("name: foo", "name: foo2")
        .replace("optional", "required");
    let mut across = in_one_file;
    across.push((
        ct("config.injection.MyType.foo2"),
        ct("some-file.yaml"),
        true,
        vec![],
    ));
    assert_eq!(
        points_of(&package(&[("file.yaml", &both), ("some-file.yaml", &foo2)])),
        Ok(across)
    );
    // files that are not resources are not read
    assert_eq!(
        points_of(&package(&[("README.md", "- not: yaml")])),
        Ok(vec![])
    );
}

fn ip(file: &str, condition_type: &str, required: bool, errors: &[&str]) -> InjectionPoint {
    InjectionPoint {
        file: file.into(),
        condition_type: condition_type.into(),
        required,
        errors: errors.iter().map(|e| e.to_string()).collect(),
        ..InjectionPoint::default()
    }
}

/// Upstream `TestValidateInjectionPoints`, every table case.
#[test]
fn validate_injection_points_table() {
    let cm = "config.injection.ConfigMap.foo";
    let err = |s: &str| Err(MutationError(s.into()));
    assert_eq!(validate_injection_points(&[]), Ok(()));
    assert_eq!(
        validate_injection_points(&[ip("file.yaml", cm, false, &[])]),
        Ok(())
    );
    assert_eq!(
        validate_injection_points(&[ip("file.yaml", cm, false, &["e1"])]),
        err("errors in injection points: e1")
    );
    assert_eq!(
        validate_injection_points(&[
            ip("file.yaml", cm, true, &[]),
            ip("file.yaml", "config.injection.MyType.foo", false, &[]),
        ]),
        Ok(())
    );
    assert_eq!(
        validate_injection_points(&[
            ip("file.yaml", cm, false, &["e1", "e2"]),
            ip(
                "file.yaml",
                "config.injection.ConfigMap.foo2",
                false,
                &["e3"]
            ),
        ]),
        err("errors in injection points: e1, e2, e3")
    );
    assert_eq!(
        validate_injection_points(&[
            ip("file.yaml", cm, false, &[]),
            ip("file2.yaml", cm, false, &[]),
            ip("file3.yaml", cm, false, &[]),
        ]),
        err(
            "errors in injection points: duplicate injection conditionType \"config.injection.ConfigMap.foo\" (file.yaml and file2.yaml), duplicate injection conditionType \"config.injection.ConfigMap.foo\" (file2.yaml and file3.yaml)"
        )
    );
}

async fn inject_with(
    injectors: &str,
    files: &mut PackageFiles,
    cluster: &Cluster,
) -> Result<(), MutationError> {
    let pv = pv_from_yaml(&format!("{PV_BASE}{injectors}"));
    ensure_config_injection(&pv, &PRR, files, cluster).await
}

const TEAM: &str = "apiVersion: hr.example.com/v1alpha1
kind: Team
metadata:
  name: team
  annotations:
    kpt.dev/config-injection: required
spec:
  chargeCode: example
";

const INJECTED_TEAM: &str = "apiVersion: hr.example.com/v1alpha1
kind: Team
metadata:
  name: team
  annotations:
    kpt.dev/config-injection: required
    kpt.dev/injected-resource: dev-team-beta
spec:
  chargeCode: cd
";

const KPTFILE_HEAD: &str = "apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: prr
  annotations:
    config.kubernetes.io/local-config: \"true\"
info:
";

/// Upstream `TestEnsureConfigInjection`, every table case (with upstream's fake cluster).
#[tokio::test]
async fn ensure_config_injection_table() {
    let cluster = Cluster::upstream_fake();

    // empty injectors
    let mut files = package(&[]);
    assert_eq!(inject_with("", &mut files, &cluster).await, Ok(()));
    assert_eq!(files, package(&[]));

    // one ConfigMap injection point
    let cm = "apiVersion: v1
kind: ConfigMap
metadata:
  name: regional-endpoints
  annotations:
    kpt.dev/config-injection: required
data:
  db: example
";
    let mut files = package(&[("configmap.yaml", cm)]);
    let injectors = "  injectors:\n  - name: us-east1-endpoints\n";
    assert_eq!(inject_with(injectors, &mut files, &cluster).await, Ok(()));
    assert_eq!(
        text_of(&files, "Kptfile"),
        format!(
            "{KPTFILE_HEAD}  readinessGates:
  - conditionType: config.injection.ConfigMap.regional-endpoints
  description: Example
status:
  conditions:
  - type: config.injection.ConfigMap.regional-endpoints
    status: \"True\"
    message: injected resource \"us-east1-endpoints\" from cluster
    reason: ConfigInjected
"
        )
    );
    assert_eq!(
        text_of(&files, "configmap.yaml"),
        "apiVersion: v1
kind: ConfigMap
metadata:
  name: regional-endpoints
  annotations:
    kpt.dev/config-injection: required
    kpt.dev/injected-resource: us-east1-endpoints
data:
  db: db.us-east1.example.com
"
    );
    assert_eq!(text_of(&files, "package-context.yaml"), CONTEXT);
    // a second pass finds everything in place
    let converged = files.clone();
    assert_eq!(inject_with(injectors, &mut files, &cluster).await, Ok(()));
    assert_eq!(files, converged);

    // one non-ConfigMap injection point
    let mut files = package(&[("team.yaml", TEAM)]);
    let injectors =
        "  injectors:\n  - name: dev-team-beta\n    group: hr.example.com\n    kind: Team\n";
    assert_eq!(inject_with(injectors, &mut files, &cluster).await, Ok(()));
    assert_eq!(
        text_of(&files, "Kptfile"),
        format!(
            "{KPTFILE_HEAD}  readinessGates:
  - conditionType: config.injection.Team.team
  description: Example
status:
  conditions:
  - type: config.injection.Team.team
    status: \"True\"
    message: injected resource \"dev-team-beta\" from cluster
    reason: ConfigInjected
"
        )
    );
    assert_eq!(text_of(&files, "team.yaml"), INJECTED_TEAM);

    // mixed injection points
    let more = format!(
        "apiVersion: v1
kind: ConfigMap
metadata:
  name: my-cm
  annotations:
    kpt.dev/config-injection: optional
data:
  db: db.example.com
---
{TEAM}"
    );
    let mut files = package(&[("more.yaml", &more)]);
    let injectors = "  injectors:
  - name: us-east2-endpoints
  - name: dev-team-beta
    group: hr.example.com
    kind: Team
";
    assert_eq!(inject_with(injectors, &mut files, &cluster).await, Ok(()));
    assert_eq!(
        text_of(&files, "Kptfile"),
        format!(
            "{KPTFILE_HEAD}  readinessGates:
  - conditionType: config.injection.Team.team
  description: Example
status:
  conditions:
  - type: config.injection.ConfigMap.my-cm
    status: \"True\"
    message: injected resource \"us-east2-endpoints\" from cluster
    reason: ConfigInjected
  - type: config.injection.Team.team
    status: \"True\"
    message: injected resource \"dev-team-beta\" from cluster
    reason: ConfigInjected
"
        )
    );
    assert_eq!(
        text_of(&files, "more.yaml"),
        format!(
            "apiVersion: v1
kind: ConfigMap
metadata:
  name: my-cm
  annotations:
    kpt.dev/config-injection: optional
    kpt.dev/injected-resource: us-east2-endpoints
data:
  db: db.us-east2.example.com
---
{INJECTED_TEAM}"
        )
    );
}

/// The condition the Kptfile gets for a single optional ConfigMap point `foo`.
async fn condition_for(injectors: &str, cluster: &Cluster, cm: &str) -> String {
    let mut files = package(&[("cm.yaml", cm)]);
    assert_eq!(inject_with(injectors, &mut files, cluster).await, Ok(()));
    let kptfile = text_of(&files, "Kptfile");
    kptfile
        .split_once("status:\n")
        .map(|(_, s)| s.to_string())
        .unwrap_or(kptfile)
}

fn not_selected(message: &str) -> String {
    format!(
        "  conditions:\n  - type: config.injection.ConfigMap.foo\n    status: \"False\"\n    message: {message}\n    reason: NoResourceSelected\n"
    )
}

const CM_FOO_OPTIONAL: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: foo
  annotations:
    kpt.dev/config-injection: optional
data:
  foo: bar
";

#[tokio::test]
async fn failures_become_conditions() {
    let fake = Cluster::upstream_fake();
    // no injectors
    assert_eq!(
        condition_for("", &fake, CM_FOO_OPTIONAL).await,
        not_selected("no injectors defined")
    );
    // the injector's group, version or kind does not match the point
    for selector in ["group: apps", "version: v2", "kind: Secret"] {
        assert_eq!(
            condition_for(
                &format!("  injectors:\n  - name: us-east1-endpoints\n    {selector}\n"),
                &fake,
                CM_FOO_OPTIONAL
            )
            .await,
            not_selected("no resource matched any injection selector for this injection point"),
            "{selector}"
        );
    }
    // no in-cluster object of that name
    assert_eq!(
        condition_for("  injectors:\n  - name: absent\n", &fake, CM_FOO_OPTIONAL).await,
        not_selected("no resource matched any injection selector for this injection point")
    );
    // a kind the cluster does not serve
    let widget = CM_FOO_OPTIONAL
        .replace("apiVersion: v1", "apiVersion: example.com/v1")
        .replace("kind: ConfigMap", "kind: Widget");
    let got = condition_for("  injectors:\n  - name: w\n", &fake, &widget).await;
    assert!(
        got.contains(
            "message: no matches for kind \"Widget\" in version \"example.com/v1\"\n    reason: NoResourceSelected"
        ),
        "{got}"
    );
    // served but none in the namespace
    let mut empty = Cluster::default();
    empty.known.push(("v1".into(), "ConfigMap".into()));
    assert_eq!(
        condition_for("  injectors:\n  - name: x\n", &empty, CM_FOO_OPTIONAL).await,
        not_selected("no in-cluster resources of type v1.ConfigMap")
    );
    // listing fails
    let mut failing = Cluster::upstream_fake();
    failing.failing.push("ConfigMap".into());
    assert_eq!(
        condition_for("  injectors:\n  - name: x\n", &failing, CM_FOO_OPTIONAL).await,
        not_selected("listing ConfigMap failed")
    );
    // the selected object lacks the field to inject
    let mut no_data = Cluster::default();
    no_data.add("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bare\n  namespace: default\n");
    let mut files = package(&[("cm.yaml", CM_FOO_OPTIONAL)]);
    assert_eq!(
        inject_with("  injectors:\n  - name: bare\n", &mut files, &no_data).await,
        Ok(())
    );
    assert_eq!(text_of(&files, "cm.yaml"), CM_FOO_OPTIONAL);
    assert!(
        text_of(&files, "Kptfile")
            .contains("message: field \"data\" not found in resource \"bare\"\n"),
        "{}",
        text_of(&files, "Kptfile")
    );
    // objects in other namespaces are not seen
    let mut elsewhere = Cluster::default();
    elsewhere.add("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: other\ndata:\n  a: b\n");
    assert_eq!(
        condition_for("  injectors:\n  - name: x\n", &elsewhere, CM_FOO_OPTIONAL).await,
        not_selected("no in-cluster resources of type v1.ConfigMap")
    );
}

/// Upstream does not fail a required point nothing was injected into: it gets a readiness
/// gate and a False condition, which keeps the package from being published.
#[tokio::test]
async fn required_point_without_match_is_gated_not_failed() {
    let mut files = package(&[("cm.yaml", CM_FOO_REQUIRED)]);
    let injectors = "  injectors:\n  - name: absent\n";
    assert_eq!(
        inject_with(injectors, &mut files, &Cluster::upstream_fake()).await,
        Ok(())
    );
    assert_eq!(
        text_of(&files, "Kptfile"),
        format!(
            "{KPTFILE_HEAD}  readinessGates:\n  - conditionType: config.injection.ConfigMap.foo\n  description: Example\nstatus:\n{}",
            not_selected("no resource matched any injection selector for this injection point")
        )
    );
    assert_eq!(text_of(&files, "cm.yaml"), CM_FOO_REQUIRED);
}

#[tokio::test]
async fn first_matching_injector_wins_and_edits_are_lossless() {
    let cm = "# endpoints for the region
apiVersion: v1
kind: ConfigMap
metadata:
  name: foo
  annotations:
    kpt.dev/config-injection: optional # filled in by the PackageVariant
data:
  db: example # replaced
  stale: key
---
# untouched
apiVersion: v1
kind: Secret
metadata: {name: s}
";
    let mut cluster = Cluster::upstream_fake();
    cluster.add(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  namespace: default\ndata:\n  db: db.extra\n  port: \"80\"\n  enabled: \"yes\"\n",
    );
    let mut files = package(&[("cm.yaml", cm)]);
    let injectors = "  injectors:
  - name: dev-team-beta
    kind: Team
  - name: absent
  - name: extra
  - name: us-east1-endpoints
";
    assert_eq!(inject_with(injectors, &mut files, &cluster).await, Ok(()));
    assert_eq!(
        text_of(&files, "cm.yaml"),
        "# endpoints for the region
apiVersion: v1
kind: ConfigMap
metadata:
  name: foo
  annotations:
    kpt.dev/config-injection: optional # filled in by the PackageVariant
    kpt.dev/injected-resource: extra
data:
  db: db.extra # replaced
  port: \"80\"
  enabled: \"yes\"
---
# untouched
apiVersion: v1
kind: Secret
metadata: {name: s}
"
    );
}

#[tokio::test]
async fn invalid_points_and_kptfile_are_errors() {
    let fake = Cluster::upstream_fake();
    let mut files = package(&[("a.yaml", CM_FOO_REQUIRED), ("b.yaml", CM_FOO_OPTIONAL)]);
    assert_eq!(
        inject_with("", &mut files, &fake).await,
        Err(MutationError(
            "errors in injection points: duplicate injection conditionType \"config.injection.ConfigMap.foo\" (a.yaml and b.yaml)".into()
        ))
    );
    let mut files = package(&[("junk.yml", "- a\n")]);
    assert_eq!(
        inject_with("", &mut files, &fake).await,
        Err(MutationError(
            "junk.yml: failed to extract objects: unhandled node kind 2".into()
        ))
    );
    let mut files = files_of(&[("cm.yaml", CM_FOO_OPTIONAL)]);
    assert_eq!(
        inject_with("", &mut files, &fake).await,
        Err(MutationError(
            "\"Kptfile\" not found in PackageRevisionResources 'default/prr'".into()
        ))
    );
    let mut files = files_of(&[("Kptfile", CONTEXT)]);
    assert_eq!(
        inject_with("", &mut files, &fake).await,
        Err(MutationError(
            "\"Kptfile\" does not contain kind \"Kptfile\" in PackageRevisionResources 'default/prr'".into()
        ))
    );
}
