//! The field manager end to end on JSON objects: updates, applies, pruning, conflicts.

use serde_json::{Value, json};

use super::*;

fn schema() -> Value {
    json!({"type": "object", "properties": {
        "metadata": {"type": "object"},
        "spec": {"type": "object", "properties": {
            "x": {"type": "string"},
            "y": {"type": "string"},
            "items": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "properties": {"name": {"type": "string"}, "v": {"type": "string"}}}}
        }},
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
    }})
}

fn obj(labels: Value, spec: Value) -> Value {
    json!({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "o", "labels": labels}, "spec": spec})
}

/// Applies `config` onto `live` as `manager`; the new object or the error.
fn apply(
    fm: &FieldManager<'_>,
    live: &Value,
    config: &Value,
    manager: &str,
    force: bool,
) -> Result<Value, ApiError> {
    let managers = fm.apply_managers(live);
    let (mut new, applied) = fm.merge_apply(live, config, &managers, manager);
    fm.record_apply(live, &mut new, managers, manager, applied, force)?;
    Ok(new)
}

fn update(fm: &FieldManager<'_>, live: &Value, mut new: Value, manager: &str) -> Value {
    let client = new.pointer("/metadata/managedFields").cloned();
    if let Some(m) = new.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    let managers = fm.managers(live, client.as_ref());
    fm.record_update(live, &mut new, managers, manager);
    new
}

fn managers_of(o: &Value) -> Vec<(String, String, Value)> {
    o.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap_or("").to_owned(),
                        e["operation"].as_str().unwrap_or("").to_owned(),
                        e["fieldsV1"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn an_applier_owns_what_it_sends_and_fields_it_stops_sending_go() {
    let s = schema();
    let fm = FieldManager::new(&s, "g/v1".into(), Part::Main, false);
    let empty = json!({});
    let first = apply(
        &fm,
        &empty,
        &obj(json!({"a": "1", "b": "2"}), json!({"x": "1"})),
        "mgr",
        false,
    )
    .expect("applies");
    assert_eq!(
        managers_of(&first),
        vec![(
            "mgr".into(),
            "Apply".into(),
            json!({"f:metadata": {"f:labels": {"f:a": {}, "f:b": {}}}, "f:spec": {"f:x": {}}})
        )]
    );
    let second = apply(
        &fm,
        &first,
        &obj(json!({"a": "1"}), json!({"x": "1"})),
        "mgr",
        false,
    )
    .expect("applies");
    assert_eq!(second["metadata"]["labels"], json!({"a": "1"}));
    // Without any labels the emptied map goes too.
    let third = apply(
        &fm,
        &second,
        &json!({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "o"}, "spec": {"x": "1"}}),
        "mgr",
        false,
    )
    .expect("applies");
    assert!(third["metadata"].get("labels").is_none(), "{third}");
    assert_eq!(third["metadata"]["name"], "o");
}

#[test]
fn a_second_applier_conflicts_unless_forced_and_shared_fields_stay() {
    let s = schema();
    let fm = FieldManager::new(&s, "g/v1".into(), Part::Main, false);
    let first = apply(
        &fm,
        &json!({}),
        &obj(json!({"a": "1"}), json!({"x": "1", "y": "1"})),
        "one",
        false,
    )
    .expect("applies");
    // Same value: no conflict, shared ownership.
    let shared = apply(
        &fm,
        &first,
        &obj(json!({"a": "1"}), json!({})),
        "two",
        false,
    )
    .expect("agrees");
    // `one` stops applying label a: `two` still owns it, so it stays.
    let kept = apply(
        &fm,
        &shared,
        &obj(json!({}), json!({"x": "1", "y": "1"})),
        "one",
        false,
    )
    .expect("applies");
    assert_eq!(kept["metadata"]["labels"], json!({"a": "1"}));
    let e = apply(
        &fm,
        &kept,
        &obj(json!({}), json!({"x": "2", "y": "2"})),
        "two",
        false,
    )
    .expect_err("conflicts");
    let st = e.to_status();
    assert_eq!(st["code"], 409);
    assert_eq!(st["reason"], "Conflict");
    assert_eq!(
        st["message"],
        "Apply failed with 2 conflicts: conflicts with \"one\":\n- .spec.x\n- .spec.y"
    );
    assert_eq!(
        st["details"]["causes"][0],
        json!({"reason": "FieldManagerConflict", "message": "conflict with \"one\"", "field": ".spec.x"})
    );
    let forced =
        apply(&fm, &kept, &obj(json!({}), json!({"x": "2"})), "two", true).expect("forced");
    assert_eq!(forced["spec"]["x"], "2");
    let owners = managers_of(&forced);
    let one = owners.iter().find(|o| o.0 == "one").expect("one stays");
    assert_eq!(one.2, json!({"f:spec": {"f:y": {}}}));
    let two = owners.iter().find(|o| o.0 == "two").expect("two");
    // `two` stopped applying label a, which nobody else owned any more: it is gone.
    assert_eq!(two.2, json!({"f:spec": {"f:x": {}}}));
    assert!(forced["metadata"].get("labels").is_none(), "{forced}");
}

#[test]
fn updates_take_ownership_and_a_later_apply_conflicts_with_them() {
    let s = schema();
    let fm = FieldManager::new(&s, "g/v1".into(), Part::Main, false);
    let created = update(
        &fm,
        &json!({}),
        obj(json!({"a": "1"}), json!({"x": "1"})),
        "kubectl-create",
    );
    assert_eq!(managers_of(&created)[0].1, "Update");
    let applied = apply(
        &fm,
        &created,
        &obj(json!({"a": "1"}), json!({"x": "1"})),
        "mgr",
        false,
    )
    .expect("same values");
    let mut edited = applied.clone();
    edited["spec"]["x"] = json!("edited");
    let edited = update(&fm, &applied, edited, "kubectl-edit");
    let e = apply(
        &fm,
        &edited,
        &obj(json!({"a": "1"}), json!({"x": "1"})),
        "mgr",
        false,
    )
    .expect_err("conflicts");
    assert_eq!(
        e.message,
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using g/v1: .spec.x"
    );
    // The creator lost .spec.x to the editor; the applier kept its shared label.
    let owners = managers_of(&edited);
    assert_eq!(
        owners
            .iter()
            .find(|o| o.0 == "kubectl-edit")
            .map(|o| o.2.clone()),
        Some(json!({"f:spec": {"f:x": {}}}))
    );
    // A client may reset the managers with `[{}]`; the object then stays untracked by
    // updates, and its first apply meets `before-first-apply`.
    let mut with_uid = edited.clone();
    with_uid["metadata"]["uid"] = json!("u1");
    let mut reset = with_uid.clone();
    reset["metadata"]["managedFields"] = json!([{}]);
    reset["spec"]["y"] = json!("new");
    let reset = update(&fm, &with_uid, reset, "kubectl-edit");
    assert!(reset["metadata"].get("managedFields").is_none(), "{reset}");
    let e = apply(
        &fm,
        &reset,
        &obj(json!({"a": "1"}), json!({"y": "mine"})),
        "mgr",
        false,
    )
    .expect_err("conflicts");
    assert_eq!(
        e.message,
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using g/v1: .spec.y"
    );
    let taken = apply(
        &fm,
        &reset,
        &obj(json!({"a": "1"}), json!({"y": "mine"})),
        "mgr",
        true,
    )
    .expect("forced");
    let owners = managers_of(&taken);
    assert!(
        owners.iter().any(|o| o.0 == "before-first-apply"),
        "{owners:?}"
    );
}

#[test]
fn associative_list_items_merge_by_key_and_go_when_no_longer_applied() {
    let s = schema();
    let fm = FieldManager::new(&s, "g/v1".into(), Part::Main, false);
    let first = apply(
        &fm,
        &json!({}),
        &obj(
            json!({}),
            json!({"items": [{"name": "a", "v": "1"}, {"name": "b", "v": "2"}]}),
        ),
        "one",
        false,
    )
    .expect("applies");
    let other = apply(
        &fm,
        &first,
        &obj(json!({}), json!({"items": [{"name": "c", "v": "3"}]})),
        "two",
        false,
    )
    .expect("applies");
    assert_eq!(other["spec"]["items"].as_array().map(Vec::len), Some(3));
    let pruned = apply(
        &fm,
        &other,
        &obj(json!({}), json!({"items": [{"name": "b", "v": "2"}]})),
        "one",
        false,
    )
    .expect("applies");
    assert_eq!(
        pruned["spec"]["items"],
        json!([{"name": "b", "v": "2"}, {"name": "c", "v": "3"}])
    );
}

#[test]
fn status_writes_own_status_only_and_main_writes_leave_it() {
    let s = schema();
    let main = FieldManager::new(&s, "g/v1".into(), Part::Main, true);
    let status = FieldManager::new(&s, "g/v1".into(), Part::Status, true);
    let mut o = obj(json!({}), json!({"x": "1"}));
    o["status"] = json!({"phase": "A"});
    let created = update(&main, &json!({}), o, "creator");
    assert_eq!(managers_of(&created)[0].2, json!({"f:spec": {"f:x": {}}}));
    let mut changed = created.clone();
    changed["status"]["phase"] = json!("B");
    let changed = update(&status, &created, changed, "controller");
    let entry = changed["metadata"]["managedFields"]
        .as_array()
        .and_then(|l| l.iter().find(|e| e["manager"] == "controller"))
        .cloned()
        .expect("controller entry");
    assert_eq!(entry["subresource"], "status");
    assert_eq!(entry["fieldsV1"], json!({"f:status": {"f:phase": {}}}));
}

#[test]
fn user_agent_prefix_names_the_manager() {
    assert_eq!(
        manager_from_user_agent("kubectl/v1.32.0 (linux/amd64)"),
        "kubectl"
    );
    assert_eq!(manager_from_user_agent(""), "");
    assert_eq!(manager_from_user_agent(&"x".repeat(300)).len(), 128);
}

#[test]
fn kubectl_takes_over_what_it_applied_client_side_and_keeps_the_annotation() {
    let s = schema();
    let fm = FieldManager::new(&s, "g/v1".into(), Part::Main, false);
    // A client-side apply: the object with its annotation, owned by an Update entry.
    let mut csa = obj(json!({"a": "1"}), json!({"x": "1", "y": "1"}));
    csa["metadata"]["annotations"] = json!({
        "kubectl.kubernetes.io/last-applied-configuration":
            r#"{"apiVersion":"g/v1","kind":"K","metadata":{"labels":{"a":"1"},"name":"o"},"spec":{"x":"1"}}"#
    });
    let live = update(&fm, &json!({}), csa, "kubectl-client-side-apply");
    // .spec.x is in the annotation with its live value: kubectl may take it; .spec.y is not.
    let e = apply(
        &fm,
        &live,
        &obj(json!({"a": "1"}), json!({"x": "2", "y": "2"})),
        "kubectl",
        false,
    )
    .expect_err("y conflicts");
    assert_eq!(
        e.message,
        "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using g/v1: .spec.y"
    );
    let new = apply(
        &fm,
        &live,
        &obj(json!({"a": "1"}), json!({"x": "2"})),
        "kubectl",
        false,
    )
    .expect("x is kubectl's");
    assert_eq!(new["spec"]["x"], "2");
    assert_eq!(
        new["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"],
        "{\"apiVersion\":\"g/v1\",\"kind\":\"K\",\"metadata\":{\"labels\":{\"a\":\"1\"},\"name\":\"o\"},\"spec\":{\"x\":\"2\"}}\n"
    );
    // Another manager gets no such pass.
    assert!(
        apply(
            &fm,
            &live,
            &obj(json!({}), json!({"x": "3"})),
            "other",
            false
        )
        .is_err()
    );
}

#[test]
fn more_than_ten_updaters_are_merged_into_ancient_changes() {
    let s = schema();
    let fm = FieldManager::new(&s, "g/v1".into(), Part::Main, false);
    let mut o = update(&fm, &json!({}), obj(json!({}), json!({})), "creator");
    for i in 0..12 {
        let mut next = o.clone();
        next["metadata"]["labels"][format!("l{i}")] = json!("v");
        // Distinct times order the entries: the oldest are merged first.
        let mut n = update(&fm, &o, next, &format!("writer-{i:02}"));
        if let Some(entries) = n["metadata"]["managedFields"].as_array_mut() {
            for e in entries.iter_mut() {
                if e["manager"] == format!("writer-{i:02}") {
                    e["time"] = json!(format!("2024-01-01T00:00:{i:02}Z"));
                }
            }
        }
        o = n;
    }
    let owners = managers_of(&o);
    assert_eq!(owners.len(), 10, "{owners:?}");
    let ancient = owners
        .iter()
        .find(|o| o.0 == "ancient-changes")
        .expect("a bucket");
    assert_eq!(
        ancient.2,
        json!({"f:metadata": {"f:labels": {"f:l0": {}, "f:l1": {}, "f:l2": {}}}})
    );
    assert!(owners.iter().any(|o| o.0 == "writer-11"));
    assert!(!owners.iter().any(|o| o.0 == "writer-02"));
}
