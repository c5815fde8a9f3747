//! The package argument of `kpt pkg get`: `REPO_URI[.git]/PKG_PATH[@VERSION]`,
//! split as kpt 1.0.0-beta does (`internal/util/parse`).
//!
//! The repository ends at the first `.git` followed by `/` or the end of the
//! argument (`.git@ref` counts too, as a repository URL ending in `.git`). Without
//! `.git`, only GitHub URLs are understood (`https://github.com/owner/repo[/path]`
//! and `.../tree/<ref>/<path>`, the repository being the first two path segments);
//! any other URL is ambiguous and refused, as kpt refuses it. Without a version the
//! remote's default branch is used ([`super::git::default_branch`]).

/// Errors parsing a package argument.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// No repository boundary can be found.
    #[error(
        "ambiguous repo/dir@version specify '.git' in argument: {0}\nhint: write the repository URL with '.git', e.g. https://host/org/repo.git/path/to/pkg@v1"
    )]
    Ambiguous(String),
    /// A `github.com` URL of an unknown form.
    #[error("invalid GitHub pkg url: {0}")]
    InvalidGitHub(String),
}

impl ParseError {
    /// A short machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            ParseError::Ambiguous(_) => "ambiguous-url",
            ParseError::InvalidGitHub(_) => "invalid-github-url",
        }
    }
}

/// A parsed package argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageUrl {
    /// Repository URL, without `.git`.
    pub repo: String,
    /// Directory in the repository, cleaned, with a leading `/`.
    pub directory: String,
    /// `None`: the remote's default branch.
    pub git_ref: Option<String>,
}

/// Split `arg`. `branches` lists a GitHub repository's branches; it is only called
/// for `github.com/<owner>/<repo>/tree/<ref>/...` URLs, where a branch whose name
/// continues `<ref>/` makes the ref ambiguous.
pub fn parse<E>(
    arg: &str,
    branches: impl FnOnce(&str) -> Result<Vec<String>, E>,
) -> Result<Result<PackageUrl, ParseError>, E> {
    if git_suffix(arg).is_some() {
        return Ok(Ok(from_pkg_url(arg)));
    }
    if arg.contains("github.com") {
        // kpt feeds `repo.git@ref` (from `.../tree/<ref>`) to its `.git/` splitter,
        // which takes the whole string for the repository; split it as the
        // `.git@ref` form it is.
        return Ok(from_github_url(arg, branches)?.and_then(|u| {
            if git_suffix(&u).is_some() {
                Ok(from_pkg_url(&u))
            } else {
                without_git_suffix(&u)
            }
        }));
    }
    Ok(without_git_suffix(arg))
}

/// Where `.git` followed by `/` or the end first occurs: (start, end of match).
fn git_suffix(s: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(i) = s[from..].find(".git") {
        let at = from + i;
        let after = at + 4;
        match s[after..].chars().next() {
            None => return Some((at, after)),
            Some('/') => return Some((at, after + 1)),
            Some(_) => from = after,
        }
    }
    None
}

/// kpt `parse.URL`: repository up to `.git`, then `dir[@ref]`.
fn from_pkg_url(url: &str) -> PackageUrl {
    let (repo, rest) = match git_suffix(url) {
        Some((start, end)) => (&url[..start], &url[end..]),
        None => (url, ""),
    };
    let (dir, git_ref) = if rest.is_empty() {
        (String::new(), None)
    } else if rest.contains('@') {
        let mut parts = rest.split('@');
        let dir = parts.next().unwrap_or_default();
        let r = parts.next().unwrap_or_default();
        (
            format!("/{dir}"),
            Some(r.strip_suffix('/').unwrap_or(r).to_string()),
        )
    } else {
        (format!("/{rest}"), None)
    };
    PackageUrl {
        repo: repo.to_string(),
        directory: clean(if dir.is_empty() { "/" } else { &dir }),
        git_ref: git_ref.filter(|r| !r.is_empty()),
    }
}

/// kpt `pkgURLFromGHURL`: a GitHub web URL as a `.git` package URL.
fn from_github_url<E>(
    v: &str,
    branches: impl FnOnce(&str) -> Result<Vec<String>, E>,
) -> Result<Result<String, ParseError>, E> {
    let v = v.strip_suffix('/').unwrap_or(v);
    let invalid_url = || ParseError::InvalidGitHub(v.to_string());
    let Some((scheme, rest)) = v.split_once("://") else {
        return Ok(Err(invalid_url()));
    };
    if !rest.starts_with("github.com") {
        return Ok(Err(invalid_url()));
    }
    let parts: Vec<&str> = rest.split('/').collect();
    if parts.len() < 3 {
        return Ok(Err(invalid_url()));
    }
    let repo = format!("{scheme}://{}", join(&parts[..3]));
    if parts.len() == 3 {
        return Ok(Ok(format!("{repo}.git")));
    }
    if parts[3] == "tree" && parts.len() > 4 {
        let version = parts[4];
        let dir = join(&parts[5..]);
        let prefix = format!("{version}/");
        if branches(&repo)?.iter().any(|b| b.contains(&prefix)) {
            return Ok(Err(ParseError::Ambiguous(v.to_string())));
        }
        return Ok(Ok(if dir.is_empty() {
            format!("{repo}.git@{version}")
        } else {
            format!("{repo}.git/{dir}@{version}")
        }));
    }
    Ok(Ok(format!("{repo}.git/{}", join(&parts[3..]))))
}

/// kpt `getURIAndVersion` + `getRepoAndPkg` for arguments without `.git/`: only a
/// URL ending in `.git` (before `@version`) names its repository.
fn without_git_suffix(arg: &str) -> Result<PackageUrl, ParseError> {
    let ambiguous = || ParseError::Ambiguous(arg.to_string());
    if arg.matches("://").count() > 1 || arg.matches('@').count() > 2 {
        return Err(ambiguous());
    }
    let Some((scheme, rest)) = arg.split_once("://") else {
        return Err(ambiguous());
    };
    // The version starts at the first `@` of the path: kpt splits at the very first
    // `@`, which refuses `ssh://git@host/repo.git@v1`.
    let path_from = scheme.len() + 3 + rest.find('/').unwrap_or(rest.len());
    let (uri, version) = match arg[path_from..].find('@') {
        Some(i) => (
            &arg[..path_from + i],
            Some(arg[path_from + i + 1..].to_string()),
        ),
        None => (arg, None),
    };
    let trimmed = uri.strip_suffix('/').unwrap_or(uri);
    let Some(repo) = trimmed.strip_suffix(".git") else {
        return Err(ambiguous());
    };
    Ok(PackageUrl {
        repo: repo.to_string(),
        directory: "/".into(),
        git_ref: version.filter(|v| !v.is_empty()),
    })
}

/// Go `path.Join` of URL segments (empty segments dropped, then cleaned).
fn join(parts: &[&str]) -> String {
    let joined = parts
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("/");
    if joined.is_empty() {
        return String::new();
    }
    clean(&joined)
}

/// Go `path.Clean`: no empty or `.` segments, `..` resolved, no trailing slash.
pub fn clean(p: &str) -> String {
    let rooted = p.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if out.last().is_some_and(|s| *s != "..") {
                    out.pop();
                } else if !rooted {
                    out.push("..");
                }
            }
            s => out.push(s),
        }
    }
    let body = out.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(arg: &str) -> Result<PackageUrl, ParseError> {
        parse(arg, |_| {
            Ok::<_, ()>(vec!["main".into(), "feature/x".into()])
        })
        .expect("branches")
    }

    fn ok(arg: &str) -> (String, String, Option<String>) {
        let u = p(arg).expect(arg);
        (u.repo, u.directory, u.git_ref)
    }

    fn t(repo: &str, dir: &str, r: Option<&str>) -> (String, String, Option<String>) {
        (repo.into(), dir.into(), r.map(str::to_string))
    }

    #[test]
    fn git_suffix_splits_repository_directory_and_ref() {
        assert_eq!(
            ok("https://h/org/repo.git/a/b@v1"),
            t("https://h/org/repo", "/a/b", Some("v1"))
        );
        assert_eq!(
            ok("file:///x/up.git/a/pkg/"),
            t("file:///x/up", "/a/pkg", None)
        );
        assert_eq!(ok("file:///x/up.git"), t("file:///x/up", "/", None));
        assert_eq!(
            ok("file:///x/up.git/@v1/"),
            t("file:///x/up", "/", Some("v1"))
        );
        assert_eq!(ok("/x/up.git/a//b@v1"), t("/x/up", "/a/b", Some("v1")));
        // `.git` inside a name is no boundary
        assert_eq!(
            ok("https://h/my.gitops/r.git/p@main"),
            t("https://h/my.gitops/r", "/p", Some("main"))
        );
        // `.git@ref`: the whole URI is the repository
        assert_eq!(
            ok("file:///x/up.git@v1"),
            t("file:///x/up", "/", Some("v1"))
        );
        assert_eq!(
            ok("ssh://git@h:22/r.git@v2"),
            t("ssh://git@h:22/r", "/", Some("v2"))
        );
    }

    #[test]
    fn without_git_only_github_urls_are_understood() {
        for arg in [
            "file:///x/up/a/pkg@v1",
            "https://h/org/repo/path@v1",
            "https://h/org/repo",
            "up@v1",
            "a://b://c.git@v1",
        ] {
            let e = p(arg).expect_err(arg);
            assert_eq!(e.kind(), "ambiguous-url", "{arg}");
            assert!(e.to_string().contains("specify '.git'"), "{e}");
        }
        assert_eq!(
            ok("https://github.com/o/r"),
            t("https://github.com/o/r", "/", None)
        );
        assert_eq!(
            ok("https://github.com/o/r/pkgs/nginx"),
            t("https://github.com/o/r", "/pkgs/nginx", None)
        );
        assert_eq!(
            ok("https://github.com/o/r/tree/v2/pkgs/nginx/"),
            t("https://github.com/o/r", "/pkgs/nginx", Some("v2"))
        );
        assert_eq!(
            ok("https://github.com/o/r/tree/main"),
            t("https://github.com/o/r", "/", Some("main"))
        );
        // `feature/x` is a branch: `tree/feature/x/...` cannot be split
        assert_eq!(
            p("https://github.com/o/r/tree/feature/x/pkg").map_err(|e| e.kind()),
            Err("ambiguous-url")
        );
        assert_eq!(
            p("https://github.com/o").map_err(|e| e.kind()),
            Err("invalid-github-url")
        );
    }

    #[test]
    fn branch_listing_errors_propagate() {
        let r = parse("https://github.com/o/r/tree/v1/p", |_| Err("offline"));
        assert_eq!(r, Err("offline"));
        // other forms never list branches
        let r = parse("https://github.com/o/r/p", |_| Err("offline"));
        assert!(matches!(r, Ok(Ok(_))));
    }

    #[test]
    fn clean_is_go_path_clean() {
        assert_eq!(clean("/a/b/"), "/a/b");
        assert_eq!(clean("/"), "/");
        assert_eq!(clean("/a/./b/../c"), "/a/c");
        assert_eq!(clean("/../a"), "/a");
        assert_eq!(clean("a/../../b"), "../b");
        assert_eq!(clean(""), ".");
        assert_eq!(clean("//app//sub/"), "/app/sub");
        assert_eq!(clean("a/./b/../c"), "a/c");
        assert_eq!(clean("../a"), "../a");
        assert_eq!(clean("a/../.."), "..");
    }
}
