//! `.krmignore`: the exclusions kyaml's package reader applies, read as the
//! `monochromegane/go-gitignore` matcher kyaml pins reads them. That matcher is not git's:
//!
//! * a line is trimmed of spaces at both ends; `#` starts a comment line; `!` makes an
//!   accept pattern, and any accept pattern that matches wins, whatever the order;
//!   a leading `\#` is a `#`, and there is no other backslash escape outside glob syntax;
//! * a pattern of `n` slash-separated parts (slashes at either end trimmed) is compared
//!   with the last `n` parts of a path, so `a/c` also matches `deep/a/c`; one starting
//!   with `/` is compared with the whole path; one ending in `/` matches directories only;
//! * a pattern with `*`, `?` or `[` is Go's `filepath.Match` (`*` stops at `/`, `**` is
//!   `*`), any other is compared as text.
//!
//! kyaml checks every directory on its walk and skips a matching one whole, so nothing
//! under an ignored directory comes back, not even a file an accept pattern names.

/// Compiled `.krmignore` rules of one package.
#[derive(Debug, Clone, Default)]
pub struct KrmIgnore {
    ignore: Vec<Pattern>,
    accept: Vec<Pattern>,
}

#[derive(Debug, Clone)]
struct Pattern {
    /// Starts with `/`: compared with the whole path.
    rooted: bool,
    /// Ends with `/`: matches directories only.
    dir_only: bool,
    /// Number of path parts compared.
    depth: usize,
    /// The pattern without its end slashes.
    body: String,
    /// Has glob syntax (`*?[`): matched as `filepath.Match`.
    glob: bool,
}

impl Pattern {
    fn new(line: &str) -> Option<Pattern> {
        let body = line.trim_matches('/');
        if body.is_empty() {
            return None;
        }
        Some(Pattern {
            rooted: line.starts_with('/'),
            dir_only: line.ends_with('/'),
            depth: body.matches('/').count() + 1,
            body: body.to_string(),
            glob: line.contains(['*', '?', '[']),
        })
    }

    /// Does the pattern match this one path (its ancestors are not looked at)?
    fn matches(&self, path: &str, is_dir: bool) -> bool {
        if self.dir_only && !is_dir {
            return false;
        }
        let parts = path.split('/').count();
        let target = if self.rooted {
            // go-gitignore cuts the first `depth` parts with the slash after them, which
            // no pattern body equals: only a path of exactly `depth` parts can match.
            if parts != self.depth {
                return false;
            }
            path
        } else {
            if parts < self.depth {
                return false;
            }
            let mut cut = path.len();
            for _ in 0..self.depth {
                cut = path[..cut].rfind('/').unwrap_or(0);
            }
            if cut == 0 && parts == self.depth {
                path
            } else {
                &path[cut + 1..]
            }
        };
        if self.glob {
            go_match(&self.body, target).unwrap_or(false)
        } else {
            self.body == target
        }
    }
}

impl KrmIgnore {
    /// Rules from the file text (empty text = nothing ignored).
    pub fn parse(text: &str) -> KrmIgnore {
        let mut out = KrmIgnore::default();
        for raw in text.lines() {
            // go-gitignore reads lines with a bufio.Scanner, which drops a `\r` before
            // the line break, and trims spaces only.
            let line = raw.strip_suffix('\r').unwrap_or(raw).trim_matches(' ');
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            // `\#` starts a pattern with `#` (kpt 1.0.0-beta.56 ignores `#a.yaml` for
            // it); no other escape is read (`\!a.yaml` matches nothing).
            let line = line
                .strip_prefix('\\')
                .filter(|rest| rest.starts_with('#'))
                .unwrap_or(line);
            match line.strip_prefix('!') {
                Some(rest) => out.accept.extend(Pattern::new(rest)),
                None => out.ignore.extend(Pattern::new(line)),
            }
        }
        out
    }

    /// Does the matcher exclude this one path, a directory or a file? (go-gitignore's
    /// `Match`: an accept pattern that matches keeps it.)
    pub fn matches(&self, rel_path: &str, is_dir: bool) -> bool {
        if self.accept.iter().any(|p| p.matches(rel_path, is_dir)) {
            return false;
        }
        self.ignore.iter().any(|p| p.matches(rel_path, is_dir))
    }

    /// Is the package-relative file path ignored, by itself or because kyaml's walk
    /// skips one of the directories above it?
    pub fn is_ignored(&self, rel_path: &str) -> bool {
        let mut at = 0;
        while let Some(i) = rel_path[at..].find('/') {
            if self.matches(&rel_path[..at + i], true) {
                return true;
            }
            at += i + 1;
        }
        self.matches(rel_path, false)
    }
}

/// Go's `path/filepath.Match` on `/`-separated paths: `None` for a malformed pattern
/// (which go-gitignore takes as no match).
fn go_match(pattern: &str, name: &str) -> Option<bool> {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Malformed anywhere is an error in Go, whatever the name.
    check_pattern(&p)?;
    Some(match_from(&p, &n))
}

fn check_pattern(p: &[char]) -> Option<()> {
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '\\' => {
                if i + 1 >= p.len() {
                    return None;
                }
                i += 2;
            }
            '[' => i = class_end(p, i)?,
            _ => i += 1,
        }
    }
    Some(())
}

/// The index after the `]` closing the class that starts at `p[start] == '['`.
fn class_end(p: &[char], start: usize) -> Option<usize> {
    let mut i = start + 1;
    if p.get(i) == Some(&'^') {
        i += 1;
    }
    let mut first = true;
    loop {
        let c = *p.get(i)?;
        if c == ']' && !first {
            return Some(i + 1);
        }
        // A range's low end, then maybe `-` and its high end; `\` escapes either.
        i = class_char_end(p, i)?;
        if p.get(i) == Some(&'-') {
            i = class_char_end(p, i + 1)?;
        }
        first = false;
    }
}

fn class_char_end(p: &[char], i: usize) -> Option<usize> {
    match *p.get(i)? {
        '\\' => p.get(i + 1).map(|_| i + 2),
        '-' | ']' => None,
        _ => Some(i + 1),
    }
}

fn class_char(p: &[char], i: usize) -> (char, usize) {
    if p[i] == '\\' {
        (p[i + 1], i + 2)
    } else {
        (p[i], i + 1)
    }
}

fn class_matches(p: &[char], start: usize, c: char) -> bool {
    let mut i = start + 1;
    let negated = p.get(i) == Some(&'^');
    if negated {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    while p[i] != ']' || first {
        let (lo, next) = class_char(p, i);
        i = next;
        let mut hi = lo;
        if p[i] == '-' {
            let (h, next) = class_char(p, i + 1);
            hi = h;
            i = next;
        }
        if lo <= c && c <= hi {
            hit = true;
        }
        first = false;
    }
    hit != negated
}

fn match_from(p: &[char], n: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => {
            let rest = &p[1..];
            // `*` takes any run of non-separators.
            for k in 0..=n.len() {
                if k > 0 && n[k - 1] == '/' {
                    break;
                }
                if match_from(rest, &n[k..]) {
                    return true;
                }
            }
            false
        }
        Some(&c) => {
            let Some(&first) = n.first() else {
                return false;
            };
            let (ok, used) = match c {
                '?' => (first != '/', 1),
                '[' => {
                    let end = class_end(p, 0).unwrap_or(p.len());
                    (class_matches(p, 0, first), end)
                }
                '\\' => (p.get(1) == Some(&first), 2),
                _ => (c == first, 1),
            };
            ok && match_from(&p[used..], &n[1..])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slashed_pattern_matches_the_last_parts_of_a_path() {
        let k = KrmIgnore::parse("svc/extra\n");
        assert!(k.is_ignored("svc/extra/one.yaml"));
        assert!(k.is_ignored("nested/svc/extra/two.yaml"));
        assert!(!k.is_ignored("svc/other.yaml"));
        let rooted = KrmIgnore::parse("/svc/extra\n");
        assert!(rooted.is_ignored("svc/extra/one.yaml"));
        assert!(!rooted.is_ignored("nested/svc/extra/two.yaml"));
    }

    #[test]
    fn accept_patterns_win_in_any_order_but_not_under_an_ignored_directory() {
        let k = KrmIgnore::parse("!cfg/stay.yaml\ncfg/*.yaml\n");
        assert!(!k.is_ignored("cfg/stay.yaml"));
        assert!(k.is_ignored("cfg/go.yaml"));
        let dir = KrmIgnore::parse("cfg\n!cfg/stay.yaml\n");
        assert!(dir.is_ignored("cfg/stay.yaml"));
    }

    #[test]
    fn lines_are_trimmed_of_spaces_and_have_no_escapes() {
        let k = KrmIgnore::parse("   lead.yaml  \n\\!odd.yaml\n# note\n\\#hash.yaml\n");
        assert!(k.is_ignored("lead.yaml"));
        assert!(k.is_ignored("#hash.yaml"));
        assert!(k.is_ignored("deeper/lead.yaml"));
        // No glob syntax: compared as text, backslash and all.
        assert!(!k.is_ignored("!odd.yaml"));
    }

    #[test]
    fn globs_follow_go_filepath_match() {
        let k = KrmIgnore::parse("gen/**\n[!x]y.yaml\n");
        // `**` is `*`: one part only, so the pattern has two parts and matches the
        // last two parts of a path.
        assert!(k.is_ignored("gen/out.yaml"));
        assert!(k.is_ignored("top/gen/out.yaml"));
        // `[!x]` is a class of `!` and `x` in Go, not a negation.
        assert!(k.is_ignored("xy.yaml"));
        assert!(!k.is_ignored("zy.yaml"));
        let only_dirs = KrmIgnore::parse("out/\n");
        assert!(only_dirs.is_ignored("out/a.yaml"));
        assert!(!only_dirs.is_ignored("out"));
        // A malformed pattern matches nothing.
        assert!(!KrmIgnore::parse("bad[\n").is_ignored("bad["));
    }
}
