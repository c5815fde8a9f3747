//! Does a value look like a credential? The current catalog apply-setters
//! asks its secret scanner before putting a value into a result: rules for
//! well-known token shapes (taken there from the Betterleaks default config),
//! each with keywords that must appear, an optional entropy floor and guards
//! against look-alikes (templates, placeholders, UUIDs, hashes, URLs, paths),
//! then a test for long base64-like blobs.
//!
//! The catalog's patterns are Go RE2 syntax, where `\b`, `\w`, `\d` and `\s`
//! are ASCII-only; the Rust regex crate reads them as Unicode classes, so the
//! patterns below spell out the ASCII classes Go meant.

use std::sync::LazyLock;

use regex::Regex;

/// One detection rule.
struct Rule {
    pattern: &'static str,
    /// Lower-case words of which one must occur in the value (none: always).
    keywords: &'static [&'static str],
    /// Shannon entropy (bits per byte) the secret must reach; 0 for none.
    entropy_min: f64,
    /// The capture group holding the secret; 0 for the whole match.
    secret_group: usize,
    /// URLs are what this rule looks for, so URL-like matches count.
    allow_uri: bool,
    /// AWS's documentation keys end in `EXAMPLE`.
    skip_aws_example: bool,
}

const fn rule(pattern: &'static str, keywords: &'static [&'static str]) -> Rule {
    Rule {
        pattern,
        keywords,
        entropy_min: 0.0,
        secret_group: 0,
        allow_uri: false,
        skip_aws_example: false,
    }
}

/// Go's `\s` inside a class: `\t\n\f\r` and space.
macro_rules! ws {
    () => {
        r"\t\n\f\r "
    };
}

const RULES: &[Rule] = &[
    // pem-block
    rule(r"-----BEGIN [A-Z ]+-----", &["-----begin"]),
    // jwt
    Rule {
        entropy_min: 3.0,
        secret_group: 1,
        ..rule(
            concat!(
                r"(?-u:\b)(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9/_-]{17,}\.(?:[a-zA-Z0-9/_-]{10,}={0,2})?)",
                r#"(?:['"`]|["#,
                ws!(),
                r";]|$)"
            ),
            &["eyj"],
        )
    },
    // aws-access-key-id
    Rule {
        entropy_min: 3.0,
        secret_group: 1,
        skip_aws_example: true,
        ..rule(
            r"(?-u:\b)((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})(?-u:\b)",
            &["a3t", "akia", "asia", "abia", "acca"],
        )
    },
    // github-token
    rule(
        r"(?:ghp|gho|ghu|ghs)_[0-9a-zA-Z]{36}",
        &["ghp_", "gho_", "ghu_", "ghs_"],
    ),
    // github-fine-grained-pat
    rule(r"github_pat_[0-9A-Za-z_]{82}", &["github_pat_"]),
    // gitlab-pat
    Rule {
        entropy_min: 3.0,
        ..rule(r"glpat-[0-9A-Za-z_-]{20}", &["glpat-"])
    },
    // gcp-api-key
    Rule {
        entropy_min: 4.0,
        secret_group: 1,
        ..rule(
            concat!(
                r"(?-u:\b)(AIza[0-9A-Za-z_-]{35})",
                r#"(?:['"`]|["#,
                ws!(),
                r";]|$)"
            ),
            &["aiza"],
        )
    },
    // openai-api-key
    rule(
        concat!(
            r"(?-u:\b)(sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58}|[A-Za-z0-9_-]{20})",
            r"T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58}|[A-Za-z0-9_-]{20})",
            r"|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20})",
            r#"(?:['"`]|["#,
            ws!(),
            r";]|$)"
        ),
        &["t3blbkfj", "sk-proj", "sk-svcacct", "sk-admin"],
    ),
    // mongodb-connection-string
    Rule {
        entropy_min: 4.0,
        secret_group: 1,
        allow_uri: true,
        ..rule(
            concat!(
                r"(?-u:\b)(mongodb(?:\+srv)?://(?P<username>[!-9;-~]{3,50}):(?P<password>[!-?A-~]{3,88})",
                r"@(?P<host>(?:[a-zA-Z0-9][0-9A-Za-z_.-]+|[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3})(?::[0-9]{1,5})?",
                r"(?:,(?:[a-zA-Z0-9][0-9A-Za-z_.-]+|[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3})(?::[0-9]{1,5})?)*)",
                r"/?(?:(?P<authdb>[0-9A-Za-z_-]+)?(?P<options>\?[0-9A-Za-z_]+=[0-9A-Za-z_@/.$-]+",
                r"(?:&(?:amp;)?[0-9A-Za-z_]+=[0-9A-Za-z_@/.$-]+)*)?)?)",
                r#"(?:['"`;"#,
                ws!(),
                r"]|$)"
            ),
            &["mongodb://", "mongodb+srv://"],
        )
    },
    // credentialed-uri
    Rule {
        allow_uri: true,
        ..rule(
            concat!(
                r"(?i)(?-u:\b)(?:postgres(?:ql)?|mysql|redis|amqp)://[^",
                ws!(),
                r"/:@]{1,64}:[^",
                ws!(),
                r"@]{1,256}@"
            ),
            &[
                "postgres://",
                "postgresql://",
                "mysql://",
                "redis://",
                "amqp://",
            ],
        )
    },
    // slack-bot-token
    Rule {
        entropy_min: 3.0,
        ..rule(r"xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*", &["xoxb"])
    },
    // slack-app-token
    Rule {
        entropy_min: 2.0,
        ..rule(r"(?i)xapp-[0-9]-[A-Z0-9]+-[0-9]+-[a-z0-9]+", &["xapp"])
    },
    // stripe-secret-key
    Rule {
        entropy_min: 2.0,
        secret_group: 1,
        ..rule(
            concat!(
                r"(?-u:\b)((?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99})",
                r#"(?:['"`]|["#,
                ws!(),
                r";]|$)"
            ),
            &[
                "sk_test", "sk_live", "sk_prod", "rk_test", "rk_live", "rk_prod",
            ],
        )
    },
    // azure-ad-client-secret
    Rule {
        secret_group: 1,
        ..rule(
            concat!(
                r#"(?:^|[\\'"`"#,
                ws!(),
                r">=:(,)])([a-zA-Z0-9_~.]{3}[0-9]Q~[a-zA-Z0-9_~.-]{31,34})",
                r#"(?:$|[\\'"`"#,
                ws!(),
                r"<),])"
            ),
            &["q~"],
        )
    },
    // bearer-token
    rule(
        concat!(
            r"(?i)(?:(?-u:\b)Bearer[",
            ws!(),
            r"]+[A-Za-z0-9._~+/=-]{10,}|Authorization:[",
            ws!(),
            r"]*Bearer[",
            ws!(),
            r"]+[A-Za-z0-9._~+/=-]{10,})"
        ),
        &["bearer"],
    ),
    // basic-auth
    rule(
        concat!(r"(?i)(?-u:\b)Basic[", ws!(), r"]+[A-Za-z0-9+/=]{8,}"),
        &["basic"],
    ),
];

/// Words that mark a value as a stand-in rather than a secret.
const PLACEHOLDERS: [&str; 17] = [
    "REPLACE_ME",
    "REPLACE_THIS",
    "REPLACE_WITH",
    "YOUR_KEY",
    "YOUR_TOKEN",
    "YOUR_SECRET",
    "YOUR_API_KEY",
    "YOUR_PASSWORD",
    "INSERT_HERE",
    "INSERT_KEY",
    "INSERT_TOKEN",
    "PLACEHOLDER",
    "EXAMPLE_KEY",
    "EXAMPLE_TOKEN",
    "TODO",
    "FIXME",
    "XXXX",
];

/// The compiled rules and helper patterns; a pattern that does not compile
/// is `None` and never matches (the tests check that all do).
struct Compiled {
    rules: Vec<(Regex, &'static Rule)>,
    template_var: Option<Regex>,
    setter_ref: Option<Regex>,
    uuid: Option<Regex>,
    hex_only: Option<Regex>,
    host_port: Option<Regex>,
    /// One match per character, by the first class it is in: Go's
    /// `unicode.IsUpper`, `IsLower`, `IsDigit`, a base64 symbol, or none.
    char_class: Option<Regex>,
    letter_or_digit: Option<Regex>,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let re = |p: &str| Regex::new(p).ok();
    Compiled {
        rules: RULES
            .iter()
            .filter_map(|r| re(r.pattern).map(|c| (c, r)))
            .collect(),
        template_var: re(r"^(?:\{\{[^{}]+\}\}|\$\{[^{}]+\}|%\{[^{}]+\}|<[^<>]+>)$"),
        setter_ref: re(r"\$\{([^}]*)\}"),
        uuid: re(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"),
        hex_only: re(r"^[0-9a-fA-F]+$"),
        host_port: re(r"^[A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z0-9-]+:"),
        char_class: re(r"(\p{Lu})|(\p{Ll})|(\p{Nd})|([+/=])|(?s:.)"),
        letter_or_digit: re(r"[\p{L}\p{Nd}]"),
    }
});

fn is(re: &Option<Regex>, s: &str) -> bool {
    re.as_ref().is_some_and(|r| r.is_match(s))
}

/// Whether `value` looks like a credential.
pub(crate) fn matches(value: &str) -> bool {
    let c = &*COMPILED;
    if value.is_empty() || is_setter_template_only(c, value) {
        return false;
    }
    let lower = go_lower(value);
    for (re, rule) in &c.rules {
        if !rule.keywords.is_empty() && !rule.keywords.iter().any(|k| lower.contains(k)) {
            continue;
        }
        for caps in re.captures_iter(value) {
            let Some(whole) = caps.get(0) else { continue };
            // Go falls back to the whole match when the group did not take part.
            let secret = match caps.get(rule.secret_group) {
                Some(g) if rule.secret_group > 0 => g.as_str(),
                _ => whole.as_str(),
            };
            if secret.is_empty()
                || (rule.entropy_min > 0.0 && shannon_entropy(secret) < rule.entropy_min)
                || is_benign(c, rule, secret, value, whole.start(), whole.end())
            {
                continue;
            }
            return true;
        }
    }
    is_long_base64_like(value)
}

fn is_benign(
    c: &Compiled,
    rule: &Rule,
    secret: &str,
    value: &str,
    start: usize,
    end: usize,
) -> bool {
    let upper = go_upper(secret);
    is(&c.template_var, secret.trim())
        || PLACEHOLDERS.iter().any(|p| upper.contains(p))
        || (rule.skip_aws_example && upper.ends_with("EXAMPLE"))
        || is(&c.uuid, secret)
        || ([32, 40, 64].contains(&secret.len()) && is(&c.hex_only, secret))
        || (!rule.allow_uri && (secret.contains("://") || is(&c.host_port, secret)))
        || (!rule.allow_uri && start > 0 && on_path_boundary(value, start, end))
}

/// A value that is nothing but `${setter}` references (and punctuation), or
/// one template variable, is a template, not a secret.
fn is_setter_template_only(c: &Compiled, value: &str) -> bool {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return false;
    }
    if is(&c.template_var, trimmed) {
        return true;
    }
    let refs: Vec<&str> = c
        .setter_ref
        .iter()
        .flat_map(|r| r.find_iter(trimmed))
        .map(|m| m.as_str())
        .collect();
    if refs.is_empty() {
        return false;
    }
    let mut rest = trimmed.to_string();
    for r in refs {
        rest = rest.replace(r, "");
    }
    !is(&c.letter_or_digit, rest.trim())
}

/// The match touches a path or URL separator, so it is likely part of one.
fn on_path_boundary(value: &str, start: usize, end: usize) -> bool {
    const BOUNDARY: &[u8] = b"/\\:.@?=";
    let bytes = value.as_bytes();
    bytes[start..end].iter().any(|b| b"/\\:".contains(b))
        || (start > 0 && BOUNDARY.contains(&bytes[start - 1]))
        || (end < bytes.len() && BOUNDARY.contains(&bytes[end]))
}

/// Shannon entropy over bytes, in bits.
fn shannon_entropy(s: &str) -> f64 {
    let mut freq = [0usize; 256];
    for b in s.bytes() {
        freq[usize::from(b)] += 1;
    }
    let n = s.len() as f64;
    freq.iter()
        .filter(|&&f| f > 0)
        .map(|&f| {
            let p = f as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// 40+ bytes, nothing but letters, digits and `+/=` (90% of the bytes, as
/// Go counts characters against bytes), mixing at least two of upper case,
/// lower case, digits and symbols.
pub(crate) fn is_long_base64_like(value: &str) -> bool {
    if value.len() < 40 {
        return false;
    }
    let Some(char_class) = &COMPILED.char_class else {
        return false;
    };
    let mut seen = [false; 4];
    let mut count = 0usize;
    for caps in char_class.captures_iter(value) {
        let Some(class) = (1..=4).find(|&i| caps.get(i).is_some()) else {
            return false;
        };
        seen[class - 1] = true;
        count += 1;
    }
    if (count as f64) / (value.len() as f64) < 0.9 {
        return false;
    }
    seen.iter().filter(|s| **s).count() >= 2
}

/// Go's `strings.ToLower`: each character's simple lower-case mapping.
pub(crate) fn go_lower(s: &str) -> String {
    s.chars()
        .map(|c| c.to_lowercase().next().unwrap_or(c))
        .collect()
}

/// Go's `strings.ToUpper`: characters whose upper case is more than one
/// character (`ß`) have no simple mapping and stay as they are.
fn go_upper(s: &str) -> String {
    s.chars()
        .map(|c| {
            let mut up = c.to_uppercase();
            match (up.next(), up.next()) {
                (Some(u), None) => u,
                _ => c,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles() {
        for r in RULES {
            assert!(Regex::new(r.pattern).is_ok(), "{}", r.pattern);
        }
        assert_eq!(COMPILED.rules.len(), RULES.len());
        let c = &*COMPILED;
        for h in [
            &c.template_var,
            &c.setter_ref,
            &c.uuid,
            &c.hex_only,
            &c.host_port,
            &c.char_class,
            &c.letter_or_digit,
        ] {
            assert!(h.is_some());
        }
    }

    #[test]
    fn token_shapes_and_look_alikes() {
        let yes = [
            format!("ghp_{}", "Zq4".repeat(12)),
            format!("token github_pat_{}", "b".repeat(82)),
            "ASIAQX7TR2VNB5KLM3PD".to_string(),
            "mongodb://admin:hunter2x@db-1.internal:27017/app".to_string(),
            "redis://cache:s3cr3t@10.0.0.9:6379".to_string(),
            "-----BEGIN OPENSSH PRIVATE KEY-----".to_string(),
            "Authorization: Bearer abcdef0123456789".to_string(),
        ];
        for v in &yes {
            assert!(matches(v), "{v}");
        }
        let no = [
            // Too regular for an access key id.
            "ASIAAAAAAAAAAAAAAAAA",
            // AWS's documentation key.
            "AKIAQX7TR2VNBEXAMPLE",
            "registry.example.com/team/app:2.4.1",
            "${registry}/${image}:${tag}",
            "",
        ];
        for v in no {
            assert!(!matches(v), "{v}");
        }
    }

    #[test]
    fn base64_blobs_need_mixed_classes() {
        assert!(is_long_base64_like(&"Ab9+".repeat(10)));
        assert!(!is_long_base64_like(&"abcd".repeat(10)));
        // A character outside the alphabet rules the value out.
        assert!(!is_long_base64_like(&format!("{}-", "Ab9+".repeat(10))));
        // Non-ASCII letters count once but take two bytes: under 90%.
        assert!(!is_long_base64_like(&"Éa".repeat(20)));
    }
}
