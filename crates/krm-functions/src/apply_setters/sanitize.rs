//! Result values that may hold secrets are redacted, long ones truncated,
//! as the current catalog apply-setters does before putting a value into a
//! result message (results end up in Kptfile status and logs).

use std::sync::LazyLock;

use regex::Regex;

/// Longest value shown in full.
const MAX_LOGGED_VALUE_LEN: usize = 128;
/// What a secret-looking value is shown as.
const REDACTED: &str = "<redacted>";

/// Field paths or setter names containing one of these are always redacted.
const SENSITIVE_KEYWORDS: [&str; 14] = [
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "credential",
    "privatekey",
    "private_key",
    "cert",
    "certificate",
    "bearer",
    "auth",
];

/// Well-known credential shapes (PEM, JWT, AWS, GitHub, OpenAI-style, Slack).
static SECRET_PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"-----BEGIN [A-Z ]+-----",
        r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
        r"AKIA[0-9A-Z]{16}",
        r"ghp_[A-Za-z0-9]{36,}",
        r"sk-[A-Za-z0-9]{20,}",
        r"xox[baprs]-[A-Za-z0-9-]+",
    ]
    .iter()
    .filter_map(|p| Regex::new(p).ok())
    .collect()
});

/// A value safe to put into a result: redacted when it looks like a secret
/// (by field path, setter names in `pattern`, or content), else truncated.
pub(crate) fn sanitize(value: &str, field_path: &str, setter_names: &[&str]) -> String {
    if looks_like_secret(value, field_path, setter_names) {
        return REDACTED.to_string();
    }
    truncate(value)
}

fn looks_like_secret(value: &str, field_path: &str, setter_names: &[&str]) -> bool {
    let sensitive = |s: &str| {
        let lower = s.to_lowercase();
        SENSITIVE_KEYWORDS.iter().any(|k| lower.contains(k))
    };
    if sensitive(field_path) || setter_names.iter().any(|n| sensitive(n)) {
        return true;
    }
    !value.is_empty()
        && (SECRET_PATTERNS.iter().any(|r| r.is_match(value)) || is_long_base64_like(value))
}

/// 40+ characters, (almost) all base64 alphabet, mixing at least two of
/// upper case, lower case, digits and `+/=`.
fn is_long_base64_like(value: &str) -> bool {
    if value.len() < 40 {
        return false;
    }
    let (mut upper, mut lower, mut digit, mut symbol) = (false, false, false, false);
    for c in value.chars() {
        match c {
            c if c.is_uppercase() => upper = true,
            c if c.is_lowercase() => lower = true,
            c if c.is_numeric() => digit = true,
            '+' | '/' | '=' => symbol = true,
            _ => return false,
        }
    }
    [upper, lower, digit, symbol].iter().filter(|b| **b).count() >= 2
}

fn truncate(value: &str) -> String {
    if value.len() <= MAX_LOGGED_VALUE_LEN {
        return value.to_string();
    }
    let mut cut = MAX_LOGGED_VALUE_LEN;
    while !value.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}... (truncated {} chars)",
        &value[..cut],
        value.len() - MAX_LOGGED_VALUE_LEN
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_and_truncates() {
        assert_eq!(sanitize("nginx:1.2", "spec.image", &["tag"]), "nginx:1.2");
        assert_eq!(sanitize("x", "data.password", &[]), REDACTED);
        assert_eq!(sanitize("x", "data.a", &["db-token"]), REDACTED);
        assert_eq!(sanitize("AKIAABCDEFGHIJKLMNOP", "a", &[]), REDACTED);
        assert_eq!(sanitize(&"aB3".repeat(20), "a", &[]), REDACTED);
        let long = "a-".repeat(100);
        assert_eq!(
            sanitize(&long, "a", &[]),
            format!("{}... (truncated 72 chars)", &long[..128])
        );
    }
}
