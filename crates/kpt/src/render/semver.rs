//! Versions and version constraints as kpt HEAD's tag resolver reads a step's `tag:`
//! (Masterminds semver v3): `v` prefix and missing minor/patch allowed, constraints
//! joined by `,`/space (and) and `||` (or), `a - b` ranges, `x`/`X`/`*` wildcards,
//! `~`, `^`, `=`, `!=`, `<`, `<=`, `>`, `>=`. A missing minor or patch counts as a
//! wildcard, and a pre-release only satisfies an or-group that names one.

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

fn split_op(s: &str) -> (Op, &str) {
    for (text, op) in [
        ("!=", Op::NotEqual),
        (">=", Op::GreaterEqual),
        ("=>", Op::GreaterEqual),
        ("<=", Op::LessEqual),
        ("=<", Op::LessEqual),
        ("~>", Op::Tilde),
        ("=", Op::TildeOrEqual),
        (">", Op::Greater),
        ("<", Op::Less),
        ("~", Op::Tilde),
        ("^", Op::Caret),
    ] {
        if let Some(rest) = s.strip_prefix(text) {
            return (op, rest);
        }
    }
    (Op::TildeOrEqual, s)
}

fn parse_term(text: &str) -> Option<Term> {
    let (op, rest) = split_op(text);
    let rest = rest.trim_start();
    let body = rest.strip_prefix('v').unwrap_or(rest);
    let (body, meta) = match body.split_once('+') {
        Some((b, m)) => (b, Some(m)),
        None => (body, None),
    };
    if meta.is_some_and(|m| !valid_identifiers(m)) {
        return None;
    }
    let (nums, pre) = match body.split_once('-') {
        Some((n, p)) if valid_identifiers(p) && valid_prerelease(p) => (n, p),
        Some(_) => return None,
        None => (body, ""),
    };
    let segs: Vec<&str> = nums.split('.').collect();
    let seg_chars = |s: &str| !s.is_empty() && s.bytes().all(|b| b"0123456789xX*|".contains(&b));
    if segs.is_empty() || segs.len() > 3 || !segs.iter().all(|s| seg_chars(s)) {
        return None;
    }
    let seg = |i: usize| -> Option<u64> { number(segs[i]) };
    let mut term = Term {
        op,
        con: Version {
            major: 0,
            minor: 0,
            patch: 0,
            pre: pre.to_string(),
            original: rest.to_string(),
        },
        dirty: false,
        minor_dirty: false,
        patch_dirty: false,
    };
    if is_x(segs[0]) {
        term.dirty = true;
    } else if segs.len() < 2 || is_x(segs[1]) {
        term.dirty = true;
        term.minor_dirty = true;
        term.con.major = seg(0)?;
    } else if segs.len() < 3 || is_x(segs[2]) {
        term.dirty = true;
        term.patch_dirty = true;
        term.con.major = seg(0)?;
        term.con.minor = seg(1)?;
    } else {
        term.con.major = seg(0)?;
        term.con.minor = seg(1)?;
        term.con.patch = seg(2)?;
    }
    Some(term)
}

/// `a - b` → `>= a, <= b` (Masterminds' `rewriteRange`).
fn rewrite_ranges(text: &str) -> String {
    static RANGE: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let cv = r"v?[0-9xX*|]+(?:\.[0-9xX*|]+)?(?:\.[0-9xX*|]+)?(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?";
    let re = RANGE.get_or_init(|| regex::Regex::new(&format!(r"\s*({cv})\s+-\s+({cv})\s*")).ok());
    match re {
        Some(re) if text.contains('-') => re.replace_all(text, ">= $1, <= $2 ").into_owned(),
        _ => text.to_string(),
    }
}

fn parse_group(group: &str) -> Option<Vec<Term>> {
    let mut terms = Vec::new();
    // Terms are separated by a comma and/or whitespace; an operator may be
    // followed by spaces before its version.
    let normalized = group.replace(',', " ");
    let mut words = normalized.split_whitespace().peekable();
    while let Some(word) = words.next() {
        let (_, rest) = split_op(word);
        let text = if rest.is_empty() {
            format!("{word}{}", words.next()?)
        } else {
            word.to_string()
        };
        terms.push(parse_term(&text)?);
    }
    (!terms.is_empty()).then_some(terms)
}

impl Constraints {
    /// Masterminds' `NewConstraint`; `None` when the text is not a constraint.
    pub fn parse(text: &str) -> Option<Constraints> {
        if text.len() > 512 {
            return None;
        }
        let rewritten = rewrite_ranges(text);
        let mut groups = Vec::new();
        for group in rewritten.split("||") {
            let terms = parse_group(group)?;
            let has_pre = terms.iter().any(|t| !t.con.pre.is_empty());
            groups.push((terms, has_pre));
        }
        (groups.len() <= 32).then_some(Constraints { groups })
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
                    c.patch != v.patch
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
    fn what_is_not_a_constraint() {
        for bad in [
            "latest", "unstable", "1.2.3.4", ">= ", "1 -", "~x.y", "a || b",
        ] {
            assert!(Constraints::parse(bad).is_none(), "{bad}");
        }
    }
}
