//! Validated names: repository, package path, workspace, revision number and the
//! composed PackageRevision object name (spec §6).
//!
//! Two ways in: `FromStr`/`new` validate as Porch does at creation time (DNS-1123),
//! `discovered` accepts what a git repository written by someone else contains, because
//! Porch shows such revisions too (e.g. a workspace named after a branch `nested/release`).

use std::fmt;
use std::str::FromStr;

/// A name failed validation; the message says which rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} {value:?} is invalid: {reason}")]
pub struct NameError {
    /// Which kind of name (e.g. "repository name").
    pub what: &'static str,
    /// The rejected value.
    pub value: String,
    /// The rule it broke.
    pub reason: String,
}

impl NameError {
    fn new(what: &'static str, value: &str, reason: impl Into<String>) -> Self {
        NameError {
            what,
            value: value.to_owned(),
            reason: reason.into(),
        }
    }

    /// Always [`crate::ErrorKind::Invalid`].
    pub fn kind(&self) -> crate::ErrorKind {
        crate::ErrorKind::Invalid
    }
}

/// DNS-1123 label: 1..=63 of `[a-z0-9-]`, starting and ending alphanumeric.
pub fn check_dns1123_label(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("must not be empty".into());
    }
    if s.len() > 63 {
        return Err("must be no more than 63 characters".into());
    }
    let ok_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    if !s.chars().all(ok_char) {
        return Err("must consist of lower case alphanumeric characters or '-'".into());
    }
    if s.starts_with('-') || s.ends_with('-') {
        return Err("must start and end with an alphanumeric character".into());
    }
    Ok(())
}

/// DNS-1123 subdomain: ≤253 chars, dot-separated DNS-1123 labels (loosely: `[a-z0-9.-]`).
pub fn check_dns1123_subdomain(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("must not be empty".into());
    }
    if s.len() > 253 {
        return Err("must be no more than 253 characters".into());
    }
    for part in s.split('.') {
        if part.is_empty() {
            return Err("must not contain empty dot-separated parts".into());
        }
        check_dns1123_label(part)?;
    }
    Ok(())
}

/// kptdev Porch's `IsValidSubpackageDir`: the directory of an independent subpackage inside
/// its parent package. A relative path without `.` or `..` segments, no leading or trailing
/// `/`, of `[a-zA-Z0-9._-]` segments, whose `/`→`.` form is a DNS-1123 subdomain (the name of
/// the subpackage as an object). The error is upstream's text.
pub fn check_subpackage_dir(dir: &str) -> Result<(), String> {
    if dir.is_empty() {
        return Err(format!("subpackage directory {dir:?} is invalid"));
    }
    let segments: Vec<&str> = dir.split('/').collect();
    if dir.starts_with('/') || dir.ends_with('/') || segments.contains(&"..") {
        return Err(format!(
            "subpackage directory {dir:?} is invalid, it cannot contain '..' or start with '/' or end with '/'"
        ));
    }
    if segments.contains(&".") {
        return Err(format!(
            "subpackage directory {dir:?} is invalid, it cannot contain '.'"
        ));
    }
    let path_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if segments
        .iter()
        .any(|s| s.is_empty() || !s.chars().all(path_char))
    {
        return Err(format!(
            "subpackage directory {dir:?} is invalid, it must match regular expression \"^(?:[a-zA-Z0-9._-]+(?:/[a-zA-Z0-9._-]+)*)?$\""
        ));
    }
    let name = dir.replace('/', ".");
    let mut problems = Vec::new();
    if name.len() > 253 {
        problems.push("must be no more than 253 characters");
    }
    if !is_rfc1123_subdomain(&name) {
        problems.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        );
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "subpackage resource name {name:?} invalid: {}",
            problems.join(",")
        ))
    }
}

/// apimachinery's subdomain pattern `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`.
fn is_rfc1123_subdomain(s: &str) -> bool {
    s.split('.').all(|label| {
        let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
        !label.is_empty()
            && label.starts_with(alnum)
            && label.ends_with(alnum)
            && label.chars().all(|c| alnum(c) || c == '-')
    })
}

macro_rules! string_newtype {
    ($name:ident) => {
        impl $name {
            /// The name as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
        impl FromStr for $name {
            type Err = NameError;
            fn from_str(s: &str) -> Result<Self, NameError> {
                Self::new(s)
            }
        }
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Self::discovered(&s).map_err(serde::de::Error::custom)
            }
        }
    };
}

/// Name of a Repository object (DNS-1123 label).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RepositoryName(String);
string_newtype!(RepositoryName);

impl RepositoryName {
    /// Validates a DNS-1123 label.
    pub fn new(s: &str) -> Result<Self, NameError> {
        check_dns1123_label(s).map_err(|r| NameError::new("repository name", s, r))?;
        Ok(RepositoryName(s.to_owned()))
    }
    /// Repository names come from Kubernetes objects, so they are always validated.
    pub fn discovered(s: &str) -> Result<Self, NameError> {
        Self::new(s)
    }
}

/// Package path relative to the repository directory, e.g. `network/upf`.
/// The last segment is the package, the rest is the path (spec §6.1).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PackagePath(String);
string_newtype!(PackagePath);

impl PackagePath {
    /// Validates: every `/`-separated segment is a DNS-1123 label, no `//`.
    pub fn new(s: &str) -> Result<Self, NameError> {
        if s.is_empty() {
            return Err(NameError::new("package path", s, "must not be empty"));
        }
        for seg in s.split('/') {
            check_dns1123_label(seg)
                .map_err(|r| NameError::new("package path", s, format!("segment {seg:?} {r}")))?;
        }
        Ok(PackagePath(s.to_owned()))
    }
    /// Accepts any non-empty `/`-separated path without empty segments (as found in git).
    pub fn discovered(s: &str) -> Result<Self, NameError> {
        if s.is_empty() || s.split('/').any(str::is_empty) {
            return Err(NameError::new(
                "package path",
                s,
                "must be non-empty without empty segments",
            ));
        }
        Ok(PackagePath(s.to_owned()))
    }
    /// The last segment (Porch's "package").
    pub fn package(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }
    /// Everything before the last segment (Porch's "path"), empty at top level.
    pub fn parent(&self) -> &str {
        self.0.rsplit_once('/').map(|(p, _)| p).unwrap_or("")
    }
    /// The path with `/` replaced by `.`, as it appears in object names.
    pub fn dotted(&self) -> String {
        self.0.replace('/', ".")
    }
    /// Full path in git: `<repository directory>/<path>` (directory trimmed of `/`).
    pub fn in_directory(&self, directory: &str) -> String {
        let dir = directory.trim_matches('/');
        if dir.is_empty() {
            self.0.clone()
        } else {
            format!("{dir}/{}", self.0)
        }
    }
}

/// Workspace name of a package revision (DNS-1123 label when created through the API).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkspaceName(String);
string_newtype!(WorkspaceName);

impl WorkspaceName {
    /// Validates a DNS-1123 label.
    pub fn new(s: &str) -> Result<Self, NameError> {
        check_dns1123_label(s).map_err(|r| NameError::new("workspace name", s, r))?;
        Ok(WorkspaceName(s.to_owned()))
    }
    /// Accepts any non-empty string (branch names, legacy `v1.2` workspaces).
    pub fn discovered(s: &str) -> Result<Self, NameError> {
        if s.is_empty() {
            return Err(NameError::new("workspace name", s, "must not be empty"));
        }
        Ok(WorkspaceName(s.to_owned()))
    }
}

/// `spec.revision`: 0 for Draft/Proposed, N≥1 published, -1 the branch placeholder.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct Revision(i64);

impl Revision {
    /// Draft and Proposed revisions.
    pub const UNPUBLISHED: Revision = Revision(0);
    /// The package as it is on the registered branch.
    pub const PLACEHOLDER: Revision = Revision(-1);

    /// A published revision number; `None` unless `n >= 1`.
    pub fn published(n: i64) -> Option<Revision> {
        (n >= 1).then_some(Revision(n))
    }
    /// Any value, as read from storage.
    pub fn from_raw(n: i64) -> Revision {
        Revision(n)
    }
    /// The integer value.
    pub fn get(self) -> i64 {
        self.0
    }
    /// True for N≥1.
    pub fn is_published_number(self) -> bool {
        self.0 >= 1
    }
    /// Parses a tag suffix like `v3` the way Porch does: strip one leading `v`,
    /// non-numeric ⇒ -1 (spec §11.2).
    pub fn parse_tag_suffix(s: &str) -> Revision {
        s.strip_prefix('v')
            .unwrap_or(s)
            .parse::<i64>()
            .map(Revision)
            .unwrap_or(Revision::PLACEHOLDER)
    }
    /// The tag suffix `v<N>`.
    pub fn tag_suffix(self) -> String {
        format!("v{}", self.0)
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Object name `<repo>.<path with / as .>.<workspace>` (spec §6.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PackageRevisionName(String);

impl PackageRevisionName {
    /// Composes the name. Not validated: discovered revisions may carry names Porch
    /// would refuse to create but still lists.
    pub fn compose(
        repo: &RepositoryName,
        package: &PackagePath,
        workspace: &WorkspaceName,
    ) -> Self {
        PackageRevisionName(format!("{}.{}.{}", repo, package.dotted(), workspace))
    }
    /// Composes and validates as Porch does at create time: each part valid and the
    /// whole a DNS-1123 subdomain.
    pub fn compose_validated(
        repo: &RepositoryName,
        package: &PackagePath,
        workspace: &WorkspaceName,
    ) -> Result<Self, NameError> {
        RepositoryName::new(repo.as_str())?;
        PackagePath::new(package.as_str())?;
        WorkspaceName::new(workspace.as_str())?;
        let name = Self::compose(repo, package, workspace);
        check_dns1123_subdomain(&name.0)
            .map_err(|r| NameError::new("package revision name", &name.0, r))?;
        Ok(name)
    }
    /// Wraps an existing name without checks.
    pub fn from_raw(s: &str) -> Self {
        PackageRevisionName(s.to_owned())
    }
    /// The name as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// Splits a name back into (repository, package path, workspace) per spec §6.3:
    /// the workspace is after the last `.`, unless the name ends in `.v<digits/dots><digit>`,
    /// in which case it starts at the last `.v`.
    pub fn parse(&self) -> Result<(RepositoryName, PackagePath, WorkspaceName), NameError> {
        let s = self.0.as_str();
        let bad = |r: &str| NameError::new("package revision name", s, r);
        let split_at = semver_workspace_start(s)
            .or_else(|| s.rfind('.'))
            .ok_or_else(|| bad("has no '.'"))?;
        let (head, ws) = (&s[..split_at], &s[split_at + 1..]);
        let (repo, pkg) = head
            .split_once('.')
            .ok_or_else(|| bad("needs <repo>.<package>.<workspace>"))?;
        let repo = RepositoryName::new(repo)?;
        let pkg = PackagePath::discovered(&pkg.replace('.', "/"))?;
        let ws = WorkspaceName::discovered(ws)?;
        Ok((repo, pkg, ws))
    }
}

/// Byte index of the `.` that starts a `.v<digits/dots><digit>` suffix, if the name ends so.
fn semver_workspace_start(s: &str) -> Option<usize> {
    let idx = s.rfind(".v")?;
    let tail = &s[idx + 2..];
    let ok = !tail.is_empty()
        && tail.chars().all(|c| c.is_ascii_digit() || c == '.')
        && tail.ends_with(|c: char| c.is_ascii_digit());
    ok.then_some(idx)
}

impl fmt::Display for PackageRevisionName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subpackage_dirs_as_kptdev_porch_checks_them() {
        for ok in ["infra", "components/networking", "a.b/c-d", "x1/y-2"] {
            assert_eq!(check_subpackage_dir(ok), Ok(()), "{ok}");
        }
        let err = |d: &str| check_subpackage_dir(d).expect_err(d);
        assert_eq!(err(""), "subpackage directory \"\" is invalid");
        for d in ["/a", "a/", "..", "a/../b", "../a"] {
            assert!(
                err(d).ends_with("it cannot contain '..' or start with '/' or end with '/'"),
                "{d}"
            );
        }
        for d in [".", "./a", "a/./b"] {
            assert!(err(d).ends_with("it cannot contain '.'"), "{d}");
        }
        for d in ["a//b", "a b", "a/$"] {
            assert!(err(d).contains("it must match regular expression"), "{d}");
        }
        // Path characters the object name does not allow.
        assert!(err("Upper/case").starts_with(
            "subpackage resource name \"Upper.case\" invalid: a lowercase RFC 1123 subdomain"
        ));
        assert!(err("a_b").contains("invalid: a lowercase RFC 1123"));
        assert!(err("-a").contains("invalid: a lowercase RFC 1123"));
        let long = ["a"; 130].join("/");
        assert_eq!(
            err(&long),
            format!(
                "subpackage resource name {:?} invalid: must be no more than 253 characters",
                long.replace('/', ".")
            )
        );
    }

    #[test]
    fn compose_and_parse_roundtrip() {
        let repo = RepositoryName::new("blueprints").expect("test value");
        let pkg = PackagePath::new("network/upf").expect("test value");
        let ws = WorkspaceName::new("ws1").expect("test value");
        let name = PackageRevisionName::compose_validated(&repo, &pkg, &ws).expect("test value");
        assert_eq!(name.as_str(), "blueprints.network.upf.ws1");
        assert_eq!(name.parse().expect("test value"), (repo, pkg, ws));
    }

    #[test]
    fn parse_semver_workspace() {
        let (r, p, w) = PackageRevisionName::from_raw("repo.pkg.v1.2")
            .parse()
            .expect("test value");
        assert_eq!(
            (r.as_str(), p.as_str(), w.as_str()),
            ("repo", "pkg", "v1.2")
        );
        let (_, p, w) = PackageRevisionName::from_raw("test-blueprints.basens.v1")
            .parse()
            .expect("test value");
        assert_eq!((p.as_str(), w.as_str()), ("basens", "v1"));
        let (_, p, w) = PackageRevisionName::from_raw("a.b.c.main")
            .parse()
            .expect("test value");
        assert_eq!((p.as_str(), w.as_str()), ("b/c", "main"));
    }

    #[test]
    fn rejects_bad_names() {
        assert!(RepositoryName::new("Bad").is_err());
        assert!(PackagePath::new("a//b").is_err());
        assert!(PackagePath::new("a/-b").is_err());
        assert!(WorkspaceName::new("").is_err());
        assert!(PackageRevisionName::from_raw("nodots").parse().is_err());
        let long = "a".repeat(63);
        let repo = RepositoryName::new(&long).expect("test value");
        let pkg = PackagePath::new(&format!("{long}/{long}/{long}")).expect("test value");
        let ws = WorkspaceName::new("w").expect("test value");
        assert!(PackageRevisionName::compose_validated(&repo, &pkg, &ws).is_err());
    }

    #[test]
    fn revision_tag_suffix() {
        assert_eq!(Revision::parse_tag_suffix("v3").get(), 3);
        assert_eq!(Revision::parse_tag_suffix("12").get(), 12);
        assert_eq!(Revision::parse_tag_suffix("release"), Revision::PLACEHOLDER);
        assert_eq!(Revision::from_raw(4).tag_suffix(), "v4");
        assert_eq!(
            PackagePath::new("a/b/c").expect("test value").parent(),
            "a/b"
        );
        assert_eq!(
            PackagePath::new("c")
                .expect("test value")
                .in_directory("/dir/"),
            "dir/c"
        );
    }
}
