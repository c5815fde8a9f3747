//! Applies image layers (tar, optionally gzipped) onto a rootfs directory.
//!
//! Layers are applied in order with the OCI whiteout rules: `.wh.NAME` deletes `NAME` from
//! the layers below, `.wh..wh..opq` empties its directory of what the layers below put
//! there. Every path is resolved inside the rootfs: `..` and absolute names are refused, and
//! symlinks met on the way are followed as the container would see them (clamped at the
//! rootfs), so an image cannot make us write outside its own directory.

use std::collections::HashSet;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use crate::ContainerError;

const WHITEOUT: &str = ".wh.";
const OPAQUE: &str = ".wh..wh..opq";
/// Symlinks followed while resolving one path (Linux's own limit).
const MAX_LINKS: usize = 40;

fn unpack_err(reason: impl Into<String>) -> ContainerError {
    ContainerError::Unpack(reason.into())
}

/// The entry's path as clean relative components; `..` anywhere is refused.
fn clean(path: &Path) -> Result<Vec<String>, ContainerError> {
    let mut parts = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::CurDir | Component::RootDir => {}
            Component::ParentDir | Component::Prefix(_) => {
                return Err(unpack_err(format!(
                    "layer entry {} escapes the image root",
                    path.display()
                )));
            }
        }
    }
    Ok(parts)
}

/// Resolves `parts` inside `root`, following every symlink as the container would.
pub(crate) fn resolve_in(root: &Path, parts: &[String]) -> Result<PathBuf, ContainerError> {
    // `stack` holds the resolved components below root; `todo` what is left, reversed.
    let mut stack: Vec<String> = Vec::new();
    let mut todo: Vec<String> = parts.iter().rev().cloned().collect();
    let mut links = 0;
    while let Some(part) = todo.pop() {
        if part == ".." {
            stack.pop();
            continue;
        }
        if part == "." || part.is_empty() {
            continue;
        }
        let mut here: PathBuf = root.to_path_buf();
        here.extend(&stack);
        here.push(&part);
        match fs::symlink_metadata(&here) {
            Ok(m) if m.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(unpack_err("too many symlinks in a layer path"));
                }
                let target = fs::read_link(&here)?;
                if target.is_absolute() {
                    stack.clear();
                }
                for c in target.components().rev() {
                    match c {
                        Component::Normal(p) => todo.push(p.to_string_lossy().into_owned()),
                        Component::ParentDir => todo.push("..".into()),
                        _ => {}
                    }
                }
            }
            _ => stack.push(part),
        }
    }
    let mut out = root.to_path_buf();
    out.extend(&stack);
    Ok(out)
}

fn remove_any(path: &Path) -> std::io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn ensure_dir(path: &Path) -> std::io::Result<()> {
    fs::create_dir_all(path)
}

/// Applies one layer blob (gzip or plain tar) onto `root`.
pub fn apply_layer(root: &Path, blob: impl Read) -> Result<(), ContainerError> {
    let mut unbounded = u64::MAX;
    apply_layer_limited(root, blob, &mut unbounded)
}

/// [`apply_layer`] writing at most `remaining` bytes of file content (decreased as it
/// goes): a small compressed layer can expand without bound, and the image must fit the
/// cache.
pub fn apply_layer_limited(
    root: &Path,
    blob: impl Read,
    remaining: &mut u64,
) -> Result<(), ContainerError> {
    let mut reader = BufReader::new(blob);
    let head = reader.fill_buf()?;
    if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        return Err(unpack_err("zstd-compressed layers are not supported"));
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        apply_tar(root, flate2::read::GzDecoder::new(reader), remaining)
    } else {
        apply_tar(root, reader, remaining)
    }
}

fn apply_tar(root: &Path, reader: impl Read, remaining: &mut u64) -> Result<(), ContainerError> {
    let mut archive = tar::Archive::new(reader);
    // What this layer created: an opaque marker only hides the layers below.
    let mut created: HashSet<PathBuf> = HashSet::new();
    for entry in archive.entries()? {
        let mut entry = entry?;
        let raw = entry.path()?.into_owned();
        let parts = clean(&raw)?;
        let Some(name) = parts.last().cloned() else {
            continue;
        };
        let parent = resolve_in(root, &parts[..parts.len() - 1])?;
        if name == OPAQUE {
            if let Ok(children) = fs::read_dir(&parent) {
                for child in children.flatten() {
                    if !created.contains(&child.path()) {
                        remove_any(&child.path())?;
                    }
                }
            }
            continue;
        }
        if let Some(hidden) = name.strip_prefix(WHITEOUT) {
            remove_any(&parent.join(hidden))?;
            continue;
        }
        ensure_dir(&parent)?;
        let target = parent.join(&name);
        let kind = entry.header().entry_type();
        let mode = entry.header().mode().unwrap_or(0o644) & 0o777;
        let existing = fs::symlink_metadata(&target).ok();
        if !(kind.is_dir() && existing.as_ref().is_some_and(|m| m.is_dir())) {
            remove_any(&target)?;
        }
        match kind {
            k if k.is_dir() => {
                ensure_dir(&target)?;
                // Owner keeps write access so the cache can delete the tree later.
                fs::set_permissions(&target, fs::Permissions::from_mode(mode | 0o700))?;
            }
            k if k.is_file() || k == tar::EntryType::Continuous => {
                let mut file = fs::File::create(&target)?;
                let limit = remaining.saturating_add(1);
                let written = std::io::copy(&mut (&mut entry).take(limit), &mut file)?;
                if written > *remaining {
                    return Err(unpack_err(
                        "the unpacked image is larger than the function image cache",
                    ));
                }
                *remaining -= written;
                fs::set_permissions(&target, fs::Permissions::from_mode(mode))?;
            }
            k if k.is_symlink() => {
                let link = entry.link_name()?.ok_or_else(|| {
                    unpack_err(format!("symlink {} has no target", raw.display()))
                })?;
                std::os::unix::fs::symlink(link.as_ref(), &target)?;
            }
            k if k.is_hard_link() => {
                let link = entry.link_name()?.ok_or_else(|| {
                    unpack_err(format!("hard link {} has no target", raw.display()))
                })?;
                let link_parts = clean(&link)?;
                let source = resolve_in(root, &link_parts)?;
                fs::hard_link(&source, &target)?;
            }
            // Devices, fifos: a function has no use for them and we could not create devices.
            _ => continue,
        }
        created.insert(target);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(entries: &[(&str, tar::EntryType, &str)]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (path, kind, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(*kind);
            h.set_mode(if kind.is_dir() { 0o755 } else { 0o644 });
            if kind.is_symlink() || kind.is_hard_link() {
                h.set_size(0);
                b.append_link(&mut h, path, data).expect("link");
            } else {
                h.set_size(data.len() as u64);
                // append_data refuses `..`, so write the raw name for hostile entries.
                let name = h.as_old_mut().name.as_mut();
                name[..path.len()].copy_from_slice(path.as_bytes());
                h.set_cksum();
                b.append(&h, data.as_bytes()).expect("append");
            }
        }
        b.into_inner().expect("tar")
    }

    use tar::EntryType::{Directory as D, Regular as F, Symlink as L};

    #[test]
    fn whiteouts_and_opaque_dirs_hide_lower_layers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        apply_layer(
            root,
            &layer(&[
                ("etc/", D, ""),
                ("etc/a", F, "a"),
                ("etc/b", F, "b"),
                ("opt/", D, ""),
                ("opt/old", F, "old"),
            ])[..],
        )
        .expect("layer 1");
        apply_layer(
            root,
            &layer(&[
                ("etc/.wh.a", F, ""),
                ("opt/new", F, "new"),
                ("opt/.wh..wh..opq", F, ""),
            ])[..],
        )
        .expect("layer 2");
        assert!(!root.join("etc/a").exists());
        assert_eq!(fs::read_to_string(root.join("etc/b")).expect("b"), "b");
        assert!(!root.join("opt/old").exists());
        assert_eq!(
            fs::read_to_string(root.join("opt/new")).expect("new"),
            "new"
        );
    }

    #[test]
    fn entries_cannot_escape_the_root() {
        let outer = tempfile::tempdir().expect("tempdir");
        let root = outer.path().join("rootfs");
        fs::create_dir(&root).expect("mkdir");
        let err = apply_layer(&root, &layer(&[("../evil", F, "x")])[..]).expect_err("refused");
        assert!(err.to_string().contains("escapes"), "{err}");
        assert!(!outer.path().join("evil").exists());
        // A symlink pointing out of the image is followed inside the image instead.
        apply_layer(
            &root,
            &layer(&[("lib", L, "/../../.."), ("lib/evil", F, "x")])[..],
        )
        .expect("clamped");
        assert!(!outer.path().join("evil").exists());
        assert!(root.join("evil").exists());
    }

    #[test]
    fn unpacked_size_is_bounded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = layer(&[("a", F, "0123456789"), ("b", F, "0123456789")]);
        let mut room = 15;
        let err = apply_layer_limited(dir.path(), &data[..], &mut room).expect_err("too big");
        assert!(err.to_string().contains("larger"), "{err}");
        let mut room = 20;
        apply_layer_limited(dir.path(), &data[..], &mut room).expect("fits");
        assert_eq!(room, 0);
    }

    #[test]
    fn gzip_layers_are_detected() {
        use std::io::Write;
        let dir = tempfile::tempdir().expect("tempdir");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&layer(&[("hello", F, "hi")])).expect("gz");
        let data = gz.finish().expect("gz");
        apply_layer(dir.path(), &data[..]).expect("applied");
        assert_eq!(
            fs::read_to_string(dir.path().join("hello")).expect("read"),
            "hi"
        );
    }
}
