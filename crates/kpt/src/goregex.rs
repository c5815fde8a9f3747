//! Go's `regexp` error text for the common syntax errors in a pattern (search-replace's
//! `by-value-regex`, a selector's `resourceFileRegexp`): `error parsing regexp: <code>: `<expr>``, found by
//! scanning the pattern the way Go's parser meets them, left to right.
//! Only consulted once the Rust regex crate has rejected the pattern; what
//! this scan does not recognise keeps the Rust text.

/// The Go error for `pattern`, if the scan recognises one.
pub fn error(pattern: &str) -> Option<String> {
    let fail = |code: &str, expr: &str| Some(format!("error parsing regexp: {code}: `{expr}`"));
    let bytes = pattern.as_bytes();
    // Open groups; whether the last thing parsed can take a repetition.
    let mut depth = 0usize;
    let mut can_repeat = false;
    // Where the previous token was a repetition operator (Perl forbids `a**`).
    let mut last_repeat: Option<usize> = None;
    let mut i = 0;
    while i < bytes.len() {
        let mut repeat_at = None;
        match bytes[i] {
            b'(' => {
                depth += 1;
                can_repeat = false;
                i += 1;
                if bytes.get(i) == Some(&b'?') {
                    // Flags or a named group: `(?i)`, `(?i:`, `(?P<n>`, `(?<n>`.
                    let start = i - 1;
                    i += 1;
                    if matches!(bytes.get(i), Some(b'P' | b'<')) {
                        let close = pattern[i..].find('>')?;
                        i += close + 1;
                    } else {
                        loop {
                            match bytes.get(i) {
                                Some(b'i' | b'm' | b's' | b'U' | b'-') => i += 1,
                                Some(b':') => {
                                    i += 1;
                                    break;
                                }
                                Some(b')') => {
                                    depth -= 1;
                                    i += 1;
                                    break;
                                }
                                Some(_) => {
                                    let end = i + pattern[i..].chars().next()?.len_utf8();
                                    return fail(
                                        "invalid or unsupported Perl syntax",
                                        &pattern[start..end],
                                    );
                                }
                                None => return fail("missing closing )", pattern),
                            }
                        }
                    }
                }
            }
            b')' => {
                if depth == 0 {
                    return fail("unexpected )", pattern);
                }
                depth -= 1;
                can_repeat = true;
                i += 1;
            }
            b'|' => {
                can_repeat = false;
                i += 1;
            }
            b'*' | b'+' | b'?' => {
                let start = i;
                i += 1;
                if bytes.get(i) == Some(&b'?') {
                    i += 1;
                }
                if let Some(prev) = last_repeat {
                    return fail("invalid nested repetition operator", &pattern[prev..i]);
                }
                if !can_repeat {
                    return fail(
                        "missing argument to repetition operator",
                        &pattern[start..i],
                    );
                }
                repeat_at = Some(start);
            }
            b'[' => {
                let start = i;
                i += 1;
                if bytes.get(i) == Some(&b'^') {
                    i += 1;
                }
                // A `]` first in the class is a literal.
                if bytes.get(i) == Some(&b']') {
                    i += 1;
                }
                loop {
                    match bytes.get(i) {
                        None => return fail("missing closing ]", &pattern[start..]),
                        Some(b']') => {
                            i += 1;
                            break;
                        }
                        Some(b'\\') => {
                            if i + 1 >= bytes.len() {
                                return fail("trailing backslash at end of expression", "");
                            }
                            i += 1 + pattern[i + 1..].chars().next()?.len_utf8();
                        }
                        Some(b'[') if bytes.get(i + 1) == Some(&b':') => {
                            i += pattern[i..].find(":]").map_or(1, |e| e + 2);
                        }
                        Some(_) => i += pattern[i..].chars().next()?.len_utf8(),
                    }
                }
                can_repeat = true;
            }
            b'\\' => {
                if i + 1 >= bytes.len() {
                    return fail("trailing backslash at end of expression", "");
                }
                if bytes[i + 1] == b'Q' {
                    // Literal text up to `\E` (or the end).
                    i += 2;
                    i = pattern[i..].find("\\E").map_or(bytes.len(), |e| i + e + 2);
                } else {
                    i += 1 + pattern[i + 1..].chars().next()?.len_utf8();
                }
                can_repeat = true;
            }
            _ => {
                i += pattern[i..].chars().next()?.len_utf8();
                can_repeat = true;
            }
        }
        last_repeat = repeat_at;
    }
    if depth > 0 {
        return fail("missing closing )", pattern);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::error;

    #[test]
    fn go_texts() {
        let cases = [
            (
                "nginx-(.*",
                "error parsing regexp: missing closing ): `nginx-(.*`",
            ),
            ("a)b", "error parsing regexp: unexpected ): `a)b`"),
            ("a[b-c", "error parsing regexp: missing closing ]: `[b-c`"),
            (
                "*a",
                "error parsing regexp: missing argument to repetition operator: `*`",
            ),
            (
                "(+)",
                "error parsing regexp: missing argument to repetition operator: `+`",
            ),
            (
                "a**",
                "error parsing regexp: invalid nested repetition operator: `**`",
            ),
            (
                "a*?+",
                "error parsing regexp: invalid nested repetition operator: `*?+`",
            ),
            (
                "ab\\",
                "error parsing regexp: trailing backslash at end of expression: ``",
            ),
            (
                "(?=x)",
                "error parsing regexp: invalid or unsupported Perl syntax: `(?=`",
            ),
        ];
        for (pattern, want) in cases {
            assert_eq!(error(pattern).as_deref(), Some(want), "{pattern}");
        }
        for ok in [
            "a*?b",
            "[]a]",
            "(?i:x)+",
            "(?P<n>x)",
            "\\Q(*\\E",
            "[[:alpha:]]+",
            "a|b*",
        ] {
            assert_eq!(error(ok), None, "{ok}");
        }
    }
}
