//! Crash failpoints, a test aid: `PORCH_FAILPOINT=<name>` (read once, at the first check)
//! makes the process abort at the named point, as a `kill -9` would stop it there, so tests
//! through the server binary can crash an operation between two of its durable steps and
//! check that a restart heals it. Always compiled in; without the variable every check is
//! one comparison against an unset value.
//!
//! Points: [`APPROVE_AFTER_PUSH`], [`APPROVE_AFTER_COMMIT`].

use std::sync::OnceLock;

/// The approval pushed its tag; the draft's store record is not removed yet.
pub const APPROVE_AFTER_PUSH: &str = "approve-after-push";
/// The approval put the published revision in the index and removed the draft's store
/// record; the package's listing is not re-read yet.
pub const APPROVE_AFTER_COMMIT: &str = "approve-after-commit";

/// The environment variable naming the failpoint to trigger.
pub const FAILPOINT_ENV: &str = "PORCH_FAILPOINT";

fn armed() -> Option<&'static str> {
    static ARMED: OnceLock<Option<String>> = OnceLock::new();
    ARMED
        .get_or_init(|| std::env::var(FAILPOINT_ENV).ok().filter(|v| !v.is_empty()))
        .as_deref()
}

/// Aborts the process when `name` is the armed failpoint.
pub(crate) fn hit(name: &str) {
    if armed() == Some(name) {
        // Logged first so a test can tell the crash it asked for from any other.
        tracing::error!(failpoint = name, "failpoint reached: aborting the process");
        eprintln!("failpoint {name} reached: aborting");
        std::process::abort();
    }
}
