//! Result values that may hold secrets are redacted, long ones truncated,
//! as the current catalog apply-setters does before putting a value into a
//! result (results end up in Kptfile status and logs).

use super::secret_scan;

/// Longest value shown in full, in characters.
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

/// A value safe to put into a result: redacted when it looks like a secret
/// (by field path, setter names in the pattern, or content), else truncated.
pub(crate) fn sanitize(value: &str, field_path: &str, setter_names: &[&str]) -> String {
    let sensitive = |s: &str| {
        let lower = secret_scan::go_lower(s);
        SENSITIVE_KEYWORDS.iter().any(|k| lower.contains(k))
    };
    if sensitive(field_path)
        || setter_names.iter().any(|n| sensitive(n))
        || secret_scan::matches(value)
    {
        return REDACTED.to_string();
    }
    truncate(value)
}

/// The first 128 characters; the count of what was cut is in bytes, as the
/// catalog computes it (`len(value) - 128`).
fn truncate(value: &str) -> String {
    match value.char_indices().nth(MAX_LOGGED_VALUE_LEN) {
        None => value.to_string(),
        Some((cut, _)) => format!(
            "{}... (truncated {} chars)",
            &value[..cut],
            value.len() - MAX_LOGGED_VALUE_LEN
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_and_truncates() {
        assert_eq!(sanitize("nginx:1.2", "spec.image", &["tag"]), "nginx:1.2");
        assert_eq!(sanitize("x", "data.password", &[]), REDACTED);
        assert_eq!(sanitize("x", "data.a", &["db-token"]), REDACTED);
        assert_eq!(sanitize("AKIAQX7TR2VNB5KLM3PD", "a", &[]), REDACTED);
        // AWS's documentation key is not one.
        assert_eq!(
            sanitize("AKIAQX7TR2VNBEXAMPLE", "a", &[]),
            "AKIAQX7TR2VNBEXAMPLE"
        );
        assert_eq!(sanitize(&"aB3".repeat(20), "a", &[]), REDACTED);
        let long = "a-".repeat(100);
        assert_eq!(
            sanitize(&long, "a", &[]),
            format!("{}... (truncated 72 chars)", &long[..128])
        );
        // 130 two-byte characters: 128 are kept, 260 - 128 bytes "cut".
        let wide = "é".repeat(130);
        assert_eq!(
            sanitize(&wide, "a", &[]),
            format!("{}... (truncated 132 chars)", "é".repeat(128))
        );
    }
}
