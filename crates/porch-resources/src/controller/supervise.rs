//! One Repository's life in the controller: open it, retrying a failure with a capped,
//! jittered backoff (the remote may simply not exist yet); once open, keep its status
//! current after every sync, the opener's scheduled ones and the one-off
//! `spec.sync.runOnceAt` (which `porchctl repo sync` sets; a new one also retries a failed
//! repository at once).
//!
//! The task receives every later version of its Repository through a watch channel; the
//! controller replaces the task instead when the spec changes beyond `spec.sync.runOnceAt`.

use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::Duration;

use porch_apiserver::{Expect, RequestContext, Resource};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::events::{EventSink, EventType, ObjectRef};
use crate::opener::{Opened, RepoState, RepositoryOpener, RepositoryTarget};

const OPEN_TIMEOUT: Duration = Duration::from_secs(60);
const BACKOFF_FIRST: Duration = Duration::from_secs(1);
const BACKOFF_CAP: Duration = Duration::from_secs(30);
/// How often an open repository's sync state is compared with its status. Reading it is a
/// lock and a clone; the status is written only when it changed.
const REFRESH_POLL: Duration = Duration::from_secs(2);

/// What the controller needs to open a repository and write its status.
pub struct Shared {
    pub repos: Resource,
    pub secrets: Option<Resource>,
    pub opener: Arc<dyn RepositoryOpener>,
    pub ctx: RequestContext,
    /// Readiness changes are reported here (`Ready`, `NotReady`).
    pub events: Arc<dyn EventSink>,
}

/// The wait before retry `attempt` (0-based): 1 s doubling to 30 s, scaled by
/// `0.5 + unit / 2` so repositories failing together do not retry in step, and never over
/// the cap, so a repository is retried at least every 30 s.
pub fn backoff(attempt: u32, unit: f64) -> Duration {
    let base = BACKOFF_FIRST
        .saturating_mul(1u32 << attempt.min(16))
        .min(BACKOFF_CAP);
    base.mul_f64(0.5 + 0.5 * unit.clamp(0.0, 1.0))
}

/// A value in [0, 1] from the process's random hasher keys (no extra dependency for jitter).
fn random_unit() -> f64 {
    let bits = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// What the status reports; written whenever it changes.
#[derive(Debug, Clone, Default, PartialEq)]
struct Observed {
    /// `None` when ready.
    error: Option<String>,
    last_sync: Option<String>,
    git_commit_hash: Option<String>,
    package_count: Option<i64>,
    observed_run_once_at: Option<String>,
}

impl Observed {
    fn with_state(&self, st: RepoState) -> Observed {
        Observed {
            error: (!st.ready).then_some(st.message),
            // A failed sync keeps what the last good one found.
            last_sync: st.last_sync.or_else(|| self.last_sync.clone()),
            git_commit_hash: st.git_commit_hash.or_else(|| self.git_commit_hash.clone()),
            package_count: st.package_count.or(self.package_count),
            observed_run_once_at: self.observed_run_once_at.clone(),
        }
    }

    fn opened(&self, opened: Opened, state: Option<RepoState>) -> Observed {
        let fallback = RepoState {
            ready: true,
            message: String::new(),
            last_sync: Some(porch_apiserver::now_rfc3339()),
            git_commit_hash: opened.git_commit_hash,
            package_count: opened.package_count,
        };
        self.with_state(state.unwrap_or(fallback))
    }

    fn status(&self, generation: i64, now: &str) -> Value {
        let (status, reason, message) = match &self.error {
            None => ("True", "Ready", "Repository Ready"),
            Some(e) => ("False", "Error", e.as_str()),
        };
        let mut s = json!({
            "conditions": [{
                "type": "Ready", "status": status, "reason": reason, "message": message,
                "observedGeneration": generation, "lastTransitionTime": now,
            }],
            "observedGeneration": generation,
        });
        for (field, value) in [
            ("lastFullSyncTime", self.last_sync.clone().map(Value::from)),
            (
                "gitCommitHash",
                self.git_commit_hash.clone().map(Value::from),
            ),
            ("packageCount", self.package_count.map(Value::from)),
            (
                "observedRunOnceAt",
                self.observed_run_once_at.clone().map(Value::from),
            ),
        ] {
            if let Some(v) = value {
                s[field] = v;
            }
        }
        s
    }
}

fn str_at(obj: &Value, path: &str) -> Option<String> {
    obj.pointer(path)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn generation(obj: &Value) -> i64 {
    obj.pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

fn run_once_at(obj: &Value) -> Option<String> {
    str_at(obj, "/spec/sync/runOnceAt")
}

/// How long until the one-off sync the Repository asks for; `None` when there is none or
/// it already ran.
fn run_once_wait(obj: &Value, observed: &Observed) -> Option<Duration> {
    let raw = run_once_at(obj)?;
    if observed.observed_run_once_at.as_ref() == Some(&raw) {
        return None;
    }
    let at = raw.parse::<k8s_openapi::jiff::Timestamp>().ok()?;
    let ms = at
        .duration_since(k8s_openapi::jiff::Timestamp::now())
        .as_millis();
    Some(Duration::from_millis(u64::try_from(ms).unwrap_or(0)))
}

/// Runs until the Repository is deleted or its spec changes (the controller aborts it) or
/// the channel closes. `first_done` is called after the first attempt, whatever its outcome.
pub async fn supervise(
    shared: Arc<Shared>,
    mut rx: watch::Receiver<Value>,
    first_done: impl FnOnce() + Send,
) {
    let mut obj = rx.borrow_and_update().clone();
    let ns = str_at(&obj, "/metadata/namespace").unwrap_or_default();
    let name = str_at(&obj, "/metadata/name").unwrap_or_default();
    let mut observed = Observed {
        observed_run_once_at: str_at(&obj, "/status/observedRunOnceAt"),
        ..Default::default()
    };
    let mut first_done = Some(first_done);
    let mut attempt = 0u32;
    loop {
        let outcome = shared.open(&ns, &name, &obj).await;
        match outcome {
            Ok(opened) => {
                // The open was a full sync: a runOnceAt already due is served by it.
                if run_once_wait(&obj, &observed) == Some(Duration::ZERO) {
                    observed.observed_run_once_at = run_once_at(&obj);
                }
                observed = observed.opened(opened, shared.opener.state(&ns, &name));
                tracing::info!(namespace = %ns, repository = %name, "repository ready");
            }
            Err(e) => {
                tracing::warn!(namespace = %ns, repository = %name, error = %e, attempt, "repository not ready; retrying");
                observed.error = Some(e);
            }
        }
        // Every attempt is reported: repeats of one error aggregate into one Event's count.
        shared.report(&obj, observed.error.as_deref());
        shared.write(&ns, &name, generation(&obj), &observed).await;
        if let Some(f) = first_done.take() {
            f();
        }
        if observed.error.is_none() {
            break;
        }
        let deadline = tokio::time::Instant::now() + backoff(attempt, random_unit());
        attempt = attempt.saturating_add(1);
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => break,
                changed = rx.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    let new = rx.borrow_and_update().clone();
                    let retry_now = run_once_at(&new) != run_once_at(&obj);
                    let regenerated = generation(&new) != generation(&obj);
                    obj = new;
                    if retry_now {
                        attempt = 0;
                        break;
                    }
                    if regenerated {
                        shared.write(&ns, &name, generation(&obj), &observed).await;
                    }
                }
            }
        }
    }
    // Open: the status follows every sync.
    let mut reporting = shared.opener.writes_status();
    loop {
        let due = run_once_wait(&obj, &observed);
        let wait = due.map_or(REFRESH_POLL, |d| d.min(REFRESH_POLL));
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            changed = rx.changed() => {
                if changed.is_err() {
                    return;
                }
                let new = rx.borrow_and_update().clone();
                let regenerated = generation(&new) != generation(&obj);
                obj = new;
                if regenerated {
                    shared.write(&ns, &name, generation(&obj), &observed).await;
                }
                continue;
            }
        }
        let mut next = observed.clone();
        if due.is_some_and(|d| d <= wait) {
            next.observed_run_once_at = run_once_at(&obj);
            if let Err(e) = shared.opener.sync_now(&ns, &name).await {
                tracing::warn!(namespace = %ns, repository = %name, error = %e, "one-off sync failed");
            }
        }
        if let Some(st) = shared.opener.state(&ns, &name) {
            next = next.with_state(st);
        }
        if next.error != observed.error {
            shared.report(&obj, next.error.as_deref());
        }
        // A replica that became the leader reports what it sees at once.
        let became = shared.opener.writes_status() && !reporting;
        reporting = shared.opener.writes_status();
        if next != observed || became {
            observed = next;
            shared.write(&ns, &name, generation(&obj), &observed).await;
        }
    }
}

impl Shared {
    /// Records the Repository's readiness: `error` is `None` when it is ready.
    fn report(&self, obj: &Value, error: Option<&str>) {
        if !self.opener.writes_status() {
            return;
        }
        let involved = ObjectRef::of(obj);
        match error {
            None => self.events.record(
                &involved,
                EventType::Normal,
                "Ready",
                "Sync",
                "Repository Ready",
            ),
            Some(e) => self
                .events
                .record(&involved, EventType::Warning, "NotReady", "Sync", e),
        }
    }

    async fn open(&self, ns: &str, name: &str, obj: &Value) -> Result<Opened, String> {
        let spec: porch_api::RepositorySpec = obj
            .get("spec")
            .cloned()
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| format!("invalid spec: {e}"))?
            .ok_or("spec is missing")?;
        let credentials = super::credentials(self.secrets.as_ref(), &self.ctx, ns, &spec).await?;
        let target = RepositoryTarget {
            namespace: ns.to_owned(),
            name: name.to_owned(),
            spec,
            credentials,
        };
        match tokio::time::timeout(OPEN_TIMEOUT, self.opener.open(&target)).await {
            Ok(r) => r,
            Err(_) => Err("opening the repository timed out".into()),
        }
    }

    /// Writes the status with a compare-and-swap on the resourceVersion; skips the write
    /// when nothing changed, and gives up when the generation moved on (the newer object
    /// reaches the task through its channel and is written then).
    async fn write(&self, ns: &str, name: &str, generation: i64, observed: &Observed) {
        if !self.opener.writes_status() {
            return;
        }
        let mut status = observed.status(generation, &porch_apiserver::now_rfc3339());
        for _ in 0..5 {
            let Ok(mut current) = self.repos.backend.get(&self.ctx, ns, name).await else {
                return;
            };
            if self::generation(&current) != generation {
                return;
            }
            // Keep the transition time when the condition did not change.
            let previous = current.pointer("/status/conditions/0").cloned();
            if let Some(p) = previous
                && p.get("status") == status.pointer("/conditions/0/status")
                && let Some(t) = p.get("lastTransitionTime")
            {
                status["conditions"][0]["lastTransitionTime"] = t.clone();
            }
            if current.get("status") == Some(&status) {
                return;
            }
            let rv = current
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            if let Some(m) = current.as_object_mut() {
                m.insert("status".into(), status.clone());
            }
            match self
                .repos
                .backend
                .update(&self.ctx, ns, name, current, Expect::ResourceVersion(rv))
                .await
            {
                Ok(_) => return,
                Err(e) if e.kind == porch_core::ErrorKind::Conflict => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot write repository status");
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_one_second_to_a_jittered_thirty() {
        assert_eq!(backoff(0, 1.0), Duration::from_secs(1));
        assert_eq!(backoff(1, 1.0), Duration::from_secs(2));
        assert_eq!(backoff(4, 1.0), Duration::from_secs(16));
        assert_eq!(backoff(5, 1.0), Duration::from_secs(30));
        assert_eq!(backoff(40, 1.0), Duration::from_secs(30));
        assert_eq!(backoff(40, 0.0), Duration::from_secs(15));
        assert_eq!(backoff(0, 0.0), Duration::from_millis(500));
        for _ in 0..100 {
            let u = random_unit();
            assert!((0.0..=1.0).contains(&u), "{u}");
            let d = backoff(u32::MAX, u);
            assert!(d >= Duration::from_secs(15) && d <= BACKOFF_CAP, "{d:?}");
        }
    }

    #[test]
    fn jitter_differs_between_calls() {
        let draws: std::collections::HashSet<u64> =
            (0..20).map(|_| random_unit().to_bits()).collect();
        assert!(
            draws.len() > 1,
            "random_unit always returned the same value"
        );
    }

    #[test]
    fn a_failed_sync_keeps_what_the_last_good_one_found() {
        let good = Observed::default().with_state(RepoState {
            ready: true,
            message: "Repository Ready".into(),
            last_sync: Some("2026-01-01T00:00:00Z".into()),
            git_commit_hash: Some("abc".into()),
            package_count: Some(3),
        });
        let failed = good.with_state(RepoState {
            ready: false,
            message: "remote gone".into(),
            ..Default::default()
        });
        assert_eq!(failed.error.as_deref(), Some("remote gone"));
        assert_eq!(failed.package_count, Some(3));
        let status = failed.status(4, "2026-01-02T00:00:00Z");
        assert_eq!(status["conditions"][0]["status"], "False");
        assert_eq!(status["conditions"][0]["message"], "remote gone");
        assert_eq!(status["lastFullSyncTime"], "2026-01-01T00:00:00Z");
        assert_eq!(status["gitCommitHash"], "abc");
        assert_eq!(status["observedGeneration"], 4);
    }

    #[test]
    fn run_once_at_is_due_once() {
        let past = json!({"spec": {"sync": {"runOnceAt": "2020-01-01T00:00:00Z"}}});
        let mut observed = Observed::default();
        assert_eq!(run_once_wait(&past, &observed), Some(Duration::ZERO));
        observed.observed_run_once_at = Some("2020-01-01T00:00:00Z".into());
        assert_eq!(run_once_wait(&past, &observed), None);
        let future = json!({"spec": {"sync": {"runOnceAt": "2999-01-01T00:00:00Z"}}});
        assert!(run_once_wait(&future, &observed).is_some_and(|d| d > REFRESH_POLL));
        assert_eq!(run_once_wait(&json!({"spec": {}}), &observed), None);
    }
}
