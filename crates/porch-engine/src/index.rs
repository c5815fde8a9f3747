//! The in-memory index: every revision of every registered repository, fed by repository
//! listings/change reports (git) and by the engine's own store writes (drafts). Reads never
//! touch git or the store. Views carry Porch's object names and the computed
//! latest-revision label; every mutation is diffed into [`EngineEvent`]s.
//!
//! Everything a view serves is computed when it enters the index: the Kptfile fields of git
//! revisions are loaded once per commit (`git_kpt`), those of drafts when their files are
//! written, and object metadata is kept by object name (`meta`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use porch_core::lifecycle::Lifecycle;
use porch_core::names::{PackagePath, RepositoryName, Revision};
use porch_core::repository::ChangeReport;
use porch_core::revision::PackageRevisionMeta;
use porch_core::store::EventType;

use crate::drafts::DraftMeta;
use crate::kptinfo::KptInfo;
use crate::model::{
    Condition, EngineEvent, GIT_MIRROR_CONDITION, LATEST_REVISION_LABEL, Origin, PackageRevision,
};
use crate::objmeta::ObjectMeta;

/// Repositories are identified by (namespace, name).
pub(crate) type RepoId = (String, RepositoryName);

/// What one repository holds.
#[derive(Debug, Default)]
pub(crate) struct RepoIndex {
    /// The repository's git URL and package directory (see `Repository::git_location`):
    /// the self lock of its drafts names their `drafts/…`/`proposed/…` branch there.
    pub git_location: Option<(String, String)>,
    /// Revisions found in git, by object name.
    pub git: BTreeMap<String, PackageRevisionMeta>,
    /// Drafts/proposed revisions in the store, by object name (they shadow git entries).
    pub drafts: BTreeMap<String, DraftMeta>,
    /// Deleted drafts whose mirror branch is not deleted yet, by object name: they hide the
    /// branch's git entry, so a deleted draft never comes back as a git draft.
    pub tombstones: BTreeMap<String, DraftMeta>,
    /// Stored object metadata, by object name (any origin).
    pub meta: BTreeMap<String, ObjectMeta>,
    /// Kptfile fields of git revisions, by object name, with the commit they were read at.
    pub git_kpt: HashMap<String, (String, Arc<KptInfo>)>,
    /// One shared copy of each distinct set of Kptfile fields: most revisions of a
    /// repository carry the same ones (12,000 copies were 6.5 MB in the API benchmark).
    pub kpt_interned: HashSet<Arc<KptInfo>>,
    /// The repository is a deployment repository.
    pub deployment: bool,
    /// Functions run after every package's pipeline (Repository `spec.mutators`/`validators`).
    pub guardrails: std::sync::Arc<crate::guardrails::Guardrails>,
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
        self.prune_kpt();
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
        self.prune_kpt();
    }

    /// Records Kptfile fields read for git revisions (name, commit, fields).
    pub(crate) fn add_kpt(&mut self, loaded: Vec<(String, String, Arc<KptInfo>)>) {
        for (name, commit, info) in loaded {
            let shared = match self.kpt_interned.get(&info) {
                Some(existing) => Arc::clone(existing),
                None => {
                    self.kpt_interned.insert(Arc::clone(&info));
                    info
                }
            };
            self.git_kpt.insert(name, (commit, shared));
        }
    }

    /// Forgets Kptfile fields of revisions no longer in git.
    fn prune_kpt(&mut self) {
        let git = &self.git;
        self.git_kpt.retain(|name, _| git.contains_key(name));
        // Interned copies nobody else holds any more.
        self.kpt_interned.retain(|k| Arc::strong_count(k) > 1);
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
        self.prune_kpt();
    }

    /// Every revision as the API sees it, by object name.
    pub(crate) fn views(&self, namespace: &str) -> BTreeMap<String, PackageRevision> {
        self.views_of(namespace, None)
    }

    /// [`RepoIndex::views`] of the revisions of `packages` (all when `None`).
    pub(crate) fn views_of(
        &self,
        namespace: &str,
        packages: Option<&BTreeSet<PackagePath>>,
    ) -> BTreeMap<String, PackageRevision> {
        let wanted = |p: &PackagePath| packages.is_none_or(|w| w.contains(p));
        let mut latest: HashMap<&PackagePath, i64> = HashMap::new();
        for m in self.git.values() {
            if m.lifecycle.is_published()
                && m.key.revision.is_published_number()
                && wanted(&m.key.package)
            {
                let e = latest.entry(&m.key.package).or_insert(0);
                *e = (*e).max(m.key.revision.get());
            }
        }
        let mut out = BTreeMap::new();
        for (name, m) in &self.git {
            if !wanted(&m.key.package) || self.hidden(name, m) {
                continue;
            }
            let is_latest = m.lifecycle.is_published()
                && latest.get(&m.key.package) == Some(&m.key.revision.get());
            out.insert(name.clone(), self.git_view(namespace, name, m, is_latest));
        }
        for (name, d) in &self.drafts {
            if wanted(&d.package) {
                out.insert(name.clone(), self.draft_view(name, d));
            }
        }
        out
    }

    /// One revision as the API sees it (what [`RepoIndex::views`] has under `name`, without
    /// building the others).
    pub(crate) fn view(&self, namespace: &str, name: &str) -> Option<PackageRevision> {
        if let Some(d) = self.drafts.get(name) {
            return Some(self.draft_view(name, d));
        }
        let m = self.git.get(name).filter(|m| !self.hidden(name, m))?;
        let numbered = |o: &PackageRevisionMeta| {
            o.lifecycle.is_published() && o.key.revision.is_published_number()
        };
        let latest = numbered(m)
            && self
                .git
                .values()
                .filter(|o| o.key.package == m.key.package && numbered(o))
                .all(|o| o.key.revision <= m.key.revision);
        Some(self.git_view(namespace, name, m, latest))
    }

    /// Every package path with a revision in this repository: in git (published, on the
    /// registered branch, or a draft branch) or in the store (drafts and proposed
    /// revisions). Go Porch lists its draft branches too when it refuses an `init` or
    /// `clone` of an existing package, so a package that exists only as a Draft counts.
    pub(crate) fn packages(&self) -> BTreeSet<&PackagePath> {
        self.git
            .iter()
            .filter(|(name, m)| !self.hidden(name, m))
            .map(|(_, m)| &m.key.package)
            .chain(self.drafts.values().map(|d| &d.package))
            .collect()
    }

    /// Is stored draft `d` (object `name`) published in git? Only an approval whose
    /// removal of the draft's record was cut short leaves both (create refuses a published
    /// workspace).
    pub(crate) fn published_in_git(&self, name: &str, d: &DraftMeta) -> bool {
        self.git.get(name).is_some_and(|m| {
            m.key.revision.is_published_number()
                && m.lifecycle.is_published()
                && m.key.package == d.package
                && m.key.workspace == d.workspace
        })
    }

    /// Is git entry `name` the branch of a deleted draft (whose deletion is pending)?
    fn hidden(&self, name: &str, m: &PackageRevisionMeta) -> bool {
        m.key.revision == Revision::UNPUBLISHED && self.tombstones.contains_key(name)
    }
}

impl RepoIndex {
    /// Kptfile fields of git revision `name` if they were read at `commit`.
    pub(crate) fn kpt_at(&self, name: &str, commit: &str) -> Option<&Arc<KptInfo>> {
        self.git_kpt
            .get(name)
            .filter(|(c, _)| c == commit)
            .map(|(_, k)| k)
    }

    fn git_view(
        &self,
        namespace: &str,
        name: &str,
        m: &PackageRevisionMeta,
        latest: bool,
    ) -> PackageRevision {
        let meta = self.meta.get(name);
        // A metadata write must change the version clients see, but the commit stays the
        // git part of it (and is all there is without stored metadata).
        // A deletion proposal is a branch at the same commit: mark it so the version moves.
        let git_part = if m.lifecycle == Lifecycle::DeletionProposed {
            format!("{}+deletion-proposed", m.commit)
        } else {
            m.commit.clone()
        };
        let resource_version = match meta {
            Some(o) => format!("{git_part}.{}", o.resource_version),
            None => git_part,
        };
        let mut pr = PackageRevision {
            namespace: namespace.to_owned(),
            key: m.key.clone(),
            lifecycle: m.lifecycle,
            resource_version,
            labels: BTreeMap::new(),
            annotations: BTreeMap::new(),
            tasks: m.tasks.clone(),
            self_lock: Some(m.self_lock.clone()),
            upstream_lock: m.upstream_lock.clone(),
            published_by: m.published_by.clone(),
            publish_timestamp: m.publish_timestamp,
            creation_timestamp: m.publish_timestamp,
            latest,
            origin: Origin::Git,
            package_metadata: Default::default(),
            readiness_gates: Vec::new(),
            conditions: Vec::new(),
            deployment: self.deployment,
            finalizers: Vec::new(),
            owner_references: Vec::new(),
            deletion_timestamp: None,
        };
        if let Some(k) = self.kpt_at(name, &m.commit) {
            set_kpt(&mut pr, k);
        }
        set_meta(&mut pr, meta);
        pr
    }

    /// Go Porch's lock of a draft or proposed revision: its branch (`drafts/<path>/<ws>`,
    /// `proposed/<path>/<ws>`) at the commit mirroring it, if any. A clone of a draft
    /// records it, so `rpkg update --discover` can name the draft it came from.
    fn draft_lock(&self, d: &DraftMeta) -> Option<porch_core::revision::Locator> {
        let (url, dir) = self.git_location.as_ref()?;
        let path = d.package.as_str();
        let full = if dir.is_empty() {
            path.to_owned()
        } else {
            format!("{dir}/{path}")
        };
        let branch = if d.lifecycle == Lifecycle::Proposed {
            "proposed"
        } else {
            "drafts"
        };
        Some(porch_core::revision::Locator::git(
            porch_core::revision::GitLock {
                repo: url.clone(),
                directory: full.clone(),
                git_ref: format!("{branch}/{full}/{}", d.workspace),
                commit: d
                    .mirror
                    .as_ref()
                    .and_then(|m| m.commit.clone())
                    .unwrap_or_default(),
            },
        ))
    }

    fn draft_view(&self, name: &str, d: &DraftMeta) -> PackageRevision {
        let meta = self.meta.get(name);
        // The store's resourceVersion is one counter for all records, so the larger of the
        // two records' versions changes whenever either does.
        let rv = meta.map_or(0, |m| m.resource_version).max(d.view_version());
        let mut pr = PackageRevision {
            namespace: d.namespace.clone(),
            key: d.key(),
            lifecycle: d.lifecycle,
            resource_version: rv.to_string(),
            labels: BTreeMap::new(),
            annotations: BTreeMap::new(),
            tasks: d.tasks.clone(),
            self_lock: self.draft_lock(d),
            upstream_lock: d.upstream_lock.clone(),
            published_by: None,
            publish_timestamp: None,
            creation_timestamp: Some(d.created),
            latest: false,
            origin: Origin::Store,
            package_metadata: Default::default(),
            readiness_gates: Vec::new(),
            conditions: Vec::new(),
            deployment: self.deployment,
            finalizers: Vec::new(),
            owner_references: Vec::new(),
            deletion_timestamp: None,
        };
        set_kpt(&mut pr, &d.kpt);
        if let Some(f) = d.mirror.as_ref().and_then(|m| m.failure.as_ref()) {
            pr.conditions.push(Condition {
                condition_type: GIT_MIRROR_CONDITION.to_owned(),
                status: "False".to_owned(),
                reason: f.reason.clone(),
                message: f.message.clone(),
            });
        }
        set_meta(&mut pr, meta);
        pr
    }
}

fn set_kpt(pr: &mut PackageRevision, k: &KptInfo) {
    pr.package_metadata = k.package_metadata.clone();
    pr.readiness_gates = k.readiness_gates.clone();
    pr.conditions = k.conditions.clone();
}

fn set_meta(pr: &mut PackageRevision, meta: Option<&ObjectMeta>) {
    if let Some(o) = meta {
        pr.labels = o.labels.clone();
        // Only Porch sets this label.
        pr.labels.remove(LATEST_REVISION_LABEL);
        pr.annotations = o.annotations.clone();
        pr.finalizers = o.finalizers.clone();
        pr.owner_references = o.owner_references.clone();
        pr.deletion_timestamp = o.deletion_timestamp;
    }
    if pr.latest {
        pr.labels
            .insert(LATEST_REVISION_LABEL.to_owned(), "true".to_owned());
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
                revision: Arc::new(old.clone()),
            }),
            Some(new) if new != old => out.push(EngineEvent {
                event_type: EventType::Modified,
                revision: Arc::new(new.clone()),
            }),
            Some(_) => {}
        }
    }
    for (name, new) in after {
        if !before.contains_key(name) {
            out.push(EngineEvent {
                event_type: EventType::Added,
                revision: Arc::new(new.clone()),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn info(label: &str) -> Arc<KptInfo> {
        let mut k = KptInfo::default();
        k.package_metadata.labels.insert("app".into(), label.into());
        Arc::new(k)
    }

    #[test]
    fn equal_kptfile_fields_are_kept_once_and_forgotten_with_their_revisions() {
        let mut ix = RepoIndex::default();
        ix.add_kpt(vec![
            ("a".into(), "c1".into(), info("x")),
            ("b".into(), "c2".into(), info("x")),
            ("c".into(), "c3".into(), info("y")),
        ]);
        let a = ix.kpt_at("a", "c1").expect("a");
        let b = ix.kpt_at("b", "c2").expect("b");
        let c = ix.kpt_at("c", "c3").expect("c");
        assert!(Arc::ptr_eq(a, b), "equal fields share one copy");
        assert!(!Arc::ptr_eq(a, c));
        assert_eq!(a.package_metadata.labels["app"], "x");
        assert_eq!(ix.kpt_interned.len(), 2);
        assert!(ix.kpt_at("a", "other-commit").is_none());
        // None of them is in git: their fields and the interned copies go.
        ix.replace_git(Vec::new());
        assert!(ix.git_kpt.is_empty());
        assert!(ix.kpt_interned.is_empty());
    }
}
