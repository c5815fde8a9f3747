//! The repository controller: opens every Repository through the `RepositoryOpener` and writes
//! its `Ready` condition; closes it when the Repository is deleted.
//!
//! It consumes the same watch stream clients get (in process) and supervises each repository
//! in its own task (supervise.rs: retries with backoff, `runOnceAt`, status after every
//! sync); a spec change replaces the task, and status is written with a compare-and-swap on
//! the resourceVersion.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use futures::StreamExt;
use porch_apiserver::{ListOptions, RequestContext, Resource, WatchItem, WatchStart};
use porch_core::store::EventType;
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::opener::{Credentials, RepositoryOpener};

mod supervise;

/// Tracks the Repositories that exist when the server starts until each is opened (its
/// first sync done and its index loaded) or has failed, and its status written; then calls
/// `on_ready` once. `/readyz` answers 200 only from then on, so a client that waits for it
/// never lists a repository's drafts without its published revisions, or an old status.
pub struct StartupGate {
    state: std::sync::Mutex<GateState>,
    on_ready: Box<dyn Fn() + Send + Sync>,
    progress: watch::Sender<GateProgress>,
}

/// How far the controller has got, for replicas' read barrier: the resourceVersion of the
/// last Repository event it handled, and how many Repositories the store already reports
/// Ready (another replica, the leader, opened them) that this process has not opened yet.
/// A Repository that is not Ready anywhere (a remote that hangs) holds nobody up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GateProgress {
    pub seen: u64,
    pub lagging: usize,
}

#[derive(Default)]
struct GateState {
    /// Start-up Repositories not reconciled yet.
    pending: std::collections::HashSet<(String, String)>,
    /// Every Repository of the start-up listing was seen.
    listed: bool,
    fired: bool,
    /// Repositories (start-up or later) whose first open has not finished.
    opening: std::collections::HashSet<(String, String)>,
    /// Repositories whose stored status is Ready for their current generation.
    ready_stored: std::collections::HashSet<(String, String)>,
    seen: u64,
}

impl StartupGate {
    pub fn new(on_ready: impl Fn() + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Self {
            state: Default::default(),
            on_ready: Box::new(on_ready),
            progress: watch::channel(GateProgress::default()).0,
        })
    }

    /// Changes of [`GateProgress`].
    pub fn progress(&self) -> watch::Receiver<GateProgress> {
        self.progress.subscribe()
    }

    fn update(&self, f: impl FnOnce(&mut GateState)) {
        let fire = {
            let mut st = self
                .state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            f(&mut st);
            let fire = st.listed && st.pending.is_empty() && !st.fired;
            st.fired |= fire;
            let progress = GateProgress {
                seen: st.seen,
                lagging: st.opening.intersection(&st.ready_stored).count(),
            };
            self.progress
                .send_if_modified(|p| std::mem::replace(p, progress) != progress);
            fire
        };
        if fire {
            tracing::info!("every repository is loaded: ready");
            (self.on_ready)();
        }
    }

    /// A Repository of the start-up listing (before [`StartupGate::listed`]).
    fn expect(&self, key: &(String, String)) {
        self.update(|st| {
            if !st.listed {
                st.pending.insert(key.clone());
            }
            st.opening.insert(key.clone());
        });
    }

    fn listed(&self) {
        self.update(|st| st.listed = true);
    }

    /// The Repository was reconciled (or deleted).
    fn done(&self, key: &(String, String)) {
        self.update(|st| {
            st.pending.remove(key);
            st.opening.remove(key);
        });
    }

    /// The Repository event at `rv` was handled (after any [`StartupGate::expect`] of it);
    /// `ready` tells whether the stored status says Ready for the current generation.
    fn seen(&self, key: &(String, String), rv: u64, ready: bool) {
        self.update(|st| {
            st.seen = st.seen.max(rv);
            if ready {
                st.ready_stored.insert(key.clone());
            } else {
                st.ready_stored.remove(key);
            }
        });
    }
}

/// Whether the stored status of Repository `obj` says Ready for its current generation.
fn stored_ready(obj: &Value) -> bool {
    let generation = obj
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
        .is_some_and(|c| {
            c["status"] == "True" && c["observedGeneration"].as_i64().unwrap_or(0) == generation
        })
}

/// A Repository's supervising task and the spec it was started with.
struct Supervised {
    /// The spec without `sync.runOnceAt`: a change of anything else reopens the repository.
    spec: Value,
    tx: watch::Sender<Value>,
    handle: JoinHandle<()>,
}

/// The spec minus `sync.runOnceAt`, which only asks for a one-off sync.
fn spec_key(obj: &Value) -> Value {
    let mut spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    if let Some(sync) = spec.get_mut("sync").and_then(Value::as_object_mut) {
        sync.remove("runOnceAt");
    }
    // `sync: {runOnceAt}` added to a spec without `sync` is still only a one-off sync.
    if let Some(m) = spec.as_object_mut()
        && m.get("sync")
            .is_some_and(|s| s.as_object().is_some_and(|o| o.is_empty()))
    {
        m.remove("sync");
    }
    spec
}

/// Runs until the process stops; readiness changes are recorded as Events on `events`.
pub async fn run(
    repos: Resource,
    secrets: Option<Resource>,
    opener: Arc<dyn RepositoryOpener>,
    gate: Arc<StartupGate>,
    events: Arc<dyn crate::events::EventSink>,
) {
    let ctx = RequestContext::system("system:repository-controller");
    let shared = Arc::new(supervise::Shared {
        repos: repos.clone(),
        secrets,
        opener: opener.clone(),
        ctx: ctx.clone(),
        events,
    });
    // One task per Repository opened by this process: after a restart every one is opened
    // again, even when its status already reflects its generation.
    let mut tasks: HashMap<(String, String), Supervised> = HashMap::new();
    loop {
        let stream = repos
            .backend
            .watch(
                &ctx,
                None,
                // The end of the initial events tells the start-up set is complete.
                WatchStart::Now {
                    initial_events: true,
                },
                &ListOptions::default(),
            )
            .await;
        let mut stream = match stream {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "repository controller cannot watch; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        while let Some(item) = stream.next().await {
            let (event_type, object) = match item {
                WatchItem::Event { event_type, object } => (event_type, object),
                WatchItem::Bookmark {
                    initial_events_end: true,
                    ..
                } => {
                    gate.listed();
                    continue;
                }
                _ => continue,
            };
            let Ok(obj) = serde_json::from_slice::<Value>(&object) else {
                continue;
            };
            let ns = obj
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let name = obj
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let key = (ns.clone(), name.clone());
            let rv = obj
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
            let ready = stored_ready(&obj);
            tasks.retain(|_, t| !t.handle.is_finished());
            if event_type == EventType::Deleted
                || obj.pointer("/metadata/deletionTimestamp").is_some()
            {
                if let Some(t) = tasks.remove(&key) {
                    t.handle.abort();
                }
                opener.close(&ns, &name).await;
                tracing::info!(namespace = %ns, repository = %name, "closed repository");
                gate.done(&key);
                gate.seen(&key, rv, false);
                continue;
            }
            let spec = spec_key(&obj);
            // Same spec: the running task takes the new version (runOnceAt, generation, its
            // own status writes) and decides what it asks for.
            if let Some(t) = tasks.get(&key)
                && t.spec == spec
            {
                t.tx.send_replace(obj);
                gate.seen(&key, rv, ready);
                continue;
            }
            gate.expect(&key);
            if let Some(t) = tasks.remove(&key) {
                t.handle.abort();
            }
            let (tx, rx) = watch::channel(obj);
            let (shared, task_gate, task_key) = (shared.clone(), gate.clone(), key.clone());
            // An aborted task never reports its first attempt; the newer one that replaced
            // it does.
            let handle = tokio::spawn(supervise::supervise(shared, rx, move || {
                task_gate.done(&task_key)
            }));
            gate.seen(&key, rv, ready);
            tasks.insert(key, Supervised { spec, tx, handle });
        }
    }
}

pub(crate) async fn credentials(
    secrets: Option<&Resource>,
    ctx: &RequestContext,
    ns: &str,
    spec: &porch_api::RepositorySpec,
) -> Result<Option<Credentials>, String> {
    let name = spec
        .git
        .as_ref()
        .and_then(|g| g.secret_ref.as_ref())
        .or_else(|| spec.oci.as_ref().and_then(|o| o.secret_ref.as_ref()))
        .map(|r| r.name.clone())
        .filter(|n| !n.is_empty());
    let (Some(name), Some(secrets)) = (name, secrets) else {
        return Ok(None);
    };
    secret_credentials(secrets, ctx, ns, &name).await.map(Some)
}

/// The credentials in secret `ns/name`: basic auth (`kubernetes.io/basic-auth`) or a bearer
/// token (`Opaque` with `bearerToken`), as Porch reads them.
pub async fn secret_credentials(
    secrets: &Resource,
    ctx: &RequestContext,
    ns: &str,
    name: &str,
) -> Result<Credentials, String> {
    let secret = secrets
        .backend
        .get(ctx, ns, name)
        .await
        .map_err(|e| format!("cannot read secret {name:?}: {}", e.message))?;
    let field = |k: &str| {
        secret
            .pointer(&format!("/data/{k}"))
            .and_then(Value::as_str)
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    };
    match secret
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("Opaque")
    {
        "kubernetes.io/basic-auth" => Ok(Credentials::Basic {
            username: field("username").unwrap_or_default(),
            password: field("password").unwrap_or_default(),
        }),
        "Opaque" => field("bearerToken")
            .map(Credentials::Bearer)
            .ok_or_else(|| "bearer Token secret.Data key must be set as bearerToken".to_string()),
        other => Err(format!("no resolver for secret with type {other}")),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn the_gate_opens_once_after_the_listing_and_every_startup_repository() {
        let fired = Arc::new(AtomicUsize::new(0));
        let count = fired.clone();
        let gate = StartupGate::new(move || {
            count.fetch_add(1, Ordering::SeqCst);
        });
        let (a, b) = (
            ("ns".to_owned(), "a".to_owned()),
            ("ns".to_owned(), "b".to_owned()),
        );
        gate.expect(&a);
        gate.expect(&b);
        gate.done(&a);
        assert_eq!(fired.load(Ordering::SeqCst), 0, "listing not complete");
        gate.listed();
        assert_eq!(fired.load(Ordering::SeqCst), 0, "b still loading");
        // Created after start-up: not waited for.
        gate.expect(&("ns".to_owned(), "later".to_owned()));
        gate.done(&b);
        assert_eq!(fired.load(Ordering::SeqCst), 1);
        gate.done(&a);
        assert_eq!(fired.load(Ordering::SeqCst), 1, "fires once");
    }

    #[test]
    fn only_run_once_at_leaves_the_spec_key_alone() {
        let base = serde_json::json!({"spec": {"type": "git", "git": {"repo": "r"}}});
        let once = serde_json::json!({"spec": {"type": "git", "git": {"repo": "r"},
            "sync": {"runOnceAt": "2026-01-01T00:00:00Z"}}});
        assert_eq!(spec_key(&base), spec_key(&once));
        let scheduled = serde_json::json!({"spec": {"type": "git", "git": {"repo": "r"},
            "sync": {"schedule": "* * * * *", "runOnceAt": "2026-01-01T00:00:00Z"}}});
        assert_ne!(spec_key(&base), spec_key(&scheduled));
    }

    #[test]
    fn no_repositories_means_ready_at_the_end_of_the_listing() {
        let fired = Arc::new(AtomicUsize::new(0));
        let count = fired.clone();
        let gate = StartupGate::new(move || {
            count.fetch_add(1, Ordering::SeqCst);
        });
        gate.listed();
        assert_eq!(fired.load(Ordering::SeqCst), 1);
    }
}
