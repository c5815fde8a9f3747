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
/// leaves first: [`go_sort`] sorts as it does.
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
    go_sort(&mut pool, |a, b| b < a);
    match pool.first() {
        Some(v) => Ok(format!("{bare}:{}", v.original())),
        None => Err(format!(
            "no tag could be found matching the version constraint {tag:?}"
        )),
    }
}

/// Go's `sort.Slice`/`slices.SortFunc` (the pattern-defeating quicksort of Go's
/// `sort/zsortfunc.go` and `slices/zsortanyfunc.go`, one algorithm), step for step, so
/// that elements `less` cannot tell apart end where Go leaves them: up to 12 elements
/// it is an insertion sort (stable), beyond that they move as its partitions, pivots
/// and pattern breaking move them.
pub(crate) fn go_sort<T>(data: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = data.len();
    let limit = (usize::BITS - n.leading_zeros()) as usize;
    let mut s = GoSort { data, less: &less };
    s.pdqsort(0, n, limit);
}

struct GoSort<'a, T, F> {
    data: &'a mut [T],
    less: &'a F,
}

#[derive(PartialEq)]
enum Hint {
    Unknown,
    Increasing,
    Decreasing,
}

impl<T, F: Fn(&T, &T) -> bool> GoSort<'_, T, F> {
    fn less(&self, i: usize, j: usize) -> bool {
        (self.less)(&self.data[i], &self.data[j])
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.data.swap(i, j);
    }

    fn insertion_sort(&mut self, a: usize, b: usize) {
        for i in a + 1..b {
            let mut j = i;
            while j > a && self.less(j, j - 1) {
                self.swap(j, j - 1);
                j -= 1;
            }
        }
    }

    fn sift_down(&mut self, lo: usize, hi: usize, first: usize) {
        let mut root = lo;
        loop {
            let mut child = 2 * root + 1;
            if child >= hi {
                return;
            }
            if child + 1 < hi && self.less(first + child, first + child + 1) {
                child += 1;
            }
            if !self.less(first + root, first + child) {
                return;
            }
            self.swap(first + root, first + child);
            root = child;
        }
    }

    fn heap_sort(&mut self, a: usize, b: usize) {
        let (first, lo, hi) = (a, 0, b - a);
        for i in (0..=(hi - 1) / 2).rev() {
            self.sift_down(i, hi, first);
        }
        for i in (0..hi).rev() {
            self.swap(first, first + i);
            self.sift_down(lo, i, first);
        }
    }

    fn pdqsort(&mut self, mut a: usize, mut b: usize, mut limit: usize) {
        const MAX_INSERTION: usize = 12;
        let (mut was_balanced, mut was_partitioned) = (true, true);
        loop {
            let length = b - a;
            if length <= MAX_INSERTION {
                self.insertion_sort(a, b);
                return;
            }
            if limit == 0 {
                self.heap_sort(a, b);
                return;
            }
            if !was_balanced {
                self.break_patterns(a, b);
                limit -= 1;
            }
            let (mut pivot, mut hint) = self.choose_pivot(a, b);
            if hint == Hint::Decreasing {
                self.reverse_range(a, b);
                pivot = (b - 1) - (pivot - a);
                hint = Hint::Increasing;
            }
            if was_balanced
                && was_partitioned
                && hint == Hint::Increasing
                && self.partial_insertion_sort(a, b)
            {
                return;
            }
            if a > 0 && !self.less(a - 1, pivot) {
                a = self.partition_equal(a, b, pivot);
                continue;
            }
            let (mid, already) = self.partition(a, b, pivot);
            was_partitioned = already;
            let (left, right) = (mid - a, b - mid);
            let balance_threshold = length / 8;
            if left < right {
                was_balanced = left >= balance_threshold;
                self.pdqsort(a, mid, limit);
                a = mid + 1;
            } else {
                was_balanced = right >= balance_threshold;
                self.pdqsort(mid + 1, b, limit);
                b = mid;
            }
        }
    }

    fn partition(&mut self, a: usize, b: usize, pivot: usize) -> (usize, bool) {
        self.swap(a, pivot);
        // Go's i and j are ints; j may go one below a (then i > j ends the loops).
        let (mut i, mut j) = (a as isize + 1, b as isize - 1);
        let at = |k: isize| k as usize;
        while i <= j && self.less(at(i), a) {
            i += 1;
        }
        while i <= j && !self.less(at(j), a) {
            j -= 1;
        }
        if i > j {
            self.swap(at(j), a);
            return (at(j), true);
        }
        self.swap(at(i), at(j));
        i += 1;
        j -= 1;
        loop {
            while i <= j && self.less(at(i), a) {
                i += 1;
            }
            while i <= j && !self.less(at(j), a) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.swap(at(i), at(j));
            i += 1;
            j -= 1;
        }
        self.swap(at(j), a);
        (at(j), false)
    }

    fn partition_equal(&mut self, a: usize, b: usize, pivot: usize) -> usize {
        self.swap(a, pivot);
        let (mut i, mut j) = (a as isize + 1, b as isize - 1);
        let at = |k: isize| k as usize;
        loop {
            while i <= j && !self.less(a, at(i)) {
                i += 1;
            }
            while i <= j && self.less(a, at(j)) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.swap(at(i), at(j));
            i += 1;
            j -= 1;
        }
        at(i)
    }

    fn partial_insertion_sort(&mut self, a: usize, b: usize) -> bool {
        const MAX_STEPS: usize = 5;
        const SHORTEST_SHIFTING: usize = 50;
        let mut i = a + 1;
        for _ in 0..MAX_STEPS {
            while i < b && !self.less(i, i - 1) {
                i += 1;
            }
            if i == b {
                return true;
            }
            if b - a < SHORTEST_SHIFTING {
                return false;
            }
            self.swap(i, i - 1);
            if i - a >= 2 {
                let mut j = i - 1;
                while j >= 1 {
                    if !self.less(j, j - 1) {
                        break;
                    }
                    self.swap(j, j - 1);
                    j -= 1;
                }
            }
            if b - i >= 2 {
                for j in i + 1..b {
                    if !self.less(j, j - 1) {
                        break;
                    }
                    self.swap(j, j - 1);
                }
            }
        }
        false
    }

    fn break_patterns(&mut self, a: usize, b: usize) {
        let length = b - a;
        if length >= 8 {
            let mut random = length as u64;
            let modulus = 1usize << (usize::BITS - length.leading_zeros());
            let idx = a + (length / 4) * 2 - 1;
            for idx in idx..=idx + 2 {
                random ^= random << 13;
                random ^= random >> 17;
                random ^= random << 5;
                let mut other = (random as usize) & (modulus - 1);
                if other >= length {
                    other -= length;
                }
                self.swap(idx, a + other);
            }
        }
    }

    fn choose_pivot(&mut self, a: usize, b: usize) -> (usize, Hint) {
        const SHORTEST_NINTHER: usize = 50;
        const MAX_SWAPS: usize = 4 * 3;
        let l = b - a;
        let mut swaps = 0;
        let (mut i, mut j, mut k) = (a + l / 4, a + l / 4 * 2, a + l / 4 * 3);
        if l >= 8 {
            if l >= SHORTEST_NINTHER {
                i = self.median(i - 1, i, i + 1, &mut swaps);
                j = self.median(j - 1, j, j + 1, &mut swaps);
                k = self.median(k - 1, k, k + 1, &mut swaps);
            }
            j = self.median(i, j, k, &mut swaps);
        }
        match swaps {
            0 => (j, Hint::Increasing),
            MAX_SWAPS => (j, Hint::Decreasing),
            _ => (j, Hint::Unknown),
        }
    }

    fn order2(&self, a: usize, b: usize, swaps: &mut usize) -> (usize, usize) {
        if self.less(b, a) {
            *swaps += 1;
            (b, a)
        } else {
            (a, b)
        }
    }

    fn median(&self, a: usize, b: usize, c: usize, swaps: &mut usize) -> usize {
        let (a, b) = self.order2(a, b, swaps);
        let (b, _) = self.order2(b, c, swaps);
        let (_, b) = self.order2(a, b, swaps);
        b
    }

    fn reverse_range(&mut self, a: usize, b: usize) {
        let (mut i, mut j) = (a, b - 1);
        while i < j {
            self.swap(i, j);
            i += 1;
            j -= 1;
        }
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
            go_sort(&mut v, |a, b| a < b);
            assert_eq!(v, want, "{len}");
            // Sorted, reversed and constant inputs take pdqsort's other paths.
            go_sort(&mut v, |a, b| a < b);
            assert_eq!(v, want);
            want.reverse();
            go_sort(&mut v, |a, b| b < a);
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
