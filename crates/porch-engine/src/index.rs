//! The in-memory index: every revision of every registered repository, fed by repository
//! listings/change reports (git) and by the engine's own store writes (drafts). Reads never
//! touch git or the store. Views carry Porch's object names and the computed
//! latest-revision label; every mutation is diffed into [`EngineEvent`]s.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use porch_core::lifecycle::Lifecycle;
use porch_core::names::{PackagePath, RepositoryName};
use porch_core::repository::ChangeReport;
use porch_core::revision::PackageRevisionMeta;
use porch_core::store::EventType;

use crate::drafts::DraftMeta;
use crate::model::{EngineEvent, LATEST_REVISION_LABEL, Origin, PackageRevision};

/// Repositories are identified by (namespace, name).
pub(crate) type RepoId = (String, RepositoryName);

/// What one repository holds.
#[derive(Debug, Default)]
pub(crate) struct RepoIndex {
    /// Revisions found in git, by object name.
    pub git: BTreeMap<String, PackageRevisionMeta>,
    /// Drafts/proposed revisions in the store, by object name (they shadow git entries).
    pub drafts: BTreeMap<String, DraftMeta>,
    /// Has a full listing been loaded?
    pub loaded: bool,
    /// Last sync error, if the last sync failed.
    pub error: Option<String>,
}

impl RepoIndex {
    /// Replace the git entries with a full listing.
    pub(crate) fn replace_git(&mut self, metas: Vec<PackageRevisionMeta>) {
        self.git = metas
            .into_iter()
            .map(|m| (m.key.name().as_str().to_owned(), m))
            .collect();
        self.loaded = true;
        self.error = None;
    }

    /// Replace the git entries of one package with a fresh listing of it.
    pub(crate) fn replace_package(
        &mut self,
        package: &PackagePath,
        metas: Vec<PackageRevisionMeta>,
    ) {
        self.git.retain(|_, m| m.key.package != *package);
        for m in metas {
            self.git.insert(m.key.name().as_str().to_owned(), m);
        }
    }

    /// Apply a sync's change report.
    pub(crate) fn apply_report(&mut self, report: ChangeReport) {
        for key in report.removed {
            let name = key.name();
            // Only drop the entry if it is the same revision (a name is reused on publish).
            if self
                .git
                .get(name.as_str())
                .is_some_and(|m| m.key.revision == key.revision)
            {
                self.git.remove(name.as_str());
            }
        }
        for mut m in report.added.into_iter().chain(report.changed) {
            let name = m.key.name().as_str().to_owned();
            // Reports may come without task history; the creating task of a commit never changes.
            if m.tasks.is_empty()
                && let Some(old) = self.git.get(&name).filter(|o| o.commit == m.commit)
            {
                m.tasks = old.tasks.clone();
            }
            self.git.insert(name, m);
        }
        self.error = None;
    }

    /// Every revision as the API sees it, by object name.
    pub(crate) fn views(&self, namespace: &str) -> BTreeMap<String, PackageRevision> {
        let mut latest: HashMap<&PackagePath, i64> = HashMap::new();
        for m in self.git.values() {
            if m.lifecycle.is_published() && m.key.revision.is_published_number() {
                let e = latest.entry(&m.key.package).or_insert(0);
                *e = (*e).max(m.key.revision.get());
            }
        }
        let mut out = BTreeMap::new();
        for (name, m) in &self.git {
            let is_latest = m.lifecycle.is_published()
                && latest.get(&m.key.package) == Some(&m.key.revision.get());
            out.insert(name.clone(), git_view(namespace, m, is_latest));
        }
        for (name, d) in &self.drafts {
            out.insert(name.clone(), draft_view(d));
        }
        out
    }

    /// Package paths present in git (published or on the registered branch). Drafts do not
    /// count: two drafts of a new package may exist side by side, as with Go Porch's git
    /// repositories, and their approvals get consecutive revision numbers.
    pub(crate) fn git_packages(&self) -> BTreeSet<&PackagePath> {
        self.git.values().map(|m| &m.key.package).collect()
    }
}

fn git_view(namespace: &str, m: &PackageRevisionMeta, latest: bool) -> PackageRevision {
    let mut labels = BTreeMap::new();
    if latest {
        labels.insert(LATEST_REVISION_LABEL.to_owned(), "true".to_owned());
    }
    PackageRevision {
        namespace: namespace.to_owned(),
        key: m.key.clone(),
        lifecycle: m.lifecycle,
        resource_version: m.commit.clone(),
        labels,
        annotations: BTreeMap::new(),
        tasks: m.tasks.clone(),
        self_lock: Some(m.self_lock.clone()),
        upstream_lock: m.upstream_lock.clone(),
        published_by: m.published_by.clone(),
        publish_timestamp: m.publish_timestamp,
        creation_timestamp: m.publish_timestamp,
        latest,
        origin: Origin::Git,
    }
}

pub(crate) fn draft_view(d: &DraftMeta) -> PackageRevision {
    let mut labels = d.labels.clone();
    // Only Porch sets this label, and never on drafts.
    labels.remove(LATEST_REVISION_LABEL);
    PackageRevision {
        namespace: d.namespace.clone(),
        key: d.key(),
        lifecycle: d.lifecycle,
        resource_version: d.resource_version.to_string(),
        labels,
        annotations: d.annotations.clone(),
        tasks: d.tasks.clone(),
        self_lock: None,
        upstream_lock: d.upstream_lock.clone(),
        published_by: None,
        publish_timestamp: None,
        creation_timestamp: Some(d.created),
        latest: false,
        origin: Origin::Store,
    }
}

/// The events that turn `before` into `after`.
pub(crate) fn diff(
    before: &BTreeMap<String, PackageRevision>,
    after: &BTreeMap<String, PackageRevision>,
) -> Vec<EngineEvent> {
    let mut out = Vec::new();
    for (name, old) in before {
        match after.get(name) {
            None => out.push(EngineEvent {
                event_type: EventType::Deleted,
                revision: old.clone(),
            }),
            Some(new) if new != old => out.push(EngineEvent {
                event_type: EventType::Modified,
                revision: new.clone(),
            }),
            Some(_) => {}
        }
    }
    for (name, new) in after {
        if !before.contains_key(name) {
            out.push(EngineEvent {
                event_type: EventType::Added,
                revision: new.clone(),
            });
        }
    }
    out
}

/// Porch's listing order within a repository: package, revision (-1 first), lifecycle, name.
pub(crate) fn sort(items: &mut [PackageRevision]) {
    items.sort_by(|a, b| {
        (
            &a.namespace,
            &a.key.repository,
            &a.key.package,
            a.key.revision,
            lifecycle_rank(a.lifecycle),
            a.key.workspace.as_str(),
        )
            .cmp(&(
                &b.namespace,
                &b.key.repository,
                &b.key.package,
                b.key.revision,
                lifecycle_rank(b.lifecycle),
                b.key.workspace.as_str(),
            ))
    });
}

fn lifecycle_rank(l: Lifecycle) -> u8 {
    match l {
        Lifecycle::Draft => 0,
        Lifecycle::Proposed => 1,
        Lifecycle::Published => 2,
        Lifecycle::DeletionProposed => 3,
    }
}
