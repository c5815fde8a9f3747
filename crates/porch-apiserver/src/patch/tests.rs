use super::*;
use serde_json::json;

fn body(kind: PatchType, v: &Value) -> PatchBody {
    parse_body(kind, v.to_string().as_bytes()).expect("parses")
}

#[test]
fn merge_and_json_patch() {
    let mut o = json!({"a": 1, "b": {"c": 2}});
    let p = body(PatchType::Merge, &json!({"b": {"c": null, "d": 3}}));
    apply(PatchType::Merge, &mut o, &p).expect("merges");
    assert_eq!(o, json!({"a": 1, "b": {"d": 3}}));
    let p = body(
        PatchType::Json,
        &json!([{"op": "replace", "path": "/a", "value": 5}]),
    );
    apply(PatchType::Json, &mut o, &p).expect("patches");
    assert_eq!(o["a"], 5);
    let p = body(PatchType::Json, &json!([{"op": "remove", "path": "/zz"}]));
    assert!(apply(PatchType::Json, &mut o, &p).is_err());
}

/// Applies a JSON patch body to `doc`: the document, or the status and message.
fn jp(doc: &Value, body: &str) -> Result<Value, (u16, String)> {
    apply_json_patch(doc, body.as_bytes()).map_err(|e| (e.code_and_reason().0, e.message))
}

fn mp(doc: &Value, body: &str) -> Result<Value, (u16, String)> {
    apply_merge_patch(doc, body.as_bytes()).map_err(|e| (e.code_and_reason().0, e.message))
}

fn rejected() -> Result<Value, (u16, String)> {
    Err((422, REJECTED.to_string()))
}

#[test]
fn test_compares_numbers_and_strings_by_their_text() {
    // kube-apiserver compares the text of the stored object (Go's encoding: `<` is
    // `\u003c`) with the text of the patch; serde's values compared 1.5 and 1.50 alike.
    let doc = json!({"a": 1.5, "s": "<", "i": 1});
    let test = |path: &str, value: &str| {
        jp(
            &doc,
            &format!(r#"[{{"op":"test","path":"{path}","value":{value}}}]"#),
        )
    };
    assert_eq!(test("/a", "1.5"), Ok(doc.clone()));
    assert_eq!(test("/a", "1.50"), rejected());
    assert_eq!(test("/i", "1.0"), rejected());
    assert_eq!(test("/s", r#""\u003c""#), Ok(doc.clone()));
    assert_eq!(test("/s", r#""<""#), rejected());
}

#[test]
fn missing_members_read_as_null() {
    let doc = json!({"a": 1});
    // replace adds, copy copies a null, test of null passes.
    let out = jp(
        &doc,
        r#"[{"op":"replace","path":"/b","value":2},{"op":"copy","from":"/zz","path":"/c"},{"op":"test","path":"/zz","value":null},{"op":"test","path":"/zz"}]"#,
    );
    assert_eq!(out, Ok(json!({"a": 1, "b": 2, "c": null})));
    // A missing value adds null.
    assert_eq!(
        jp(&doc, r#"[{"op":"add","path":"/n"}]"#),
        Ok(json!({"a": 1, "n": null}))
    );
    // An added null is not the stored kind of null.
    let doc = json!({"o": {"k": null}});
    assert_eq!(
        jp(&doc, r#"[{"op":"test","path":"/o","value":{"k":null}}]"#),
        Ok(doc.clone())
    );
    assert_eq!(
        jp(
            &doc,
            r#"[{"op":"add","path":"/o/k","value":null},{"op":"test","path":"/o","value":{"k":null}}]"#
        ),
        rejected()
    );
}

#[test]
fn paths_and_indices_as_the_library_reads_them() {
    let doc = json!({"b": [1, 2]});
    assert_eq!(
        jp(&doc, r#"[{"op":"add","path":"/b/+1","value":0}]"#),
        Ok(json!({"b": [1, 0, 2]}))
    );
    assert_eq!(
        jp(&doc, r#"[{"op":"add","path":"/b/01","value":0}]"#),
        Ok(json!({"b": [1, 0, 2]}))
    );
    assert_eq!(
        jp(&doc, r#"[{"op":"remove","path":"/b/-1"}]"#),
        Ok(json!({"b": [1]}))
    );
    assert_eq!(
        jp(&doc, r#"[{"op":"add","path":"/b/-1","value":3}]"#),
        Ok(json!({"b": [1, 2, 3]}))
    );
    assert_eq!(
        jp(&doc, r#"[{"op":"add","path":"/b/1.0","value":0}]"#),
        rejected()
    );
    // The part before the first `/` is not read.
    assert_eq!(
        jp(&doc, r#"[{"op":"add","path":"x/c","value":0}]"#),
        Ok(json!({"b": [1, 2], "c": 0}))
    );
    // The whole document: replace and test only.
    assert_eq!(
        jp(&doc, r#"[{"op":"replace","path":"","value":{"z":1}}]"#),
        Ok(json!({"z": 1}))
    );
    assert_eq!(
        jp(&doc, r#"[{"op":"add","path":"","value":{"z":1}}]"#),
        rejected()
    );
}

#[test]
fn errors_in_kube_apiserver_words() {
    let doc = json!({"a": 1});
    let bad = |m: &str| Err((400, format!("error decoding patch: {m}")));
    assert_eq!(jp(&doc, "["), bad("unexpected end of JSON input"));
    assert_eq!(
        jp(&doc, "[1,]"),
        bad("invalid character ']' looking for beginning of value")
    );
    assert_eq!(
        jp(&doc, "[-]"),
        bad("invalid character ']' in numeric literal")
    );
    assert_eq!(
        jp(&doc, "{}"),
        bad("json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp")
    );
    assert_eq!(
        jp(&doc, r#"[{"op":1}]"#),
        bad("json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string")
    );
    // A patch `null` changes nothing; an unknown operation is a 422 that names it.
    assert_eq!(jp(&doc, "null"), Ok(doc.clone()));
    let e = apply_json_patch(&doc, br#"[{"op":"foo"}]"#).expect_err("unknown op");
    assert_eq!((e.code_and_reason().0, e.message.as_str()), (422, REJECTED));
    assert_eq!(
        e.details.expect("details").causes[0].message,
        "JSON patch failed: Unexpected kind: foo"
    );
    // Merge patches: an object or nothing.
    assert_eq!(
        mp(&doc, "[1]"),
        bad("json: cannot unmarshal array into Go value of type map[string]interface {}")
    );
    assert_eq!(mp(&doc, "null"), Err((400, "Invalid JSON Patch".into())));
    // The handler's errors come when the patch is applied, after the object was read.
    assert!(parse_body(PatchType::Json, b"[").is_ok());
    assert!(parse_body(PatchType::Merge, b"[").is_ok());
}

#[test]
fn limits_of_operations_and_copies() {
    let doc = json!({});
    let ops = vec![r#"{"op":"add","path":"/n","value":1}"#; 10_001].join(",");
    assert_eq!(
        jp(&doc, &format!("[{ops}]")),
        Err((413, "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001".into()))
    );
    // Each copy doubles /x: 11 copies of 1,535 bytes add up past 3 MiB.
    let doc = json!({"x": ["a".repeat(1532)]});
    let copies = [r#"{"op":"copy","from":"/x","path":"/x/-"}"#; 11].join(",");
    assert_eq!(jp(&doc, &format!("[{copies}]")), rejected());
    let doc = json!({"x": ["a".repeat(1531)]});
    assert!(jp(&doc, &format!("[{copies}]")).is_ok());
}

#[test]
fn what_makes_the_library_panic_is_500() {
    let doc = json!({"a": [1, null]});
    let panicked = Err((500, PANICKED.to_string()));
    assert_eq!(
        jp(&doc, r#"[{"op":"test","path":"/a","value":[1,null]}]"#),
        panicked
    );
    assert_eq!(jp(&doc, r#"[{"op":"replace","path":""}]"#), panicked);
    assert_eq!(
        jp(
            &doc,
            r#"[{"op":"add","path":"/n","value":null},{"op":"copy","from":"/n","path":"/m"},{"op":"add","path":"/m/x","value":1}]"#
        ),
        panicked
    );
    // A different member found first: Go's map order decides between 422 and 500; ours
    // compares in the object's order.
    let doc = json!({"o": {"s": 1, "a": [null]}});
    assert_eq!(
        jp(
            &doc,
            r#"[{"op":"test","path":"/o","value":{"s":2,"a":[null]}}]"#
        ),
        rejected()
    );
}

#[test]
fn merge_patches_prune_nulls_as_the_library_does() {
    let doc = json!({"a": 1, "o": {"k": 1}});
    // Added where no object was: nulls go, also inside arrays; the nulls of arrays stay.
    assert_eq!(
        mp(
            &doc,
            r#"{"a":[{"x":null,"y":1},null],"n":{"m":null,"l":[{"z":null}]}}"#
        ),
        Ok(json!({"a": [{"y": 1}, null], "o": {"k": 1}, "n": {"l": [{}]}}))
    );
    // An object replaced by an array: as sent.
    assert_eq!(
        mp(&doc, r#"{"o":[{"x":null}]}"#),
        Ok(json!({"a": 1, "o": [{"x": null}]}))
    );
}

#[test]
fn a_move_onto_its_parent_then_a_failure_is_a_422() {
    // The json-patch crate panicked undoing this (`unable to undo applied patches`).
    let doc = json!({"a": {"b": 1}});
    let body = r#"[{"op":"move","from":"/a/b","path":"/a"},{"op":"remove","path":"/zz"}]"#;
    assert_eq!(jp(&doc, body), rejected());
    let body = r#"[{"op":"move","from":"/a/b","path":"/a"}]"#;
    assert_eq!(jp(&doc, body), Ok(json!({"a": 1})));
}

#[test]
fn strategic_directives_are_dropped() {
    let mut o = json!({"metadata": {"labels": {"a": "1"}}});
    let p = json!({"$setElementOrder/x": [], "metadata": {"labels": {"b": "2"}}});
    apply(
        PatchType::Strategic,
        &mut o,
        &body(PatchType::Strategic, &p),
    )
    .expect("merges");
    assert_eq!(o, json!({"metadata": {"labels": {"a": "1", "b": "2"}}}));
}
