//! Local bare mirrors and their worker threads.
//!
//! One mirror per remote URL under `<data_dir>/git/`, shared by every registration of that
//! URL. All git work on a mirror runs on its own OS thread, one job at a time: git2 is
//! blocking and a `git2::Repository` is not `Sync`, and serializing per mirror means a
//! publish can never interleave with a fetch of the same repository. Different mirrors
//! work in parallel.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak, mpsc};

use crate::discovery::RepoIndex;
use crate::error::GitError;
use crate::objects::Caches;
use crate::refs::mirror_dir_name;

type Job = Box<dyn FnOnce(&mut MirrorState) + Send>;

/// State owned by a mirror's worker thread.
pub(crate) struct MirrorState {
    /// The bare mirror.
    pub repo: git2::Repository,
    /// Its directory.
    pub path: PathBuf,
    /// Object-level caches shared by the registrations of this URL.
    pub caches: Caches,
    /// Per-registration discovery state, by registration id.
    pub indexes: HashMap<u64, RepoIndex>,
    /// Ref updates since the commit-graph was last written (see [`crate::maintenance`]).
    pub graph_debt: usize,
    /// A running `git commit-graph write`, reaped when the worker is next idle.
    pub graph_writer: Option<std::process::Child>,
    /// In-process smart-HTTP sessions (HTTP client, cached capabilities).
    pub sessions: crate::smart::Sessions,
    /// Names of the refs this worker changed, so discovery re-reads only those.
    pub ref_log: RefLog,
    /// The mirror's branches and tags as this worker last set them (`None`: read them from
    /// disk next time), so a sync compares the advertisement without listing 5,000 refs.
    pub local_refs: Option<HashMap<String, git2::Oid>>,
}

/// The refs a mirror's worker moved, in order, so each registration's discovery can catch up
/// by re-reading just those instead of all refs (thousands of tags). A registration that fell
/// behind the kept window, or any change not logged (a clone, a failed update), re-reads all.
#[derive(Debug, Default)]
pub(crate) struct RefLog {
    /// Position of `names[0]`.
    base: u64,
    names: Vec<String>,
}

impl RefLog {
    /// Names kept; a registration further behind re-reads all refs.
    const KEEP: usize = 4096;

    /// Position after the last logged change.
    pub(crate) fn end(&self) -> u64 {
        self.base + self.names.len() as u64
    }

    /// Logs changed refs (local names).
    pub(crate) fn record<I: IntoIterator<Item = String>>(&mut self, names: I) {
        self.names.extend(names);
        if self.names.len() > Self::KEEP {
            let drop = self.names.len() - Self::KEEP / 2;
            self.names.drain(..drop);
            self.base += drop as u64;
        }
    }

    /// Refs may have changed in ways not logged: everyone re-reads all refs.
    pub(crate) fn invalidate(&mut self) {
        self.base = self.end() + 1;
        self.names.clear();
    }

    /// The refs changed since position `seen`, if the log still covers it.
    pub(crate) fn since(&self, seen: u64) -> Option<&[String]> {
        let from = seen.checked_sub(self.base)?;
        self.names.get(usize::try_from(from).ok()?..)
    }
}

/// Handle to a mirror's worker.
pub(crate) struct Mirror {
    url: String,
    path: PathBuf,
    tx: mpsc::Sender<Job>,
}

impl Mirror {
    fn open(path: PathBuf, url: &str) -> Result<Arc<Mirror>, GitError> {
        let repo = if path.join("HEAD").is_file() {
            remove_stale_locks(&path)?;
            git2::Repository::open_bare(&path)?
        } else {
            std::fs::create_dir_all(&path)?;
            let mut opts = git2::RepositoryInitOptions::new();
            opts.bare(true).initial_head("main");
            git2::Repository::init_opts(&path, &opts)?
        };
        let (tx, rx) = mpsc::channel::<Job>();
        let mut state = MirrorState {
            repo,
            path: path.clone(),
            caches: Caches::default(),
            indexes: HashMap::new(),
            graph_debt: 0,
            graph_writer: None,
            sessions: crate::smart::Sessions::default(),
            ref_log: RefLog::default(),
            local_refs: None,
        };
        std::thread::Builder::new()
            .name(format!("git-mirror:{}", mirror_dir_name(url)))
            .spawn(move || {
                // Exits when every handle (and so every sender) is dropped. Housekeeping
                // runs only when no job is waiting, so it never delays a queued operation.
                loop {
                    let job = match rx.try_recv() {
                        Ok(job) => job,
                        Err(mpsc::TryRecvError::Empty) => {
                            crate::maintenance::when_idle(&mut state);
                            match rx.recv() {
                                Ok(job) => job,
                                Err(_) => break,
                            }
                        }
                        Err(mpsc::TryRecvError::Disconnected) => break,
                    };
                    job(&mut state);
                }
                crate::maintenance::finish(&mut state);
            })?;
        Ok(Arc::new(Mirror {
            url: url.to_owned(),
            path,
            tx,
        }))
    }

    /// The mirror directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` on the worker thread and waits for its result without blocking the runtime.
    pub(crate) async fn run<R, F>(&self, f: F) -> Result<R, GitError>
    where
        R: Send + 'static,
        F: FnOnce(&mut MirrorState) -> R + Send + 'static,
    {
        let (done, wait) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |state| {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(state)));
            match result {
                Ok(r) => {
                    let _ = done.send(r);
                }
                Err(_) => tracing::error!("git mirror job panicked"),
            }
        });
        self.tx
            .send(job)
            .map_err(|_| GitError::WorkerGone(self.url.clone()))?;
        wait.await
            .map_err(|_| GitError::WorkerGone(self.url.clone()))
    }

    /// Queues `f` without waiting (cleanup on drop).
    pub(crate) fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&mut MirrorState) + Send + 'static,
    {
        let _ = self.tx.send(Box::new(f));
    }
}

/// A crash (SIGKILL) can leave `*.lock` files behind; libgit2 and git would then refuse
/// to update those refs forever. The data directory belongs to one process, so any lock
/// present when we open the mirror is stale.
fn remove_stale_locks(dir: &Path) -> Result<(), GitError> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let ft = entry.file_type()?;
        if ft.is_dir() {
            if entry.file_name() != "objects" {
                remove_stale_locks(&path)?;
            }
        } else if path.extension().is_some_and(|e| e == "lock") {
            tracing::warn!(path = %path.display(), "removing stale git lock file");
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Mirrors by URL, shared between registrations; a mirror lives while a registration uses it.
pub struct MirrorPool {
    root: PathBuf,
    mirrors: Mutex<HashMap<String, Weak<Mirror>>>,
}

impl MirrorPool {
    /// Mirrors go to `<data_dir>/git/`.
    ///
    /// Also turns off libgit2's process-wide object cache: discovery memoizes what it needs
    /// by object id, and libgit2's cache (up to 256 MiB) otherwise dominates listing memory
    /// (measured: 1,000 packages × 5 revisions, +103 MiB with it, +65 MiB without, same speed).
    pub fn new(data_dir: &Path) -> Self {
        git2::opts::enable_caching(false);
        MirrorPool {
            root: data_dir.join("git"),
            mirrors: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn get(&self, url: &str) -> Result<Arc<Mirror>, GitError> {
        let mut map = self
            .mirrors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(m) = map.get(url).and_then(Weak::upgrade) {
            return Ok(m);
        }
        let m = Mirror::open(self.root.join(mirror_dir_name(url)), url)?;
        map.insert(url.to_owned(), Arc::downgrade(&m));
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::RefLog;

    #[test]
    fn ref_log_serves_what_changed_since_a_position() {
        let mut log = RefLog::default();
        let start = log.end();
        log.record(["refs/heads/main".to_owned(), "refs/tags/p/v1".to_owned()]);
        let mid = log.end();
        log.record(["refs/heads/drafts/p/ws".to_owned()]);
        assert_eq!(log.since(start).map(<[String]>::len), Some(3));
        assert_eq!(
            log.since(mid),
            Some(&["refs/heads/drafts/p/ws".to_owned()][..])
        );
        assert_eq!(log.since(log.end()).map(<[String]>::len), Some(0));
        log.invalidate();
        assert_eq!(log.since(mid), None, "an invalidated log covers nobody");
        let after = log.end();
        log.record((0..RefLog::KEEP + 1).map(|i| format!("refs/tags/p/v{i}")));
        assert_eq!(log.since(after), None, "fell behind the kept window");
        assert!(log.since(log.end() - 10).is_some());
    }
}
