//! What a stream written back looks like: `text` with every carriage return that does
//! not start a CRLF turned into a line feed (a lone CR is a line break, as go-yaml reads
//! it, and is written back as a line feed). Shared by the property tests.

pub fn lone_cr_as_lf(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(if c == '\r' && chars.peek() != Some(&'\n') {
            '\n'
        } else {
            c
        });
    }
    out
}
