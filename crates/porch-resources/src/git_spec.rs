//! Checks of the `spec.git` / `spec.oci` strings of a Repository that reach git or a registry:
//! the URL must be one git reads as a URL (never as an option, never a remote helper such as
//! `ext::`), and the directory a relative path inside the repository.

/// Why `url` is not a git URL this server accepts, if it is not.
///
/// Accepted: `http(s)://`, `ssh://`, `git+ssh://`, `git://` and `file://` URLs with a host (or a
/// path for `file://`), scp-like `[user@]host:path`, and absolute paths.
pub fn url_problem(url: &str) -> Option<&'static str> {
    if url.starts_with('-') {
        return Some("must not start with '-' (git would read it as an option)");
    }
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Some("must not contain whitespace or control characters");
    }
    if let Some((scheme, rest)) = url.split_once("://") {
        return match scheme.to_ascii_lowercase().as_str() {
            "file" => (rest.len() <= 1 && !rest.starts_with('/'))
                .then_some("a file:// URL needs an absolute path"),
            "http" | "https" | "ssh" | "git" | "git+ssh" | "ssh+git" => {
                let authority = rest.split('/').next().unwrap_or("");
                let host = authority.rsplit('@').next().unwrap_or("");
                (host.is_empty() || host.starts_with('-') || host.starts_with(':'))
                    .then_some("the URL has no host")
            }
            _ => Some("unsupported URL scheme; use http(s)://, ssh://, git:// or file://"),
        };
    }
    if url.starts_with('/') {
        return None;
    }
    if scp_like(url) {
        return None;
    }
    Some(
        "not a git URL: use http(s)://, ssh://, git://, file://, user@host:path or an absolute path",
    )
}

/// `[user@]host:path` as git reads it: no `/` before the first `:`, a host name, a path that is
/// not empty and does not start with `:` (`<helper>::<address>` runs a remote helper).
fn scp_like(url: &str) -> bool {
    let Some((before, path)) = url.split_once(':') else {
        return false;
    };
    let host = match before.rsplit_once('@') {
        Some((user, host)) if !user.is_empty() => host,
        Some(_) => return false,
        None => before,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    !host.is_empty()
        && !host.starts_with('-')
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-_:".contains(c))
        && !path.is_empty()
        && !path.starts_with(':')
}

/// Why `dir` is not a directory inside the repository, if it is not. A leading `/` means the
/// repository root (`directory: /` is what Porch's examples use).
pub fn directory_problem(dir: &str) -> Option<&'static str> {
    if dir.contains('\0') {
        return Some("must not contain NUL");
    }
    if dir.chars().any(char::is_control) {
        return Some("must not contain control characters");
    }
    if dir.starts_with('-') {
        return Some("must not start with '-'");
    }
    if dir.starts_with("//") {
        return Some("must be a path inside the repository");
    }
    if dir.split(['/', '\\']).any(|c| c == "..") {
        return Some("must not contain a '..' path component");
    }
    None
}

/// Why `registry` (`spec.oci.registry`, e.g. `us-docker.pkg.dev/project/repo`) is not a
/// registry reference, if it is not.
pub fn oci_registry_problem(registry: &str) -> Option<&'static str> {
    if registry.starts_with('-') {
        return Some("must not start with '-'");
    }
    if registry
        .chars()
        .any(|c| c.is_control() || c.is_whitespace())
    {
        return Some("must not contain whitespace or control characters");
    }
    if registry.split('/').any(|c| c == "..") {
        return Some("must not contain a '..' path component");
    }
    None
}

/// Why `branch` is not a branch name git accepts as such, if it is not.
pub fn branch_problem(branch: &str) -> Option<&'static str> {
    if branch.starts_with('-') {
        return Some("must not start with '-' (git would read it as an option)");
    }
    if branch.starts_with('/') || branch.ends_with('/') || branch.ends_with(".lock") {
        return Some("not a valid branch name");
    }
    if branch.contains("..")
        || branch.contains("@{")
        || branch.contains("//")
        || branch
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || "~^:?*[\\".contains(c))
    {
        return Some("not a valid branch name");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_urls() {
        for ok in [
            "https://github.com/nephio-project/catalog.git",
            "http://127.0.0.1:8080/r.git",
            "ssh://git@host:22/org/r.git",
            "git://host/r.git",
            "git+ssh://git@host/r",
            "file:///tmp/r.git",
            "git@github.com:org/repo.git",
            "host.example:repo",
            "/srv/git/r.git",
        ] {
            assert_eq!(url_problem(ok), None, "{ok}");
        }
        for bad in [
            "not a url",
            "--upload-pack=touch /tmp/x",
            "-oProxyCommand=x",
            "ext::sh -c touch% /tmp/pwned",
            "ext::sh",
            "relative/path",
            "https://",
            "https://-oProxy/x",
            "ftp://host/r",
            "file://",
            "https://h/r\ngit",
            "@host:path",
            "host:",
        ] {
            assert!(url_problem(bad).is_some(), "{bad}");
        }
        assert!(
            url_problem("--upload-pack=x").is_some_and(|m| m.contains("option")),
            "an option-like URL says why"
        );
    }

    #[test]
    fn directories() {
        for ok in ["", "/", "packages", "/packages/", "a/b.c/d", "a..b"] {
            assert_eq!(directory_problem(ok), None, "{ok}");
        }
        for bad in [
            "../..", "a/../b", "..", "a/..", "a\0b", "--x", "//etc", "a\\..\\b",
        ] {
            assert!(directory_problem(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn oci_registries() {
        assert_eq!(oci_registry_problem("us-docker.pkg.dev/p/r"), None);
        for bad in ["-x", "a b", "r/../x", "r\0"] {
            assert!(oci_registry_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn branches() {
        for ok in ["main", "feature/x", "release-1.2"] {
            assert_eq!(branch_problem(ok), None, "{ok}");
        }
        for bad in ["-x", "--orphan", "a..b", "a b", "/x", "x/", "a:b", "x.lock"] {
            assert!(branch_problem(bad).is_some(), "{bad}");
        }
    }
}
