//! What the controllers report about their actions, Kubernetes-Events style. The port is
//! small on purpose: a recorder writing `v1` Events plugs in behind it.

/// `Normal` for actions, `Warning` for failures (the Kubernetes event types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// The object an event is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvolvedObject {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

/// Records one event per controller action (created, upgraded, adopted, orphaned, deleted,
/// error). Never fails the reconcile: recording is best effort.
pub trait EventSink: Send + Sync {
    fn record(&self, object: &InvolvedObject, event_type: EventType, reason: &str, message: &str);
}

/// Logs events through `tracing` (until a Kubernetes Events recorder is wired).
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingEvents;

impl EventSink for TracingEvents {
    fn record(&self, object: &InvolvedObject, event_type: EventType, reason: &str, message: &str) {
        match event_type {
            EventType::Normal => tracing::info!(
                kind = %object.kind, namespace = %object.namespace, name = %object.name,
                reason, "{message}"
            ),
            EventType::Warning => tracing::warn!(
                kind = %object.kind, namespace = %object.namespace, name = %object.name,
                reason, "{message}"
            ),
        }
    }
}

/// Keeps every event in memory (tests, and a place to look in debugging sessions).
#[derive(Debug, Default)]
pub struct MemoryEvents {
    events: std::sync::Mutex<Vec<(String, EventType, String, String)>>,
}

impl MemoryEvents {
    /// `(object name, type, reason, message)` of every event so far.
    pub fn all(&self) -> Vec<(String, EventType, String, String)> {
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The reasons of every event so far, in order.
    pub fn reasons(&self) -> Vec<String> {
        self.all().into_iter().map(|e| e.2).collect()
    }
}

impl EventSink for MemoryEvents {
    fn record(&self, object: &InvolvedObject, event_type: EventType, reason: &str, message: &str) {
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((
                object.name.clone(),
                event_type,
                reason.into(),
                message.into(),
            ));
    }
}
