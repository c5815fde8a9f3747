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

/// The patch of release `v<major>.<minor>` the current call is pinned to:
/// `Some(patch)` for `v0.1.3`, `Some(u32::MAX)` for the floating `v0.1` (the
/// release's latest patch), `None` for other tags.
pub(crate) fn release_patch(major: u32, minor: u32) -> Option<u32> {
    if !is_release(major, minor) {
        return None;
    }
    CURRENT.with(|c| {
        let tag = c.borrow();
        let patch = tag.trim_start_matches('v').split('.').nth(2);
        Some(patch.map_or(u32::MAX, |p| p.parse().unwrap_or(u32::MAX)))
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
        let patch = |image: &str| with(image, || release_patch(0, 1));
        assert_eq!(patch("set-annotations:v0.1.3"), Some(3));
        assert_eq!(patch("set-annotations:v0.1"), Some(u32::MAX));
        assert_eq!(patch("set-annotations:v0.2.0"), None);
        assert_eq!(patch("set-annotations:latest"), None);
    }
}
