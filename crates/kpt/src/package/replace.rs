//! Replacing files atomically without allocating an inode per file.
//!
//! Every changed file is written to a temporary file beside it and then moved over it,
//! so a crash never leaves a half-written file. A plain rename frees the target's old
//! inode and the next temporary file needs a new one, and allocating inodes can be slow:
//! ext4 without a journal skips every inode freed in the last minute or so, reading the
//! inode table for each, and a 1,000-resource render (100 files) spent more time
//! creating temporary files than rendering.
//!
//! On Linux the temporary file is therefore *exchanged* with the target
//! (`renameat2(RENAME_EXCHANGE)`, as atomic as a rename). The temporary path then holds
//! the target's old inode, which is overwritten and used for the next file of the same
//! directory when nothing but its contents could tell it from a new file: a regular
//! file with one link and the mode, owner and group a file created there gets
//! (extended attributes are not compared). Otherwise it is removed as the rename would
//! have, and a new temporary file is created. Each directory written then allocates one
//! inode instead of one per file.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use sys::Attrs;

/// Writes files through temporary files, recycling replaced inodes (see the module doc).
/// Dropping it removes the temporary files it still holds.
#[derive(Debug)]
pub struct Replacer {
    /// Per directory: a temporary file holding a replaced inode.
    spares: HashMap<PathBuf, PathBuf>,
    /// Per directory: the attributes of a file created there.
    fresh: HashMap<PathBuf, Attrs>,
    /// Cleared when the kernel or file system cannot exchange.
    exchange: bool,
}

impl Default for Replacer {
    fn default() -> Self {
        Replacer {
            spares: HashMap::new(),
            fresh: HashMap::new(),
            exchange: true,
        }
    }
}

impl Replacer {
    /// Write `content` to `target` (created if missing, parent directories included).
    /// `existed`: `target` was a regular file when the package was read, so its inode
    /// can be exchanged and recycled.
    pub fn write(&mut self, target: &Path, content: &[u8], existed: bool) -> io::Result<()> {
        let dir = target.parent().unwrap_or(Path::new("")).to_path_buf();
        if !existed {
            std::fs::create_dir_all(&dir)?;
        }
        let (tmp, mut file) = match self.take_spare(&dir)? {
            Some(spare) => spare,
            None => {
                let tmp = temp_path(target);
                let file = File::create(&tmp)?;
                self.fresh
                    .entry(dir.clone())
                    .or_insert(sys::attrs(&file.metadata()?));
                (tmp, file)
            }
        };
        // A recycled file may be longer than the new content.
        file.write_all(content)?;
        file.set_len(content.len() as u64)?;
        drop(file);
        if existed && self.exchange {
            match sys::exchange(&tmp, target) {
                Exchange::Done => {
                    self.spares.insert(dir, tmp);
                    return Ok(());
                }
                Exchange::Unsupported => self.exchange = false,
                // The target went away meanwhile: the rename creates it.
                Exchange::Failed(e) if e.kind() == io::ErrorKind::NotFound => {}
                Exchange::Failed(e) => return Err(e),
            }
        }
        std::fs::rename(&tmp, target)
    }

    /// The directory's temporary file, opened for writing, if its inode may be reused.
    fn take_spare(&mut self, dir: &Path) -> io::Result<Option<(PathBuf, File)>> {
        let Some(path) = self.spares.remove(dir) else {
            return Ok(None);
        };
        // Whatever was at the target is now here: never follow a symbolic link.
        if let Ok(file) = sys::open_no_follow(&path) {
            let m = file.metadata()?;
            if m.is_file() && sys::links(&m) == 1 && self.fresh.get(dir) == Some(&sys::attrs(&m)) {
                return Ok(Some((path, file)));
            }
        }
        // Not reusable: gone, as after a rename (other links keep the old contents).
        remove_if_present(&path)?;
        Ok(None)
    }

    /// Remove the temporary files still held.
    pub fn finish(mut self) -> io::Result<()> {
        for (_, path) in std::mem::take(&mut self.spares) {
            remove_if_present(&path)?;
        }
        Ok(())
    }
}

impl Drop for Replacer {
    fn drop(&mut self) {
        // After an error: best effort, the error being reported matters more.
        for path in self.spares.values() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// `.NAME.kpt-tmp` beside `target`.
fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.kpt-tmp"))
}

fn remove_if_present(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// What an exchange did.
enum Exchange {
    Done,
    /// The kernel or file system has no `RENAME_EXCHANGE`.
    Unsupported,
    Failed(io::Error),
}

#[cfg(target_os = "linux")]
mod sys {
    use std::fs::{File, Metadata};
    use std::io;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::path::Path;

    use rustix::fs::{CWD, Mode, OFlags, RenameFlags, open, renameat_with};
    use rustix::io::Errno;

    use super::Exchange;

    /// What tells a file created in a directory from an older one besides its contents.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Attrs {
        mode: u32,
        uid: u32,
        gid: u32,
    }

    pub fn attrs(m: &Metadata) -> Attrs {
        Attrs {
            mode: m.permissions().mode() & 0o7777,
            uid: m.uid(),
            gid: m.gid(),
        }
    }

    pub fn links(m: &Metadata) -> u64 {
        m.nlink()
    }

    pub fn exchange(a: &Path, b: &Path) -> Exchange {
        match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
            Ok(()) => Exchange::Done,
            Err(Errno::INVAL | Errno::NOSYS) => Exchange::Unsupported,
            Err(e) => Exchange::Failed(e.into()),
        }
    }

    pub fn open_no_follow(path: &Path) -> io::Result<File> {
        let fd = open(
            path,
            OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(File::from(fd))
    }
}

/// Elsewhere nothing is exchanged, so no inode is ever recycled.
#[cfg(not(target_os = "linux"))]
mod sys {
    use std::fs::{File, Metadata};
    use std::io;
    use std::path::Path;

    use super::Exchange;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Attrs;

    pub fn attrs(_: &Metadata) -> Attrs {
        Attrs
    }

    pub fn links(_: &Metadata) -> u64 {
        0
    }

    pub fn exchange(_: &Path, _: &Path) -> Exchange {
        Exchange::Unsupported
    }

    pub fn open_no_follow(_: &Path) -> io::Result<File> {
        Err(io::ErrorKind::Unsupported.into())
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    use super::*;

    fn ino(p: &Path) -> u64 {
        std::fs::metadata(p).expect("stat").ino()
    }

    #[test]
    fn replaces_contents_and_recycles_inodes_within_a_directory() {
        let tmp = tempfile::tempdir().expect("tmp");
        let d = tmp.path();
        for (name, text) in [("a.yaml", "a: 1\n"), ("b.yaml", "b: 22222222\n")] {
            std::fs::write(d.join(name), text).expect("write");
        }
        let old_a = ino(&d.join("a.yaml"));
        let mut r = Replacer::default();
        r.write(&d.join("a.yaml"), b"a: 2\n", true).expect("a");
        r.write(&d.join("b.yaml"), b"b: 3\n", true).expect("b");
        r.write(&d.join("sub/c.yaml"), b"c: 4\n", false).expect("c");
        r.finish().expect("finish");
        for (name, text) in [
            ("a.yaml", "a: 2\n"),
            ("b.yaml", "b: 3\n"),
            ("sub/c.yaml", "c: 4\n"),
        ] {
            assert_eq!(std::fs::read_to_string(d.join(name)).expect("read"), text);
        }
        if cfg!(target_os = "linux") {
            // a's old inode, overwritten, became b.
            assert_eq!(ino(&d.join("b.yaml")), old_a);
        }
        let mut left: Vec<String> = std::fs::read_dir(d)
            .expect("ls")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["a.yaml", "b.yaml", "sub"]);
    }

    #[test]
    fn never_reuses_a_hard_linked_or_differently_owned_inode() {
        let tmp = tempfile::tempdir().expect("tmp");
        let d = tmp.path();
        for name in ["a.yaml", "b.yaml", "c.yaml"] {
            std::fs::write(d.join(name), "old\n").expect("write");
        }
        std::fs::hard_link(d.join("a.yaml"), d.join("link")).expect("link");
        std::fs::set_permissions(d.join("b.yaml"), std::fs::Permissions::from_mode(0o600))
            .expect("chmod");
        let mut r = Replacer::default();
        for name in ["a.yaml", "b.yaml", "c.yaml"] {
            r.write(&d.join(name), b"new\n", true).expect("write");
        }
        r.finish().expect("finish");
        // The other link keeps the old contents, as after a rename.
        assert_eq!(
            std::fs::read_to_string(d.join("link")).expect("read"),
            "old\n"
        );
        let fresh_mode = std::fs::metadata(d.join("a.yaml")).expect("a").mode() & 0o7777;
        for name in ["a.yaml", "b.yaml", "c.yaml"] {
            let m = std::fs::metadata(d.join(name)).expect("stat");
            assert_eq!(m.mode() & 0o7777, fresh_mode, "{name}");
            assert_eq!(
                std::fs::read_to_string(d.join(name)).expect("read"),
                "new\n"
            );
        }
    }

    #[test]
    fn a_symlink_swapped_in_is_removed_not_followed() {
        let tmp = tempfile::tempdir().expect("tmp");
        let d = tmp.path();
        std::fs::write(d.join("outside"), "keep\n").expect("write");
        std::fs::write(d.join("a.yaml"), "old\n").expect("write");
        std::os::unix::fs::symlink(d.join("outside"), d.join("b.yaml")).expect("symlink");
        let mut r = Replacer::default();
        // b.yaml is (now) a symlink: after the exchange the spare path holds it.
        r.write(&d.join("b.yaml"), b"b\n", true).expect("b");
        r.write(&d.join("a.yaml"), b"a\n", true).expect("a");
        r.finish().expect("finish");
        assert_eq!(
            std::fs::read_to_string(d.join("outside")).expect("read"),
            "keep\n"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("a.yaml")).expect("read"),
            "a\n"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("b.yaml")).expect("read"),
            "b\n"
        );
        assert!(!d.join("b.yaml").is_symlink());
    }
}
