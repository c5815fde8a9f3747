//! Where `pkg get` and `pkg update` report what they do, as kpt's printer and its git
//! runner do: kpt's own progress lines (`Package "<path>":`, `Fetching …`, `Adding
//! package …`) go to stderr, and the output of the `git fetch` children is passed
//! through (their stderr to stderr, their stdout to stdout) where kpt runs git
//! verbosely. Library callers that want none of it use [`Silent`].

use std::io::Write;

/// A sink for the console output of the package commands.
pub trait Console {
    /// Bytes for standard error (kpt's printer, a git child's stderr).
    fn stderr(&mut self, bytes: &[u8]);
    /// Bytes for standard output (a git child's stdout).
    fn stdout(&mut self, bytes: &[u8]);
    /// A line (or lines) of kpt's printer.
    fn print(&mut self, text: &str) {
        self.stderr(text.as_bytes());
    }
}

/// Drops everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Console for Silent {
    fn stderr(&mut self, _: &[u8]) {}
    fn stdout(&mut self, _: &[u8]) {}
}

/// Writes to the process's own stderr and stdout, unbuffered.
#[derive(Debug, Default, Clone, Copy)]
pub struct Terminal;

impl Console for Terminal {
    fn stderr(&mut self, bytes: &[u8]) {
        let mut e = std::io::stderr().lock();
        let _ = e.write_all(bytes);
        let _ = e.flush();
    }
    fn stdout(&mut self, bytes: &[u8]) {
        let mut o = std::io::stdout().lock();
        let _ = o.write_all(bytes);
        let _ = o.flush();
    }
}

/// Keeps everything, for tests.
#[derive(Debug, Default, Clone)]
pub struct Recorder {
    pub stderr: Vec<u8>,
    pub stdout: Vec<u8>,
}

impl Recorder {
    /// What went to stderr, as text.
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

impl Console for Recorder {
    fn stderr(&mut self, bytes: &[u8]) {
        self.stderr.extend_from_slice(bytes);
    }
    fn stdout(&mut self, bytes: &[u8]) {
        self.stdout.extend_from_slice(bytes);
    }
}

/// kpt's `PrintPackage`: the package's display path (the root package's directory
/// name, a sub-package's path from the root's parent directory), after a blank line
/// for every package but the first.
pub fn package_line(display_path: &str, leading_newline: bool) -> String {
    format!(
        "{}Package {}:\n",
        if leading_newline { "\n" } else { "" },
        crate::goquote::go_quote(display_path)
    )
}

/// `dir` made absolute and cleaned (Go's `filepath.Abs`, which cleans: no `.`
/// elements, `..` applied).
pub fn absolute_clean(dir: &std::path::Path) -> std::path::PathBuf {
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut out = std::path::PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// kpt's display name of the package a command is given: the last element of its
/// absolute, cleaned path (`filepath.Base(filepath.Clean(abs))`).
pub fn display_name(dir: &std::path::Path) -> String {
    absolute_clean(dir)
        .file_name()
        .map_or_else(|| "/".to_string(), |n| n.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn package_lines_as_kpts_printer() {
        assert_eq!(package_line("local", false), "Package \"local\":\n");
        assert_eq!(package_line("local/db", true), "\nPackage \"local/db\":\n");
    }

    #[test]
    fn display_names_are_the_cleaned_base_name() {
        assert_eq!(display_name(Path::new("/a/b/local")), "local");
        assert_eq!(display_name(Path::new("/a/b/local/")), "local");
        assert_eq!(display_name(Path::new("/a/b/x/../local")), "local");
        assert_eq!(display_name(Path::new("/a/b/local/..")), "b");
        assert_eq!(display_name(Path::new("/")), "/");
        let cwd = std::env::current_dir().expect("cwd");
        let base = cwd
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        assert_eq!(display_name(Path::new(".")), base);
    }
}
