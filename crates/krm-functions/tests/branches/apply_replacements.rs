//! apply-replacements: only `ApplyReplacements` configs; decoding errors in
//! `encoding/json`'s words behind the SDK's wrapping; kustomize's filter
//! errors; every failure is one error result and the SDK's stderr line.

use super::{SDK_FAILURE, call};

const F: &str = "apply-replacements";

const INPUT: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: src
data:
  v: hello
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: dst
data:
  v: old
";

fn config(replacements: &str) -> String {
    format!(
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: ApplyReplacements\nmetadata:\n  name: r\nreplacements:{replacements}"
    )
}

/// Runs apply-replacements, requires success and returns the output items.
fn replaced(function: &str, input: &str, config: Option<&str>) -> String {
    let out = call(function, input, config);
    assert_eq!(out.exit_code, 0, "{:?}", out.results);
    out.items
}

fn assert_fails(out: &super::Out, error: &str) {
    assert_eq!(out.exit_code, 1);
    assert_eq!(out.stderr, SDK_FAILURE);
    assert_eq!(out.results, vec![format!("error|{error}||")]);
}

const WRAP: &str = "unable to convert functionConfig to replacements:\nunable to convert object to *replacements.Replacements with error: ";

#[test]
fn config_errors() {
    let cases: Vec<(Option<String>, String)> = vec![
        (None, "FunctionConfig is missing. Expect `ApplyReplacements`".into()),
        (
            Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b\n".into()),
            "received functionConfig of kind ConfigMap and apiVersion v1, only functionConfig of kind ApplyReplacements and apiVersion fn.kpt.dev/v1alpha1 is supported".into(),
        ),
        (
            Some(config(" {a: b}\n")),
            format!("{WRAP}json: cannot unmarshal object into Go struct field Replacements.replacements of type []types.Replacement"),
        ),
        (
            Some(config("\n- sourceValue: 8080\n  targets: []\n")),
            format!("{WRAP}json: cannot unmarshal number into Go struct field Replacement.replacements.sourceValue of type string"),
        ),
        (
            Some(config("\n- source: {kind: ConfigMap}\n  targets:\n  - fieldPaths: data.v\n")),
            format!("{WRAP}json: cannot unmarshal string into Go struct field TargetSelector.replacements.targets.fieldPaths of type []string"),
        ),
        (
            Some(config("\n- source:\n    name: src\n    options: {index: x}\n  targets: []\n")),
            format!("{WRAP}json: cannot unmarshal string into Go struct field FieldOptions.replacements.source.options.index of type int"),
        ),
        (
            Some(config("\n- targets:\n  - select: {name: dst}\n    fieldPaths: [data.v]\n")),
            "replacements must specify a source and at least one target".into(),
        ),
        (
            Some(config("\n- source: {name: nope}\n  targets:\n  - select: {name: dst}\n    fieldPaths: [data.v]\n")),
            "nothing selected by [noKind].[noVer].[noGrp]/nope.[noNs]".into(),
        ),
        // The selector reads as kustomize's SourceSelector.String().
        (
            Some(config("\n- source:\n    kind: ConfigMap\n    fieldPath: data.v\n    options: {delimiter: '-', index: 1}\n  targets:\n  - select: {name: dst}\n")),
            "multiple matches for selector ConfigMap.[noVer].[noGrp]/[noName].[noNs]:data.v:-(1), create=false".into(),
        ),
    ];
    for (cfg, error) in cases {
        let out = call(F, INPUT, cfg.as_deref());
        assert_fails(&out, &error);
    }
}

#[test]
fn replaces_without_results() {
    let cfg = config(
        "\n- source: {name: src, fieldPath: data.v}\n  targets:\n  - select: {name: dst}\n    fieldPaths: [data.v]\n",
    );
    let out = call(F, INPUT, Some(&cfg));
    assert_eq!((out.exit_code, out.stderr.as_str()), (0, ""));
    assert!(out.results.is_empty());
    assert_eq!(out.items.matches("v: hello").count(), 2);
    // Nothing to replace in: nothing selected for the source.
    let out = call(F, "", Some(&cfg));
    assert_fails(
        &out,
        "nothing selected by [noKind].[noVer].[noGrp]/src.[noNs]:data.v",
    );
    // A sourceValue is one scalar, even when it reads as a mapping.
    let cfg = config(
        "\n- sourceValue: 'a: b'\n  targets:\n  - select: {name: dst}\n    fieldPaths: [data.v, data.new]\n    options: {create: true}\n",
    );
    let items = replaced(F, INPUT, Some(&cfg));
    assert!(
        items.contains("  v: 'a: b'\n") && items.contains("  new: 'a: b'\n"),
        "{}",
        items
    );
    // An empty replacement list is fine.
    let out = call(F, INPUT, Some(&config(" []\n")));
    assert_eq!(out.exit_code, 0);
}

/// A scalar target keeps the tag it was read with and only takes the new
/// text (kustomize's `setFieldValue`), so yaml.v3 re-decides its quoting from
/// that tag: a string target given a number's text stays a string, a number
/// target given words keeps its `!!int` tag, and a field the path had to
/// create has no tag at all and is written plain.
#[test]
fn scalar_targets_keep_their_parsed_type() {
    let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: sizes
data:
  count: 12
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: app
        args: [COUNT, other]
";
    let cfg = config(
        "
- source: {name: sizes, fieldPath: data.count}
  targets:
  - select: {kind: Deployment}
    fieldPaths: [spec.template.spec.containers.0.args.0]
- sourceValue: lots
  targets:
  - select: {kind: Deployment}
    fieldPaths: [spec.replicas]
- sourceValue: '7'
  targets:
  - select: {kind: Deployment}
    fieldPaths: [spec.minReadySeconds]
    options: {create: true}
",
    );
    let items = replaced(F, input, Some(&cfg));
    assert!(items.contains("args: [\"12\", other]"), "{}", items);
    assert!(items.contains("  replicas: !!int lots\n"), "{}", items);
    assert!(items.contains("  minReadySeconds: 7\n"), "{}", items);
}

/// A source refined with a delimiter is the source node with only its text
/// changed: a piece of a string stays a string where it replaces a whole
/// mapping (a `*` path, which the catalog's string-typing pass cannot look up).
#[test]
fn a_delimited_source_piece_keeps_the_source_type() {
    let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: src
data:
  endpoint: host-8443
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: dst
data:
  list:
  - port: {}
";
    let cfg = config(
        "
- source:
    name: src
    fieldPath: data.endpoint
    options: {delimiter: '-', index: 1}
  targets:
  - select: {name: dst}
    fieldPaths: [data.list.*.port]
",
    );
    let items = replaced(F, input, Some(&cfg));
    assert!(items.contains("  - port: \"8443\"\n"), "{}", items);
}

/// An item without apiVersion, kind or metadata has an empty id: a named
/// selector never picks it, and it passes through untouched.
#[test]
fn an_item_without_an_id_is_never_selected() {
    let input = "\
data:
  v: loose
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: src
data:
  v: hello
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: dst
data:
  v: old
";
    let cfg = config(
        "\n- source: {name: src, fieldPath: data.v}\n  targets:\n  - select: {name: dst}\n    fieldPaths: [data.v]\n",
    );
    let items = replaced(F, input, Some(&cfg));
    assert!(items.starts_with("data:\n  v: loose\n"), "{}", items);
    assert_eq!(items.matches("v: hello").count(), 2, "{}", items);
}

/// The catalog's string-typing pass gives targets of a plain string source
/// yaml.v3's `!!str` tag with the zero style: quoted only when yaml.v3 would
/// read the text as another type, so YAML 1.1 words like `yes` stay plain.
#[test]
fn string_typing_quotes_as_yaml_v3_reads() {
    let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: answers
data:
  agree: yes
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: flags
data:
  enabled: false
";
    let cfg = config(
        "\n- source: {name: answers, fieldPath: data.agree}\n  targets:\n  - select: {name: flags}\n    fieldPaths: [data.enabled]\n",
    );
    let items = replaced(F, input, Some(&cfg));
    assert!(items.ends_with("  enabled: yes\n"), "{}", items);
}

const SHAPES: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: shapes
data:
  word: plain
  items:
  - id: \"first\" # quoted
    size: 1
  - id: second
    size: 2
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: holder
  labels:
spec:
  slots:
";

fn one(source: &str, target: &str, options: &str) -> String {
    config(&format!(
        "\n- source: {{{source}}}\n  targets:\n  - select: {{kind: {target}}}\n{options}"
    ))
}

/// A path that walks into a node of the wrong kind is kyaml's `ErrorIfInvalid`
/// error: on targets (`PathMatcher`, which tracks no field path) after the
/// field error, on sources (`Lookup`, which names the fields walked) after
/// `error looking up replacement source`.
#[test]
fn a_path_into_the_wrong_kind_is_kyamls_error() {
    let cases = [
        (
            one(
                "name: shapes, fieldPath: data.word",
                "ConfigMap",
                "    fieldPaths: [data.word.deeper]\n",
            ),
            "unable to find field \"data.word.deeper\" in replacement target: wrong Node Kind for  expected: MappingNode was ScalarNode: value: {plain}",
        ),
        (
            one(
                "name: shapes, fieldPath: data.word",
                "ConfigMap",
                "    fieldPaths: [data.items.0.size.1]\n    options: {create: true}\n",
            ),
            "unable to find or create field \"data.items.0.size.1\" in replacement target: wrong Node Kind for  expected: SequenceNode was ScalarNode: value: {1}",
        ),
        (
            one("name: shapes, fieldPath: data.word.deeper", "ConfigMap", ""),
            "error looking up replacement source: wrong Node Kind for data.word expected: MappingNode was ScalarNode: value: {plain}",
        ),
        (
            one("name: shapes, fieldPath: data.0", "ConfigMap", ""),
            "error looking up replacement source: wrong Node Kind for data expected: SequenceNode was MappingNode: value: {word: plain\nitems:\n- id: \"first\" # quoted\n  size: 1\n- id: second\n  size: 2}",
        ),
        (
            one("name: shapes, fieldPath: data.items.-2.id", "ConfigMap", ""),
            "error looking up replacement source: array index -2 cannot be negative",
        ),
    ];
    for (cfg, error) in cases {
        let out = call(F, SHAPES, Some(&cfg));
        assert_fails(&out, error);
    }
    // `-` is the last item.
    let cfg = one(
        "name: shapes, fieldPath: data.items.-.id",
        "ConfigMap",
        "    fieldPaths: [data.word]\n",
    );
    let items = replaced(F, SHAPES, Some(&cfg));
    assert!(items.contains("  word: second\n"), "{}", items);
}

/// kyaml treats a null node as missing: without `create` nothing under it is
/// found, and what `create` adds under it goes to a node that is never written.
#[test]
fn null_fields_take_no_created_paths() {
    let cfg = one(
        "name: shapes, fieldPath: data.word",
        "Deployment",
        "    fieldPaths: [metadata.labels.tier, spec.slots.0.name, 'spec.slots.[name=x].size']\n    options: {create: true}\n",
    );
    let items = replaced(F, SHAPES, Some(&cfg));
    assert!(
        items.ends_with("  name: holder\n  labels:\nspec:\n  slots:\n"),
        "{}",
        items
    );
    let cfg = one(
        "name: shapes, fieldPath: data.word",
        "Deployment",
        "    fieldPaths: [spec.slots.0.name]\n",
    );
    assert_fails(
        &call(F, SHAPES, Some(&cfg)),
        "unable to find field \"spec.slots.0.name\" in replacement target: index 0 specified but only 0 elements found",
    );
}

/// `[field=regex]` matches the field as kyaml writes it, quotes and comment
/// included, so an anchored pattern misses a quoted value; an element created
/// for a pattern it does not match would be searched for forever.
#[test]
fn list_patterns_match_the_written_value() {
    let src = "name: shapes, fieldPath: data.word";
    let out = call(
        F,
        SHAPES,
        Some(&one(
            src,
            "ConfigMap",
            "    fieldPaths: ['data.items.[id=^first$].size']\n",
        )),
    );
    assert_fails(
        &out,
        "unable to find field \"data.items.[id=^first$].size\" in replacement target",
    );
    let items = replaced(
        F,
        SHAPES,
        Some(&one(
            src,
            "ConfigMap",
            "    fieldPaths: ['data.items.[id=first\" # quoted$].size']\n",
        )),
    );
    assert!(items.contains("    size: !!int plain\n"), "{}", items);
    let out = call(
        F,
        SHAPES,
        Some(&one(
            src,
            "ConfigMap",
            "    fieldPaths: ['data.items.[id=^x$].size']\n    options: {create: true}\n",
        )),
    );
    assert_eq!(out.exit_code, 1);
    assert!(
        out.results[0].contains("[id=^x$] never ends"),
        "{:?}",
        out.results
    );
}

/// kustomize writes the default `metadata.name` into a target without field
/// paths, so the catalog's typing pass types that field too.
#[test]
fn the_default_target_path_is_typed() {
    let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: names
data:
  quoted: \"web\"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: old
";
    let items = replaced(
        F,
        input,
        Some(&one(
            "name: names, fieldPath: data.quoted",
            "Deployment",
            "",
        )),
    );
    assert!(items.ends_with("  name: \"web\"\n"), "{}", items);
}

/// Namespaces compare as kyaml's effective namespaces: a kind its schema
/// knows as cluster-scoped has none (not `default`, not what it says), judged
/// for the selector by the selector's own group, version and kind; an
/// apiVersion without `/` is all version.
#[test]
fn cluster_scoped_kinds_have_no_namespace() {
    let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: src
data:
  v: hello
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
  namespace: stray
---
apiVersion: builtin
kind: Marker
metadata:
  name: mark
";
    let label = |select: &str| {
        config(&format!(
            "\n- source: {{name: src, fieldPath: data.v}}\n  targets:\n  - select: {{{select}}}\n    fieldPaths: [metadata.labels.v]\n    options: {{create: true}}\n"
        ))
    };
    let items = replaced(F, input, Some(&label("namespace: default")));
    assert!(
        items.contains("  name: reader\n  namespace: stray\n---"),
        "{}",
        items
    );
    assert_eq!(items.matches("    v: hello").count(), 2, "{}", items);
    let out = call(
        F,
        input,
        Some(&label(
            "group: rbac.authorization.k8s.io, version: v1, kind: ClusterRole, namespace: elsewhere",
        )),
    );
    assert_eq!(out.exit_code, 0, "{:?}", out.results);
    assert!(
        out.items
            .contains("  name: reader\n  namespace: stray\n  labels:\n    v: hello\n"),
        "{}",
        out.items
    );
    let items = replaced(
        F,
        input,
        Some(&label("kind: ClusterRole, namespace: stray")),
    );
    assert!(!items.contains("labels"), "{}", items);
    let out = call(F, input, Some(&label("version: builtin, kind: Marker")));
    assert!(
        out.items
            .ends_with("  name: mark\n  labels:\n    v: hello\n"),
        "{}",
        out.items
    );
}

/// Selector strings are read by apimachinery's label parser (as kyaml copies
/// it): set and integer operators, keys and values validated, its error texts;
/// a target's label selector is parsed even when its annotation selector
/// already rules a resource out.
#[test]
fn selector_strings_read_as_apimachinery_reads_them() {
    let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: src
data:
  v: hello
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: dst
  labels:
    tier: web
    size: \"3\"
data:
  v: old
";
    let with = |select: &str| {
        config(&format!(
            "\n- source: {{name: src, fieldPath: data.v}}\n  targets:\n  - select: {{{select}}}\n    fieldPaths: [data.v]\n"
        ))
    };
    for select in [
        "labelSelector: 'tier in (api,web),!legacy'",
        "labelSelector: 'size>2,size<4'",
        "labelSelector: 'tier notin ()'",
    ] {
        let out = call(F, input, Some(&with(select)));
        assert_eq!(out.exit_code, 0, "{select}: {:?}", out.results);
        assert_eq!(out.items.matches("v: hello").count(), 2, "{select}");
    }
    let wrong = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    let cases = [
        (
            "annotationSelector: 'note=hello world'",
            "found 'world', expected: ',' or 'end of string'".to_string(),
        ),
        (
            "labelSelector: 'tier=-web'",
            format!(
                "unable to parse requirement: invalid label value: \"-web\": at key: \"tier\": {wrong}"
            ),
        ),
        (
            "annotationSelector: 'absent', labelSelector: 'tier in web'",
            "unable to parse requirement: found 'web' expected: '('".to_string(),
        ),
        (
            "labelSelector: 'size>three'",
            "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer"
                .to_string(),
        ),
    ];
    for (select, error) in cases {
        assert_fails(&call(F, input, Some(&with(select))), &error);
    }
}

/// A source is missing when it is null or an empty mapping or list; a quoted
/// empty string is a value like any other.
#[test]
fn an_empty_string_source_is_a_value() {
    let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: src
data:
  blank: \"\"
  none:
  nothing: {}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: dst
data:
  v: old
";
    let from = |field: &str| {
        config(&format!(
            "\n- source: {{name: src, fieldPath: data.{field}}}\n  targets:\n  - select: {{name: dst}}\n    fieldPaths: [data.v]\n"
        ))
    };
    let items = replaced(F, input, Some(&from("blank")));
    assert!(items.ends_with("  v: \"\"\n"), "{}", items);
    for field in ["none", "nothing"] {
        assert_fails(
            &call(F, input, Some(&from(field))),
            &format!(
                "fieldPath `data.{field}` is missing for replacement source [noKind].[noVer].[noGrp]/src.[noNs]"
            ),
        );
    }
}

/// Fields left empty in the config (YAML null) are Go's zero values: no
/// kind, no options, an empty name.
#[test]
fn null_config_fields_are_zero_values() {
    let cfg = config(
        "
- source:
    kind:
    name: src
    fieldPath: data.v
    options:
  targets:
  - select:
      kind: ConfigMap
      namespace:
      name: dst
    reject:
    fieldPaths: [data.v]
",
    );
    let items = replaced(F, INPUT, Some(&cfg));
    assert_eq!(items.matches("v: hello").count(), 2, "{}", items);
}

/// kyaml's path splitter unwraps a bracketed map key only when it spans
/// dots; `[key]` alone is a list entry without `=`, an error on either side.
/// A leading `.` is dropped.
#[test]
fn bracketed_keys_without_dots_are_list_entries() {
    let entry = "list path element must contain fieldName=fieldValue for element to match";
    assert_fails(
        &call(
            F,
            SHAPES,
            Some(&one(
                "name: shapes, fieldPath: data.word",
                "ConfigMap",
                "    fieldPaths: ['data.[word]']\n",
            )),
        ),
        &format!("unable to find field \"data.[word]\" in replacement target: {entry}"),
    );
    assert_fails(
        &call(
            F,
            SHAPES,
            Some(&one(
                "name: shapes, fieldPath: 'data.[word]'",
                "ConfigMap",
                "",
            )),
        ),
        &format!("error looking up replacement source: {entry}"),
    );
    let out = call(
        F,
        SHAPES,
        Some(&one(
            "name: shapes, fieldPath: '.data.[items.0.id]'",
            "Deployment",
            "    fieldPaths: [.metadata.name]\n",
        )),
    );
    assert_fails(
        &out,
        "fieldPath `.data.[items.0.id]` is missing for replacement source [noKind].[noVer].[noGrp]/shapes.[noNs]",
    );
    let items = replaced(
        F,
        SHAPES,
        Some(&one(
            "name: shapes, fieldPath: .data.items.1.id",
            "Deployment",
            "    fieldPaths: [.metadata.name]\n",
        )),
    );
    assert!(items.contains("  name: second\n"), "{}", items);
}

/// An empty path part (a target path ending in `.`) is kyaml's nameless field
/// match: it asks for a scalar, finds only an empty one, and with `create`
/// overwrites a scalar that has text with an empty one.
#[test]
fn an_empty_target_path_part_is_a_nameless_match() {
    let target = |path: &str, options: &str| {
        config(&format!(
            "\n- source: {{name: src, fieldPath: data.v}}\n  targets:\n  - select: {{name: dst}}\n    fieldPaths: ['{path}']\n{options}"
        ))
    };
    assert_fails(
        &call(F, INPUT, Some(&target("data.", ""))),
        "unable to find field \"data.\" in replacement target: wrong Node Kind for  expected: ScalarNode was MappingNode: value: {v: old}",
    );
    assert_fails(
        &call(F, INPUT, Some(&target("data.v.", ""))),
        "unable to find field \"data.v.\" in replacement target",
    );
    let items = replaced(
        F,
        INPUT,
        Some(&target("data.v.", "    options: {create: true}\n")),
    );
    // Emptied, then typed by the catalog's pass as the string source is.
    assert!(
        items.ends_with("  name: dst\ndata:\n  v: \"\"\n"),
        "{}",
        items
    );
}
