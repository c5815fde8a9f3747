//! Kubernetes Events: core `v1` `events` and `events.k8s.io/v1` `events`, two views of one
//! set of stored objects (backend.rs, convert.rs); the recorder the server's components
//! report through (recorder.rs); expiry (prune.rs).
//!
//! What is recorded, by whom (docs/server.md, "Events"):
//! - package revision lifecycle, by the `packagerevisions` backend after each successful
//!   change: `Created`, `Proposed`, `Approved` (published), `Rejected` (back to Draft),
//!   `DeletionProposed`, `DeletionRejected` (back to Published), `Deleted`;
//! - render failures (`Warning`, `RenderFailed`, the render error naming the function image);
//! - repository readiness, by the repository controller: `Ready` when a repository opens,
//!   `NotReady` (`Warning`, with the error) on every failed attempt.
//!
//! A controller gets an `Arc<dyn EventSink>` when started: porch-server creates one
//! [`EventRecorder`], runs its [`EventWriter`] on the core Events backend (`Registry::find("",
//! "v1", "events")`) and hands clones of the recorder to every component.

mod backend;
mod convert;
mod prune;
mod recorder;

use std::sync::Arc;

use porch_apiserver::{
    Column, FieldError, GenericBackend, Registry, ResourceHooks, ResourceKind, WatchHub,
};
use porch_core::store::MetadataStore;
use serde_json::Value;

pub use prune::{DEFAULT_TTL, prune_loop, prune_once};
pub use recorder::{EventRecorder, EventSink, EventType, EventWriter, NoEvents, ObjectRef};

use backend::{EventsBackend, View};

/// The reporting component of the server's own Events.
pub const COMPONENT: &str = "porch-server";

/// Columns of kube's Event printer; `to_core` gives each cell the stored form.
fn columns(to_core: fn(&Value) -> Value) -> Vec<Column> {
    let cell = move |name: &'static str| {
        move |o: &Value| {
            let core = to_core(o);
            convert::cell(&core, name)
        }
    };
    let wide = |c: Column| c.priority(1);
    vec![
        Column::computed("Last Seen", "string", cell("Last Seen")),
        Column::computed("Type", "string", cell("Type")),
        Column::computed("Reason", "string", cell("Reason")),
        Column::computed("Object", "string", cell("Object")),
        wide(Column::computed("Subobject", "string", cell("Subobject"))),
        wide(Column::computed("Source", "string", cell("Source"))),
        Column::computed("Message", "string", cell("Message")),
        wide(Column::computed("First Seen", "string", cell("First Seen"))),
        wide(Column::computed("Count", "integer", cell("Count"))),
        wide(Column::name()),
    ]
}

struct CoreHooks;

impl ResourceHooks for CoreHooks {
    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        convert::validate_core(obj)
    }
}

struct EventsV1Hooks;

impl ResourceHooks for EventsV1Hooks {
    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        convert::validate_events_v1_create(obj)
    }
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        convert::validate_events_v1_update(new, old)
    }
}

fn event_kind(group: &str) -> ResourceKind {
    let mut k = ResourceKind::new(group, "v1", "Event", "events");
    k.short_names = vec!["ev".into()];
    k.age_column = false;
    k
}

/// Serves both Event APIs on the `/events` store resource.
pub(crate) fn register(reg: &mut Registry, store: &Arc<dyn MetadataStore>, hub: &Arc<WatchHub>) {
    let mut core = event_kind("");
    core.schema = porch_api::event::core_event_schema();
    core.columns = columns(Value::clone);
    core.field_selectors = convert::core_field_selectors();
    core.hooks = Arc::new(CoreHooks);
    let core = Arc::new(core);

    let mut new = event_kind("events.k8s.io");
    new.schema = porch_api::event::events_v1_event_schema();
    new.columns = columns(convert::to_core);
    new.field_selectors = convert::events_v1_field_selectors();
    new.hooks = Arc::new(EventsV1Hooks);
    let new = Arc::new(new);

    for (kind, view) in [(&core, View::Core), (&new, View::EventsV1)] {
        let backend = EventsBackend {
            view,
            kind: kind.clone(),
            // Both views store through the core kind: one `/events` resource.
            inner: GenericBackend::new(core.clone(), store.clone(), hub.clone()),
        };
        reg.add((**kind).clone(), Arc::new(backend));
    }
}

#[cfg(test)]
mod tests;
