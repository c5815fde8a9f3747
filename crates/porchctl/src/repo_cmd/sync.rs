//! `porchctl repo sync NAME... | --all`: sets `spec.sync.runOnceAt` so the repository
//! controller runs a full sync at that time (at least one minute from now).

use std::time::{Duration, SystemTime};

use clap::Args;
use k8s_openapi::jiff::Timestamp;
use k8s_openapi::jiff::tz::{Offset, TimeZone};
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

/// When to sync, as upstream computes it from `--run-once`.
#[derive(Debug)]
pub struct RunOnce {
    pub at: SystemTime,
    /// The UTC offset (seconds) of a time given on the command line: upstream keeps the
    /// parsed zone and prints the time in it. `None`: a time computed from now, printed
    /// in UTC.
    pub offset: Option<i32>,
    /// The warning upstream prints when it had to move the time.
    pub warning: Option<&'static str>,
}

/// Upstream's `--run-once` rules: a Go duration from now, else a `time.RFC3339` time; less
/// than a minute ahead (or empty) means one minute from now.
pub fn run_once_at(spec: &str, now: SystemTime) -> Result<RunOnce, RemoteError> {
    let soon = |warning| RunOnce {
        at: now + MIN_DELAY,
        offset: None,
        warning,
    };
    if spec.is_empty() {
        return Ok(soon(None));
    }
    if let Some(d) = parse_go_duration(spec).filter(|_| !spec.chars().all(|c| c.is_ascii_digit())) {
        if d < MIN_DELAY {
            return Ok(soon(Some(
                "Warning: Duration must be at least 1 minute. Sync time adjusted to comply with minimum delay.",
            )));
        }
        return Ok(RunOnce {
            at: now + d,
            offset: None,
            warning: None,
        });
    }
    let parsed =
        go_rfc3339_offset(spec).and_then(|offset| Some((spec.parse::<Timestamp>().ok()?, offset)));
    if let Some((ts, offset)) = parsed {
        let at = SystemTime::from(ts);
        let too_soon = at
            .duration_since(now)
            .map(|d| d < MIN_DELAY)
            .unwrap_or(true);
        if too_soon {
            return Ok(soon(Some(
                "Warning: Scheduled time is within 1 minute or in the past. Sync time adjusted to comply with minimum delay.",
            )));
        }
        return Ok(RunOnce {
            at,
            offset: Some(offset),
            warning: None,
        });
    }
    Err(RemoteError::Usage("invalid --run-once value".into()))
}

/// The UTC offset in seconds of text laid out as Go's `time.RFC3339`
/// (`2006-01-02T15:04:05[.frac]Z07:00`), which is stricter than RFC 3339 parsers in
/// general (a `T`, seconds, and `Z` or `±hh:mm` are required).
fn go_rfc3339_offset(s: &str) -> Option<i32> {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let seps = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if !(digits(0..4)
        && digits(5..7)
        && digits(8..10)
        && digits(11..13)
        && digits(14..16)
        && digits(17..19))
        || seps.iter().any(|&(i, c)| b.get(i) != Some(&c))
    {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        rest = &frac[n..];
    }
    if rest == "Z" {
        return Some(0);
    }
    let (sign, hm) = match rest.split_at_checked(1)? {
        ("+", hm) => (1, hm),
        ("-", hm) => (-1, hm),
        _ => return None,
    };
    let (h, m) = hm.split_once(':')?;
    if h.len() != 2 || m.len() != 2 {
        return None;
    }
    let h: i32 = h.parse().ok()?;
    let m: i32 = m.parse().ok()?;
    Some(sign * (h * 3600 + m * 60))
}

/// The UTC offset (seconds) of Go's `time.Local` at `t`, as Go's initLocal finds the zone:
/// `$TZ` unset: `/etc/localtime`; empty or `UTC`: UTC; `:` dropped, then an absolute
/// path, else a name under the system zoneinfo directories. A zone that cannot be read
/// is UTC.
fn go_local_offset(t: SystemTime, tz: Option<&str>) -> i32 {
    let Ok(ts) = Timestamp::try_from(t) else {
        return 0;
    };
    let files: Vec<std::path::PathBuf> = match tz {
        None => vec!["/etc/localtime".into()],
        Some(tz) => {
            let tz = tz.strip_prefix(':').unwrap_or(tz);
            if tz.is_empty() || tz == "UTC" {
                return 0;
            }
            if tz.starts_with('/') {
                vec![tz.into()]
            } else {
                [
                    "/usr/share/zoneinfo/",
                    "/usr/share/lib/zoneinfo/",
                    "/usr/lib/locale/TZ/",
                    "/etc/zoneinfo/",
                ]
                .iter()
                .map(|dir| std::path::Path::new(dir).join(tz))
                .collect()
            }
        }
    };
    files
        .iter()
        .find_map(|f| {
            let data = std::fs::read(f).ok()?;
            TimeZone::tzif("Local", &data).ok()
        })
        .map_or(0, |zone| zone.to_offset(ts).seconds())
}

/// RFC 3339 in UTC with whole seconds (how metav1.Time goes on the wire).
pub fn rfc3339(t: SystemTime) -> String {
    rfc3339_at(t, 0)
}

/// Go's `Format(time.RFC3339)` of `t` at a UTC offset: whole seconds, `Z` for UTC.
fn rfc3339_at(t: SystemTime, offset_secs: i32) -> String {
    let (Ok(ts), Ok(offset)) = (Timestamp::try_from(t), Offset::from_seconds(offset_secs)) else {
        return String::new();
    };
    let local = offset.to_datetime(ts).strftime("%Y-%m-%dT%H:%M:%S");
    if offset_secs == 0 {
        return format!("{local}Z");
    }
    let sign = if offset_secs < 0 { '-' } else { '+' };
    let abs = offset_secs.unsigned_abs();
    format!("{local}{sign}{:02}:{:02}", abs / 3600, abs % 3600 / 60)
}

pub async fn run(conn: &ConnectionFlags, args: SyncArgs) -> Result<(), RemoteError> {
    // Upstream builds its client before it reads --run-once.
    let remote = conn.connect().await?;
    // An absent -n means the context's namespace here (upstream requires -n); an empty
    // one is refused as upstream refuses it.
    if conn.namespace.as_deref() == Some("") && !args.all_namespaces {
        return Err(RemoteError::Usage(
            "namespace must be specified unless --all-namespaces is set".into(),
        ));
    }
    let when = run_once_at(&args.run_once, SystemTime::now())?;
    let client = &remote.client;
    let ns = remote.namespace.as_str();
    let mut output = String::new();
    if let Some(w) = when.warning {
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
            remote::out(&output)?;
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
        // Upstream names the scope by -A alone, named repositories or not.
        return Err(RemoteError::Usage(if args.all_namespaces {
            "no repositories found across all namespaces".into()
        } else {
            format!("no repositories found in namespace {ns:?}")
        }));
    }
    let wire = rfc3339(when.at);
    let shown = rfc3339_at(
        when.at,
        when.offset
            .unwrap_or_else(|| go_local_offset(when.at, std::env::var("TZ").ok().as_deref())),
    );
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
        spec["sync"]["runOnceAt"] = json!(wire);
        match REPOSITORIES.replace(client, &repo_ns, &name, &repo).await {
            Ok(_) => output.push_str(&format!(
                "Scheduled one-time sync for {name:?} at {shown}\n"
            )),
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
        let shown = |r: &RunOnce| rfc3339_at(r.at, r.offset.unwrap_or(0));
        let r = run_once_at("", now).expect("ok");
        assert_eq!(
            (shown(&r).as_str(), r.warning),
            ("2026-01-01T00:01:00Z", None)
        );
        let r = run_once_at("10m", now).expect("ok");
        assert_eq!(
            (shown(&r).as_str(), r.warning),
            ("2026-01-01T00:10:00Z", None)
        );
        let r = run_once_at("30s", now).expect("ok");
        assert_eq!(shown(&r), "2026-01-01T00:01:00Z");
        assert!(
            r.warning
                .is_some_and(|w| w.starts_with("Warning: Duration"))
        );
        let r = run_once_at("2026-01-01T05:00:00Z", now).expect("ok");
        assert_eq!(
            (shown(&r).as_str(), r.warning),
            ("2026-01-01T05:00:00Z", None)
        );
        let r = run_once_at("2025-01-01T05:00:00Z", now).expect("ok");
        assert!(
            r.warning
                .is_some_and(|w| w.starts_with("Warning: Scheduled"))
        );
        assert!(run_once_at("soon", now).is_err());
    }

    #[test]
    fn a_given_time_keeps_its_offset_on_screen_and_goes_out_in_utc() {
        let now = at("2026-03-01T00:00:00Z");
        let r = run_once_at("2026-03-02T09:30:15.25+05:30", now).expect("ok");
        assert_eq!(
            rfc3339_at(r.at, r.offset.unwrap_or(0)),
            "2026-03-02T09:30:15+05:30"
        );
        assert_eq!(rfc3339(r.at), "2026-03-02T04:00:15Z");
        let r = run_once_at("2026-03-02T01:00:00-07:00", now).expect("ok");
        assert_eq!(
            rfc3339_at(r.at, r.offset.unwrap_or(0)),
            "2026-03-02T01:00:00-07:00"
        );
    }

    #[test]
    fn computed_times_show_in_gos_local_zone() {
        // A zone file named by $TZ, as Go's time.Local reads it.
        let Some(zone) = [
            "/usr/share/zoneinfo/Asia/Kolkata",
            "/usr/share/zoneinfo/Asia/Calcutta",
        ]
        .into_iter()
        .find(|f| std::path::Path::new(f).exists()) else {
            return;
        };
        let t = at("2026-03-02T04:00:15Z");
        let offset = go_local_offset(t, Some(zone));
        assert_eq!(rfc3339_at(t, offset), "2026-03-02T09:30:15+05:30");
        assert_eq!(go_local_offset(t, Some(":Asia/Kolkata")), 19800);
        assert_eq!(go_local_offset(t, Some("")), 0);
        assert_eq!(go_local_offset(t, Some("UTC")), 0);
        assert_eq!(go_local_offset(t, Some("No/Such_Zone")), 0);
    }

    #[test]
    fn only_go_rfc3339_layouts_are_times() {
        let now = at("2026-03-01T00:00:00Z");
        // Accepted by RFC 3339 parsers at large, not by Go's time.RFC3339 layout.
        for spec in [
            "2026-03-02 09:30:00Z",
            "2026-03-02T09:30Z",
            "2026-03-02T09:30:00",
            "2026-03-02T09:30:00+0530",
        ] {
            assert!(run_once_at(spec, now).is_err(), "{spec}");
        }
    }
}
