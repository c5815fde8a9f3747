//! Syntax errors worded and located as go-yaml v3 reports them (`yaml: line N: ...`):
//! libyaml's 0-based marks, one added only for scanner errors, a parser error naming
//! the line of the construct it was parsing, no line for an error on the first line.

use kpt::yaml::parse_stream;

fn go(text: &str) -> String {
    parse_stream(text).expect_err(text).go_yaml()
}

const HEAD: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n";

#[test]
fn scanner_errors_name_their_own_line() {
    assert_eq!(
        go(&format!("{HEAD}  name: a\n   bad: x\n")),
        "yaml: line 5: mapping values are not allowed in this context"
    );
    assert_eq!(
        go(&format!("{HEAD}  name: @a\n")),
        "yaml: line 4: found character that cannot start any token"
    );
    assert_eq!(
        go(&format!("{HEAD}  name: \"a\n")),
        "yaml: line 4: found unexpected end of stream"
    );
}

#[test]
fn a_flow_collection_left_open_names_the_line_before_its_opening() {
    assert_eq!(
        go(&format!("{HEAD}  name: x\ndata: [x, y\n")),
        "yaml: line 4: did not find expected ',' or ']'"
    );
    assert_eq!(
        go("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\n"),
        "yaml: line 2: did not find expected ',' or '}'"
    );
    // On the first line the context mark is 0: the problem's line is named instead.
    assert_eq!(
        go("a: [1, 2\n"),
        "yaml: line 1: did not find expected ',' or ']'"
    );
}

#[test]
fn a_missing_key_names_the_mappings_line_zero_based() {
    // The inner mapping began on line 4 (0-based 3).
    assert_eq!(
        go(&format!("{HEAD}  name: a\n  - b\n")),
        "yaml: line 3: did not find expected key"
    );
    // The outer mapping began on line 1: the problem's 0-based line is named.
    assert_eq!(
        go("a:\n  b: 1\n c: 2\n"),
        "yaml: line 2: did not find expected key"
    );
    assert_eq!(
        go(&format!("{HEAD}  name: a\n- x\n")),
        "yaml: line 4: did not find expected key"
    );
}

#[test]
fn an_indentation_tab_depends_on_the_token_before_it() {
    // A plain scalar running on to the tab's line: named where the scalar began.
    assert_eq!(
        go(&format!("{HEAD}  name: a\n\tlabels: {{}}\n")),
        "yaml: line 4: found a tab character that violates indentation"
    );
    assert_eq!(
        go(&format!("{HEAD}  name: a\n\n\tlabels: {{}}\n")),
        "yaml: line 4: found a tab character that violates indentation"
    );
    // A comment, a quoted scalar or an indicator ends the scan: the tab cannot start
    // a token on its own line.
    assert_eq!(
        go(&format!("{HEAD}  name: a\n\n# c\n\tlabels: {{}}\n")),
        "yaml: line 7: found character that cannot start any token"
    );
    assert_eq!(
        go(&format!("{HEAD}  name: a # x\n\tlabels: {{}}\n")),
        "yaml: line 5: found character that cannot start any token"
    );
    assert_eq!(
        go(&format!("{HEAD}  name: \"a\"\n\tlabels: {{}}\n")),
        "yaml: line 5: found character that cannot start any token"
    );
    assert_eq!(
        go(&format!("{HEAD}\tname: a\n")),
        "yaml: line 4: found character that cannot start any token"
    );
}

#[test]
fn reader_errors_and_first_line_scanner_errors_name_no_line() {
    assert_eq!(
        go("a: b\u{1}\n"),
        "yaml: control characters are not allowed"
    );
    assert_eq!(
        go("a: b: c\n"),
        "yaml: mapping values are not allowed in this context"
    );
}

#[test]
fn an_alias_must_follow_its_anchor_in_the_same_document() {
    assert_eq!(
        go("a: &x 1\nb: *y\n"),
        "yaml: unknown anchor 'y' referenced"
    );
    assert_eq!(
        go("a: *x\nb: &x 1\n"),
        "yaml: unknown anchor 'x' referenced"
    );
    // Anchors do not carry over to the next document.
    assert_eq!(
        go("a: &x 1\n---\nb: *x\n"),
        "yaml: unknown anchor 'x' referenced"
    );
    // A node may refer to itself, and later nodes to earlier anchors.
    assert!(parse_stream("m: &m\n  self: *m\nn: *m\n").is_ok());
}

#[test]
fn a_sequence_wants_another_entry_unless_it_is_an_indentless_mapping_value() {
    // An indented sequence followed by a key at its column.
    assert_eq!(
        go(&format!("{HEAD}  name: x\ndata:\n  - a\n  b: c\n")),
        "yaml: line 5: did not find expected '-' indicator"
    );
    assert_eq!(
        go("a:\n  - b\n  : c\n"),
        "yaml: line 1: did not find expected '-' indicator"
    );
    // An indentless sequence (at its key's column) ends at the next key.
    assert!(parse_stream("items:\n- a\nb: c\n").is_ok());
    assert!(parse_stream("- k:\n  - a\n  o: b\n").is_ok());
}

#[test]
fn an_empty_implicit_key_is_refused_where_a_key_is_due() {
    assert_eq!(go(": x\n"), "yaml: did not find expected key");
    assert_eq!(
        go("apiVersion: v1\nkind: ConfigMap\n: x\n"),
        "yaml: line 2: did not find expected key"
    );
    assert_eq!(
        go(&format!("{HEAD}  : x\n")),
        "yaml: line 3: did not find expected key"
    );
    // A quoted empty key is a key.
    assert!(parse_stream("\"\": x\n").is_ok());
}

#[test]
fn the_stream_ending_in_a_flow_collection_is_reported_by_what_was_expected() {
    // A node was due (after `[`, `,` or `:`).
    for text in ["a: [\n", "a: [x,\n", "a: {\n", "a: {b: \n"] {
        assert_eq!(
            go(text),
            "yaml: line 1: did not find expected node content",
            "{text:?}"
        );
    }
    // A separator was due: named at the collection's line, or the problem's when that
    // is the first.
    assert_eq!(
        go("a: [x\n"),
        "yaml: line 1: did not find expected ',' or ']'"
    );
    assert_eq!(
        go("a: {b\n"),
        "yaml: line 1: did not find expected ',' or '}'"
    );
    assert_eq!(
        go("a: [x, y\n\n\n"),
        "yaml: line 3: did not find expected ',' or ']'"
    );
    assert_eq!(
        go(&format!("{HEAD}  name: [a, {{b: [c,\n")),
        "yaml: line 4: did not find expected node content"
    );
}

/// A function's stdout as kyaml's `ByteReader` refuses it.
#[test]
fn function_output_kyaml_cannot_read_is_worded_as_kyaml_does() {
    use kpt::resource_list::ResourceList;
    assert_eq!(
        ResourceList::kyaml_read_error("notyaml\n").as_deref(),
        Some("wrong node kind: expected MappingNode but got ScalarNode: node contents:\nnotyaml\n")
    );
    assert_eq!(
        ResourceList::kyaml_read_error("a: b: c\n").as_deref(),
        Some("MalformedYAMLError: yaml: mapping values are not allowed in this context")
    );
    // Lines count from the failing document.
    assert_eq!(
        ResourceList::kyaml_read_error("x: 1\n---\nfoo: [\n").as_deref(),
        Some("MalformedYAMLError: yaml: line 1: did not find expected node content")
    );
    assert_eq!(
        ResourceList::kyaml_read_error("apiVersion: v1\nkind: ResourceList\nitems:\n- notamap\n")
            .as_deref(),
        Some("wrong node kind: expected MappingNode but got ScalarNode: node contents:\nnotamap\n")
    );
    // What kyaml reads is not refused here.
    assert_eq!(
        ResourceList::kyaml_read_error("apiVersion: v1\nkind: ResourceList\nitems: []\n"),
        None
    );
    assert_eq!(ResourceList::kyaml_read_error("kind: Foo\n"), None);
    assert_eq!(ResourceList::kyaml_read_error("null\n---\n~\n"), None);
}
