//! Schemas of Kubernetes Events: core `v1` `Event` and `events.k8s.io/v1` `Event`, two views
//! of one stored object (the server converts between them as kube-apiserver does).

use serde_json::{Value, json};

fn string() -> Value {
    json!({"type": "string"})
}

fn time() -> Value {
    json!({"type": "string", "format": "date-time"})
}

fn object_reference() -> Value {
    json!({
        "type": "object",
        "description": "ObjectReference contains enough information to let you inspect or modify the referred object.",
        "properties": {
            "apiVersion": string(), "fieldPath": string(), "kind": string(), "name": string(),
            "namespace": string(), "resourceVersion": string(), "uid": string(),
        },
    })
}

fn series() -> Value {
    json!({
        "type": "object",
        "description": "EventSeries contain information on series of events, i.e. thing that was/is happening continuously for some time.",
        "properties": {
            "count": {"type": "integer", "format": "int32"},
            "lastObservedTime": time(),
        },
    })
}

fn source() -> Value {
    json!({"type": "object", "description": "EventSource contains information for an event.",
           "properties": {"component": string(), "host": string()}})
}

/// Core `v1` `Event`.
pub fn core_event_schema() -> Value {
    json!({
        "type": "object",
        "description": "Event is a report of an event somewhere in the cluster.",
        "required": ["metadata", "involvedObject"],
        "properties": {
            "apiVersion": string(),
            "kind": string(),
            "metadata": {"type": "object"},
            "involvedObject": object_reference(),
            "reason": string(),
            "message": string(),
            "source": source(),
            "firstTimestamp": time(),
            "lastTimestamp": time(),
            "count": {"type": "integer", "format": "int32"},
            "type": string(),
            "eventTime": time(),
            "series": series(),
            "action": string(),
            "related": object_reference(),
            "reportingComponent": string(),
            "reportingInstance": string(),
        },
    })
}

/// `events.k8s.io/v1` `Event`.
pub fn events_v1_event_schema() -> Value {
    json!({
        "type": "object",
        "description": "Event is a report of an event somewhere in the cluster. It generally denotes some state change in the system.",
        "required": ["eventTime"],
        "properties": {
            "apiVersion": string(),
            "kind": string(),
            "metadata": {"type": "object"},
            "eventTime": time(),
            "series": series(),
            "reportingController": string(),
            "reportingInstance": string(),
            "action": string(),
            "reason": string(),
            "regarding": object_reference(),
            "related": object_reference(),
            "note": string(),
            "type": string(),
            "deprecatedSource": source(),
            "deprecatedFirstTimestamp": time(),
            "deprecatedLastTimestamp": time(),
            "deprecatedCount": {"type": "integer", "format": "int32"},
        },
    })
}
