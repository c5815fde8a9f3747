//! A step's `tag:` (kpt HEAD's `TagResolver.ResolveFunctionImage`): the tag replaces
//! the image's own tag or digest. An exact version is used as it is; a version
//! constraint is resolved to the highest matching tag the runtime's tag listers
//! know; anything else is used literally when it is a valid image tag.

use super::run::resolve_image;
use super::semver::{Constraints, Version};
use crate::runtime::FunctionRuntime;

/// What the OCI distribution spec allows as a tag (kpt's `imageTagRegex`).
fn valid_tag(tag: &str) -> bool {
    let b = tag.as_bytes();
    let word = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
    !b.is_empty()
        && b.len() <= 128
        && word(&b[0])
        && b[1..].iter().all(|c| word(c) || *c == b'.' || *c == b'-')
}

/// Tags kpt's resolver skips before parsing: signature/attestation tags
/// (`sha256-…`) and git-based builds (`…-git-…`).
fn candidate(tag: &str) -> bool {
    !tag.starts_with("sha256-") && !tag.contains("-git-")
}

/// The image a step runs: [`resolve_image`], then the `tag:` override as kpt HEAD
/// does it. A constraint asks the tag listers of `runtime` in order; a lister that
/// fails or knows no matching tag is passed over, and the first that has one gives
/// its highest matching version (a later lister's higher version is not looked at).
pub fn resolve_image_tag(
    image: &str,
    tag: &str,
    runtime: &dyn FunctionRuntime,
) -> Result<String, String> {
    let full = resolve_image(image);
    if tag.is_empty() || full.starts_with("builtins/") {
        return Ok(full);
    }
    let (name, _) = full.split_once('@').unwrap_or((&full, ""));
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let bare = match name[last_slash..].rfind(':') {
        Some(i) => &name[..last_slash + i],
        None => name,
    };
    let literal = || {
        if valid_tag(tag) {
            Ok(format!("{bare}:{tag}"))
        } else {
            Err(format!(
                "`function.tag` {tag:?} must be a valid image tag: start with an alphanumeric \
                 character or underscore, followed by at most 127 alphanumeric characters, \
                 underscores, periods, or dashes"
            ))
        }
    };
    if Version::parse(tag).is_some() {
        return literal();
    }
    let Some(constraint) = Constraints::parse(tag) else {
        return literal();
    };
    let best = runtime
        .list_tags(bare)
        .into_iter()
        .filter_map(Result::ok)
        .find_map(|tags| {
            tags.iter()
                .filter(|t| candidate(t))
                .filter_map(|t| Version::parse(t))
                .filter(|v| constraint.check(v))
                .max()
        });
    match best {
        Some(v) => Ok(format!("{bare}:{}", v.original())),
        None => Err(format!(
            "no tag could be found matching the version constraint {tag:?}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource_list::ResourceList;
    use crate::runtime::{FunctionOutput, FunctionRef, RunOptions, RuntimeError};

    /// Tag listers with fixed answers; it runs nothing.
    struct Listers(Vec<Result<Vec<String>, String>>);

    impl FunctionRuntime for Listers {
        fn handles(&self, _: &FunctionRef) -> bool {
            false
        }
        fn run(
            &self,
            f: &FunctionRef,
            _: ResourceList,
            _: &RunOptions,
        ) -> Result<FunctionOutput, RuntimeError> {
            Err(RuntimeError::NotFound(f.display().to_string()))
        }
        fn list_tags(&self, _: &str) -> Vec<Result<Vec<String>, String>> {
            self.0.clone()
        }
    }

    fn tags(list: &[&str]) -> Result<Vec<String>, String> {
        Ok(list.iter().map(|t| t.to_string()).collect())
    }

    const IMG: &str = "ghcr.io/kptdev/krm-functions-catalog/set-labels";

    #[test]
    fn exact_versions_and_words_replace_the_image_tag_without_listing() {
        let none = Listers(vec![Err("unreachable".into())]);
        let r = |image: &str, tag: &str| resolve_image_tag(image, tag, &none);
        assert_eq!(r(IMG, ""), Ok(format!("{IMG}:latest")));
        assert_eq!(r(IMG, "v0.2.4"), Ok(format!("{IMG}:v0.2.4")));
        assert_eq!(r(&format!("{IMG}:v0.1"), "0.2"), Ok(format!("{IMG}:0.2")));
        assert_eq!(
            r(&format!("{IMG}@sha256:abc"), "unstable"),
            Ok(format!("{IMG}:unstable"))
        );
        assert_eq!(r("set-labels", "v1"), Ok(format!("{IMG}:v1")));
        // A registry port is not a tag.
        assert_eq!(
            r("localhost:5000/fn/x", "v1"),
            Ok("localhost:5000/fn/x:v1".to_string())
        );
        // Neither a version, a constraint nor a valid tag.
        let err = r(IMG, "no/slashes").expect_err("invalid tag");
        assert!(
            err.starts_with("`function.tag` \"no/slashes\" must be a valid image tag"),
            "{err}"
        );
        assert!(r(IMG, &"a".repeat(129)).is_err());
        assert!(r(IMG, &"a".repeat(128)).is_ok());
    }

    #[test]
    fn a_constraint_takes_the_highest_matching_tag_of_every_lister() {
        let set = [
            "v0.1", "v0.2.3", "v0.1.2", "v0", "v0.2", "v0.1.1", "v0.2.1", "v0.2.2",
        ];
        let one = Listers(vec![tags(&set)]);
        let r = |tag: &str, rt: &Listers| resolve_image_tag(IMG, tag, rt);
        assert_eq!(r("~0.1", &one), Ok(format!("{IMG}:v0.1.2")));
        assert_eq!(r("0.2 - 0.2.2", &one), Ok(format!("{IMG}:v0.2.2")));
        assert_eq!(r("^0.2", &one), Ok(format!("{IMG}:v0.2.3")));
        // The tag is written as the registry has it.
        assert_eq!(
            r("~0", &Listers(vec![tags(&["0.4", "v0.3.9"])])),
            Ok(format!("{IMG}:0.4"))
        );
        // A failing, empty or unmatching lister is passed over; the first lister
        // with a match decides, even when a later one has a higher version.
        let ordered = Listers(vec![
            Err("registry unreachable".into()),
            tags(&[]),
            tags(&["v0.3.0", "latest"]),
            tags(&["v0.2.1", "latest"]),
            tags(&["v0.2.4", "v0.3.0"]),
        ]);
        assert_eq!(r("~0.2", &ordered), Ok(format!("{IMG}:v0.2.1")));
        // Signature and git-build tags, words and pre-releases are not candidates.
        let noisy = Listers(vec![tags(&[
            "sha256-0123.sig",
            "v0.9.0-git-38f885f",
            "v0.9.1-rc.1",
            "main",
            "v0.8.0",
        ])]);
        assert_eq!(r(">=0.5", &noisy), Ok(format!("{IMG}:v0.8.0")));
        assert_eq!(r(">=0.9.1-rc.0", &noisy), Ok(format!("{IMG}:v0.9.1-rc.1")));
    }

    #[test]
    fn a_constraint_nothing_satisfies_is_an_error_naming_it() {
        for rt in [
            Listers(vec![]),
            Listers(vec![Err("offline".into())]),
            Listers(vec![tags(&["v0.1.0", "latest"])]),
        ] {
            assert_eq!(
                resolve_image_tag(IMG, "~0.2", &rt),
                Err("no tag could be found matching the version constraint \"~0.2\"".to_string())
            );
        }
    }
}
