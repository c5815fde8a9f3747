//! Porch's ref layout (spec §11.1): names in the remote and in the local mirror.
//!
//! The local mirror uses the remote's own names (`git clone --mirror` layout): branches
//! `refs/heads/X`, tags `refs/tags/X`. (Go Porch keeps branches under `refs/remotes/origin/`;
//! the mirror is private, and the mirror layout lets the first sync be a fast clone.)

/// Local prefix of mirrored remote branches.
pub const LOCAL_BRANCHES: &str = "refs/heads/";
/// Tag prefix (same locally and remotely).
pub const TAGS: &str = "refs/tags/";
/// Remote branch prefix.
pub const REMOTE_BRANCHES: &str = "refs/heads/";

/// Branch prefix of drafts.
pub const DRAFTS: &str = "drafts/";
/// Branch prefix of proposed revisions.
pub const PROPOSED: &str = "proposed/";
/// Branch prefix of deletion proposals.
pub const DELETION_PROPOSED: &str = "deletionProposed/";

/// A ref as Porch names it: a short branch or tag name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RefName {
    /// A branch (`main`, `drafts/pkg/ws`, …).
    Branch(String),
    /// A tag (`pkg/v1`).
    Tag(String),
}

impl RefName {
    /// Name in the remote repository.
    pub fn remote(&self) -> String {
        match self {
            RefName::Branch(b) => format!("{REMOTE_BRANCHES}{b}"),
            RefName::Tag(t) => format!("{TAGS}{t}"),
        }
    }
    /// Name in the local mirror.
    pub fn local(&self) -> String {
        match self {
            RefName::Branch(b) => format!("{LOCAL_BRANCHES}{b}"),
            RefName::Tag(t) => format!("{TAGS}{t}"),
        }
    }
    /// The short name (`selfLock.git.ref`).
    pub fn short(&self) -> &str {
        match self {
            RefName::Branch(s) | RefName::Tag(s) => s,
        }
    }
    /// Parses a local mirror ref name.
    pub fn from_local(name: &str) -> Option<RefName> {
        if let Some(b) = name.strip_prefix(LOCAL_BRANCHES) {
            (b != "HEAD").then(|| RefName::Branch(b.to_owned()))
        } else {
            name.strip_prefix(TAGS).map(|t| RefName::Tag(t.to_owned()))
        }
    }
    /// Draft branch of `<full path>/<workspace>`.
    pub fn draft(full_path: &str, workspace: &str) -> RefName {
        RefName::Branch(format!("{DRAFTS}{full_path}/{workspace}"))
    }
    /// Proposed branch of `<full path>/<workspace>`.
    pub fn proposed(full_path: &str, workspace: &str) -> RefName {
        RefName::Branch(format!("{PROPOSED}{full_path}/{workspace}"))
    }
    /// Deletion proposal of revision `suffix` (`v<N>`, or the branch name for the placeholder).
    pub fn deletion_proposed(full_path: &str, suffix: &str) -> RefName {
        RefName::Branch(format!("{DELETION_PROPOSED}{full_path}/{suffix}"))
    }
    /// Tag of published revision `<full path>/v<N>`.
    pub fn tag(full_path: &str, revision: i64) -> RefName {
        RefName::Tag(format!("{full_path}/v{revision}"))
    }
}

/// Splits `drafts/<path>/<ws>` / `proposed/<path>/<ws>` (branch short name) into
/// (is_proposed, full path, workspace). The suffix is split at the last `/`.
pub fn parse_draft_branch(branch: &str) -> Option<(bool, &str, &str)> {
    let (proposed, rest) = if let Some(r) = branch.strip_prefix(DRAFTS) {
        (false, r)
    } else {
        (true, branch.strip_prefix(PROPOSED)?)
    };
    let (path, ws) = rest.rsplit_once('/')?;
    (!path.is_empty() && !ws.is_empty()).then_some((proposed, path, ws))
}

/// Is the package at `full_path` inside the registered `directory` (trimmed)?
pub fn in_directory(full_path: &str, directory: &str) -> bool {
    directory.is_empty()
        || full_path
            .strip_prefix(directory)
            .is_some_and(|rest| rest.starts_with('/') && rest.len() > 1)
}

/// Package path relative to `directory`.
pub fn relative(full_path: &str, directory: &str) -> String {
    if directory.is_empty() {
        full_path.to_owned()
    } else {
        full_path
            .strip_prefix(directory)
            .unwrap_or(full_path)
            .trim_start_matches('/')
            .to_owned()
    }
}

/// Porch's mirror directory name for a URL: `/` and `:` replaced by `-`. A URL carrying a
/// secret is named after its redacted form plus a hash of the whole URL (two credentials for
/// one remote are two mirrors, as the pool keys them), so the secret never names a file.
pub fn mirror_dir_name(url: &str) -> String {
    let shown = crate::redact::redact_url(url);
    let name = shown.replace("***", "redacted").replace(['/', ':'], "-");
    if shown == url {
        return name;
    }
    let digest = ring::digest::digest(&ring::digest::SHA256, url.as_bytes());
    let hex: String = digest.as_ref()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{name}-{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draft_branches() {
        assert_eq!(
            parse_draft_branch("drafts/catalog/gcp/bucket/v2"),
            Some((false, "catalog/gcp/bucket", "v2"))
        );
        assert_eq!(
            parse_draft_branch("proposed/pkg/ws"),
            Some((true, "pkg", "ws"))
        );
        assert_eq!(parse_draft_branch("drafts/ws"), None);
        assert_eq!(parse_draft_branch("main"), None);
    }

    #[test]
    fn directories() {
        assert!(in_directory("a/b", ""));
        assert!(in_directory("catalog/gcp/bucket", "catalog/gcp"));
        assert!(!in_directory("catalog/gcpx/bucket", "catalog/gcp"));
        assert!(!in_directory("catalog/gcp", "catalog/gcp"));
        assert_eq!(relative("catalog/gcp/bucket", "catalog/gcp"), "bucket");
        assert_eq!(
            mirror_dir_name("http://h:3000/a.git"),
            "http---h-3000-a.git"
        );
    }

    #[test]
    fn ref_names() {
        assert_eq!(RefName::tag("a/b", 3).local(), "refs/tags/a/b/v3");
        assert_eq!(RefName::draft("a", "ws").remote(), "refs/heads/drafts/a/ws");
        assert_eq!(RefName::draft("a", "ws").local(), "refs/heads/drafts/a/ws");
        assert_eq!(
            RefName::from_local("refs/heads/main"),
            Some(RefName::Branch("main".into()))
        );
        assert_eq!(RefName::from_local("refs/remotes/origin/main"), None);
    }
}
