//! File names inside a package: the rules a path must satisfy before it may be stored or
//! written into a git tree.
//!
//! A package's files end up in git trees that other people clone. Git itself refuses to
//! check out some names (its `verify_path` and `fsck` rules): a `.git` component in any
//! spelling a case-insensitive, NTFS or HFS+ file system treats as `.git`, `.`/`..`
//! components, empty components, and so on. A tree holding such an entry can overwrite a
//! cloner's `.git/config` or hooks, or make `git clone` fail for everyone, so these names
//! are refused at the API edge and again wherever a tree is built.
//!
//! Limits chosen here (documented in COMPATIBILITY.md): a component is at most
//! [`MAX_COMPONENT_BYTES`] bytes (the common file-system limit) and the whole path at most
//! [`MAX_PATH_BYTES`] bytes (Linux `PATH_MAX`).

/// Longest path component, in bytes.
pub const MAX_COMPONENT_BYTES: usize = 255;
/// Longest whole path, in bytes.
pub const MAX_PATH_BYTES: usize = 4096;

/// Why a file path is refused; the message names the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The empty string.
    #[error("file name must not be empty")]
    Empty,
    /// Starts with `/`.
    #[error("file name must be relative, not start with '/'")]
    Absolute,
    /// Holds a `\` (a directory separator on Windows, where git refuses it).
    #[error("file name must not contain '\\'")]
    Backslash,
    /// Holds NUL or another control character.
    #[error("file name must not contain control characters")]
    Control,
    /// Longer than [`MAX_PATH_BYTES`].
    #[error("file name is {0} bytes long; the limit is {MAX_PATH_BYTES}")]
    TooLong(usize),
    /// A component longer than [`MAX_COMPONENT_BYTES`].
    #[error("a file name component is {0} bytes long; the limit is {MAX_COMPONENT_BYTES}")]
    ComponentTooLong(usize),
    /// An empty component (`a//b`, a trailing `/`).
    #[error("file name must not contain empty components ('//' or a trailing '/')")]
    EmptyComponent,
    /// A `.` or `..` component.
    #[error("file name must not contain '.' or '..' components")]
    DotComponent,
    /// A component git treats as `.git` on some file system.
    #[error("file name must not contain a '.git' component (in any spelling git refuses)")]
    GitDir,
}

impl PathError {
    /// Always [`crate::ErrorKind::Invalid`]: the name is the caller's content.
    pub fn kind(&self) -> crate::ErrorKind {
        crate::ErrorKind::Invalid
    }
}

/// Checks a `/`-separated relative file path of a package.
pub fn validate_file_path(path: &str) -> Result<(), PathError> {
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong(path.len()));
    }
    if path.chars().any(char::is_control) {
        return Err(PathError::Control);
    }
    if path.contains('\\') {
        return Err(PathError::Backslash);
    }
    if path.starts_with('/') {
        return Err(PathError::Absolute);
    }
    path.split('/').try_for_each(validate_component)
}

/// Checks one path component (a tree entry name).
pub fn validate_component(c: &str) -> Result<(), PathError> {
    if c.is_empty() {
        return Err(PathError::EmptyComponent);
    }
    if c == "." || c == ".." {
        return Err(PathError::DotComponent);
    }
    if c.len() > MAX_COMPONENT_BYTES {
        return Err(PathError::ComponentTooLong(c.len()));
    }
    if c.chars().any(char::is_control) {
        return Err(PathError::Control);
    }
    if c.contains(['/', '\\']) {
        return Err(PathError::Backslash);
    }
    if is_dotgit(c) {
        return Err(PathError::GitDir);
    }
    Ok(())
}

/// Is `c` `.git` for a case-insensitive, NTFS or HFS+ file system? git's `is_ntfs_dotgit`
/// and `is_hfs_dotgit` rules, reimplemented, and applied together (the HFS+-ignored code
/// points are dropped before the NTFS check): stricter than either, never laxer.
fn is_dotgit(c: &str) -> bool {
    let kept: String = c.chars().filter(|&ch| !hfs_ignorable(ch)).collect();
    is_ntfs_dotgit(&kept)
}

/// NTFS: `.git` or its 8.3 short name `git~1`, any case, followed by nothing, or only by
/// spaces and periods (which NTFS strips), up to the end or an alternate data stream (`:`).
fn is_ntfs_dotgit(c: &str) -> bool {
    let b = c.as_bytes();
    let rest = if b.len() >= 4 && b[0] == b'.' && b[1..4].eq_ignore_ascii_case(b"git") {
        &b[4..]
    } else if b.len() >= 5 && b[..5].eq_ignore_ascii_case(b"git~1") {
        &b[5..]
    } else {
        return false;
    };
    rest.iter()
        .take_while(|&&ch| ch != b':')
        .all(|&ch| ch == b' ' || ch == b'.')
}

/// Code points HFS+ drops when comparing names (zero-width and direction marks, BOM).
fn hfs_ignorable(ch: char) -> bool {
    matches!(
        ch,
        '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(p: &str) -> PathError {
        validate_file_path(p).expect_err(p)
    }

    #[test]
    fn ordinary_names_pass() {
        for p in [
            "Kptfile",
            "cm.yaml",
            "sub/dir/x.yaml",
            ".gitignore",
            ".github/workflows/ci.yaml",
            "git~2",
            ".gitx/y",
            "a.git",
            "...",
            "ünïcode/名前.yaml",
            "a:b",
        ] {
            assert_eq!(validate_file_path(p), Ok(()), "{p}");
        }
    }

    #[test]
    fn empty_is_refused() {
        assert_eq!(refused(""), PathError::Empty);
    }

    #[test]
    fn absolute_is_refused() {
        assert_eq!(refused("/etc/passwd"), PathError::Absolute);
    }

    #[test]
    fn backslash_is_refused() {
        assert_eq!(refused("a\\b"), PathError::Backslash);
        assert_eq!(refused(".git\\config"), PathError::Backslash);
    }

    #[test]
    fn control_bytes_are_refused() {
        for p in ["a\0b", "a\nb", "x\u{7f}", "tab\there", "c1\u{85}"] {
            assert_eq!(refused(p), PathError::Control, "{p:?}");
        }
    }

    #[test]
    fn empty_and_dot_components_are_refused() {
        assert_eq!(refused("a//b"), PathError::EmptyComponent);
        assert_eq!(refused("a/"), PathError::EmptyComponent);
        assert_eq!(refused("./a"), PathError::DotComponent);
        assert_eq!(refused("a/./b"), PathError::DotComponent);
        assert_eq!(refused(".."), PathError::DotComponent);
        assert_eq!(refused("a/../../b"), PathError::DotComponent);
    }

    #[test]
    fn lengths_are_limited() {
        let long = "x".repeat(MAX_COMPONENT_BYTES);
        assert_eq!(validate_file_path(&long), Ok(()));
        assert_eq!(
            refused(&format!("{long}x")),
            PathError::ComponentTooLong(256)
        );
        let deep = vec!["abcdefg"; 512].join("/");
        assert_eq!(deep.len(), 4095);
        assert_eq!(validate_file_path(&deep), Ok(()));
        assert_eq!(refused(&format!("{deep}xx")), PathError::TooLong(4097));
        assert_eq!(refused(&"y".repeat(5000)), PathError::TooLong(5000));
    }

    #[test]
    fn dotgit_in_every_spelling_is_refused() {
        for p in [
            ".git",
            ".git/config",
            "sub/.git/hooks/post-checkout",
            ".GIT/x",
            ".Git/x",
            "git~1/x",
            "GIT~1/config",
            ".git./x",
            ".git . ./x",
            ".git::$INDEX_ALLOCATION/x",
            "git~1:stream/x",
            ".g\u{200c}it/x",
            "\u{feff}.GIT/x",
            ".gi\u{206f}t",
            "\u{200c}.git ",
        ] {
            assert_eq!(refused(p), PathError::GitDir, "{p:?}");
        }
    }

    #[test]
    fn errors_are_invalid() {
        assert_eq!(refused("").kind(), crate::ErrorKind::Invalid);
    }
}
