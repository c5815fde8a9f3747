//! Waiting for work done on another thread (an image pull, a call to a function runner) the
//! way an exec function's process is waited for: the budget is looked at every 50 ms, and
//! the wait ends at a deadline. Callers stop the work themselves when the wait gives up.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::{Budget, BudgetExceeded};

/// How often a waiting render looks at its budget.
const POLL: Duration = Duration::from_millis(50);

/// How a wait ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Waited<T> {
    /// The work's result.
    Done(T),
    /// The budget stopped it (cancelled, or past the render's deadline).
    Stopped(BudgetExceeded),
    /// The deadline passed first.
    TimedOut,
    /// The work ended without a result (its thread or task went away).
    Abandoned,
}

/// Waits for the value sent on `rx` until `deadline`, giving up early when `budget` says
/// the render must stop.
pub fn wait_within<T>(rx: &Receiver<T>, budget: &Budget, deadline: Instant) -> Waited<T> {
    loop {
        match rx.recv_timeout(POLL) {
            Ok(value) => return Waited::Done(value),
            Err(RecvTimeoutError::Disconnected) => return Waited::Abandoned,
            Err(RecvTimeoutError::Timeout) => {
                if let Err(reason) = budget.check() {
                    return Waited::Stopped(reason);
                }
                if Instant::now() >= deadline {
                    return Waited::TimedOut;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_with_the_value_the_budget_or_the_deadline() {
        let (tx, rx) = std::sync::mpsc::channel();
        tx.send(7).expect("send");
        let far = Instant::now() + Duration::from_secs(60);
        assert_eq!(wait_within(&rx, &Budget::default(), far), Waited::Done(7));

        let started = Instant::now();
        let soon = started + Duration::from_millis(120);
        assert_eq!(wait_within(&rx, &Budget::default(), soon), Waited::TimedOut);
        assert!(started.elapsed() >= Duration::from_millis(120));

        let cancelled = Budget::default();
        cancelled.cancel.cancel();
        assert_eq!(
            wait_within(&rx, &cancelled, far),
            Waited::Stopped(BudgetExceeded::Cancelled)
        );

        drop(tx);
        assert_eq!(
            wait_within(&rx, &Budget::default(), far),
            Waited::<i32>::Abandoned
        );
    }
}
