//! The render budget of the function running on this thread.
//!
//! Native functions have the signature `fn(&mut ResourceList)`; the few that can run long
//! (starlark) read the budget from here instead of every function taking a parameter it
//! does not need. [`Builtins`](crate::Builtins) sets it around each call.

use std::cell::RefCell;

use kpt::runtime::Budget;

thread_local! {
    static CURRENT: RefCell<Option<Budget>> = const { RefCell::new(None) };
}

/// Runs `f` with `budget` as the current one (restoring the previous one after, also when
/// `f` unwinds).
pub(crate) fn with<R>(budget: &Budget, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Budget>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = prev);
        }
    }
    let prev = CURRENT.with(|c| c.borrow_mut().replace(budget.clone()));
    let _restore = Restore(prev);
    f()
}

/// The budget of the current call (unlimited outside one).
pub(crate) fn current() -> Budget {
    CURRENT.with(|c| c.borrow().clone()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scoped_and_restored() {
        assert!(current().max_steps.is_none());
        let b = Budget {
            max_steps: Some(7),
            ..Budget::default()
        };
        let inner = with(&b, || current().max_steps);
        assert_eq!(inner, Some(7));
        assert!(current().max_steps.is_none());
        let r = std::panic::catch_unwind(|| with(&b, || panic!("boom")));
        assert!(r.is_err());
        assert!(current().max_steps.is_none());
    }
}
