//! `porchctl repo sync NAME... | --all`: sets `spec.sync.runOnceAt` so the repository
//! controller runs a full sync at that time (at least one minute from now).

use std::time::{Duration, SystemTime};

use clap::Args;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::remote::api::REPOSITORIES;
use crate::remote::connection::parse_go_duration;
use crate::remote::{self, ConnectionFlags, RemoteError};

pub const LONG: &str = "Schedule a one-time sync of repositories.

  porchctl repo sync [REPOSITORY_NAME...] [flags]

Sets spec.sync.runOnceAt on each repository; the repository controller then
synchronises it with its remote at that time. The time is at least one minute
from now.";

pub const EXAMPLES: &str = "Examples:
  # sync the repository foo in one minute
  $ porchctl repo sync foo --namespace bar

  # sync every repository in the namespace in 10 minutes
  $ porchctl repo sync --all --run-once 10m";

/// Flags of `repo sync`.
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Repositories to sync.
    #[arg(value_name = "REPOSITORY_NAME")]
    pub names: Vec<String>,
    /// Reconcile all repositories in the namespace.
    #[arg(long)]
    pub all: bool,
    /// With --all: across all namespaces.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// Schedule a one-time sync using a duration (e.g., 10m, 2h30m) or RFC3339 timestamp
    /// (e.g., 2025-09-16T12:00:00Z). Minimum allowed duration and default value is 1 minute
    /// from time of command invocation.
    #[arg(long, default_value = "", hide_default_value = true)]
    pub run_once: String,
}

const MIN_DELAY: Duration = Duration::from_secs(60);

/// When to run, and the warning upstream prints when it had to move the time.
pub fn run_once_at(
    spec: &str,
    now: SystemTime,
) -> Result<(SystemTime, Option<&'static str>), RemoteError> {
    if spec.is_empty() {
        return Ok((now + MIN_DELAY, None));
    }
    if let Some(d) = parse_go_duration(spec).filter(|_| !spec.chars().all(|c| c.is_ascii_digit())) {
        if d < MIN_DELAY {
            return Ok((
                now + MIN_DELAY,
                Some(
                    "Warning: Duration must be at least 1 minute. Sync time adjusted to comply with minimum delay.",
                ),
            ));
        }
        return Ok((now + d, None));
    }
    if let Ok(ts) = spec.parse::<Timestamp>() {
        let at = SystemTime::from(ts);
        let soon_enough = at
            .duration_since(now)
            .map(|d| d < MIN_DELAY)
            .unwrap_or(true);
        if soon_enough {
            return Ok((
                now + MIN_DELAY,
                Some(
                    "Warning: Scheduled time is within 1 minute or in the past. Sync time adjusted to comply with minimum delay.",
                ),
            ));
        }
        return Ok((at, None));
    }
    Err(RemoteError::Usage("invalid --run-once value".into()))
}

/// RFC 3339 in UTC with whole seconds (how metav1.Time goes on the wire).
pub fn rfc3339(t: SystemTime) -> String {
    match Timestamp::try_from(t) {
        Ok(ts) => ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        Err(_) => String::new(),
    }
}

pub async fn run(conn: &ConnectionFlags, args: SyncArgs) -> Result<(), RemoteError> {
    let (at, warning) = run_once_at(&args.run_once, SystemTime::now())?;
    let remote = conn.connect().await?;
    let client = &remote.client;
    let ns = remote.namespace.as_str();
    let mut output = String::new();
    if let Some(w) = warning {
        output.push_str(w);
        output.push('\n');
    }
    let mut repos: Vec<Value> = Vec::new();
    if args.all {
        let scope = (!args.all_namespaces).then_some(ns);
        let list = REPOSITORIES.list(client, scope, None).await?;
        if let Some(items) = list.get("items").and_then(Value::as_array) {
            repos.extend(items.iter().cloned());
        }
    } else {
        if args.names.is_empty() {
            return Err(RemoteError::Usage(
                "repository name(s) required unless --all is set".into(),
            ));
        }
        for name in &args.names {
            match REPOSITORIES.get(client, ns, name).await {
                Ok(r) => repos.push(r),
                Err(e) => eprintln!("Error fetching repository {name:?}: {e}"),
            }
        }
    }
    if repos.is_empty() {
        remote::out(&output)?;
        return Err(RemoteError::Usage(if args.all && args.all_namespaces {
            "no repositories found across all namespaces".into()
        } else {
            format!("no repositories found in namespace {ns:?}")
        }));
    }
    let when = rfc3339(at);
    for mut repo in repos {
        let name = repo
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let repo_ns = repo
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or(ns)
            .to_string();
        let spec = &mut repo["spec"];
        if !spec.get("sync").is_some_and(Value::is_object) {
            spec["sync"] = json!({});
        }
        spec["sync"]["runOnceAt"] = json!(when);
        match REPOSITORIES.replace(client, &repo_ns, &name, &repo).await {
            Ok(_) => output.push_str(&format!("Scheduled one-time sync for {name:?} at {when}\n")),
            Err(e) => eprintln!("Failed to update repository {name:?}: {e}"),
        }
    }
    remote::out(&output)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> SystemTime {
        SystemTime::from(s.parse::<Timestamp>().expect("timestamp"))
    }

    #[test]
    fn run_once_rules() {
        let now = at("2026-01-01T00:00:00Z");
        let (t, w) = run_once_at("", now).expect("ok");
        assert_eq!((rfc3339(t).as_str(), w), ("2026-01-01T00:01:00Z", None));
        let (t, w) = run_once_at("10m", now).expect("ok");
        assert_eq!((rfc3339(t).as_str(), w), ("2026-01-01T00:10:00Z", None));
        let (t, w) = run_once_at("30s", now).expect("ok");
        assert_eq!(rfc3339(t), "2026-01-01T00:01:00Z");
        assert!(w.is_some_and(|w| w.starts_with("Warning: Duration")));
        let (t, w) = run_once_at("2026-01-01T05:00:00Z", now).expect("ok");
        assert_eq!((rfc3339(t).as_str(), w), ("2026-01-01T05:00:00Z", None));
        let (_, w) = run_once_at("2025-01-01T05:00:00Z", now).expect("ok");
        assert!(w.is_some_and(|w| w.starts_with("Warning: Scheduled")));
        assert!(run_once_at("soon", now).is_err());
    }
}
