//! Periodic sync: `spec.sync.schedule` (5-field cron, UTC) or a fixed period.
//!
//! Only the standard fields are supported: numbers, `*`, lists `a,b`, ranges `a-b` and steps
//! `*/n`, `a-b/n`. Day-of-month and day-of-week combine as in cron (either matches when both
//! are restricted).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use porch_core::names::RepositoryName;
use porch_core::repository::{ChangeReport, Repository};

use crate::error::GitError;
use crate::repository::GitRepository;

/// A parsed cron expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cron {
    minutes: Vec<bool>,
    hours: Vec<bool>,
    days: Vec<bool>,
    months: Vec<bool>,
    weekdays: Vec<bool>,
    days_any: bool,
    weekdays_any: bool,
}

fn field(spec: &str, min: u32, max: u32) -> Result<(Vec<bool>, bool), GitError> {
    let bad = || GitError::Invalid(format!("invalid cron field {spec:?}"));
    let mut set = vec![false; max as usize + 1];
    for part in spec.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => (r, s.parse::<u32>().map_err(|_| bad())?),
            None => (part, 1),
        };
        let (lo, hi) = if range == "*" {
            (min, max)
        } else if let Some((a, b)) = range.split_once('-') {
            (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?)
        } else {
            let v: u32 = range.parse().map_err(|_| bad())?;
            (v, if part.contains('/') { max } else { v })
        };
        if step == 0 || lo < min || hi > max || lo > hi {
            return Err(bad());
        }
        for v in (lo..=hi).step_by(step as usize) {
            set[v as usize] = true;
        }
    }
    Ok((set, spec == "*"))
}

impl Cron {
    /// Parses `min hour day-of-month month day-of-week`.
    pub fn parse(expr: &str) -> Result<Cron, GitError> {
        let f: Vec<&str> = expr.split_whitespace().collect();
        if f.len() != 5 {
            return Err(GitError::Invalid(format!(
                "cron expression {expr:?} must have 5 fields"
            )));
        }
        let (minutes, _) = field(f[0], 0, 59)?;
        let (hours, _) = field(f[1], 0, 23)?;
        let (days, days_any) = field(f[2], 1, 31)?;
        let (months, _) = field(f[3], 1, 12)?;
        let (mut weekdays, weekdays_any) = field(&f[4].replace('7', "0"), 0, 6)?;
        weekdays.resize(7, false);
        Ok(Cron {
            minutes,
            hours,
            days,
            months,
            weekdays,
            days_any,
            weekdays_any,
        })
    }

    /// The first matching minute strictly after `after` (Unix seconds, UTC).
    pub fn next_after(&self, after: i64) -> Option<i64> {
        let mut t = (after.div_euclid(60) + 1) * 60;
        // Four years of minutes bounds the search (e.g. Feb 29 schedules).
        for _ in 0..(4 * 366 * 24 * 60) {
            let days = t.div_euclid(86_400);
            let (_, m, d) = civil(days);
            let wd = (days + 4).rem_euclid(7) as usize; // 1970-01-01 was a Thursday
            let mins = t.rem_euclid(86_400) / 60;
            let day_ok = match (self.days_any, self.weekdays_any) {
                (true, true) => true,
                (false, true) => self.days[d as usize],
                (true, false) => self.weekdays[wd],
                (false, false) => self.days[d as usize] || self.weekdays[wd],
            };
            if self.months[m as usize] && day_ok {
                if self.hours[(mins / 60) as usize] && self.minutes[(mins % 60) as usize] {
                    return Some(t);
                }
                t += 60;
            } else {
                t = (days + 1) * 86_400;
            }
        }
        None
    }
}

fn civil(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Called with each non-empty change report of a scheduled sync.
pub type OnChange = Arc<dyn Fn(&RepositoryName, ChangeReport) + Send + Sync>;

/// A running sync loop; stops when dropped.
#[derive(Debug)]
pub struct SyncLoop(tokio::task::JoinHandle<()>);

impl Drop for SyncLoop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Syncs `repo` now and then on its schedule (cron, else `period`), reporting changes.
/// A failing remote only marks this repository not ready; the loop keeps going.
pub fn spawn_sync_loop(
    repo: Arc<GitRepository>,
    period: Duration,
    on_change: OnChange,
) -> Result<SyncLoop, GitError> {
    let cron = repo
        .spec()
        .sync_schedule
        .as_deref()
        .map(Cron::parse)
        .transpose()?;
    let handle = tokio::spawn(async move {
        loop {
            match repo.sync().await {
                Ok(report) if !report.is_empty() => on_change(repo.name(), report),
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!(repository = %repo.name(), error = %e, "scheduled sync failed")
                }
            }
            let wait = match &cron {
                Some(c) => {
                    let now = SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .map(|d| d.as_secs() as i64)
                        .unwrap_or(0);
                    c.next_after(now)
                        .map(|n| Duration::from_secs((n - now).max(1) as u64))
                        .unwrap_or(period)
                }
                None => period,
            };
            tokio::time::sleep(wait).await;
        }
    });
    Ok(SyncLoop(handle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ten_minutes() {
        let c = Cron::parse("*/10 * * * *").expect("test value");
        // 2022-08-26T22:47:35Z -> 22:50:00
        assert_eq!(c.next_after(1_661_554_055), Some(1_661_554_200));
    }

    #[test]
    fn daily_and_weekday() {
        let c = Cron::parse("30 2 * * *").expect("test value");
        let next = c.next_after(1_661_554_055).expect("test value");
        assert_eq!(next % 86_400, 2 * 3600 + 30 * 60);
        assert!(next > 1_661_554_055 && next - 1_661_554_055 < 86_400);
        // Mondays at 00:00; 2022-08-29 was a Monday.
        let m = Cron::parse("0 0 * * 1").expect("test value");
        assert_eq!(m.next_after(1_661_554_055), Some(1_661_731_200));
        assert!(Cron::parse("61 * * * *").is_err());
        assert!(Cron::parse("* * *").is_err());
    }
}
