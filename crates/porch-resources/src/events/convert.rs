//! The two views of one stored Event: core `v1` (the stored form) and `events.k8s.io/v1`,
//! field for field as kube-apiserver converts them; their field selectors and Table cells.

use porch_apiserver::{FieldError, Selectors};
use serde_json::{Map, Value, json};

/// The `events.k8s.io/v1` field of each core `v1` field (kube's conversion of both to the
/// internal Event).
const FIELDS: [(&str, &str); 14] = [
    ("involvedObject", "regarding"),
    ("related", "related"),
    ("message", "note"),
    ("reason", "reason"),
    ("type", "type"),
    ("action", "action"),
    ("reportingComponent", "reportingController"),
    ("reportingInstance", "reportingInstance"),
    ("eventTime", "eventTime"),
    ("series", "series"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
];

const REFERENCE_FIELDS: [&str; 7] = [
    "kind",
    "namespace",
    "name",
    "uid",
    "apiVersion",
    "resourceVersion",
    "fieldPath",
];

fn convert(obj: &Value, api_version: &str, map: impl Fn(&str) -> Option<&'static str>) -> Value {
    let mut out = Map::new();
    out.insert("apiVersion".into(), api_version.into());
    out.insert("kind".into(), "Event".into());
    if let Some(m) = obj.get("metadata") {
        out.insert("metadata".into(), m.clone());
    }
    if let Some(src) = obj.as_object() {
        for (k, v) in src {
            if let Some(to) = map(k)
                && !v.is_null()
            {
                out.insert(to.into(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// The `events.k8s.io/v1` view of a stored (core `v1`) Event.
pub fn to_events_v1(core: &Value) -> Value {
    convert(core, "events.k8s.io/v1", |k| {
        FIELDS.iter().find(|(c, _)| *c == k).map(|(_, n)| *n)
    })
}

/// The core `v1` (stored) form of an `events.k8s.io/v1` Event.
pub fn to_core(new: &Value) -> Value {
    convert(new, "v1", |k| {
        FIELDS.iter().find(|(_, n)| *n == k).map(|(c, _)| *c)
    })
}

/// Field selectors of core `v1` Events (kube's `event.ToSelectableFields`).
pub fn core_field_selectors() -> Vec<String> {
    let mut out: Vec<String> = REFERENCE_FIELDS
        .iter()
        .map(|f| format!("involvedObject.{f}"))
        .collect();
    out.extend(["reason", "reportingComponent", "source", "type"].map(String::from));
    out
}

/// Field selectors of `events.k8s.io/v1` Events; the core names are accepted too.
pub fn events_v1_field_selectors() -> Vec<String> {
    let mut out: Vec<String> = REFERENCE_FIELDS
        .iter()
        .map(|f| format!("regarding.{f}"))
        .collect();
    out.push("reportingController".into());
    out.extend(core_field_selectors());
    out
}

/// Rewrites selector paths of either view to paths of the stored form. `source` selects
/// the source component (the recorder sets it equal to the reporting component).
pub fn to_stored_selectors(mut s: Selectors) -> Selectors {
    for f in &mut s.fields {
        let path = if let Some(rest) = f.path.strip_prefix("regarding.") {
            format!("involvedObject.{rest}")
        } else {
            match f.path.as_str() {
                "reportingController" => "reportingComponent".into(),
                "source" => "source.component".into(),
                other => other.into(),
            }
        };
        f.path = path;
    }
    s
}

/// What kube-apiserver refuses in an `events.k8s.io/v1` Event (`ValidateEventCreate` for the
/// new API; the core API keeps its lenient legacy rules).
pub fn validate_events_v1(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let s = |k: &str| obj.get(k).and_then(Value::as_str).unwrap_or("");
    for field in [
        "reportingController",
        "reportingInstance",
        "action",
        "reason",
    ] {
        if s(field).is_empty() {
            errs.push(FieldError::required(field));
        }
    }
    for field in ["action", "reason"] {
        if s(field).len() > 128 {
            errs.push(FieldError::invalid(
                field,
                &json!(s(field)),
                "can have at most 128 characters",
            ));
        }
    }
    if !matches!(s("type"), "Normal" | "Warning") {
        errs.push(FieldError::not_supported(
            "type",
            &json!(s("type")),
            &["Normal", "Warning"],
        ));
    }
    if s("note").len() > 1024 {
        errs.push(FieldError::invalid(
            "note",
            &json!("<note>"),
            "must have at most 1024 bytes",
        ));
    }
    let ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let regarding_ns = obj
        .pointer("/regarding/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    if regarding_ns.is_empty() && ns != "default" && ns != "kube-system" {
        errs.push(FieldError::invalid(
            "involvedObject.namespace",
            &json!(regarding_ns),
            "does not match event.namespace",
        ));
    }
    errs
}

/// [`validate_events_v1`] of a create, which also leaves the deprecated fields to the server.
pub fn validate_events_v1_create(obj: &Value) -> Vec<FieldError> {
    let mut errs = validate_events_v1(obj);
    for (field, path) in [
        ("deprecatedFirstTimestamp", "firstTimestamp"),
        ("deprecatedLastTimestamp", "lastTimestamp"),
        ("deprecatedCount", "count"),
        ("deprecatedSource", "source"),
    ] {
        let set = match obj.get(field) {
            None | Some(Value::Null) => false,
            Some(Value::Number(n)) => n.as_i64() != Some(0),
            Some(Value::Object(m)) => m
                .values()
                .any(|v| v.as_str().is_some_and(|s| !s.is_empty())),
            Some(Value::String(s)) => !s.is_empty(),
            Some(_) => true,
        };
        if set {
            errs.push(FieldError::invalid(path, &json!(""), "needs to be unset"));
        }
    }
    errs
}

/// The fields an update through `events.k8s.io/v1` may not change (only `series` and
/// metadata may move, as kube-apiserver's `ValidateEventUpdate` has it).
const IMMUTABLE_V1: [&str; 13] = [
    "regarding",
    "related",
    "reason",
    "note",
    "type",
    "action",
    "reportingController",
    "reportingInstance",
    "eventTime",
    "deprecatedSource",
    "deprecatedFirstTimestamp",
    "deprecatedLastTimestamp",
    "deprecatedCount",
];

pub fn validate_events_v1_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = validate_events_v1(new);
    for field in IMMUTABLE_V1 {
        let get = |o: &Value| o.get(field).filter(|v| !v.is_null()).cloned();
        if get(new) != get(old) {
            errs.push(FieldError::immutable(field));
        }
    }
    errs
}

/// What kube-apiserver refuses in a core `v1` Event (its legacy rules): an Event without
/// `eventTime` must live in its object's namespace (`default` for cluster-scoped objects);
/// one with `eventTime` is a new-style Event and needs what the new API needs.
pub fn validate_core(obj: &Value) -> Vec<FieldError> {
    let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("");
    let ns = s("/metadata/namespace");
    let involved_ns = s("/involvedObject/namespace");
    let mut errs = Vec::new();
    let mismatch = || {
        FieldError::invalid(
            "involvedObject.namespace",
            &json!(involved_ns),
            "does not match event.namespace",
        )
    };
    if s("/eventTime").is_empty() {
        let ok = if involved_ns.is_empty() {
            ns.is_empty() || ns == "default"
        } else {
            ns == involved_ns
        };
        if !ok {
            errs.push(mismatch());
        }
        return errs;
    }
    if involved_ns.is_empty() && ns != "default" && ns != "kube-system" {
        errs.push(mismatch());
    }
    for field in [
        "reportingComponent",
        "reportingInstance",
        "action",
        "reason",
    ] {
        if s(&format!("/{field}")).is_empty() {
            errs.push(FieldError::required(field));
        }
    }
    errs
}

fn parse_time(v: Option<&Value>) -> Option<k8s_openapi::jiff::Timestamp> {
    v.and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .and_then(|s| s.parse().ok())
}

fn since(t: Option<k8s_openapi::jiff::Timestamp>) -> String {
    match t {
        Some(t) => porch_apiserver::human_duration(
            k8s_openapi::jiff::Timestamp::now().as_second() - t.as_second(),
        ),
        None => "<unknown>".into(),
    }
}

/// When an Event was first and last seen (the times kube's Event printer shows).
pub fn first_and_last_seen(
    core: &Value,
) -> (
    Option<k8s_openapi::jiff::Timestamp>,
    Option<k8s_openapi::jiff::Timestamp>,
) {
    let first = parse_time(core.get("firstTimestamp")).or(parse_time(core.get("eventTime")));
    let last = parse_time(core.pointer("/series/lastObservedTime"))
        .or(parse_time(core.get("lastTimestamp")))
        .or(first);
    (first, last)
}

/// The Table cells of kube's Event printer, from the stored form: Last Seen, Type, Reason,
/// Object, Subobject, Source, Message, First Seen, Count (Name is its own column).
pub fn cell(core: &Value, column: &str) -> Value {
    let s = |p: &str| core.pointer(p).and_then(Value::as_str).unwrap_or("");
    let (first, last) = first_and_last_seen(core);
    match column {
        "Last Seen" => since(last).into(),
        "First Seen" => since(first).into(),
        "Type" => s("/type").into(),
        "Reason" => s("/reason").into(),
        "Object" => {
            let kind = s("/involvedObject/kind").to_lowercase();
            match s("/involvedObject/name") {
                "" => kind.into(),
                name => format!("{kind}/{name}").into(),
            }
        }
        "Subobject" => s("/involvedObject/fieldPath").into(),
        "Source" => {
            let first_non_empty = |a: &'static str, b: &'static str| match s(a) {
                "" => s(b),
                v => v,
            };
            let component = first_non_empty("/source/component", "/reportingComponent");
            match first_non_empty("/source/host", "/reportingInstance") {
                "" => component.into(),
                instance => format!("{component}, {instance}").into(),
            }
        }
        "Message" => s("/message").trim().into(),
        "Count" => {
            let count = core
                .pointer("/series/count")
                .or(core.get("count"))
                .and_then(Value::as_i64)
                .filter(|c| *c != 0)
                .unwrap_or(1);
            count.into()
        }
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core() -> Value {
        json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "r.abc", "namespace": "ns"},
            "involvedObject": {"apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision",
                               "name": "r", "namespace": "ns", "uid": "u1"},
            "reason": "Proposed", "message": "proposed  ", "type": "Normal",
            "source": {"component": "porch-server"},
            "reportingComponent": "porch-server", "reportingInstance": "host-1",
            "action": "Propose",
            "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:05:00Z",
            "count": 3,
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "series": {"count": 3, "lastObservedTime": "2026-01-01T00:05:00.000000Z"},
        })
    }

    #[test]
    fn both_views_map_field_for_field_and_back() {
        let new = to_events_v1(&core());
        assert_eq!(new["apiVersion"], "events.k8s.io/v1");
        assert_eq!(new["regarding"]["kind"], "PackageRevision");
        assert_eq!(new["note"], "proposed  ");
        assert_eq!(new["reportingController"], "porch-server");
        assert_eq!(new["deprecatedSource"]["component"], "porch-server");
        assert_eq!(new["deprecatedCount"], 3);
        assert_eq!(new["deprecatedLastTimestamp"], "2026-01-01T00:05:00Z");
        assert_eq!(new["series"]["count"], 3);
        assert!(new.get("involvedObject").is_none() && new.get("message").is_none());
        assert_eq!(to_core(&new), core(), "the round trip keeps every field");
    }

    #[test]
    fn selectors_of_the_new_api_select_the_stored_form() {
        let allowed = events_v1_field_selectors();
        let s = Selectors::parse(
            None,
            Some("regarding.kind=PackageRevision,regarding.name=r,reportingController=porch-server,source=porch-server,type=Normal"),
            &allowed,
        )
        .expect("parses");
        assert!(!s.matches(&core()), "new paths are not in the stored form");
        assert!(to_stored_selectors(s).matches(&core()));
        let wrong = Selectors::parse(None, Some("regarding.uid=other"), &allowed).expect("parses");
        assert!(!to_stored_selectors(wrong).matches(&core()));
        assert!(Selectors::parse(None, Some("note=x"), &allowed).is_err());
    }

    #[test]
    fn cells_follow_kubes_event_printer() {
        let c = core();
        assert_eq!(cell(&c, "Object"), "packagerevision/r");
        assert_eq!(cell(&c, "Message"), "proposed");
        assert_eq!(cell(&c, "Source"), "porch-server, host-1");
        assert_eq!(cell(&c, "Count"), 3);
        let mut single = c.clone();
        single.as_object_mut().map(|m| {
            m.remove("series");
            m.remove("count")
        });
        assert_eq!(cell(&single, "Count"), 1, "singletons count one");
        assert!(
            cell(&c, "Last Seen")
                .as_str()
                .is_some_and(|s| s.ends_with('d') || s.ends_with('y') || s.contains('d')),
            "{}",
            cell(&c, "Last Seen")
        );
        let none = json!({"involvedObject": {"kind": "Node"}});
        assert_eq!(cell(&none, "Last Seen"), "<unknown>");
        assert_eq!(cell(&none, "Object"), "node");
    }

    #[test]
    fn the_core_api_keeps_kubes_legacy_rules() {
        assert!(validate_core(&core()).is_empty());
        let mut legacy = core();
        legacy.as_object_mut().map(|m| m.remove("eventTime"));
        assert!(validate_core(&legacy).is_empty());
        legacy["metadata"]["namespace"] = json!("elsewhere");
        let errs = validate_core(&legacy);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "involvedObject.namespace");
        let mut new_style = core();
        new_style
            .as_object_mut()
            .map(|m| m.remove("reportingInstance"));
        let errs = validate_core(&new_style);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "reportingInstance");
    }

    #[test]
    fn the_new_api_refuses_what_kube_refuses() {
        let ok = to_events_v1(&core());
        assert!(
            validate_events_v1(&ok).is_empty(),
            "{:?}",
            validate_events_v1(&ok)
        );
        assert!(
            validate_events_v1_create(&ok)
                .iter()
                .any(|e| e.field == "count" && e.message.contains("needs to be unset")),
            "a create leaves deprecatedCount to the server"
        );
        let mut moved = ok.clone();
        moved["series"]["count"] = json!(4);
        assert!(validate_events_v1_update(&moved, &ok).is_empty());
        moved["note"] = json!("rewritten");
        let errs = validate_events_v1_update(&moved, &ok);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "note");
        let errs =
            validate_events_v1(&json!({"type": "Bad", "metadata": {"namespace": "default"}}));
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "reportingController",
                "reportingInstance",
                "action",
                "reason",
                "type"
            ]
        );
    }
}
