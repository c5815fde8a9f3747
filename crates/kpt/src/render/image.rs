//! A step's `tag:` (kpt HEAD's `TagResolver.ResolveFunctionImage`): the tag replaces
//! the image's own tag or digest. An exact version is used as it is; a version
//! constraint is resolved to the highest matching tag the runtime's tag listers
//! know; anything else is used literally when it is a valid image tag. Checked against
//! Masterminds semver by `tests/semver_go_differential.rs`.

use super::run::resolve_image;
use super::semver::{Constraints, Version};
use crate::goquote::go_quote;
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
/// does it. A constraint asks every tag lister of `runtime` (one that fails is passed
/// over) and pools the versions that satisfy it; kpt sorts the pool highest first with
/// `slices.SortFunc`, which is not stable, and takes the first, so among versions that
/// compare equal (`v0.2`, `0.2.0`, `v0.2.0+build`) the one written is the one Go's sort
/// leaves first: [`crate::gosort::sort_slice`] sorts as it does.
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
                "`function.tag` {} must be a valid image tag: start with an alphanumeric \
                 character or underscore, followed by at most 127 alphanumeric characters, \
                 underscores, periods, or dashes",
                go_quote(tag)
            ))
        }
    };
    if Version::parse(tag).is_some() {
        return literal();
    }
    let Some(constraint) = Constraints::parse(tag) else {
        return literal();
    };
    let mut pool: Vec<Version> = runtime
        .list_tags(bare)
        .into_iter()
        .filter_map(Result::ok)
        .flatten()
        .filter(|t| candidate(t))
        .filter_map(|t| Version::parse(&t))
        .filter(|v| constraint.check(v))
        .collect();
    // `slices.SortFunc(versions, func(a, b) int { return b.Compare(a) })`.
    crate::gosort::sort_slice(&mut pool, |a, b| b < a);
    match pool.first() {
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
        // A failing, empty or unmatching lister is passed over; what every other
        // lister has is pooled, so a later lister's higher version wins (kpt HEAD's
        // `TestResolveFunctionImageMultipleListers`; an earlier kpt took the first
        // lister with a match).
        let ordered = Listers(vec![
            Err("registry unreachable".into()),
            tags(&[]),
            tags(&["v0.3.0", "latest"]),
            tags(&["v0.2.1", "latest"]),
            tags(&["v0.2.4", "v0.3.0"]),
        ]);
        assert_eq!(r("~0.2", &ordered), Ok(format!("{IMG}:v0.2.4")));
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
    fn equal_versions_are_written_as_gos_sort_leaves_them_first() {
        let r = |tag: &str, rt: &Listers| resolve_image_tag(IMG, tag, rt);
        // Up to 12 versions Go's sort is an insertion sort: the first listed wins
        // (the highest was taken as the last listed).
        let few = Listers(vec![tags(&["v0.2.0", "v0.2", "0.2.0"])]);
        assert_eq!(r("~0.2", &few), Ok(format!("{IMG}:v0.2.0")));
        let pooled = Listers(vec![tags(&["v0.2"]), tags(&["0.2.0", "v0.1"])]);
        assert_eq!(r("~0.2", &pooled), Ok(format!("{IMG}:v0.2")));
        // Beyond 12, the quicksort's moves decide, as Masterminds semver under Go's
        // `sort.Slice` (the algorithm of kpt's `slices.SortFunc`) answers.
        let many = Listers(vec![tags(&[
            "0.1.0", "0.9.0", "v1.0.0", "1.0.0", "v1.0", "1.0", "v1", "1", "1.0.0+a", "v1.0.0+b",
            "01.0.0", "1.00.0", "1.0.00", "v01",
        ])]);
        assert_eq!(r("*", &many), Ok(format!("{IMG}:v1")));
    }

    #[test]
    fn go_sort_sorts_like_a_sort() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for len in [0, 1, 2, 12, 13, 49, 50, 51, 200, 1000] {
            let mut v: Vec<u64> = (0..len)
                .map(|_| {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    rng % 17
                })
                .collect();
            let mut want = v.clone();
            want.sort();
            crate::gosort::sort_slice(&mut v, |a, b| a < b);
            assert_eq!(v, want, "{len}");
            // Sorted, reversed and constant inputs take pdqsort's other paths.
            crate::gosort::sort_slice(&mut v, |a, b| a < b);
            assert_eq!(v, want);
            want.reverse();
            crate::gosort::sort_slice(&mut v, |a, b| b < a);
            assert_eq!(v, want);
        }
    }

    #[test]
    fn an_invalid_literal_tag_is_quoted_as_go_quotes_it() {
        let none = Listers(vec![]);
        let err = resolve_image_tag(IMG, "a\u{1}b", &none).expect_err("invalid tag");
        assert!(err.starts_with("`function.tag` \"a\\x01b\" must"), "{err}");
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
