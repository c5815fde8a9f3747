//! The event recorder of the server's own components.
//!
//! `record` never blocks and never fails its caller: it queues on a bounded channel and a
//! full channel drops the event (counted). One background task ([`EventWriter::run`]) writes
//! the queue to the stored Events. Identical events (same involved object, type, reason,
//! action and message) are aggregated the way client-go's event correlator does: the first
//! creates an Event, each repeat increments its `count` / `series.count` and moves its
//! last-seen time, so a flapping repository updates two Events instead of flooding the store.
//! The Event's name is derived from that identity, so aggregation survives a restart.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use porch_apiserver::{ApiError, Expect, RequestContext, ResourceBackend};
use porch_core::ErrorKind;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// The object an Event is about (`involvedObject` / `regarding`). `uid` matters: `kubectl
/// describe` selects the Events of an object by its uid too.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

impl ObjectRef {
    /// The reference to a whole object in its JSON form (`apiVersion`, `kind`, `metadata`).
    pub fn of(obj: &Value) -> Self {
        let s = |p: &str| {
            obj.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        ObjectRef {
            api_version: s("/apiVersion"),
            kind: s("/kind"),
            namespace: s("/metadata/namespace"),
            name: s("/metadata/name"),
            uid: s("/metadata/uid"),
        }
    }

    fn to_json(&self) -> Value {
        let mut r = serde_json::Map::new();
        for (k, v) in [
            ("apiVersion", &self.api_version),
            ("kind", &self.kind),
            ("namespace", &self.namespace),
            ("name", &self.name),
            ("uid", &self.uid),
        ] {
            if !v.is_empty() {
                r.insert(k.into(), v.as_str().into());
            }
        }
        Value::Object(r)
    }
}

/// An Event's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    Normal,
    Warning,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// Where a component reports Events. Implementations must return at once: recording is
/// fire-and-forget and never slows or fails the caller.
///
/// A controller is handed an `Arc<dyn EventSink>` when it is started (porch-server passes
/// the one [`EventRecorder`] it runs; tests can pass their own sink or [`NoEvents`]).
pub trait EventSink: Send + Sync {
    /// Reports that `reason` happened to `involved`: `action` is what was done (a verb, e.g.
    /// `Approve`), `message` the human-readable detail.
    fn record(
        &self,
        involved: &ObjectRef,
        type_: EventType,
        reason: &str,
        action: &str,
        message: &str,
    );
}

/// A sink that drops everything (for callers that record nothing).
pub struct NoEvents;

impl EventSink for NoEvents {
    fn record(&self, _: &ObjectRef, _: EventType, _: &str, _: &str, _: &str) {}
}

/// One queued event.
#[derive(Debug, Clone)]
struct Record {
    involved: ObjectRef,
    type_: EventType,
    reason: String,
    action: String,
    message: String,
    /// When it was recorded (not when it is written).
    at: k8s_openapi::jiff::Timestamp,
}

/// The longest `message` kept (events.k8s.io limits `note` to 1 KiB).
const MAX_MESSAGE: usize = 1024;

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

/// The recording side: cheap to clone behind an `Arc`, shared by every component.
pub struct EventRecorder {
    tx: mpsc::Sender<Record>,
    dropped: AtomicU64,
}

impl EventRecorder {
    /// A recorder queueing up to `capacity` events, and the writer that stores them as
    /// `component` (`source.component`, `reportingComponent`) on `instance`
    /// (`reportingInstance`). Run the writer with [`EventWriter::run`].
    pub fn new(component: &str, instance: &str, capacity: usize) -> (Arc<Self>, EventWriter) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        let recorder = Arc::new(EventRecorder {
            tx,
            dropped: AtomicU64::new(0),
        });
        let writer = EventWriter {
            rx,
            component: component.to_owned(),
            instance: instance.to_owned(),
        };
        (recorder, writer)
    }

    /// Events dropped because the queue was full (or the writer gone).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl EventSink for EventRecorder {
    fn record(
        &self,
        involved: &ObjectRef,
        type_: EventType,
        reason: &str,
        action: &str,
        message: &str,
    ) {
        let record = Record {
            involved: involved.clone(),
            type_,
            reason: reason.to_owned(),
            action: action.to_owned(),
            message: truncate(message, MAX_MESSAGE),
            at: k8s_openapi::jiff::Timestamp::now(),
        };
        if self.tx.try_send(record).is_err() {
            let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            tracing::debug!(dropped = n, reason, "event queue full: event dropped");
        }
    }
}

/// The writing side: stores queued events, aggregating repeats.
pub struct EventWriter {
    rx: mpsc::Receiver<Record>,
    component: String,
    instance: String,
}

fn time(t: k8s_openapi::jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn micro_time(t: k8s_openapi::jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

impl EventWriter {
    /// Stores events into `events` (the core `v1` Events backend) until every recorder is
    /// dropped. A failed write is logged and skipped.
    pub async fn run(mut self, events: Arc<dyn ResourceBackend>) {
        while let Some(r) = self.rx.recv().await {
            if let Err(e) = self.write(events.as_ref(), &r).await {
                tracing::warn!(error = %e, reason = %r.reason, object = %r.involved.name, "cannot store event");
            }
        }
    }

    /// The Event's namespace and name: the involved object's namespace (`default` for
    /// cluster-scoped objects, as kube does) and a name derived from the aggregation key.
    fn key(&self, r: &Record) -> (String, String) {
        let ns = if r.involved.namespace.is_empty() {
            "default".to_owned()
        } else {
            r.involved.namespace.clone()
        };
        let identity = json!([
            r.involved.to_json(),
            r.type_.as_str(),
            r.reason,
            r.action,
            r.message,
            self.component
        ]);
        let id = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, identity.to_string().as_bytes());
        let hash = &id.simple().to_string()[..16];
        let base = truncate(&r.involved.name, 253 - 17);
        let base = if base.is_empty() { "event" } else { &base };
        (ns, format!("{base}.{hash}"))
    }

    fn new_event(&self, ns: &str, name: &str, r: &Record) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": name, "namespace": ns,
                "uid": uuid::Uuid::new_v4().to_string(),
                "creationTimestamp": time(r.at),
            },
            "involvedObject": r.involved.to_json(),
            "reason": r.reason,
            "message": r.message,
            "type": r.type_.as_str(),
            "source": {"component": self.component},
            "firstTimestamp": time(r.at),
            "lastTimestamp": time(r.at),
            "count": 1,
            "eventTime": micro_time(r.at),
            "action": r.action,
            "reportingComponent": self.component,
            "reportingInstance": self.instance,
        })
    }

    async fn write(&self, events: &dyn ResourceBackend, r: &Record) -> Result<(), ApiError> {
        let ctx = RequestContext::system(&format!("system:{}", self.component));
        let (ns, name) = self.key(r);
        let mut last = None;
        for _ in 0..3 {
            let e = match events.get(&ctx, &ns, &name).await {
                Ok(mut current) => {
                    let rv = current
                        .pointer("/metadata/resourceVersion")
                        .and_then(Value::as_str)
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(0);
                    repeat(&mut current, r.at);
                    match events
                        .update(&ctx, &ns, &name, current, Expect::ResourceVersion(rv))
                        .await
                    {
                        Ok(_) => return Ok(()),
                        Err(e) => e,
                    }
                }
                Err(e) if e.kind == ErrorKind::NotFound => {
                    match events
                        .create(&ctx, &ns, self.new_event(&ns, &name, r))
                        .await
                    {
                        Ok(_) => return Ok(()),
                        Err(e) => e,
                    }
                }
                Err(e) => return Err(e),
            };
            // Someone else wrote it in between (another writer, a user): read it again.
            if !matches!(e.kind, ErrorKind::Conflict | ErrorKind::AlreadyExists) {
                return Err(e);
            }
            last = Some(e);
        }
        Err(last.unwrap_or_else(|| ApiError::internal("event write retried out")))
    }
}

/// Counts one more occurrence of a stored (core `v1`) Event seen `at`.
fn repeat(event: &mut Value, at: k8s_openapi::jiff::Timestamp) {
    let count = event
        .pointer("/series/count")
        .or(event.get("count"))
        .and_then(Value::as_i64)
        .unwrap_or(1)
        .max(1)
        + 1;
    if let Some(m) = event.as_object_mut() {
        m.insert("count".into(), count.into());
        m.insert("lastTimestamp".into(), time(at).into());
        m.insert(
            "series".into(),
            json!({"count": count, "lastObservedTime": micro_time(at)}),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn involved() -> ObjectRef {
        ObjectRef::of(&json!({
            "apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
            "metadata": {"name": "repo", "namespace": "ns", "uid": "u-1"},
        }))
    }

    #[test]
    fn repeats_share_a_name_and_differences_do_not() {
        let (_rec, writer) = EventRecorder::new("porch-server", "host", 4);
        let r = Record {
            involved: involved(),
            type_: EventType::Warning,
            reason: "RepositoryNotReady".into(),
            action: "Sync".into(),
            message: "remote gone".into(),
            at: k8s_openapi::jiff::Timestamp::now(),
        };
        let (ns, name) = writer.key(&r);
        assert_eq!(ns, "ns");
        assert!(
            name.starts_with("repo.") && name.len() == "repo.".len() + 16,
            "{name}"
        );
        let later = Record {
            at: k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            ..r.clone()
        };
        assert_eq!(
            writer.key(&later).1,
            name,
            "the time is not part of the identity"
        );
        let other = Record {
            message: "remote back".into(),
            ..r.clone()
        };
        assert_ne!(writer.key(&other).1, name);
        let recreated = Record {
            involved: ObjectRef {
                uid: "u-2".into(),
                ..involved()
            },
            ..r
        };
        assert_ne!(writer.key(&recreated).1, name, "a new object, a new event");
    }

    #[test]
    fn a_repeat_counts_in_both_apis() {
        let mut e = json!({"count": 1, "lastTimestamp": "2026-01-01T00:00:00Z"});
        repeat(&mut e, k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
        assert_eq!(e["count"], 2);
        assert_eq!(e["series"]["count"], 2);
        assert_eq!(e["lastTimestamp"], "1970-01-01T00:00:00Z");
        assert_eq!(
            e["series"]["lastObservedTime"],
            "1970-01-01T00:00:00.000000Z"
        );
        repeat(&mut e, k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
        assert_eq!(e["count"], 3);
    }

    #[test]
    fn a_full_queue_drops_and_counts() {
        let (rec, _writer) = EventRecorder::new("porch-server", "host", 2);
        for _ in 0..5 {
            rec.record(&involved(), EventType::Normal, "Ready", "Sync", "ok");
        }
        assert_eq!(rec.dropped(), 3);
    }

    #[test]
    fn long_messages_are_cut_on_a_character_boundary() {
        let long = "é".repeat(600);
        let cut = truncate(&long, MAX_MESSAGE);
        assert!(cut.len() <= MAX_MESSAGE && cut.chars().all(|c| c == 'é'));
    }
}
