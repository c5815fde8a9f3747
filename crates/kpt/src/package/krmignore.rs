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

/// Go's `path/filepath.Match` on `/`-separated paths, step by step (on bytes, as Go
/// does): `None` for `ErrBadPattern` (which go-gitignore takes as no match). Chunks
/// between stars are matched leftmost and kept (no backtracking into an earlier
/// chunk), and only the chunks it reaches are checked for syntax (`path.Match` checks
/// the rest too; `filepath.Match` does not).
fn go_match(pattern: &str, name: &str) -> Option<bool> {
    let mut pattern = pattern.as_bytes();
    let mut name = name.as_bytes();
    'pattern: while !pattern.is_empty() {
        let (star, chunk, rest) = scan_chunk(pattern);
        pattern = rest;
        if star && chunk.is_empty() {
            // A trailing star matches the rest unless it holds a separator.
            return Some(!name.contains(&b'/'));
        }
        let (t, ok) = match_chunk(chunk, name)?;
        if ok && (t.is_empty() || !pattern.is_empty()) {
            name = t;
            continue;
        }
        if star {
            let mut i = 0;
            while i < name.len() && name[i] != b'/' {
                let (t, ok) = match_chunk(chunk, &name[i + 1..])?;
                if ok {
                    // The last chunk must use up the name.
                    if pattern.is_empty() && !t.is_empty() {
                        i += 1;
                        continue;
                    }
                    name = t;
                    continue 'pattern;
                }
                i += 1;
            }
        }
        return Some(false);
    }
    Some(name.is_empty())
}

/// `scanChunk`: the stars before the next chunk, the chunk (up to a star outside a
/// class), and the rest.
fn scan_chunk(mut pattern: &[u8]) -> (bool, &[u8], &[u8]) {
    let mut star = false;
    while let [b'*', rest @ ..] = pattern {
        pattern = rest;
        star = true;
    }
    let mut in_range = false;
    let mut i = 0;
    while i < pattern.len() {
        match pattern[i] {
            b'\\' if i + 1 < pattern.len() => i += 1,
            b'[' => in_range = true,
            b']' => in_range = false,
            b'*' if !in_range => break,
            _ => {}
        }
        i += 1;
    }
    (star, &pattern[..i], &pattern[i..])
}

/// `utf8.DecodeRuneInString`: the character and its length (U+FFFD and 1 for a bad
/// byte, length 0 at the end).
fn decode(s: &[u8]) -> (char, usize) {
    if s.is_empty() {
        return ('\u{FFFD}', 0);
    }
    let len = match s[0] {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => return ('\u{FFFD}', 1),
    };
    match s.get(..len).and_then(|b| std::str::from_utf8(b).ok()) {
        Some(text) => (text.chars().next().unwrap_or('\u{FFFD}'), len),
        None => ('\u{FFFD}', 1),
    }
}

/// `getEsc`: one (maybe escaped) class character and the rest; `None` for a bad class.
fn get_esc(chunk: &[u8]) -> Option<(char, &[u8])> {
    let mut chunk = chunk;
    if matches!(chunk.first(), None | Some(b'-' | b']')) {
        return None;
    }
    if chunk[0] == b'\\' {
        chunk = &chunk[1..];
        if chunk.is_empty() {
            return None;
        }
    }
    let (r, n) = decode(chunk);
    if r == '\u{FFFD}' && n == 1 {
        return None;
    }
    let rest = &chunk[n..];
    if rest.is_empty() {
        return None;
    }
    Some((r, rest))
}

/// `matchChunk`: whether `chunk` matches the start of `s`, and what is left of `s`. A
/// failed match still reads the whole chunk, so a malformed one is always an error.
fn match_chunk<'s>(mut chunk: &[u8], mut s: &'s [u8]) -> Option<(&'s [u8], bool)> {
    let mut failed = false;
    while !chunk.is_empty() {
        if !failed && s.is_empty() {
            failed = true;
        }
        match chunk[0] {
            b'[' => {
                let mut r = '\0';
                if !failed {
                    let (c, n) = decode(s);
                    r = c;
                    s = &s[n..];
                }
                chunk = &chunk[1..];
                let negated = chunk.first() == Some(&b'^');
                if negated {
                    chunk = &chunk[1..];
                }
                let mut hit = false;
                let mut ranges = 0;
                loop {
                    if chunk.first() == Some(&b']') && ranges > 0 {
                        chunk = &chunk[1..];
                        break;
                    }
                    let (lo, rest) = get_esc(chunk)?;
                    chunk = rest;
                    let mut hi = lo;
                    if chunk[0] == b'-' {
                        let (h, rest) = get_esc(&chunk[1..])?;
                        hi = h;
                        chunk = rest;
                    }
                    if lo <= r && r <= hi {
                        hit = true;
                    }
                    ranges += 1;
                }
                if hit == negated {
                    failed = true;
                }
            }
            b'?' => {
                if !failed {
                    if s[0] == b'/' {
                        failed = true;
                    }
                    let (_, n) = decode(s);
                    s = &s[n..];
                }
                chunk = &chunk[1..];
            }
            c => {
                let c = if c == b'\\' {
                    chunk = &chunk[1..];
                    *chunk.first()?
                } else {
                    c
                };
                if !failed {
                    if c != s[0] {
                        failed = true;
                    }
                    s = &s[1..];
                }
                chunk = &chunk[1..];
            }
        }
    }
    Some(if failed { (&s[..0], false) } else { (s, true) })
}

#[cfg(test)]
mod go_differential {
    //! `go_match` against Go's own `path/filepath.Match` on generated patterns and names.

    use super::go_match;
    use crate::go_oracle;

    const ANSWER: &str = r#"
func answer(in string) string {
	var pair []string
	if err := json.Unmarshal([]byte(in), &pair); err != nil {
		panic(err)
	}
	ok, err := filepath.Match(pair[0], pair[1])
	if err != nil {
		return "bad"
	}
	return fmt.Sprint(ok)
}
"#;

    #[test]
    fn patterns_match_as_gos_filepath_match() {
        let dir = tempfile::tempdir().expect("tempdir");
        let Some(bin) = go_oracle::build(
            dir.path(),
            &go_oracle::program(&["encoding/json", "fmt", "path/filepath"], ANSWER),
            "match",
            "",
            "golang-go",
        ) else {
            return;
        };
        const P: &[&str] = &[
            "a", "b", "é", "/", "*", "?", "[", "]", "^", "-", "\\", "[a-c]", "[^a]", "[]", "[\\]]",
            "[a-]", "[é-ü]", "**", ".",
        ];
        const N: &[&str] = &["a", "b", "c", "é", "ö", "/", "-", "]", "^", ".", "\\", "*"];
        let mut seed: u64 = 0x5eed_1234_abcd_ef01;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut cases = Vec::new();
        for _ in 0..20_000 {
            let p: String = (0..1 + next(5)).map(|_| P[next(P.len())]).collect();
            let n: String = (0..next(6)).map(|_| N[next(N.len())]).collect();
            cases.push((p, n));
        }
        let inputs: Vec<String> = cases
            .iter()
            .map(|(p, n)| serde_json::to_string(&[p, n]).expect("json"))
            .collect();
        let answers = go_oracle::answers(&bin, &inputs);
        let differ: Vec<String> = cases
            .iter()
            .zip(&answers)
            .filter_map(|((p, n), want)| {
                let got = match go_match(p, n) {
                    None => "bad".to_string(),
                    Some(b) => b.to_string(),
                };
                (&got != want).then(|| format!("{p:?} on {n:?}: go {want}, ours {got}"))
            })
            .collect();
        assert!(
            differ.is_empty(),
            "{} differ:\n{}",
            differ.len(),
            differ[..differ.len().min(20)].join("\n")
        );
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
