//! What the running native function printed on its stderr (starlark's
//! `print`), collected per thread like [`budget`](crate::budget) so the
//! function signature stays `fn(&mut ResourceList)`. [`Builtins`](crate::Builtins)
//! clears it before a call and reports it as the call's stderr.

use std::cell::RefCell;

thread_local! {
    static PRINTED: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Appends one printed line (with its newline, as Go's `fmt.Fprintln`).
pub(crate) fn println(text: &str) {
    PRINTED.with(|p| {
        let mut p = p.borrow_mut();
        p.push_str(text);
        p.push('\n');
    });
}

/// Takes (and clears) what was printed on this thread.
pub(crate) fn take() -> String {
    PRINTED.with(|p| std::mem::take(&mut *p.borrow_mut()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn collects_and_clears() {
        super::take();
        super::println("a");
        super::println("b");
        assert_eq!(super::take(), "a\nb\n");
        assert_eq!(super::take(), "");
    }
}
