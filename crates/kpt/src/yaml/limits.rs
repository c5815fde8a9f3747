//! Limits that keep hostile input from crashing or stalling the process: the
//! nesting depth the parser accepts, stack growth for the recursive walkers,
//! and go-yaml v3's alias-expansion ratio.
//!
//! The depth limit is go-yaml v3's (`max_flow_level` and `max_indents` in
//! `scannerc.go`, both 10000, same message). Ten thousand levels are far more
//! than the stack of a 2 MiB thread allows for a recursive walk, so every
//! recursive function over a [`Node`](super::Node) tree (parser, emitter,
//! fingerprint, conversions, `Clone`/`PartialEq`/`Drop`) runs under
//! [`guard`], which moves on to a fresh heap-allocated stack segment when the
//! current one runs low. That makes the walkers safe for any depth a tree
//! can have, including trees built by code, not just the depth the parser
//! accepts.

/// go-yaml v3's limit on flow nesting and on block indentation levels.
pub const MAX_DEPTH: usize = 10_000;

/// go-yaml v3's message when a nesting limit is exceeded.
pub fn depth_message(limit: usize) -> String {
    format!("exceeded max depth of {limit}")
}

/// Nesting limit for plain data (`serde_json::Value`) made from a tree.
/// serde_json's `Drop`, `PartialEq` and serializer recurse on the native
/// stack with no guard (about 3,000 levels fit in a 2 MiB stack in a debug
/// build), and so do the consumers of the data (starlark's value
/// conversion); a thousand levels keeps a wide margin and is far beyond any
/// KRM object.
pub const VALUE_MAX_DEPTH: usize = 1_000;

/// Room a single level of any walker needs (debug builds have large frames).
const RED_ZONE: usize = 256 * 1024;
/// Size of each extra stack segment.
const SEGMENT: usize = 4 * 1024 * 1024;

/// Runs `f`, first switching to a new stack segment when less than the red
/// zone is left on the current one.
#[inline]
pub(crate) fn guard<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// Levels of a walker that carries its depth between two stack checks: a check reads the
/// stack pointer and a thread-local limit, which cost about 6 % of a render when done at
/// every container node. The red zone covers the levels in between.
const CHECK_EVERY: usize = 8;

/// [`guard`] for walkers that know their depth: checks every [`CHECK_EVERY`] levels.
#[inline]
pub(crate) fn guard_at<R>(depth: usize, f: impl FnOnce() -> R) -> R {
    if depth.is_multiple_of(CHECK_EVERY) {
        guard(f)
    } else {
        f()
    }
}

/// go-yaml v3's message when alias expansion is out of proportion.
pub const EXCESSIVE_ALIASING: &str = "document contains excessive aliasing";

/// go-yaml v3 `decode.go`: counts decode operations and those made under an
/// alias; a document whose expansion is mostly aliases (above the allowed
/// ratio for its size) is refused, which bounds a "billion laughs" document
/// to a few hundred thousand operations.
#[derive(Debug, Default)]
pub(crate) struct AliasBudget {
    decode_count: u64,
    alias_count: u64,
    /// Aliases being expanded right now.
    pub alias_depth: u32,
}

impl AliasBudget {
    /// One decode operation; `Err` once aliasing is excessive.
    pub fn step(&mut self) -> Result<(), &'static str> {
        self.decode_count += 1;
        if self.alias_depth > 0 {
            self.alias_count += 1;
        }
        if self.alias_count > 100
            && self.decode_count > 1000
            && self.alias_count as f64 / self.decode_count as f64
                > allowed_alias_ratio(self.decode_count)
        {
            return Err(EXCESSIVE_ALIASING);
        }
        Ok(())
    }
}

/// go-yaml v3 `allowedAliasRatio`: 99% of a small document may come from
/// aliases, scaling down to 10% for very large ones.
fn allowed_alias_ratio(decode_count: u64) -> f64 {
    const LOW: u64 = 400_000;
    const HIGH: u64 = 4_000_000;
    if decode_count <= LOW {
        0.99
    } else if decode_count >= HIGH {
        0.10
    } else {
        0.99 - 0.89 * ((decode_count - LOW) as f64 / (HIGH - LOW) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_scales_like_go_yaml() {
        assert_eq!(allowed_alias_ratio(1000), 0.99);
        assert_eq!(allowed_alias_ratio(4_000_000), 0.10);
        let mid = allowed_alias_ratio(2_200_000);
        assert!((mid - 0.545).abs() < 1e-9, "{mid}");
    }

    #[test]
    fn budget_refuses_mostly_aliases_and_allows_few() {
        let mut b = AliasBudget::default();
        for _ in 0..2000 {
            b.step().expect("no aliases");
        }
        b.alias_depth = 1;
        for _ in 0..500 {
            b.step().expect("a fifth under aliases is fine");
        }
        let mut laughs = AliasBudget {
            alias_depth: 1,
            ..Default::default()
        };
        let refused = (0..2000).find_map(|_| laughs.step().err());
        assert_eq!(refused, Some(EXCESSIVE_ALIASING));
    }
}
