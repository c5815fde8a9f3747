//! Walking a piece of Starlark source text outside its string literals, with the
//! bracket depth, for the few places that read source text without parsing it
//! (a `while` header's colon, a call's arguments, error sites).

/// Each character of `s` outside string literals (quotes included), with its byte
/// offset and the bracket depth before it.
pub(super) fn outside_strings(s: &str) -> impl Iterator<Item = (usize, char, i32)> + '_ {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    s.char_indices().filter_map(move |(i, c)| {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            return None;
        }
        let before = depth;
        match c {
            '"' | '\'' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        Some((i, c, before))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_skipped_and_depth_counted() {
        let seen: Vec<(char, i32)> = outside_strings("f(\"a,)\", [b])")
            .map(|(_, c, d)| (c, d))
            .collect();
        assert_eq!(
            seen,
            vec![
                ('f', 0),
                ('(', 0),
                ('"', 1),
                (',', 1),
                (' ', 1),
                ('[', 1),
                ('b', 2),
                (']', 2),
                (')', 1)
            ]
        );
    }
}
