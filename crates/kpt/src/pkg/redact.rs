//! Remote URLs as they may be shown: in logs, statuses, error messages, directory and thread
//! names. A URL may carry credentials (`https://user:secret@host/repo.git`); everything that
//! displays a URL goes through [`redact_url`], and text from git that may quote it through
//! [`scrub`].

/// `url` without its password: `https://user:***@host/r.git`. An HTTP user name without a
/// password is often a token (`https://<token>@github.com/...`) and is replaced too; an SSH
/// user name (`ssh://git@host/...`) is kept.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    let http = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
    let shown = match userinfo.split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        None if http => "***".to_owned(),
        None => userinfo.to_owned(),
    };
    format!("{scheme}://{shown}@{host}{path}")
}

/// Whether [`redact_url`] hides something of `url`.
pub fn has_secret(url: &str) -> bool {
    redact_url(url) != url
}

/// `text` (git's messages) with `url` and the secret part of its user info replaced.
pub fn scrub(text: &str, url: &str) -> String {
    if !has_secret(url) {
        return text.to_owned();
    }
    let mut out = text.replace(url, &redact_url(url));
    if let Some(secret) = secret_of(url).filter(|s| !s.is_empty()) {
        out = out.replace(secret, "***");
    }
    out
}

/// The password (or the token standing as an HTTP user name) of `url`.
fn secret_of(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let (userinfo, _) = authority.rsplit_once('@')?;
    Some(userinfo.split_once(':').map_or(userinfo, |(_, p)| p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(
            redact_url("https://user:secret@host/repo.git"),
            "https://user:***@host/repo.git"
        );
        assert_eq!(
            redact_url("http://u:p%40ss@127.0.0.1:8080/a/b.git"),
            "http://u:***@127.0.0.1:8080/a/b.git"
        );
        assert_eq!(
            redact_url("https://ghp_token@github.com/o/r"),
            "https://***@github.com/o/r"
        );
        assert_eq!(
            redact_url("ssh://git:pw@host:22/r.git"),
            "ssh://git:***@host:22/r.git"
        );
    }

    #[test]
    fn urls_without_secrets_are_unchanged() {
        for u in [
            "https://github.com/o/r.git",
            "ssh://git@host/r.git",
            "file:///tmp/r.git",
            "http://h/path@with-at",
            "not a url",
        ] {
            assert_eq!(redact_url(u), u);
            assert!(!has_secret(u));
        }
    }

    #[test]
    fn scrub_hides_the_url_and_the_secret() {
        let url = "https://user:s3cret@host/repo.git";
        let text = format!("fatal: unable to access '{url}': 401; retrying with s3cret");
        let out = scrub(&text, url);
        assert!(!out.contains("s3cret"), "{out}");
        assert!(out.contains("https://user:***@host/repo.git"), "{out}");
        assert_eq!(scrub("plain", "https://h/r"), "plain");
    }
}
