//! The on-disk cache of unpacked images.
//!
//! ```text
//! <root>/refs/<sha256 of reference>   manifest digest the reference resolved to
//! <root>/images/<digest>/rootfs/      the unpacked layers
//! <root>/images/<digest>/config.json  the image config blob
//! <root>/images/<digest>/size         bytes of rootfs (for eviction)
//! <root>/images/<digest>/last-used    its mtime orders eviction (least recently used first)
//! <root>/locks/                       advisory file locks
//! <root>/tmp/                         staging of pulls, trash of evictions
//! ```
//!
//! An image directory appears by one rename once complete, so a reader never sees half an
//! image. A pull holds the reference's lock exclusively (a second pull of the same image
//! waits and then finds it cached); a run holds the image's lock shared, and eviction only
//! removes images whose lock it can take exclusively at once.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use fd_lock::RwLock;
use sha2::{Digest, Sha256};

use crate::ContainerError;
use crate::image::RunConfig;

/// Age after which a staging directory is abandoned work.
const STALE_STAGING: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

fn remove_tree(path: &Path) -> std::io::Result<()> {
    if fs::symlink_metadata(path)?.is_dir() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    }
}

/// An image ready to run.
#[derive(Debug, Clone)]
pub struct CachedImage {
    /// Manifest digest (`sha256:…`).
    pub digest: String,
    /// Its cache directory.
    pub dir: PathBuf,
    /// Entrypoint, env, user…
    pub config: RunConfig,
}

impl CachedImage {
    /// The unpacked filesystem.
    pub fn rootfs(&self) -> PathBuf {
        self.dir.join("rootfs")
    }
}

/// The cache rooted at a directory, bounded to `max_bytes` of unpacked images.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
    max_bytes: u64,
}

fn hex_sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn dir_name(digest: &str) -> String {
    digest.replace(':', "-")
}

/// Bytes of regular files under `path` (symlinks not followed).
fn tree_size(path: &Path) -> u64 {
    let mut total = 0;
    let mut todo = vec![path.to_path_buf()];
    while let Some(dir) = todo.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => todo.push(e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

fn touch(path: &Path) -> std::io::Result<()> {
    fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?
        .set_modified(SystemTime::now())
}

impl Cache {
    /// Opens (creating) the cache at `root`.
    pub fn open(root: impl Into<PathBuf>, max_bytes: u64) -> Result<Self, ContainerError> {
        let root = root.into();
        for sub in ["refs", "images", "locks", "tmp"] {
            fs::create_dir_all(root.join(sub))?;
        }
        // Staging left by a process that died mid-pull; a live pull is never this old.
        if let Ok(entries) = fs::read_dir(root.join("tmp")) {
            for e in entries.flatten() {
                let stale = e
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > STALE_STAGING);
                if stale {
                    let _ = remove_tree(&e.path());
                }
            }
        }
        Ok(Cache { root, max_bytes })
    }

    /// The cache directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn lock_file(&self, name: &str) -> Result<RwLock<fs::File>, ContainerError> {
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.root.join("locks").join(name))?;
        Ok(RwLock::new(file))
    }

    /// The lock a pull of `reference` holds exclusively.
    pub fn ref_lock(&self, reference: &str) -> Result<RwLock<fs::File>, ContainerError> {
        self.lock_file(&format!("ref-{}", hex_sha256(reference)))
    }

    /// The lock a run of the image holds shared (eviction waits for none).
    pub fn image_lock(&self, digest: &str) -> Result<RwLock<fs::File>, ContainerError> {
        self.lock_file(&format!("img-{}", dir_name(digest)))
    }

    /// The image `reference` resolved to when it was pulled, if still cached; marks it used.
    pub fn lookup(&self, reference: &str) -> Option<CachedImage> {
        let digest = fs::read_to_string(self.root.join("refs").join(hex_sha256(reference))).ok()?;
        self.image(digest.trim())
    }

    /// The cached image of a manifest digest; marks it used.
    pub fn image(&self, digest: &str) -> Option<CachedImage> {
        let dir = self.root.join("images").join(dir_name(digest));
        let text = fs::read_to_string(dir.join("config.json")).ok()?;
        let config = RunConfig::from_json(&text).ok()?;
        let _ = touch(&dir.join("last-used"));
        Some(CachedImage {
            digest: digest.to_string(),
            dir,
            config,
        })
    }

    /// A fresh staging directory for a pull (removed when dropped unless inserted).
    pub fn staging(&self) -> Result<tempfile::TempDir, ContainerError> {
        Ok(tempfile::Builder::new()
            .prefix("pull-")
            .tempdir_in(self.root.join("tmp"))?)
    }

    /// Moves a complete staging directory (`rootfs/` and `config.json`) into the cache as the
    /// image `digest`, records that `reference` resolves to it, and evicts what no longer fits.
    pub fn insert(
        &self,
        reference: &str,
        digest: &str,
        staging: tempfile::TempDir,
    ) -> Result<CachedImage, ContainerError> {
        let size = tree_size(&staging.path().join("rootfs"));
        fs::write(staging.path().join("size"), size.to_string())?;
        touch(&staging.path().join("last-used"))?;
        let dest = self.root.join("images").join(dir_name(digest));
        if !dest.join("config.json").exists() {
            let path = staging.keep();
            if let Err(e) = fs::rename(&path, &dest) {
                // Another reference with the same digest won the race: theirs is as good.
                let _ = fs::remove_dir_all(&path);
                if !dest.join("config.json").exists() {
                    return Err(e.into());
                }
            }
        }
        // The ref file is written whole by a rename, so readers see old or new.
        let refs = self.root.join("refs");
        let tmp = tempfile::NamedTempFile::new_in(&refs)?;
        fs::write(tmp.path(), digest)?;
        tmp.persist(refs.join(hex_sha256(reference)))
            .map_err(|e| ContainerError::Io(e.error))?;
        self.evict(digest);
        self.image(digest).ok_or_else(|| {
            ContainerError::Config(format!("image {digest} vanished from the cache"))
        })
    }

    /// Removes least recently used images until the cache fits, never `keep` and never an
    /// image that is running.
    pub fn evict(&self, keep: &str) {
        let Ok(entries) = fs::read_dir(self.root.join("images")) else {
            return;
        };
        let mut images: Vec<(SystemTime, u64, PathBuf, String)> = entries
            .flatten()
            .map(|e| {
                let dir = e.path();
                let used = fs::metadata(dir.join("last-used"))
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                let size = fs::read_to_string(dir.join("size"))
                    .ok()
                    .and_then(|s| s.trim().parse().ok())
                    .unwrap_or(0);
                let name = e.file_name().to_string_lossy().into_owned();
                (used, size, dir, name)
            })
            .collect();
        let mut total: u64 = images.iter().map(|i| i.1).sum();
        images.sort_by_key(|i| i.0);
        for (_, size, dir, name) in images {
            if total <= self.max_bytes {
                break;
            }
            if name == dir_name(keep) {
                continue;
            }
            let Ok(mut lock) = self.lock_file(&format!("img-{name}")) else {
                continue;
            };
            let Ok(_held) = lock.try_write() else {
                continue; // running right now
            };
            let trash = self.root.join("tmp").join(format!("evict-{name}"));
            if fs::rename(&dir, &trash).is_ok() {
                let _ = fs::remove_dir_all(&trash);
                total = total.saturating_sub(size);
                tracing::info!(image = %name, bytes = size, "evicted function image from the cache");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn staged(cache: &Cache, bytes: usize) -> tempfile::TempDir {
        let s = cache.staging().expect("staging");
        fs::create_dir(s.path().join("rootfs")).expect("mkdir");
        fs::write(s.path().join("rootfs/blob"), vec![0u8; bytes]).expect("write");
        fs::write(s.path().join("config.json"), "{}").expect("write");
        s
    }

    #[test]
    fn least_recently_used_images_are_evicted_but_not_running_ones() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::open(dir.path(), 250).expect("open");
        cache
            .insert("a", "sha256:aa", staged(&cache, 100))
            .expect("a");
        std::thread::sleep(std::time::Duration::from_millis(20));
        cache
            .insert("b", "sha256:bb", staged(&cache, 100))
            .expect("b");
        std::thread::sleep(std::time::Duration::from_millis(20));
        // Using `a` makes `b` the oldest.
        assert!(cache.lookup("a").is_some());
        std::thread::sleep(std::time::Duration::from_millis(20));
        cache
            .insert("c", "sha256:cc", staged(&cache, 100))
            .expect("c");
        assert!(cache.lookup("b").is_none(), "b was least recently used");
        assert!(cache.lookup("a").is_some());
        assert!(cache.lookup("c").is_some());

        // A running image is skipped: `c` is older than `a` now but held.
        let lock = cache.image_lock("sha256:cc").expect("lock");
        let _running = lock.read().expect("read lock");
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(cache.lookup("a").is_some());
        cache
            .insert("d", "sha256:dd", staged(&cache, 100))
            .expect("d");
        assert!(cache.lookup("c").is_some(), "running image kept");
        assert!(cache.lookup("a").is_none(), "next oldest evicted instead");
        assert!(cache.lookup("d").is_some());
    }
}
