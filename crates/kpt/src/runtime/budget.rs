//! What one render may spend: a cancellation token, a wall-clock deadline and limits on what
//! functions may produce and consume.
//!
//! A render inside a server must never hold a core or a repository forever, whatever the
//! pipeline does. Every runtime checks the budget cooperatively: the render loop between
//! steps, exec functions while they wait for their child, the starlark evaluator every few
//! thousand instructions. The defaults are unlimited (kpt on a workstation); the server sets
//! its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A cancellation flag that also observes every ancestor it was derived from: cancelling the
/// server's token (shutdown) cancels every render's child token.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<Flag>);

#[derive(Debug, Default)]
struct Flag {
    cancelled: AtomicBool,
    parent: Option<Arc<Flag>>,
}

impl CancelToken {
    /// A fresh token, not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// A token cancelled when this one is (or by itself).
    pub fn child(&self) -> Self {
        CancelToken(Arc::new(Flag {
            cancelled: AtomicBool::new(false),
            parent: Some(self.0.clone()),
        }))
    }

    /// Cancels this token and its children.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::Release);
    }

    /// Whether this token or an ancestor was cancelled.
    pub fn is_cancelled(&self) -> bool {
        let mut flag = Some(&self.0);
        while let Some(f) = flag {
            if f.cancelled.load(Ordering::Acquire) {
                return true;
            }
            flag = f.parent.as_ref();
        }
        false
    }

    /// A guard that cancels the token when dropped (an abandoned request's future).
    pub fn drop_guard(&self) -> CancelOnDrop {
        CancelOnDrop(Some(self.clone()))
    }
}

/// Cancels its token when dropped.
#[derive(Debug)]
pub struct CancelOnDrop(Option<CancelToken>);

impl CancelOnDrop {
    /// Drops the guard without cancelling (the work finished).
    pub fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(t) = &self.0 {
            t.cancel();
        }
    }
}

/// Limits of one render. `None` is unlimited.
#[derive(Debug, Clone, Default)]
pub struct Budget {
    /// Stops the render when cancelled (request abandoned, server shutting down).
    pub cancel: CancelToken,
    /// The render fails once this instant has passed.
    pub deadline: Option<Instant>,
    /// The wall-clock limit the deadline was derived from (for messages).
    pub time_limit: Option<Duration>,
    /// Most resources one function may output.
    pub max_output_items: Option<usize>,
    /// Most bytes one function may write on stdout (exec functions).
    pub max_output_bytes: Option<usize>,
    /// Most heap one in-process evaluator (starlark) may use.
    pub max_memory_bytes: Option<usize>,
    /// Most steps (calls and loop iterations) a starlark program may take.
    pub max_steps: Option<u64>,
    /// Address-space limit of a sandboxed (container) function's processes, replacing the
    /// container runtime's own (a per-function setting of the server).
    pub sandbox_memory_bytes: Option<u64>,
}

/// Why a budget stopped a render.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetExceeded {
    /// The render was cancelled (its request went away or the server is stopping).
    #[error("render cancelled: the request was abandoned or the server is shutting down")]
    Cancelled,
    /// The wall-clock limit passed.
    #[error("render exceeded its time limit of {}", secs(*.0))]
    Time(Duration),
    /// A function produced too many resources.
    #[error(
        "function output has {count} resources, more than the limit of {limit} resources per function"
    )]
    Items {
        /// What it produced.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// A function wrote too much.
    #[error("function output exceeds the limit of {0} bytes")]
    Bytes(usize),
}

fn secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

impl Budget {
    /// A budget with a wall-clock limit starting now.
    pub fn with_time_limit(mut self, limit: Duration) -> Self {
        self.deadline = Some(Instant::now() + limit);
        self.time_limit = Some(limit);
        self
    }

    /// Whether the render must stop now (cancelled or past its deadline).
    pub fn check(&self) -> Result<(), BudgetExceeded> {
        if self.cancel.is_cancelled() {
            return Err(BudgetExceeded::Cancelled);
        }
        if let Some(deadline) = self.deadline
            && Instant::now() >= deadline
        {
            return Err(BudgetExceeded::Time(self.time_limit.unwrap_or_default()));
        }
        Ok(())
    }

    /// Checks a function's output size.
    pub fn check_items(&self, count: usize) -> Result<(), BudgetExceeded> {
        match self.max_output_items {
            Some(limit) if count > limit => Err(BudgetExceeded::Items { count, limit }),
            _ => Ok(()),
        }
    }

    /// Time left before the deadline (`None`: no deadline).
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline
            .map(|d| d.saturating_duration_since(Instant::now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_see_their_ancestors() {
        let root = CancelToken::new();
        let child = root.child();
        let grandchild = child.child();
        assert!(!grandchild.is_cancelled());
        child.cancel();
        assert!(grandchild.is_cancelled());
        assert!(!root.is_cancelled());
        let other = root.child();
        root.cancel();
        assert!(other.is_cancelled());
    }

    #[test]
    fn drop_guard_cancels_unless_disarmed() {
        let t = CancelToken::new();
        drop(t.drop_guard());
        assert!(t.is_cancelled());
        let t = CancelToken::new();
        t.drop_guard().disarm();
        assert!(!t.is_cancelled());
    }

    #[test]
    fn deadline_and_items() {
        let b = Budget::default().with_time_limit(Duration::ZERO);
        assert_eq!(b.check(), Err(BudgetExceeded::Time(Duration::ZERO)));
        let b = Budget {
            max_output_items: Some(2),
            ..Budget::default()
        };
        assert!(b.check().is_ok());
        assert!(b.check_items(2).is_ok());
        assert_eq!(
            b.check_items(3).map_err(|e| e.to_string()),
            Err(
                "function output has 3 resources, more than the limit of 2 resources per function"
                    .into()
            )
        );
    }
}
