//! Local bare mirrors and their worker threads.
//!
//! One mirror per remote URL under `<data_dir>/git/`, shared by every registration of that
//! URL. All git work on a mirror runs on a worker thread of its own, one job at a time:
//! git2 is blocking and a `git2::Repository` is not `Sync`, and serializing per mirror
//! means a publish can never interleave with a fetch of the same repository. Different
//! mirrors work in parallel. The worker thread exists only while jobs are queued.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, Weak};

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
    /// Which commits carry creation tasks, for `spec.tasks` (see [`crate::tasks`]).
    pub tasks: crate::tasks::TaskIndex,
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

impl MirrorState {
    /// A fresh state for the mirror `repo` at `path`.
    pub(crate) fn new(repo: git2::Repository, path: PathBuf) -> Self {
        MirrorState {
            repo,
            path,
            caches: Caches::default(),
            tasks: crate::tasks::TaskIndex::default(),
            indexes: HashMap::new(),
            graph_debt: 0,
            graph_writer: None,
            sessions: crate::smart::Sessions::default(),
            ref_log: RefLog::default(),
            local_refs: None,
        }
    }
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
///
/// Jobs queue in order and run one at a time on a worker thread that exists only while
/// there is work: the first job queued on an idle mirror starts a thread, which runs
/// every queued job, then the idle-time housekeeping, and ends when no job has come for
/// [`LINGER`] (so a caller issuing jobs one after another, such as reading a Kptfile per
/// revision, does not start a thread per job).
/// A permanent thread per mirror would keep the memory its jobs freed: allocators with
/// per-thread heaps (mimalloc, glibc's arenas) give a thread's free pages back only when
/// that thread next allocates or exits, and a hundred idle mirror threads held hundreds of
/// MiB that way (measured with 100 repositories, 608 MiB of heap for 150 MiB live).
pub(crate) struct Mirror {
    url: String,
    path: PathBuf,
    shared: Arc<Shared>,
}

/// How long an idle worker waits for another job before its thread ends.
const LINGER: std::time::Duration = std::time::Duration::from_millis(200);

struct Shared {
    queue: Mutex<Queue>,
    /// Signalled when a job is queued or the mirror closes.
    wake: Condvar,
}

struct Queue {
    jobs: VecDeque<Job>,
    /// The state while no worker runs; a worker takes it and puts it back when done.
    state: Option<MirrorState>,
    /// The last handle is gone: the worker finishes the state instead of keeping it.
    closed: bool,
    thread_name: String,
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
        let state = MirrorState::new(repo, path.clone());
        Ok(Arc::new(Mirror {
            url: url.to_owned(),
            path,
            shared: Arc::new(Shared {
                queue: Mutex::new(Queue {
                    jobs: VecDeque::new(),
                    state: Some(state),
                    closed: false,
                    thread_name: format!("git-mirror:{}", mirror_dir_name(url)),
                }),
                wake: Condvar::new(),
            }),
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
        self.enqueue(job)?;
        wait.await
            .map_err(|_| GitError::WorkerGone(crate::redact::redact_url(&self.url)))
    }

    /// Queues `f` without waiting (cleanup on drop).
    pub(crate) fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&mut MirrorState) + Send + 'static,
    {
        if let Err(e) = self.enqueue(Box::new(f)) {
            tracing::warn!(error = %e, "git mirror job not run");
        }
    }

    /// Queues a job and starts a worker if none is running.
    fn enqueue(&self, job: Job) -> Result<(), GitError> {
        let (state, name) = {
            let mut q = lock(&self.shared.queue);
            q.jobs.push_back(job);
            match q.state.take() {
                Some(state) => (state, q.thread_name.clone()),
                // A worker is running (or lingering); it takes the job before it stops.
                None => {
                    self.shared.wake.notify_one();
                    return Ok(());
                }
            }
        };
        let shared = Arc::clone(&self.shared);
        // The state moves into the closure; if the thread cannot start, `spawn` hands the
        // closure back only inside its error, so keep a way to restore the state.
        let slot: Arc<Mutex<Option<MirrorState>>> = Arc::new(Mutex::new(Some(state)));
        let for_worker = Arc::clone(&slot);
        let started = std::thread::Builder::new().name(name).spawn(move || {
            if let Some(state) = lock(&for_worker).take() {
                work(&shared, state);
            }
        });
        if let Err(e) = started {
            let mut q = lock(&self.shared.queue);
            // Nothing can run the queued jobs: drop them (their callers see WorkerGone).
            q.jobs.clear();
            q.state = lock(&slot).take();
            return Err(GitError::Io(e));
        }
        Ok(())
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        let idle = {
            let mut q = lock(&self.shared.queue);
            q.closed = true;
            q.state.take()
        };
        self.shared.wake.notify_one();
        // An idle mirror is finished on a thread of its own: finishing waits for a running
        // commit-graph writer, and the state owns an HTTP runtime, which must not be
        // dropped inside the async context the last handle may be dropped in. A running
        // worker finishes the state itself when its queue empties.
        if let Some(mut state) = idle {
            let spawned = std::thread::Builder::new()
                .name("git-mirror-close".into())
                .spawn(move || crate::maintenance::finish(&mut state));
            if let Err(e) = spawned {
                tracing::warn!(error = %e, path = %self.path.display(), "cannot close git mirror");
            }
        }
    }
}

/// A worker: runs queued jobs in order, then housekeeping, and stops when nothing is queued.
fn work(shared: &Shared, mut state: MirrorState) {
    loop {
        let next = lock(&shared.queue).jobs.pop_front();
        if let Some(job) = next {
            job(&mut state);
            continue;
        }
        // Housekeeping only when no job is waiting, so it never delays a queued operation.
        crate::maintenance::when_idle(&mut state);
        let mut q = lock(&shared.queue);
        if q.jobs.is_empty() && !q.closed {
            q = shared
                .wake
                .wait_timeout_while(q, LINGER, |q| q.jobs.is_empty() && !q.closed)
                .map(|(q, _)| q)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        if !q.jobs.is_empty() {
            continue;
        }
        if q.closed {
            drop(q);
            crate::maintenance::finish(&mut state);
        } else {
            q.state = Some(state);
        }
        return;
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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
    ///
    /// And its re-hashing of every object read: a mirror's objects were verified when
    /// `index-pack` received them or were written by us, as git itself trusts its object
    /// store (in a profile of history walks, SHA-1 was about 40% of their CPU).
    pub fn new(data_dir: &Path) -> Self {
        git2::opts::enable_caching(false);
        git2::opts::strict_hash_verification(false);
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
    use super::{Mirror, RefLog};
    use std::sync::{Arc, Mutex};

    fn worker_name() -> String {
        std::thread::current().name().unwrap_or_default().to_owned()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn jobs_run_in_order_one_at_a_time_on_a_worker_that_comes_and_goes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mirror = Mirror::open(dir.path().join("m.git"), "file:///m.git").expect("open");
        let log: Arc<Mutex<Vec<usize>>> = Arc::default();
        let busy = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut waits = Vec::new();
        for i in 0..20 {
            let (log, busy) = (log.clone(), busy.clone());
            let m = mirror.clone();
            waits.push(tokio::spawn(async move {
                m.run(move |state| {
                    use std::sync::atomic::Ordering::SeqCst;
                    assert!(!busy.swap(true, SeqCst), "two jobs ran at once");
                    assert!(state.path.ends_with("m.git"));
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    log.lock().expect("log").push(i);
                    busy.store(false, SeqCst);
                    worker_name()
                })
                .await
            }));
        }
        for w in waits {
            let name = w.await.expect("join").expect("job ran");
            assert_eq!(name, "git-mirror:file----m.git");
        }
        assert_eq!(log.lock().expect("log").len(), 20);
        // Jobs queued one after another run in that order.
        log.lock().expect("log").clear();
        for i in 0..20 {
            let log = log.clone();
            mirror.spawn(move |_| log.lock().expect("log").push(i));
        }
        mirror.run(|_| ()).await.expect("last job");
        assert_eq!(*log.lock().expect("log"), (0..20).collect::<Vec<_>>());
        // The worker is gone once idle; the next job starts another and sees the same state.
        let first = mirror
            .run(|state| {
                state.graph_debt = 7;
                std::thread::current().id()
            })
            .await
            .expect("job");
        let again = mirror
            .run(|_| std::thread::current().id())
            .await
            .expect("job");
        assert_eq!(first, again, "a job right after another reuses the worker");
        tokio::time::sleep(super::LINGER * 2).await;
        let (second, debt) = mirror
            .run(|state| (std::thread::current().id(), state.graph_debt))
            .await
            .expect("job");
        assert_ne!(first, second, "an idle mirror keeps no thread");
        assert_eq!(debt, 7, "state survives between workers");
    }

    #[tokio::test]
    async fn a_job_queued_before_the_last_handle_drops_still_runs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mirror = Mirror::open(dir.path().join("m.git"), "file:///m.git").expect("open");
        let (tx, rx) = std::sync::mpsc::channel();
        mirror.spawn(move |_| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            let _ = tx.send("ran");
        });
        // Dropped inside the runtime: must neither panic nor lose the queued job.
        drop(mirror);
        let got =
            tokio::task::spawn_blocking(move || rx.recv_timeout(std::time::Duration::from_secs(5)))
                .await
                .expect("join");
        assert_eq!(got, Ok("ran"));
    }

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
