//! Go's quoting of strings (`strconv.Quote`, `%q`), for messages that must read as the Go
//! tools print them.

/// Go's `strconv.Quote`: printable characters as they are, `"` and backslash escaped,
/// the C escapes for control characters, `\xNN` for other ASCII controls and `\uNNNN` /
/// `\UNNNNNNNN` for non-printable characters beyond ASCII.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() || c == '\u{feff}' || c == '\u{ad}' => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
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
    }
}
