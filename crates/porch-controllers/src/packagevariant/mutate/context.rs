//! The package context: keys of the `kptfile.kpt.dev` ConfigMap in `package-context.yaml`
//! set from `spec.packageContext.data` and removed per `spec.packageContext.removeKeys`
//! (upstream `ensurePackageContext`, and the key rules of `validatePackageVariant`).

use kpt::yaml::Node;
use porch_core::repository::PackageFiles;

use super::MutationError;
use super::files::{Prr, single_object, write_back};

/// The file and object holding the package context.
const CONTEXT_FILE: &str = "package-context.yaml";
const CONTEXT_NAME: &str = "kptfile.kpt.dev";
/// Keys kpt owns: a PackageVariant may neither set nor remove them.
const RESERVED_KEYS: [&str; 2] = ["name", "package-path"];

/// The errors of upstream's validation for the package context: the reserved keys in
/// `data` or `removeKeys`, with apimachinery's `field.Invalid` texts.
pub fn validate_package_context(pc: &porch_api::packagevariant::PackageContext) -> Vec<String> {
    let mut errors = Vec::new();
    let data = pc.data.clone().unwrap_or_default();
    let remove = pc.remove_keys.clone().unwrap_or_default();
    for key in RESERVED_KEYS {
        if data.contains_key(key) {
            errors.push(format!(
                "spec.packageContext.data: Invalid value: {}: must not contain the key {key:?}",
                serde_json::to_string(&data).unwrap_or_default()
            ));
        }
        for k in remove.iter().filter(|k| *k == key) {
            errors.push(format!(
                "spec.packageContext.removeKeys: Invalid value: {}: must not contain the key {k:?}",
                serde_json::to_string(&remove).unwrap_or_default()
            ));
        }
    }
    errors
}

/// Applies `spec.packageContext` to `package-context.yaml`; nothing to do without data or
/// keys to remove.
pub(crate) fn ensure_package_context(
    pv: &porch_api::PackageVariant,
    prr: &Prr<'_>,
    files: &mut PackageFiles,
) -> Result<(), MutationError> {
    let Some(pc) = &pv.spec.package_context else {
        return Ok(());
    };
    let set = pc.data.clone().unwrap_or_default();
    let remove = pc.remove_keys.clone().unwrap_or_default();
    if set.is_empty() && remove.is_empty() {
        return Ok(());
    }
    // The controller validates first; checked again so that kpt's keys can never be edited.
    let invalid = validate_package_context(pc);
    if !invalid.is_empty() {
        return Err(MutationError(invalid.join("; ")));
    }
    let (mut docs, index) = single_object(files, prr, CONTEXT_FILE, "ConfigMap", CONTEXT_NAME)?;
    let Some(data) = docs[index]
        .root
        .get_mut("data")
        .filter(|d| !(d.is_null() && d.tag.is_none()))
    else {
        return Err(MutationError(format!(
            "PackageRevisionResources {prr} PackageContext no data field found"
        )));
    };
    check_string_map(data).map_err(|e| {
        MutationError(format!(
            "PackageRevisionResources {prr} PackageContext invalid data field: {e}"
        ))
    })?;
    for (k, v) in &set {
        data.set_string(k, v);
    }
    for k in &remove {
        data.remove(k);
    }
    write_back(files, CONTEXT_FILE, &docs);
    Ok(())
}

/// ConfigMap data is a mapping of scalar keys to scalar values.
fn check_string_map(data: &Node) -> Result<(), String> {
    if !data.is_mapping() {
        return Err("data is not a map of strings".into());
    }
    match data
        .entries()
        .iter()
        .find(|(k, v)| !k.is_scalar() || !v.is_scalar())
    {
        Some((k, _)) => Err(format!(
            "value of key {:?} is not a string",
            k.as_str().unwrap_or_default()
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{files_of, pv_from_yaml, text_of};
    use super::*;

    const PV_BASE: &str = "\
apiVersion: config.porch.kpt.dev/v1alpha1
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

    const KPTFILE: &str = "\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: prr
  annotations:
    config.kubernetes.io/local-config: \"true\"
info:
  description: Example
";

    const CONTEXT: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: kptfile.kpt.dev
  annotations:
    config.kubernetes.io/local-config: \"true\"
data:
  name: example
";

    const PRR: Prr<'static> = Prr {
        namespace: "default",
        name: "prr",
    };

    fn run(spec: &str, context: &str) -> (Result<(), MutationError>, PackageFiles) {
        let pv = pv_from_yaml(&format!("{PV_BASE}{spec}"));
        let mut files = files_of(&[("Kptfile", KPTFILE), ("package-context.yaml", context)]);
        let r = ensure_package_context(&pv, &PRR, &mut files);
        (r, files)
    }

    /// Upstream `TestEnsurePackageContext`, every table case.
    #[test]
    fn ensure_package_context_table() {
        let cases: &[(&str, &str, &str, &str)] = &[
            ("empty package context", "", "", ""),
            (
                "add one entry",
                "  packageContext:\n    data:\n      foo: bar\n",
                "",
                "  foo: bar\n",
            ),
            (
                "add two entries",
                "  packageContext:\n    data:\n      foo: bar\n      foobar: barfoo\n",
                "",
                "  foo: bar\n  foobar: barfoo\n",
            ),
            (
                "add one with existing",
                "  packageContext:\n    data:\n      foo: bar\n",
                "  hello: there\n",
                "  hello: there\n  foo: bar\n",
            ),
            (
                "change existing",
                "  packageContext:\n    data:\n      foo: bar\n",
                "  foo: there\n",
                "  foo: bar\n",
            ),
            (
                "remove one entry",
                "  packageContext:\n    removeKeys:\n    - hello\n",
                "  hello: there\n",
                "",
            ),
            (
                "remove entry, leave existing",
                "  packageContext:\n    removeKeys:\n    - hello\n",
                "  hello: there\n  foo: bar\n",
                "  foo: bar\n",
            ),
            (
                "remove and add entries",
                "  packageContext:\n    data:\n      foobar: barfoo\n      there: hello\n    removeKeys:\n    - hello\n",
                "  hello: there\n  foo: bar\n",
                "  foo: bar\n  foobar: barfoo\n  there: hello\n",
            ),
        ];
        for (name, spec, initial, expected) in cases {
            let (r, files) = run(spec, &format!("{CONTEXT}{initial}"));
            assert_eq!(r, Ok(()), "{name}");
            assert_eq!(
                text_of(&files, "package-context.yaml"),
                format!("{CONTEXT}{expected}"),
                "{name}"
            );
            assert_eq!(text_of(&files, "Kptfile"), KPTFILE, "{name}");
        }
    }

    #[test]
    fn comments_and_quoting_are_kept() {
        let context = "\
# the package context
apiVersion: v1
kind: ConfigMap
metadata:
  name: kptfile.kpt.dev
data:
  name: example # kpt sets this
  port: \"80\"
";
        let spec = "  packageContext:\n    data:\n      port: \"8080\"\n      enabled: \"true\"\n";
        let (r, files) = run(spec, context);
        assert_eq!(r, Ok(()));
        assert_eq!(
            text_of(&files, "package-context.yaml"),
            "\
# the package context
apiVersion: v1
kind: ConfigMap
metadata:
  name: kptfile.kpt.dev
data:
  name: example # kpt sets this
  port: \"8080\"
  enabled: \"true\"
"
        );
    }

    #[test]
    fn unchanged_values_keep_bytes() {
        let context = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kptfile.kpt.dev}\ndata:\n  foo:   bar\n";
        let (r, files) = run(
            "  packageContext:\n    data:\n      foo: bar\n    removeKeys: [absent]\n",
            context,
        );
        assert_eq!(r, Ok(()));
        assert_eq!(text_of(&files, "package-context.yaml"), context);
    }

    #[test]
    fn missing_file_or_object_is_an_error() {
        let spec = "  packageContext:\n    data:\n      foo: bar\n";
        let pv = pv_from_yaml(&format!("{PV_BASE}{spec}"));
        let mut files = files_of(&[("Kptfile", KPTFILE)]);
        assert_eq!(
            ensure_package_context(&pv, &PRR, &mut files),
            Err(MutationError(
                "\"package-context.yaml\" not found in PackageRevisionResources 'default/prr'"
                    .into()
            ))
        );
        let (r, _) = run(
            spec,
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: kptfile.kpt.dev\n",
        );
        assert_eq!(
            r,
            Err(MutationError(
                "\"package-context.yaml\" does not contain kind \"ConfigMap\" in PackageRevisionResources 'default/prr'".into()
            ))
        );
        let (r, _) = run(
            spec,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n",
        );
        assert_eq!(
            r,
            Err(MutationError(
                "\"package-context.yaml\" does not contain resource named \"kptfile.kpt.dev\" in PackageRevisionResources 'default/prr'".into()
            ))
        );
        let (r, _) = run(
            spec,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n",
        );
        assert_eq!(
            r,
            Err(MutationError(
                "PackageRevisionResources default/prr PackageContext no data field found".into()
            ))
        );
        let (r, _) = run(
            spec,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\ndata:\n  a:\n    b: c\n",
        );
        assert_eq!(
            r,
            Err(MutationError(
                "PackageRevisionResources default/prr PackageContext invalid data field: value of key \"a\" is not a string".into()
            ))
        );
    }

    #[test]
    fn no_file_needed_without_changes() {
        let pv = pv_from_yaml(&format!(
            "{PV_BASE}  packageContext:\n    data: {{}}\n    removeKeys: []\n"
        ));
        let mut files = files_of(&[("Kptfile", KPTFILE)]);
        assert_eq!(ensure_package_context(&pv, &PRR, &mut files), Ok(()));
    }

    /// The package-context cases of upstream `TestValidatePackageVariant`.
    #[test]
    fn reserved_keys_are_refused() {
        let cases: &[(&str, &str)] = &[
            (
                "  packageContext:\n    data:\n      foo: bar\n      hello: there\n    removeKeys:\n    - bar\n    - foobar\n",
                "",
            ),
            (
                "  packageContext:\n    data:\n      name: test\n",
                "spec.packageContext.data: Invalid value: {\"name\":\"test\"}: must not contain the key \"name\"",
            ),
            (
                "  packageContext:\n    removeKeys:\n    - name\n",
                "spec.packageContext.removeKeys: Invalid value: [\"name\"]: must not contain the key \"name\"",
            ),
            (
                "  packageContext:\n    data:\n      package-path: test\n",
                "spec.packageContext.data: Invalid value: {\"package-path\":\"test\"}: must not contain the key \"package-path\"",
            ),
            (
                "  packageContext:\n    removeKeys:\n    - package-path\n",
                "spec.packageContext.removeKeys: Invalid value: [\"package-path\"]: must not contain the key \"package-path\"",
            ),
        ];
        for (spec, expected) in cases {
            let pv = pv_from_yaml(&format!("{PV_BASE}{spec}"));
            let pc = pv.spec.package_context.clone().unwrap_or_default();
            assert_eq!(validate_package_context(&pc).join("; "), *expected);
            let (r, files) = run(spec, &format!("{CONTEXT}  hello: there\n"));
            if expected.is_empty() {
                assert_eq!(r, Ok(()));
            } else {
                assert_eq!(r, Err(MutationError(expected.to_string())));
                assert_eq!(
                    text_of(&files, "package-context.yaml"),
                    format!("{CONTEXT}  hello: there\n")
                );
            }
        }
    }
}
