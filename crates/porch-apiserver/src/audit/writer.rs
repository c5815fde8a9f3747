//! The audit log file: JSON lines appended by one writer thread, rotated by size as
//! kube-apiserver's `--audit-log-maxsize` / `--audit-log-maxbackup` (lumberjack) do: the full
//! file is renamed `<name>-<timestamp><ext>` and the oldest backups beyond the limit removed.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::AuditError;

/// Where events go and how the file is rotated.
#[derive(Debug, Clone)]
pub struct LogTarget {
    /// `-` is standard output.
    pub path: PathBuf,
    /// Rotate once the file would grow beyond this many bytes (0: never).
    pub max_bytes: u64,
    /// Rotated files kept (0: all).
    pub max_backups: usize,
}

/// An open log: a file with its size, or standard output.
pub(crate) struct LogFile {
    target: LogTarget,
    out: Out,
}

enum Out {
    Stdout(std::io::Stdout),
    File { file: File, size: u64 },
}

impl LogFile {
    pub(crate) fn open(target: LogTarget) -> Result<LogFile, AuditError> {
        let out = if target.path == Path::new("-") {
            Out::Stdout(std::io::stdout())
        } else {
            let (file, size) = open_append(&target.path)?;
            Out::File { file, size }
        };
        Ok(LogFile { target, out })
    }

    /// Appends one line (which ends in `\n`), rotating first when it would not fit.
    pub(crate) fn write_line(&mut self, line: &[u8]) -> Result<(), AuditError> {
        let io = |e: std::io::Error| AuditError::Io(e.to_string());
        match &mut self.out {
            Out::Stdout(s) => s.write_all(line).map_err(io),
            Out::File { file, size } => {
                let max = self.target.max_bytes;
                if max > 0 && *size > 0 && *size + line.len() as u64 > max {
                    file.flush().map_err(io)?;
                    rotate(&self.target)?;
                    let (f, s) = open_append(&self.target.path)?;
                    *file = f;
                    *size = s;
                }
                file.write_all(line).map_err(io)?;
                *size += line.len() as u64;
                Ok(())
            }
        }
    }

    pub(crate) fn flush(&mut self) {
        let _ = match &mut self.out {
            Out::Stdout(s) => s.flush(),
            Out::File { file, .. } => file.flush(),
        };
    }
}

fn open_append(path: &Path) -> Result<(File, u64), AuditError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| AuditError::Io(format!("cannot create {}: {e}", dir.display())))?;
    }
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // The log names users and objects: readable by the server's user only.
        options.mode(0o600);
    }
    let file = options
        .open(path)
        .map_err(|e| AuditError::Io(format!("cannot open {}: {e}", path.display())))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    Ok((file, size))
}

/// `audit.log` → (`audit`, `.log`).
fn stem_ext(path: &Path) -> (String, String) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match name.rfind('.') {
        Some(i) if i > 0 => (name[..i].to_owned(), name[i..].to_owned()),
        _ => (name, String::new()),
    }
}

/// Renames the log to `<stem>-<UTC timestamp><ext>` and prunes old backups.
fn rotate(target: &LogTarget) -> Result<(), AuditError> {
    let io = |e: std::io::Error| AuditError::Io(e.to_string());
    let dir = target
        .path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let (stem, ext) = stem_ext(&target.path);
    let stamp = k8s_openapi::jiff::Timestamp::now().strftime("%Y-%m-%dT%H-%M-%S%.3f");
    let mut backup = dir.join(format!("{stem}-{stamp}{ext}"));
    // Two rotations within a millisecond: keep both.
    let mut n = 1;
    while backup.exists() {
        backup = dir.join(format!("{stem}-{stamp}.{n}{ext}"));
        n += 1;
    }
    std::fs::rename(&target.path, &backup).map_err(io)?;
    if target.max_backups > 0 {
        let mut backups = backups(&dir, &stem, &ext);
        // Timestamps sort by name; the newest last.
        backups.sort();
        let extra = backups.len().saturating_sub(target.max_backups);
        for old in backups.into_iter().take(extra) {
            let _ = std::fs::remove_file(old);
        }
    }
    Ok(())
}

fn backups(dir: &Path, stem: &str, ext: &str) -> Vec<PathBuf> {
    let prefix = format!("{stem}-");
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().is_some_and(|n| {
                        let n = n.to_string_lossy();
                        n.starts_with(&prefix) && n.ends_with(ext)
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_by_size_and_keeps_max_backups() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audit.log");
        let mut log = LogFile::open(LogTarget {
            path: path.clone(),
            max_bytes: 100,
            max_backups: 2,
        })
        .expect("open");
        let line = [b'x'; 39]
            .iter()
            .copied()
            .chain([b'\n'])
            .collect::<Vec<_>>();
        for _ in 0..12 {
            log.write_line(&line).expect("write");
            // Distinct backup names even within one millisecond.
        }
        log.flush();
        let current = std::fs::read(&path).expect("current");
        assert!(current.len() <= 100, "{}", current.len());
        let kept = backups(dir.path(), "audit", ".log");
        assert_eq!(kept.len(), 2, "{kept:?}");
        for b in kept {
            let len = std::fs::metadata(&b).expect("backup").len();
            assert_eq!(len, 80, "two whole lines per file");
        }
    }
}
