//! Go's quoting of strings (`strconv.Quote`, `%q`), for messages that must read as the Go
//! tools print them.

/// Go's `strconv.Quote`: printable characters as they are, `"` and backslash escaped,
/// the C escapes for control characters, `\xNN` for other ASCII controls and `\uNNNN` /
/// `\UNNNNNNNN` for non-printable characters beyond ASCII.
pub fn go_quote(s: &str) -> String {
    go_quote_with(s, false)
}

/// `strconv.Quote`, or `strconv.QuoteToASCII` with `ascii_only` (every non-ASCII
/// character escaped).
pub fn go_quote_with(s: &str, ascii_only: bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        push_escaped(&mut out, c, '"', ascii_only);
    }
    out.push('"');
    out
}

/// `c` as Go's strconv quoting writes it between `quote` characters (`"` for `Quote`,
/// `'` for `QuoteRune`): the quote and backslash escaped, printable characters as they
/// are (ASCII ones only with `ascii_only`), then the C escapes, `\xNN`, `\uNNNN`,
/// `\UNNNNNNNN`.
pub fn push_escaped(out: &mut String, c: char, quote: char, ascii_only: bool) {
    match c {
        _ if c == quote || c == '\\' => {
            out.push('\\');
            out.push(c);
        }
        _ if is_print(c) && (!ascii_only || c.is_ascii()) => out.push(c),
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        _ if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
        _ if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
        _ => out.push_str(&format!("\\U{:08x}", c as u32)),
    }
}

/// Go's `strconv.IsPrint`: printable ASCII and space, and the non-ASCII characters
/// [`printable`] lets through.
pub fn is_print(c: char) -> bool {
    if c.is_ascii() {
        (' '..='~').contains(&c)
    } else {
        printable(c)
    }
}

/// Go's `strconv.IsPrint` for non-ASCII characters, approximately: controls,
/// spaces other than U+0020, format characters and private-use code points
/// are not printable.
fn printable(c: char) -> bool {
    let u = c as u32;
    !(c.is_control()
        || c.is_whitespace()
        || matches!(u, 0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x180e)
        || matches!(u, 0x200b..=0x200f | 0x202a..=0x202e | 0x2060..=0x206f)
        || matches!(u, 0xfeff | 0xfff9..=0xfffb | 0xe000..=0xf8ff)
        || matches!(u, 0xf0000..=0x10ffff))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_quote_escapes_as_strconv_quote() {
        assert_eq!(go_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(go_quote("\t\u{7}\u{1b}\u{7f}"), "\"\\t\\a\\x1b\\x7f\"");
        assert_eq!(go_quote("héllo ✓"), "\"héllo ✓\"");
        assert_eq!(go_quote("\u{85}"), "\"\\u0085\"");
        // Spaces beyond ASCII and format characters are not printable either.
        assert_eq!(go_quote("\u{a0}\u{200b}"), "\"\\u00a0\\u200b\"");
    }
}
