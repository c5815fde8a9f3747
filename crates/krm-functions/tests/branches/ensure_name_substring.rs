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

/// An item of the output without its first four lines (apiVersion, kind,
/// metadata, name), to compare the edited fields.
fn body_of(items: &str) -> String {
    items.lines().skip(4).collect::<Vec<_>>().join("\n")
}

#[test]
fn additional_fields_marked_create_are_created_as_kustomize_creates_them() {
    let input = "\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
spec:
  label: blue
  empty: null
  parts:
  - id: a
  - id: b
";
    let config = typed(
        "substring: x-\n\
         additionalNameFields:\n\
         - {path: spec/target/ref, create: true}\n\
         - {path: spec/empty/ref, create: true}\n\
         - path: spec/parts[]/owner\n\
         \x20 create: true\n\
         - path: spec/listed[]/ref\n\
         \x20 create: true\n\
         - {path: spec/absent}\n\
         - {path: spec/label}\n",
    );
    let out = call(F, input, Some(&config));
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    // Missing fields are made (mappings on the way, the substring alone at
    // the end, inside each element of a `[]` list too), a null on the way
    // becomes a mapping; a `[]` field and a field without `create` are not
    // made.
    assert_eq!(
        body_of(&out.items),
        "\
spec:
  label: x-blue
  empty:
    ref: x-
  parts:
  - id: a
    owner: x-
  - id: b
    owner: x-
  target:
    ref: x-"
    );
    assert!(out.items.contains("  name: x-w\n"));
}

#[test]
fn another_edit_mode_still_creates_the_field_empty() {
    let config = typed(
        "substring: x-\neditMode: sideways\nadditionalNameFields:\n- {path: data/made, create: true}\n",
    );
    let out = call(F, INPUT, Some(&config));
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    assert_eq!(
        out.items,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  made: \"\"\n"
    );
}

#[test]
fn a_mapping_already_holding_the_substring_is_left_alone() {
    let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data:
  k: v
spec:
  held:
    inner: x-kept
";
    let config = typed("substring: x-\nadditionalNameFields:\n- {path: spec/held}\n");
    let out = call(F, input, Some(&config));
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    assert!(
        out.items.contains("  held:\n    inner: x-kept\n"),
        "{}",
        out.items
    );
}

#[test]
fn a_field_path_through_a_list_or_onto_a_mapping_fails() {
    let input = "\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: ns
spec:
  parts:
  - id: a
  held:
    inner: v
";
    // The catalog first reads the field with kyaml's Lookup, which refuses a
    // field name on a list (only `[]` paths or indexes go through lists).
    let out = call(
        F,
        input,
        Some(&typed(
            "substring: x-\nadditionalNameFields:\n- {path: spec/parts/id}\n",
        )),
    );
    assert_eq!(out.exit_code, 1);
    assert_eq!(
        out.stderr,
        "failed to transform name substring: unable to lookup path spec/parts/id in \
         Widget.v1.example.com/w.ns: wrong Node Kind for spec.parts expected: MappingNode \
         was SequenceNode: value: {- id: a}"
    );
    // A mapping without the substring cannot take a scalar value.
    let out = call(
        F,
        input,
        Some(&typed(
            "substring: x-\nadditionalNameFields:\n- {path: spec/held}\n",
        )),
    );
    assert_eq!(out.exit_code, 1);
    assert_eq!(
        out.stderr,
        "failed to transform name substring: considering field 'spec/held' of object \
         Widget.v1.example.com/x-w.ns: wrong Node Kind for spec.held expected: ScalarNode \
         was MappingNode: value: {inner: v}"
    );
}

#[test]
fn an_edited_field_is_a_string_in_its_old_style() {
    let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data:
  plain: 45 # kept
  quoted: '45'
";
    let config = typed(
        "substring: '7'\nadditionalNameFields:\n- {path: data/plain}\n- {path: data/quoted}\n",
    );
    let out = call(F, input, Some(&config));
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    assert!(
        out.items
            .ends_with("data:\n  plain: \"745\" # kept\n  quoted: '745'\n"),
        "{}",
        out.items
    );
}

#[test]
fn a_quoted_name_stays_quoted() {
    let input = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 'web' # the site\n";
    let out = call(F, input, Some(&config_map("  append: -eu\n")));
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    assert_eq!(
        out.items,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 'web-eu' # the site\n"
    );
}

#[test]
fn annotations_are_written_anew_as_kyaml_sets_them() {
    // Every resource with annotations, renamed or skipped, gets them back
    // through kyaml's SetAnnotations: keys sorted, values fresh strings.
    let input = "\
apiVersion: v1
kind: Namespace
metadata:
  name: space
  annotations:
    team: 'blue'
    build: 7
";
    let out = call(F, input, Some(&config_map("  prepend: p-\n")));
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    assert_eq!(
        out.items,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: space\n  annotations:\n    build: \"7\"\n    team: blue\n"
    );
}
