//! Validation of a PackageVariant spec (upstream `validatePackageVariant`): what fails here
//! makes the variant Stalled, with upstream's messages joined by `; `.

use porch_api::PackageVariant;

pub const ADOPT_EXISTING: &str = "adoptExisting";
pub const ADOPT_NONE: &str = "adoptNone";
pub const DELETE: &str = "delete";
pub const ORPHAN: &str = "orphan";

/// The package-context keys Porch computes itself.
const RESERVED_CONTEXT_KEYS: [&str; 2] = ["name", "package-path"];

fn empty(s: &Option<String>) -> bool {
    s.as_deref().is_none_or(str::is_empty)
}

/// The adoption policy with its default.
pub fn adoption_policy(pv: &PackageVariant) -> &str {
    match pv.spec.adoption_policy.as_deref() {
        None | Some("") => ADOPT_NONE,
        Some(p) => p,
    }
}

/// The deletion policy with its default.
pub fn deletion_policy(pv: &PackageVariant) -> &str {
    match pv.spec.deletion_policy.as_deref() {
        None | Some("") => DELETE,
        Some(p) => p,
    }
}

/// Every problem of `pv`'s spec, in upstream's order and words.
pub fn validate(pv: &PackageVariant) -> Vec<String> {
    let mut errs = Vec::new();
    let spec = &pv.spec;
    match &spec.upstream {
        None => errs.push("missing required field spec.upstream".to_owned()),
        Some(u) => {
            if empty(&u.repo) {
                errs.push("missing required field spec.upstream.repo".to_owned());
            }
            if empty(&u.package) {
                errs.push("missing required field spec.upstream.package".to_owned());
            }
        }
    }
    match &spec.downstream {
        None => errs.push("missing required field spec.downstream".to_owned()),
        Some(d) => {
            if empty(&d.repo) {
                errs.push("missing required field spec.downstream.repo".to_owned());
            }
            if empty(&d.package) {
                errs.push("missing required field spec.downstream.package".to_owned());
            }
        }
    }
    let adoption = adoption_policy(pv);
    if adoption != ADOPT_NONE && adoption != ADOPT_EXISTING {
        errs.push(format!(
            "spec.adoptionPolicy field can only be {ADOPT_NONE:?} or {ADOPT_EXISTING:?}"
        ));
    }
    let deletion = deletion_policy(pv);
    if deletion != ORPHAN && deletion != DELETE {
        errs.push(format!(
            "spec.deletionPolicy can only be {ORPHAN:?} or {DELETE:?}"
        ));
    }
    if let Some(pc) = &spec.package_context {
        for key in RESERVED_CONTEXT_KEYS {
            if let Some(data) = pc.data.as_ref().filter(|d| d.contains_key(key)) {
                errs.push(invalid("spec.packageContext.data", &data, key));
            }
            if let Some(remove) = pc
                .remove_keys
                .as_ref()
                .filter(|r| r.iter().any(|k| k == key))
            {
                errs.push(invalid("spec.packageContext.removeKeys", &remove, key));
            }
        }
    }
    for (i, injector) in spec.injectors.iter().flatten().enumerate() {
        if injector.name.is_empty() {
            errs.push(format!("spec.injectors[{i}].name must not be empty"));
        }
    }
    errs
}

/// apimachinery's `field.Invalid(path, value, detail).Error()`: the value as JSON.
fn invalid(path: &str, value: &impl serde::Serialize, key: &str) -> String {
    let value = serde_json::to_string(value).unwrap_or_default();
    format!("{path}: Invalid value: {value}: must not contain the key {key:?}")
}

/// Upstream `combineErrors`: the non-empty messages joined by `; `.
pub fn combine_errors(errs: &[String]) -> String {
    errs.iter()
        .filter(|e| !e.is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pv(yaml: &str) -> PackageVariant {
        let header = "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: my-pv\n";
        // A variant without `spec` reads as an empty spec (as the reconcile reads it).
        let yaml = if yaml.is_empty() { "spec: {}\n" } else { yaml };
        serde_yaml::from_str(&format!("{header}{yaml}")).expect("a PackageVariant")
    }

    const BASE: &str = "spec:\n  upstream:\n    package: foo\n    revision: 1\n    repo: blueprints\n  downstream:\n    package: foo\n    repo: deployments\n";

    /// Upstream `TestValidatePackageVariant`, case by case.
    #[test]
    fn validate_package_variant() {
        let cases: &[(&str, String, &str)] = &[
            (
                "empty spec",
                String::new(),
                "missing required field spec.upstream; missing required field spec.downstream",
            ),
            (
                "missing package names",
                "spec:\n  upstream:\n    revision: 1\n    repo: blueprints\n  downstream:\n    repo: deployments\n".into(),
                "missing required field spec.upstream.package; missing required field spec.downstream.package",
            ),
            ("empty adoption and deletion policies", BASE.into(), ""),
            (
                "invalid adoption and deletion policies",
                format!("{BASE}  adoptionPolicy: invalid\n  deletionPolicy: invalid\n"),
                "spec.adoptionPolicy field can only be \"adoptNone\" or \"adoptExisting\"; spec.deletionPolicy can only be \"orphan\" or \"delete\"",
            ),
            (
                "valid adoption and deletion policies",
                format!("{BASE}  adoptionPolicy: adoptExisting\n  deletionPolicy: orphan\n"),
                "",
            ),
            (
                "validate package context",
                format!("{BASE}  packageContext:\n    data:\n      foo: bar\n      hello: there\n    removeKeys:\n    - bar\n    - foobar\n"),
                "",
            ),
            (
                "name in package context data",
                format!("{BASE}  packageContext:\n    data:\n      name: test\n"),
                "spec.packageContext.data: Invalid value: {\"name\":\"test\"}: must not contain the key \"name\"",
            ),
            (
                "name in package context removeKeys",
                format!("{BASE}  packageContext:\n    removeKeys:\n    - name\n"),
                "spec.packageContext.removeKeys: Invalid value: [\"name\"]: must not contain the key \"name\"",
            ),
            (
                "package-path in package context data",
                format!("{BASE}  packageContext:\n    data:\n      package-path: test\n"),
                "spec.packageContext.data: Invalid value: {\"package-path\":\"test\"}: must not contain the key \"package-path\"",
            ),
            (
                "package-path in package context removeKeys",
                format!("{BASE}  packageContext:\n    removeKeys:\n    - package-path\n"),
                "spec.packageContext.removeKeys: Invalid value: [\"package-path\"]: must not contain the key \"package-path\"",
            ),
            (
                "valid injectors",
                format!("{BASE}  injectors:\n  - group: porch.kpt.dev\n    version: v1alpha1\n    kind: Repository\n    name: foo\n  - name: bar\n"),
                "",
            ),
            (
                "invalid injectors",
                format!("{BASE}  injectors:\n  - group: porch.kpt.dev\n    version: v1alpha1\n    kind: Repository\n    name: foo\n  - name: \"\"\n"),
                "spec.injectors[1].name must not be empty",
            ),
        ];
        for (name, spec, want) in cases {
            let got = combine_errors(&validate(&pv(spec)));
            assert_eq!(got, *want, "{name}");
        }
    }

    /// Upstream `TestIsValidUpstram`: the upstream checks alone (the revision is kept,
    /// unlike upstream, which overwrote it with -1).
    #[test]
    fn is_valid_upstream() {
        let down = "  downstream:\n    package: foo\n    repo: deployments\n";
        assert_eq!(
            validate(&pv(&format!("spec:\n{down}"))),
            ["missing required field spec.upstream"]
        );
        assert_eq!(
            validate(&pv(&format!("spec:\n  upstream: {{}}\n{down}"))),
            [
                "missing required field spec.upstream.repo",
                "missing required field spec.upstream.package"
            ]
        );
        assert_eq!(
            validate(&pv(&format!("spec:\n  upstream:\n    repo: r\n{down}"))),
            ["missing required field spec.upstream.package"]
        );
        for upstream in [
            "    repo: r\n    package: p\n",
            "    repo: r\n    package: p\n    workspaceName: ws\n    revision: 1\n",
            "    repo: r\n    package: p\n    revision: -1\n",
        ] {
            let v = pv(&format!("spec:\n  upstream:\n{upstream}{down}"));
            assert!(validate(&v).is_empty(), "{upstream}");
        }
    }

    #[test]
    fn combine_errors_skips_empty_messages() {
        assert_eq!(
            combine_errors(&["a".into(), String::new(), "b".into()]),
            "a; b"
        );
        assert_eq!(combine_errors(&[]), "");
    }
}
