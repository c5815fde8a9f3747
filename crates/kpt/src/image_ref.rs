//! Function image references checked as kpt HEAD checks them: its
//! `ValidateFunctionImageURL` is `distribution/reference.Parse`, whose digest part goes
//! through `go-digest`. Only the syntax is checked here; resolving a name against a
//! registry (default prefixes, `docker.io`) belongs to the container runtime.

use std::sync::OnceLock;

use regex::Regex;

/// The longest repository path `Parse` accepts.
const PATH_MAX: usize = 255;

/// Why a reference does not parse, in the Go packages' words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReferenceError {
    #[error("repository name must have at least one component")]
    NameEmpty,
    #[error("repository name must be lowercase")]
    NameContainsUppercase,
    #[error("invalid reference format")]
    InvalidFormat,
    #[error("repository name must not be more than 255 characters")]
    NameTooLong,
    #[error("invalid checksum digest format")]
    DigestInvalidFormat,
    #[error("invalid checksum digest length")]
    DigestInvalidLength,
    #[error("unsupported digest algorithm")]
    DigestUnsupported,
}

/// The grammar of distribution/reference's `regexp.go`. Go's `\w` is ASCII, so it is
/// spelled out.
struct Grammar {
    reference: Regex,
    anchored_name: Regex,
    digest_anchored: Regex,
}

fn grammar() -> Option<&'static Grammar> {
    static GRAMMAR: OnceLock<Option<Grammar>> = OnceLock::new();
    GRAMMAR
        .get_or_init(|| {
            let alphanumeric = "[a-z0-9]+";
            let separator = "(?:[._]|__|[-]+)";
            let path_component = format!("{alphanumeric}(?:{separator}{alphanumeric})*");
            let domain_component = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
            let domain_name = format!(r"{domain_component}(?:\.{domain_component})*");
            let ipv6 = r"\[(?:[a-fA-F0-9:]+)\]";
            let domain_and_port = format!("(?:{domain_name}|{ipv6})(?::[0-9]+)?");
            let remote_name = format!("{path_component}(?:/{path_component})*");
            let name = format!("(?:{domain_and_port}/)?{remote_name}");
            let tag = "[0-9A-Za-z_][0-9A-Za-z_.-]{0,127}";
            let digest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}";
            Some(Grammar {
                reference: Regex::new(&format!("^({name})(?::({tag}))?(?:@({digest}))?$")).ok()?,
                anchored_name: Regex::new(&format!("^(?:({domain_and_port})/)?({remote_name})$"))
                    .ok()?,
                // go-digest's DigestRegexpAnchored.
                digest_anchored: Regex::new("^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$")
                    .ok()?,
            })
        })
        .as_ref()
}

/// `reference.Parse(s)`: `Ok` when `s` is `name[:tag][@digest]`.
pub fn parse(s: &str) -> Result<(), ReferenceError> {
    if s.is_empty() {
        return Err(ReferenceError::NameEmpty);
    }
    let g = grammar().ok_or(ReferenceError::InvalidFormat)?;
    let Some(caps) = g.reference.captures(s) else {
        let lower = go_to_lower(s);
        if lower != s && g.reference.is_match(&lower) {
            return Err(ReferenceError::NameContainsUppercase);
        }
        return Err(ReferenceError::InvalidFormat);
    };
    let name = caps.get(1).map_or("", |m| m.as_str());
    let path = g
        .anchored_name
        .captures(name)
        .and_then(|n| n.get(2))
        .map_or(name, |m| m.as_str());
    if path.len() > PATH_MAX {
        return Err(ReferenceError::NameTooLong);
    }
    match caps.get(3) {
        Some(d) => validate_digest(g, d.as_str()),
        None => Ok(()),
    }
}

/// Go's `strings.ToLower` as far as `Parse` can tell: the grammar is ASCII, so only
/// characters Go lowers to ASCII matter. Go maps each rune by its simple case mapping,
/// which takes `İ` (U+0130) to `i` and the Kelvin sign to `k`; Rust's `to_lowercase`
/// takes `İ` to `i` and a combining dot, which the grammar refuses, so `İmage` was
/// `invalid reference format` where kpt says `repository name must be lowercase`.
fn go_to_lower(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{130}' => 'i',
            '\u{212a}' => 'k',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// go-digest's `Digest.Validate` for the algorithms a Go binary registers by default.
fn validate_digest(g: &Grammar, d: &str) -> Result<(), ReferenceError> {
    let Some((algorithm, encoded)) = d
        .split_once(':')
        .filter(|(a, e)| !a.is_empty() && !e.is_empty())
    else {
        return Err(ReferenceError::DigestInvalidFormat);
    };
    let size = match algorithm {
        "sha256" => 32,
        "sha384" => 48,
        "sha512" => 64,
        _ if g.digest_anchored.is_match(d) => return Err(ReferenceError::DigestUnsupported),
        _ => return Err(ReferenceError::DigestInvalidFormat),
    };
    if encoded.len() != size * 2 {
        return Err(ReferenceError::DigestInvalidLength);
    }
    if !encoded
        .bytes()
        .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return Err(ReferenceError::DigestInvalidFormat);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_tags_and_digests() {
        let hex = "0123456789abcdef".repeat(4);
        for ok in [
            "my-fn",
            "fn:v1.2_rc-3",
            "registry.example:5000/team/sub/fn:1",
            "Registry-1.example/fn",
            "[fe80::1]:5000/fn",
            "a__b.c_d--e",
            &format!("reg.example/fn@sha256:{hex}"),
            // A tag and a digest together.
            &format!("fn:v2@sha256:{hex}"),
            &format!("fn:{}", "t".repeat(128)),
        ] {
            assert_eq!(parse(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn each_error() {
        let hex = "0123456789abcdef".repeat(4);
        let cases = [
            ("", ReferenceError::NameEmpty),
            ("team/Fn", ReferenceError::NameContainsUppercase),
            ("MyFn:v1", ReferenceError::NameContainsUppercase),
            ("fn:", ReferenceError::InvalidFormat),
            ("fn::v1", ReferenceError::InvalidFormat),
            ("reg.example//fn", ReferenceError::InvalidFormat),
            ("fn/", ReferenceError::InvalidFormat),
            ("a___b", ReferenceError::InvalidFormat),
            ("fn:.v1", ReferenceError::InvalidFormat),
            ("fn:v1é", ReferenceError::InvalidFormat),
            (
                &format!("fn:{}", "t".repeat(129)),
                ReferenceError::InvalidFormat,
            ),
            (
                &format!("reg.example/{}", "p".repeat(256)),
                ReferenceError::NameTooLong,
            ),
            (
                &format!("fn@sha256:{}", &hex[..60]),
                ReferenceError::DigestInvalidLength,
            ),
            (
                &format!("fn@sha256:{}", hex.to_uppercase()),
                ReferenceError::DigestInvalidFormat,
            ),
            (
                &format!("fn@md5:{}", &hex[..32]),
                ReferenceError::DigestUnsupported,
            ),
            (
                &format!("fn@SHA256:{hex}"),
                ReferenceError::DigestInvalidFormat,
            ),
        ];
        for (input, want) in cases {
            assert_eq!(parse(input), Err(want), "{input}");
        }
        // Go lowers `İ` to `i`: the name is refused for its case, not its format.
        assert_eq!(
            parse("\u{130}mage"),
            Err(ReferenceError::NameContainsUppercase)
        );
        assert_eq!(
            parse("team/\u{212a}ube"),
            Err(ReferenceError::NameContainsUppercase)
        );
        assert_eq!(
            parse("\u{130}mage\u{307}"),
            Err(ReferenceError::InvalidFormat)
        );
        // The domain may be long; only the path counts.
        assert_eq!(parse(&format!("{}.example/fn", "d".repeat(300))), Ok(()));
    }
}
