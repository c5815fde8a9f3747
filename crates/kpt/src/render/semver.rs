//! Versions and version constraints as kpt HEAD's tag resolver reads a step's `tag:`
//! (Masterminds semver v3.4.0): `v` prefix and missing minor/patch allowed, constraints
//! joined by `,`/space (and) and `||` (or), `a - b` ranges, `x`/`X`/`*` wildcards,
//! `~`, `^`, `=`, `!=`, `<`, `<=`, `>`, `>=`. A missing minor or patch counts as a
//! wildcard, and a pre-release only satisfies an or-group that names one. Constraints
//! are read with Masterminds' own regular expressions; `tests/semver_go_differential.rs`
//! holds versions, constraints and checks to the Go library.

use std::cmp::Ordering;

/// A parsed version (`v1.2.3-rc.1+meta`, `0.4`, `1`), keeping the text it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
    original: String,
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

/// Dot-separated non-empty identifiers of `[0-9A-Za-z-]`.
fn valid_identifiers(s: &str) -> bool {
    !s.is_empty()
        && s.split('.')
            .all(|id| !id.is_empty() && id.bytes().all(is_ident_char))
}

/// A numeric pre-release identifier must not start with 0 (semver 2.0).
fn valid_prerelease(pre: &str) -> bool {
    pre.split('.')
        .all(|id| !(id.len() > 1 && id.starts_with('0') && id.bytes().all(|b| b.is_ascii_digit())))
}

fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl Version {
    /// Masterminds' `NewVersion`: `v?MAJOR(.MINOR)?(.PATCH)?(-PRE)?(+META)?`.
    pub fn parse(text: &str) -> Option<Version> {
        let body = text.strip_prefix('v').unwrap_or(text);
        let (body, meta) = match body.split_once('+') {
            Some((b, m)) => (b, Some(m)),
            None => (body, None),
        };
        if meta.is_some_and(|m| !valid_identifiers(m)) {
            return None;
        }
        let (nums, pre) = match body.split_once('-') {
            Some((n, p)) => (n, p),
            None => (body, ""),
        };
        let pre_ok = pre.is_empty() || (valid_identifiers(pre) && valid_prerelease(pre));
        if !pre_ok {
            return None;
        }
        if body.contains('-') && pre.is_empty() {
            return None;
        }
        let parts: Vec<&str> = nums.split('.').collect();
        if parts.is_empty() || parts.len() > 3 {
            return None;
        }
        let get = |i: usize| parts.get(i).map_or(Some(0), |p| number(p));
        Some(Version {
            major: get(0)?,
            minor: get(1)?,
            patch: get(2)?,
            pre: pre.to_string(),
            original: text.to_string(),
        })
    }

    /// The text the version was parsed from (what a resolved tag is written as).
    pub fn original(&self) -> &str {
        &self.original
    }

    fn triple(&self) -> (u64, u64, u64) {
        (self.major, self.minor, self.patch)
    }
}

/// Semver pre-release precedence: none ranks above any; identifiers compare
/// numerically when both are numbers, numbers rank below words, then by length.
fn compare_pre(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let (mut x, mut y) = (a.split('.'), b.split('.'));
    loop {
        match (x.next(), y.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) => {
                let o = match (number(p), number(q)) {
                    (Some(m), Some(n)) => m.cmp(&n),
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => p.cmp(q),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        self.triple()
            .cmp(&other.triple())
            .then_with(|| compare_pre(&self.pre, &other.pre))
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    TildeOrEqual,
    NotEqual,
    Greater,
    Less,
    GreaterEqual,
    LessEqual,
    Tilde,
    Caret,
}

/// One `op version` term; a wildcard or missing part makes it "dirty".
#[derive(Debug, Clone)]
struct Term {
    op: Op,
    con: Version,
    dirty: bool,
    minor_dirty: bool,
    patch_dirty: bool,
}

/// Or-groups of and-ed terms.
#[derive(Debug, Clone)]
pub struct Constraints {
    groups: Vec<(Vec<Term>, bool)>,
}

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

/// Masterminds' constraint grammar, its regular expressions as they are: Go's `\s` is
/// ASCII (`[\t\n\f\r ]`, no vertical tab, no no-break space), the operator list has
/// an empty alternative (a bare version), and a version segment may hold `|`, `x`, `X`
/// or `*` (one that is neither a number nor a lone wildcard fails later, when the
/// version is parsed).
struct Grammar {
    /// `constraintRegex`: one term, whole.
    term: regex::Regex,
    /// `constraintRangeRegex`: `a - b`.
    range: regex::Regex,
    /// `findConstraintRegex`: the terms of an `&&` group.
    find: regex::Regex,
    /// `validConstraintRegex`: an `&&` group, whole.
    valid: regex::Regex,
}

fn grammar() -> Option<&'static Grammar> {
    static GRAMMAR: std::sync::OnceLock<Option<Grammar>> = std::sync::OnceLock::new();
    GRAMMAR
        .get_or_init(|| {
            let ws = r"[\t\n\f\r ]";
            let ops = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";
            let cv = concat!(
                r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?",
                r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?",
                r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
            );
            let re = |p: String| regex::Regex::new(&p).ok();
            Some(Grammar {
                term: re(format!("^{ws}*({ops}){ws}*({cv}){ws}*$"))?,
                range: re(format!("{ws}*({cv}){ws}+-{ws}+({cv}){ws}*"))?,
                find: re(format!("({ops}){ws}*({cv})"))?,
                valid: re(format!(
                    "^({ws}*({ops}){ws}*({cv}){ws}*)((?:{ws}+|,{ws}*)({ops}){ws}*({cv}){ws}*)*$"
                ))?,
            })
        })
        .as_ref()
}

/// `a - b` → `>= a, <= b ` (Masterminds' `rewriteRange`, with the trailing space
/// v3.2.1 added): each range found in the text replaces the first occurrence of its
/// text, in order.
fn rewrite_ranges(g: &Grammar, text: &str) -> String {
    let mut out = text.to_string();
    for m in g.range.captures_iter(text) {
        let (Some(whole), Some(from), Some(to)) = (m.get(0), m.get(1), m.get(11)) else {
            continue;
        };
        let with = format!(">= {}, <= {} ", from.as_str(), to.as_str());
        out = out.replacen(whole.as_str(), &with, 1);
    }
    out
}

/// Masterminds' `parseConstraint`: the operator and version of one term; a wildcard or
/// missing part makes it "dirty", and the version it stands for is the parts before
/// that with zeros (and the pre-release; build metadata only on a full version).
fn parse_term(g: &Grammar, text: &str) -> Option<Term> {
    let m = g.term.captures(text)?;
    let part = |i: usize| m.get(i).map_or("", |p| p.as_str());
    let op = match part(1) {
        "" | "=" => Op::TildeOrEqual,
        "!=" => Op::NotEqual,
        ">" => Op::Greater,
        "<" => Op::Less,
        ">=" | "=>" => Op::GreaterEqual,
        "<=" | "=<" => Op::LessEqual,
        "~" | "~>" => Op::Tilde,
        _ => Op::Caret,
    };
    let (major, minor, patch, pre) = (part(3), part(4), part(5), part(6));
    let dot_x = |s: &str| is_x(s.strip_prefix('.').unwrap_or(s));
    let (version, dirty, minor_dirty, patch_dirty) = if is_x(major) || major.is_empty() {
        (format!("0.0.0{pre}"), true, false, false)
    } else if dot_x(minor) || minor.is_empty() {
        (format!("{major}.0.0{pre}"), true, true, false)
    } else if dot_x(patch) || patch.is_empty() {
        (format!("{major}{minor}.0{pre}"), true, false, true)
    } else {
        (part(2).to_string(), false, false, false)
    };
    Some(Term {
        op,
        con: Version::parse(&version)?,
        dirty,
        minor_dirty,
        patch_dirty,
    })
}

impl Constraints {
    /// Masterminds' `NewConstraint`; `None` when the text is not a constraint. Ranges
    /// are rewritten first, then the text is cut at every `||`; each part must be a
    /// valid `&&` group as a whole (terms apart by whitespace or one comma), and its
    /// terms are then found one after the other.
    pub fn parse(text: &str) -> Option<Constraints> {
        let g = grammar()?;
        let rewritten = rewrite_ranges(g, text);
        let mut groups = Vec::new();
        for group in rewritten.split("||") {
            if !g.valid.is_match(group) {
                return None;
            }
            let terms = g
                .find
                .find_iter(group)
                .map(|t| parse_term(g, t.as_str()))
                .collect::<Option<Vec<Term>>>()?;
            // A group naming a pre-release lets each of its terms take one (v3.4.0).
            let has_pre = terms.iter().any(|t| !t.con.pre.is_empty());
            groups.push((terms, has_pre));
        }
        Some(Constraints { groups })
    }

    /// Does `v` satisfy any or-group?
    pub fn check(&self, v: &Version) -> bool {
        self.groups
            .iter()
            .any(|(terms, pre)| terms.iter().all(|t| t.check(v, *pre)))
    }
}

impl Term {
    fn tilde(&self, v: &Version) -> bool {
        let c = &self.con;
        if v < c {
            return false;
        }
        if c.triple() == (0, 0, 0) && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        v.major == c.major && (v.minor == c.minor || self.minor_dirty)
    }

    fn check(&self, v: &Version, include_pre: bool) -> bool {
        if !v.pre.is_empty() && !include_pre {
            return false;
        }
        let c = &self.con;
        match self.op {
            Op::TildeOrEqual if self.dirty => self.tilde(v),
            Op::TildeOrEqual => v.cmp(c) == Ordering::Equal,
            Op::Tilde => self.tilde(v),
            Op::NotEqual => {
                if !self.dirty {
                    return v.cmp(c) != Ordering::Equal;
                }
                if c.major != v.major {
                    true
                } else if self.minor_dirty {
                    false
                } else if c.minor != v.minor {
                    true
                } else if self.patch_dirty {
                    (!v.pre.is_empty() || !c.pre.is_empty())
                        && compare_pre(&v.pre, &c.pre) != Ordering::Equal
                } else {
                    // Only the major was a wildcard (`!=*`, `!=x-rc`): Masterminds falls
                    // through to comparing whole versions, pre-releases included.
                    v.cmp(c) != Ordering::Equal
                }
            }
            Op::Greater => {
                if !self.dirty {
                    return v > c;
                }
                if v.major != c.major {
                    v.major > c.major
                } else if self.minor_dirty {
                    false
                } else if self.patch_dirty {
                    v.minor > c.minor
                } else {
                    v > c
                }
            }
            Op::Less => v < c,
            Op::GreaterEqual => v >= c,
            Op::LessEqual => {
                if !self.dirty {
                    return v <= c;
                }
                !(v.major > c.major
                    || (v.major == c.major && v.minor > c.minor && !self.minor_dirty))
            }
            Op::Caret => {
                if v < c {
                    return false;
                }
                if c.major > 0 || self.minor_dirty {
                    return v.major == c.major;
                }
                if v.major > 0 {
                    return false;
                }
                if c.minor > 0 || self.patch_dirty {
                    return v.minor == c.minor;
                }
                v.minor == 0 && v.patch == c.patch
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap_or_else(|| panic!("{s} parses"))
    }

    fn sat(c: &str, ver: &str) -> bool {
        Constraints::parse(c)
            .unwrap_or_else(|| panic!("{c} parses"))
            .check(&v(ver))
    }

    #[test]
    fn versions_parse_loosely_and_order_with_prereleases_below_releases() {
        assert_eq!(v("v0.2").triple(), (0, 2, 0));
        assert_eq!(v("1").triple(), (1, 0, 0));
        assert_eq!(v("v1.2.3-rc.1+build.5").pre, "rc.1");
        for bad in [
            "latest", "1.x", "~0.2", "1.2.3.4", "v", "1.2.3-", "1.2.3-01", "",
        ] {
            assert!(Version::parse(bad).is_none(), "{bad}");
        }
        assert!(v("1.0.0-alpha") < v("1.0.0"));
        assert!(v("1.0.0-alpha.2") < v("1.0.0-alpha.10"));
        assert!(v("1.0.0-2") < v("1.0.0-alpha"));
        assert_eq!(v("v0.1").cmp(&v("0.1.0")), Ordering::Equal);
        assert_eq!(v("v0.2.4").original(), "v0.2.4");
    }

    #[test]
    fn tilde_caret_and_partial_versions_span_what_masterminds_spans() {
        assert!(sat("~0.2", "v0.2.9") && !sat("~0.2", "v0.3.0") && !sat("~0.2", "v0.1.9"));
        assert!(sat("~1", "1.9.0") && !sat("~1", "2.0.0"));
        assert!(sat("~1.2.3", "1.2.9") && !sat("~1.2.3", "1.3.0") && !sat("~1.2.3", "1.2.2"));
        assert!(sat("^1.2", "1.9.0") && !sat("^1.2", "2.0.0"));
        assert!(sat("^0.2.3", "0.2.9") && !sat("^0.2.3", "0.3.0"));
        assert!(sat("^0.0.3", "0.0.3") && !sat("^0.0.3", "0.0.4"));
        assert!(sat("^0", "0.9.0") && !sat("^0", "1.0.0"));
        // A bare partial version is a wildcard, a full one is exact.
        assert!(sat("0.4", "0.4.7") && sat("=0.4.x", "0.4.1") && !sat("0.4.1", "0.4.2"));
        assert!(sat("*", "3.1.4") && sat("1.x", "1.7.0") && !sat("1.x", "2.0.0"));
    }

    #[test]
    fn comparisons_ranges_and_groups() {
        assert!(sat("0.4.1 - 0.4.3", "0.4.3") && !sat("0.4.1 - 0.4.3", "0.4.4"));
        assert!(sat("0.2 - 0.2.2", "v0.2.0") && !sat("0.2 - 0.2.2", "v0.2.3"));
        assert!(sat(">=1, <2", "1.5.0") && !sat(">=1, <2", "2.0.0"));
        assert!(sat(">= 1.2 < 1.4", "1.3.9") && !sat(">= 1.2 < 1.4", "1.4.0"));
        assert!(sat("<1.0 || >=3", "3.0.0") && !sat("<1.0 || >=3", "2.0.0"));
        // Dirty > and <= compare only the parts that were given.
        assert!(!sat(">1.2", "1.2.9") && sat(">1.2", "1.3.0"));
        assert!(sat("<=1.2", "1.2.9") && !sat("<=1.2", "1.3.0"));
        assert!(sat("!=1.2.3", "1.2.4") && !sat("!=1.2.3", "1.2.3"));
        assert!(!sat("!=1.x", "1.5.0") && sat("!=1.x", "2.0.0"));
    }

    #[test]
    fn prereleases_satisfy_only_groups_that_name_one() {
        assert!(!sat(">=1.0.0", "1.1.0-rc.1"));
        assert!(sat(">=1.1.0-rc.0", "1.1.0-rc.1"));
        assert!(sat(">=1.1.0-rc.0 || >=5", "1.1.0-rc.1"));
        assert!(!sat(">=5 || >=1.0.0", "1.1.0-rc.1"));
    }

    #[test]
    fn constraints_follow_masterminds_grammar() {
        // One comma between terms, none before the first or after the last.
        for bad in [">=1,,<2", ",>=1", ">=1,", ">=1, ,<2"] {
            assert!(Constraints::parse(bad).is_none(), "{bad}");
        }
        // Go's `\s` is ASCII: a no-break space or a vertical tab separates nothing.
        for bad in [">=1\u{a0}<2", ">=1\u{b}<2"] {
            assert!(Constraints::parse(bad).is_none(), "{bad:?}");
        }
        assert!(sat(">=1\n<2", "1.5.0") && sat(">=1\t,\t<2", "1.5.0"));
        // No length or group limit of our own.
        assert!(sat(
            &format!(">={}", "1".repeat(19)),
            "2222222222222222222.0.0"
        ));
        assert!(Constraints::parse(&format!("<{}", "1".repeat(600))).is_none());
        assert!(sat(&vec!["=9"; 40].join(" || "), "9.0.0"));
        // A wildcard major: `!=` then compares whole versions, pre-releases included.
        assert!(sat("!=*, >=0.0.0-0", "0.0.0-rc"));
        assert!(!sat("!=*, >=0.0.0-0", "0.0.0"));
        // A segment that is neither a number nor a lone wildcard fails only where the
        // version it stands for is parsed.
        assert!(sat("x.|.5", "3.0.0") && sat("1.x.|", "1.4.0"));
        assert!(Constraints::parse("1.|.5").is_none() && Constraints::parse("1|2").is_none());
    }

    #[test]
    fn what_is_not_a_constraint() {
        for bad in [
            "latest", "unstable", "1.2.3.4", ">= ", "1 -", "~x.y", "a || b",
        ] {
            assert!(Constraints::parse(bad).is_none(), "{bad}");
        }
    }
}
