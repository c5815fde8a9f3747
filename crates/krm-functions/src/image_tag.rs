//! The image tag the running function was called by, for the few functions whose released
//! versions differ in what they report: a pipeline pinned to `apply-setters:v0.2` gets what
//! that release printed, as it would from the image itself. [`Builtins`](crate::Builtins)
//! sets it around each call.

use std::cell::RefCell;

thread_local! {
    static CURRENT: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Runs `f` with the tag of `image` as the current one (restored after, also on unwind).
pub(crate) fn with<R>(image: &str, f: impl FnOnce() -> R) -> R {
    struct Restore(String);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = std::mem::take(&mut self.0);
            CURRENT.with(|c| *c.borrow_mut() = prev);
        }
    }
    let prev = CURRENT.with(|c| c.replace(kpt::runtime::image_tag(image).to_owned()));
    let _restore = Restore(prev);
    f()
}

/// Whether the current call's tag is release `v<major>.<minor>` or one of its patches
/// (`v0.2`, `v0.2.1`); `latest`, `unstable`, other releases and no tag are not.
pub(crate) fn is_release(major: u32, minor: u32) -> bool {
    CURRENT.with(|c| {
        let tag = c.borrow();
        let Some(v) = tag.strip_prefix('v') else {
            return false;
        };
        let mut parts = v.split('.');
        let num = |p: Option<&str>| p.and_then(|s| s.parse::<u32>().ok());
        num(parts.next()) == Some(major) && num(parts.next()) == Some(minor)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_by_tag() {
        let at = |image: &str, major, minor| with(image, || is_release(major, minor));
        assert!(at(
            "ghcr.io/kptdev/krm-functions-catalog/apply-setters:v0.2",
            0,
            2
        ));
        assert!(at("apply-setters:v0.2.4", 0, 2));
        assert!(at("localhost:5000/apply-setters:v0.1.1", 0, 1));
        assert!(!at("localhost:5000/apply-setters", 0, 2));
        assert!(!at("apply-setters:v0.20.0", 0, 2));
        assert!(!at("apply-setters:latest", 0, 2));
        assert!(!at("apply-setters:unstable", 0, 2));
        assert!(!at("apply-setters@sha256:abcd", 0, 2));
        assert!(!is_release(0, 2), "restored");
    }
}
