//! Events expire: kube-apiserver stores them with a TTL (`--event-ttl`, 1h by default)
//! renewed by every write; here a periodic sweep deletes the Events last seen longer ago.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use porch_apiserver::{ApiError, Expect, ListOptions, RequestContext, ResourceBackend};
use serde_json::Value;

/// kube-apiserver's default `--event-ttl`.
pub const DEFAULT_TTL: Duration = Duration::from_secs(3600);

/// The last time anything happened to a stored Event: the latest of its timestamps (a
/// repeat moves `lastTimestamp` and `series.lastObservedTime`; an Event created by a client
/// may carry none, then its creation counts).
fn last_activity(event: &Value) -> Option<Timestamp> {
    [
        "/series/lastObservedTime",
        "/lastTimestamp",
        "/eventTime",
        "/firstTimestamp",
        "/metadata/creationTimestamp",
    ]
    .iter()
    .filter_map(|p| event.pointer(p).and_then(Value::as_str))
    .filter_map(|s| s.parse::<Timestamp>().ok())
    .max()
}

/// Deletes every Event whose last activity is more than `ttl` before `now`; returns how many.
/// An Event changed since it was listed is kept (the delete expects its resourceVersion).
pub async fn prune_once(
    events: &dyn ResourceBackend,
    ttl: Duration,
    now: Timestamp,
) -> Result<usize, ApiError> {
    let ctx = RequestContext::system("system:event-pruner");
    let ttl_secs = i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX);
    let page = events.list(&ctx, None, &ListOptions::default()).await?;
    let mut deleted = 0;
    for bytes in page.items {
        let Ok(event) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        let expired = last_activity(&event)
            .is_none_or(|t| now.as_second().saturating_sub(t.as_second()) > ttl_secs);
        if !expired {
            continue;
        }
        let s = |p: &str| event.pointer(p).and_then(Value::as_str).unwrap_or("");
        let rv = s("/metadata/resourceVersion").parse().unwrap_or(0);
        let (ns, name) = (s("/metadata/namespace"), s("/metadata/name"));
        match events
            .delete(&ctx, ns, name, Expect::ResourceVersion(rv))
            .await
        {
            Ok(_) => deleted += 1,
            Err(e)
                if matches!(
                    e.kind,
                    porch_core::ErrorKind::NotFound | porch_core::ErrorKind::Conflict
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(deleted)
}

/// Sweeps every `ttl / 12` (between 1 s and 5 min) until the process stops.
pub async fn prune_loop(events: Arc<dyn ResourceBackend>, ttl: Duration) {
    let every = (ttl / 12).clamp(Duration::from_secs(1), Duration::from_secs(300));
    let mut ticker = tokio::time::interval(every);
    loop {
        ticker.tick().await;
        match prune_once(events.as_ref(), ttl, Timestamp::now()).await {
            Ok(0) => {}
            Ok(n) => tracing::debug!(deleted = n, "expired events pruned"),
            Err(e) => tracing::warn!(error = %e, "cannot prune events"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_latest_timestamp_counts() {
        let e = json!({"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"},
                       "firstTimestamp": "2026-01-01T00:00:00Z",
                       "lastTimestamp": "2026-01-01T00:30:00Z",
                       "series": {"lastObservedTime": "2026-01-01T00:45:00.123456Z"}});
        assert_eq!(
            last_activity(&e).map(|t| t.as_second()),
            "2026-01-01T00:45:00Z"
                .parse::<Timestamp>()
                .ok()
                .map(|t| t.as_second())
        );
        assert_eq!(last_activity(&json!({})), None);
    }
}
