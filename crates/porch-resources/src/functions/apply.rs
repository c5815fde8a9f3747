//! Keeps the renders' [`FunctionConfigs`] equal to the stored FunctionConfigs (of every
//! namespace) and reports what it applied in `status.apiServerObservedGeneration`, as
//! Porch's embedded reconciler does; a client that waits for that generation knows its
//! renders use the configuration.

use porch_apiserver::LiveRegistry;
use porch_controllers::objects::{Gvr, Objects};
use serde_json::Value;

use super::routing::{Configured, FunctionConfigs};
use crate::objects::RegistryObjects;

const USER: &str = "system:serviceaccount:porch-system:porch-server";

fn gvr() -> Gvr {
    Gvr::new(porch_api::CONFIG_GROUP, "v1alpha1", "functionconfigs")
}

/// Applies the stored FunctionConfigs now: every valid one goes to `configs`; each whose
/// applied generation is not recorded gets it (or the decoding error) in its status.
pub async fn apply_all(objects: &RegistryObjects, configs: &FunctionConfigs) {
    let Ok(mut items) = objects.list(&gvr(), None, "").await else {
        return;
    };
    // A stable order: the first matching config wins, whatever the store's order.
    items.sort_by_key(|o| {
        (
            o.pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .map(str::to_owned),
            o.pointer("/metadata/name")
                .and_then(Value::as_str)
                .map(str::to_owned),
        )
    });
    let mut specs = Vec::new();
    let mut to_report = Vec::new();
    for obj in items {
        let spec = serde_json::from_value::<porch_api::FunctionConfigSpec>(
            obj.get("spec").cloned().unwrap_or(Value::Null),
        );
        let error = match spec {
            Ok(spec) => {
                let field = |p: &str| {
                    obj.pointer(p)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                specs.push(Configured {
                    namespace: field("/metadata/namespace"),
                    name: field("/metadata/name"),
                    spec,
                });
                None
            }
            Err(e) => Some(e.to_string()),
        };
        let generation = obj.pointer("/metadata/generation").and_then(Value::as_i64);
        let applied = obj
            .pointer("/status/apiServerObservedGeneration")
            .and_then(Value::as_i64);
        let reported_error = obj.pointer("/status/error").and_then(Value::as_str);
        if applied != generation || reported_error != error.as_deref() {
            to_report.push((obj, generation, error));
        }
    }
    configs.set(specs);
    for (mut obj, generation, error) in to_report {
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let mut status = obj.get("status").cloned().unwrap_or(serde_json::json!({}));
        if let Some(s) = status.as_object_mut() {
            s.insert("apiServerObservedGeneration".into(), generation.into());
            match error {
                Some(e) => s.insert("error".into(), e.into()),
                None => s.remove("error"),
            };
        }
        obj["status"] = status;
        // A conflict means it changed again: its own event brings it back here.
        if let Err(e) = objects.update_status(&gvr(), &ns, obj).await {
            tracing::debug!(error = %e.message, "FunctionConfig status not written");
        }
    }
}

/// Applies the FunctionConfigs at start and after every change, until `stop`.
pub async fn run(
    live: LiveRegistry,
    configs: FunctionConfigs,
    stop: tokio::sync::watch::Receiver<bool>,
) {
    let objects = RegistryObjects::new(live.clone(), USER);
    let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(1);
    // A first pass even when there is nothing to watch yet; the watch's initial events
    // (every current object) ask for another once it is established, so nothing written
    // before it is missed.
    let _ = tx.try_send(());
    let follow = tokio::spawn({
        let live = live.clone();
        let stop = stop.clone();
        async move {
            crate::objects::follow(
                &live,
                (porch_api::CONFIG_GROUP, "v1alpha1", "functionconfigs"),
                true,
                USER,
                stop,
                |_, _| {
                    // A full channel already asks for a pass that will see this change.
                    let _ = tx.try_send(());
                    true
                },
            )
            .await;
        }
    });
    while rx.recv().await.is_some() {
        apply_all(&objects, &configs).await;
    }
    follow.abort();
}
