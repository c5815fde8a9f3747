//! ensure-name-substring: config decoding (ConfigMap with one prepend/append
//! entry, or EnsureNameSubstring), kyaml's metadata checks and sigs.k8s.io/yaml
//! type errors; a failure is `failed to load the `functionConfig`: ...` on
//! stderr, exit 1, no result.

use super::{call, config_map};

const F: &str = "ensure-name-substring";

const INPUT: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n";

fn typed(body: &str) -> String {
    format!(
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: EnsureNameSubstring\nmetadata:\n  name: cfg\n{body}"
    )
}

fn assert_fails(out: &super::Out, error: &str) {
    assert_eq!(out.exit_code, 1);
    assert_eq!(
        out.stderr,
        format!("failed to load the `functionConfig`: {error}")
    );
    assert!(out.results.is_empty(), "{:?}", out.results);
}

#[test]
fn config_errors() {
    let cases: Vec<(Option<String>, &str)> = vec![
        (None, "substring must not be empty"),
        (Some("{}".into()), "missing Resource metadata"),
        (
            Some("apiVersion: v1\nmetadata:\n  name: x\n".into()),
            "missing kind in object {{v1 } {{x } map[] map[]}}",
        ),
        (
            Some("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  labels: {a: b}\n".into()),
            "missing metadata.name in object {{apps/v1 Deployment} {{ } map[a:b] map[]}}",
        ),
        (
            Some("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n".into()),
            "function config must be either /v1, Kind=ConfigMap or fn.kpt.dev/v1alpha1, Kind=EnsureNameSubstring, but we got: apps/v1, Kind=Deployment",
        ),
        (
            Some("apiVersion: a/b/c\nkind: K\nmetadata:\n  name: x\n".into()),
            "function config must be either /v1, Kind=ConfigMap or fn.kpt.dev/v1alpha1, Kind=EnsureNameSubstring, but we got: /, Kind=K",
        ),
        (
            Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n".into()),
            "only 1 entry is allowed in the ConfigMap, but got: 0",
        ),
        (
            Some(config_map("  prepend: a-\n  append: -b\n")),
            "only 1 entry is allowed in the ConfigMap, but got: 2",
        ),
        (
            Some(config_map("  middle: x\n")),
            "unknown editMode: middle, only prepend and append are allowed",
        ),
        (
            Some(config_map("  prepend: \"\"\n")),
            "substring must not be empty",
        ),
        (
            Some(config_map("  prepend: [a]\n")),
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go struct field ConfigMap.data of type string",
        ),
        (
            Some(typed("editMode: append\n")),
            "substring must not be empty",
        ),
        (
            Some(typed("substring: {a: b}\n")),
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal object into Go struct field EnsureNameSubstring.substring of type string",
        ),
        (
            Some(typed("substring: x\nadditionalNameFields: a/b\n")),
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go struct field EnsureNameSubstring.additionalNameFields of type []types.FieldSpec",
        ),
        (
            Some(typed(
                "substring: x\nadditionalNameFields: []\nfieldSpecs:\n- path: spec/x\n",
            )),
            "`fieldSpecs` has been deprecated, please rename it to `additionalNameFields`",
        ),
    ];
    for (config, error) in cases {
        let out = call(F, INPUT, config.as_deref());
        assert_fails(&out, error);
    }
}

#[test]
fn accepted_configs() {
    let out = call(F, INPUT, Some(&config_map("  append: -x\n")));
    assert_eq!((out.exit_code, out.stderr.as_str()), (0, ""));
    assert!(out.results.is_empty());
    assert!(out.items.contains("name: app-x"));
    // Scalars decode as text for a string field.
    let out = call(F, INPUT, Some(&typed("substring: 12\n")));
    assert_eq!(out.exit_code, 0);
    assert!(out.items.contains("name: 12app") || out.items.contains("name: \"12app\""));
    // An edit mode that is neither prepend nor append edits nothing.
    let out = call(F, INPUT, Some(&typed("substring: x-\neditMode: middle\n")));
    assert_eq!(out.exit_code, 0);
    assert!(out.items.contains("name: app\n"));
    // No input is no work.
    let out = call(F, "", Some(&config_map("  prepend: a-\n")));
    assert_eq!((out.exit_code, out.items.as_str()), (0, ""));
}

#[test]
fn legacy_field_specs_edit_nothing() {
    // The catalog's `legacy-config` test: the deprecated `fieldSpecs` is
    // accepted but only names change.
    let cr = "apiVersion: dev.example.com/v1\nkind: MyResource\nmetadata:\n  name: the-cr\nspec:\n  name: foo\n";
    let legacy = typed(
        "editMode: prepend\nfieldSpecs:\n- kind: MyResource\n  group: dev.example.com\n  path: spec/name\n  version: v1\nsubstring: prod-\n",
    );
    let out = call(F, cr, Some(&legacy));
    assert_eq!(out.exit_code, 0);
    assert!(out.items.contains("name: prod-the-cr\n") && out.items.contains("  name: foo\n"));
    let current = legacy.replace("fieldSpecs:", "additionalNameFields:");
    let out = call(F, cr, Some(&current));
    assert!(out.items.contains("  name: prod-foo\n"), "{}", out.items);
}

proptest::proptest! {
    /// Names end up containing the substring exactly once per run, and a
    /// second run changes nothing (the catalog's idempotency check).
    #[test]
    fn renames_are_idempotent(name in "[a-z][a-z0-9-]{0,12}", sub in "[a-z0-9-]{1,6}", append in proptest::bool::ANY) {
        let key = if append { "append" } else { "prepend" };
        let cfg = config_map(&format!("  {key}: \"{sub}\"\n"));
        let input = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
        let once = call(F, &input, Some(&cfg));
        proptest::prop_assert_eq!(once.exit_code, 0);
        let expected = if name.contains(&sub) {
            name.clone()
        } else if append {
            format!("{name}{sub}")
        } else {
            format!("{sub}{name}")
        };
        let out = kpt::yaml::parse_one(&once.items).expect("output parses");
        let got = out.get_path(&["metadata", "name"]).and_then(|n| n.as_str()).unwrap_or_default();
        proptest::prop_assert_eq!(got, expected.as_str());
        let twice = call(F, &once.items, Some(&cfg));
        proptest::prop_assert_eq!(twice.items, once.items);
    }
}
