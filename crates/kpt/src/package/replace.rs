//! Replacing files atomically without allocating an inode per file.
//!
//! Every changed file is written to a temporary file and then moved over it, so a
//! crash never leaves a half-written file; it takes the replaced file's permission
//! bits, as kyaml's in-place rewrite keeps them. A plain rename frees the target's old inode
//! and the next temporary file needs a new one, and allocating inodes can be slow: ext4
//! without a journal skips every inode freed in the last minute or so, reading the
//! inode table for each, and a 1,000-resource render (100 files) spent more time
//! creating temporary files than rendering.
//!
//! On Linux the temporary file is therefore *exchanged* with the target
//! (`renameat2(RENAME_EXCHANGE)`, as atomic as a rename). The temporary path then holds
//! the target's old inode, which is overwritten and exchanged with the next target when
//! nothing but its contents could tell it from a file created beside that target: a
//! regular file with one link, no extended attributes, and the mode, owner and group
//! of the first file created, in a directory with the same owner, group, mode and
//! device as that file's and no extended attributes either (then a new file gets the
//! same mode, owner and group there: no default ACL, no security label). Otherwise it
//! is removed, as the rename would have, and a new temporary file is created beside the
//! target. A render then allocates one inode instead of one per file.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use sys::{Attrs, DirAttrs};

/// What a new file gets, and the directory it got it in.
#[derive(Debug, Clone, Copy)]
struct Reference {
    dir: DirAttrs,
    file: Attrs,
}

/// Writes files through temporary files, recycling replaced inodes (see the module doc).
/// Dropping it removes the temporary file it still holds.
#[derive(Debug)]
pub struct Replacer {
    /// A temporary file holding a replaced inode.
    spare: Option<PathBuf>,
    /// The first file created, when its directory has no extended attributes.
    reference: Option<Reference>,
    /// Per directory: does a file created there get the reference's attributes?
    alike: HashMap<PathBuf, bool>,
    /// Cleared when the kernel or file system cannot exchange.
    exchange: bool,
}

impl Default for Replacer {
    fn default() -> Self {
        Replacer {
            spare: None,
            reference: None,
            alike: HashMap::new(),
            exchange: true,
        }
    }
}

impl Replacer {
    /// Write `content` to `target` (created if missing, parent directories included).
    /// `existed`: `target` was a regular file when the package was read, so its inode
    /// can be exchanged and recycled.
    pub fn write(&mut self, target: &Path, content: &[u8], existed: bool) -> io::Result<()> {
        let dir = target.parent().unwrap_or(Path::new(""));
        if !existed {
            std::fs::create_dir_all(dir)?;
        }
        let (tmp, file) = match self.take_spare(dir)? {
            Some(spare) => spare,
            None => self.create_temp(target, dir)?,
        };
        match self.place(tmp, file, target, content, existed) {
            // The spare is on another mount of the file system: start afresh beside
            // the target.
            Err(e) if e.kind() == io::ErrorKind::CrossesDevices => {
                let (tmp, file) = self.create_temp(target, dir)?;
                self.place(tmp, file, target, content, existed)
            }
            placed => placed,
        }
    }

    /// A new temporary file beside `target` (in `dir`).
    fn create_temp(&mut self, target: &Path, dir: &Path) -> io::Result<(PathBuf, File)> {
        let tmp = temp_path(target);
        let file = File::create(&tmp)?;
        if self.reference.is_none() {
            self.reference = sys::reference(dir, &file);
        }
        Ok((tmp, file))
    }

    /// Write `content` into the temporary file `tmp` and move it over `target`.
    fn place(
        &mut self,
        tmp: PathBuf,
        mut file: File,
        target: &Path,
        content: &[u8],
        existed: bool,
    ) -> io::Result<()> {
        // A recycled file may be longer than the new content.
        file.write_all(content)?;
        file.set_len(content.len() as u64)?;
        // kyaml rewrites a file in place (`O_TRUNC`), which keeps its mode: an executable
        // resource file stays executable.
        if existed
            && let Ok(meta) = std::fs::metadata(target)
            && file
                .metadata()
                .is_ok_and(|m| m.permissions() != meta.permissions())
        {
            file.set_permissions(meta.permissions())?;
        }
        drop(file);
        if existed && self.exchange {
            match sys::exchange(&tmp, target) {
                Exchange::Done => {
                    self.spare = Some(tmp);
                    return Ok(());
                }
                Exchange::Unsupported => self.exchange = false,
                // The target went away meanwhile: the rename creates it.
                Exchange::Failed(e) if e.kind() == io::ErrorKind::NotFound => {}
                Exchange::Failed(e) => {
                    // The target is untouched and the temporary file of no use.
                    remove_if_present(&tmp)?;
                    return Err(e);
                }
            }
        }
        std::fs::rename(&tmp, target)
    }

    /// The spare temporary file, opened for writing, if its inode may stand in for a
    /// file created in `dir`.
    fn take_spare(&mut self, dir: &Path) -> io::Result<Option<(PathBuf, File)>> {
        let Some(path) = self.spare.take() else {
            return Ok(None);
        };
        if let Some(reference) = self.reference
            && self.alike(dir, reference)
            // Whatever was at the last target is now here: never follow a link.
            && let Ok(file) = sys::open_no_follow(&path)
            && sys::recyclable(&file, reference)?
        {
            return Ok(Some((path, file)));
        }
        // Not reusable: gone, as after a rename (other links keep the old contents).
        remove_if_present(&path)?;
        Ok(None)
    }

    /// Does a file created in `dir` get the reference's attributes?
    fn alike(&mut self, dir: &Path, reference: Reference) -> bool {
        if let Some(&known) = self.alike.get(dir) {
            return known;
        }
        let alike = sys::dir_attrs(dir) == Some(reference.dir);
        self.alike.insert(dir.to_path_buf(), alike);
        alike
    }

    /// Remove the temporary file still held.
    pub fn finish(mut self) -> io::Result<()> {
        match self.spare.take() {
            Some(path) => remove_if_present(&path),
            None => Ok(()),
        }
    }
}

impl Drop for Replacer {
    fn drop(&mut self) {
        // After an error: best effort, the error being reported matters more.
        if let Some(path) = &self.spare {
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

    use rustix::fs::{
        CWD, Mode, OFlags, RenameFlags, flistxattr_query, listxattr_query, open, renameat_with,
    };
    use rustix::io::Errno;

    use super::{Exchange, Reference};

    /// What tells a new file from an older one besides its contents.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Attrs {
        mode: u32,
        uid: u32,
        gid: u32,
    }

    fn attrs(m: &Metadata) -> Attrs {
        Attrs {
            mode: m.permissions().mode() & 0o7777,
            uid: m.uid(),
            gid: m.gid(),
        }
    }

    /// What decides the attributes of a file created in a directory (with no
    /// extended attributes), and its file system.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct DirAttrs {
        attrs: Attrs,
        dev: u64,
    }

    /// The directory's, if it has no extended attributes.
    pub fn dir_attrs(dir: &Path) -> Option<DirAttrs> {
        let m = std::fs::metadata(dir).ok()?;
        (listxattr_query(dir).ok()? == 0).then(|| DirAttrs {
            attrs: attrs(&m),
            dev: m.dev(),
        })
    }

    /// The reference a file just created in `dir` gives, if it has one.
    pub fn reference(dir: &Path, file: &File) -> Option<Reference> {
        let m = file.metadata().ok()?;
        Some(Reference {
            dir: dir_attrs(dir)?,
            file: attrs(&m),
        })
    }

    /// An inode that cannot be told from a file just created as `reference` was.
    pub fn recyclable(file: &File, reference: Reference) -> io::Result<bool> {
        let m = file.metadata()?;
        Ok(m.is_file()
            && m.nlink() == 1
            && m.dev() == reference.dir.dev
            && attrs(&m) == reference.file
            && flistxattr_query(file)? == 0)
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
    use std::fs::File;
    use std::io;
    use std::path::Path;

    use super::{Exchange, Reference};

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Attrs;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct DirAttrs;

    pub fn dir_attrs(_: &Path) -> Option<DirAttrs> {
        None
    }

    pub fn reference(_: &Path, _: &File) -> Option<Reference> {
        None
    }

    pub fn recyclable(_: &File, _: Reference) -> io::Result<bool> {
        Ok(false)
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
    fn recycles_inodes_across_alike_directories_only() {
        let tmp = tempfile::tempdir().expect("tmp");
        let d = tmp.path();
        for name in ["x/a.yaml", "y/b.yaml", "z/c.yaml"] {
            std::fs::create_dir_all(d.join(name).parent().expect("dir")).expect("mkdir");
            std::fs::write(d.join(name), "old\n").expect("write");
        }
        // A new file in z would not get what one in x gets.
        std::fs::set_permissions(d.join("z"), std::fs::Permissions::from_mode(0o700))
            .expect("chmod");
        let old_a = ino(&d.join("x/a.yaml"));
        // Inode numbers are reused: a new file is told by its birth time.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let start = std::time::SystemTime::now();
        let mut r = Replacer::default();
        for name in ["x/a.yaml", "y/b.yaml", "z/c.yaml"] {
            r.write(&d.join(name), b"new\n", true).expect("write");
        }
        r.finish().expect("finish");
        assert_eq!(ino(&d.join("y/b.yaml")), old_a);
        if let Ok(born) = std::fs::metadata(d.join("z/c.yaml")).and_then(|m| m.created()) {
            assert!(born >= start, "z/c.yaml is a recycled inode");
        }
        for name in ["x/a.yaml", "y/b.yaml", "z/c.yaml"] {
            assert_eq!(
                std::fs::read_to_string(d.join(name)).expect("read"),
                "new\n"
            );
            let left: Vec<_> = std::fs::read_dir(d.join(name).parent().expect("dir"))
                .expect("ls")
                .collect();
            assert_eq!(left.len(), 1, "{name}: temporary files left");
        }
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
        // b.yaml keeps its own mode (kyaml rewrites in place); c.yaml did not get b's
        // old inode, so it has a fresh file's mode.
        for (name, mode) in [
            ("a.yaml", fresh_mode),
            ("b.yaml", 0o600),
            ("c.yaml", fresh_mode),
        ] {
            let m = std::fs::metadata(d.join(name)).expect("stat");
            assert_eq!(m.mode() & 0o7777, mode, "{name}");
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
