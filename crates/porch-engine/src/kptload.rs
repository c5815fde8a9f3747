//! Reading the Kptfile of git revisions as they enter the index, once per (name, commit),
//! so views serve `packageMetadata`, `readinessGates` and `conditions` without touching git.

use std::sync::Arc;

use kpt::kptfile::KPTFILE;
use porch_core::repository::Repository;
use porch_core::revision::PackageRevisionMeta;
use tracing::Instrument;

use crate::engine::Engine;
use crate::index::RepoId;
use crate::kptinfo::KptInfo;

impl Engine {
    /// Kptfile fields of those of `metas` whose commit the index has not read yet.
    /// A revision whose Kptfile cannot be read serves empty fields (and is retried when its
    /// commit changes); it never fails the caller.
    pub(crate) async fn load_kpt(
        &self,
        id: &RepoId,
        repo: &dyn Repository,
        metas: &[PackageRevisionMeta],
    ) -> Vec<(String, String, Arc<KptInfo>)> {
        let missing: Vec<&PackageRevisionMeta> = self
            .with_index(id, |ix| {
                metas
                    .iter()
                    .filter(|m| ix.kpt_at(m.key.name().as_str(), &m.commit).is_none())
                    .collect()
            })
            .unwrap_or_default();
        let mut out = Vec::with_capacity(missing.len());
        for m in missing {
            let info = match repo.read_file(m.key.clone(), KPTFILE.to_owned()).await {
                Ok(Some(bytes)) => KptInfo::from_kptfile(&bytes),
                Ok(None) => KptInfo::default(),
                Err(e) => {
                    tracing::warn!(revision = %m.key, "cannot read the Kptfile: {e}");
                    KptInfo::default()
                }
            };
            out.push((
                m.key.name().as_str().to_owned(),
                m.commit.clone(),
                Arc::new(info),
            ));
        }
        out
    }

    /// Reads, on the repository's queue, the Kptfile fields the index lacks (after a change
    /// report was applied from outside a job).
    pub(crate) fn spawn_kpt_fill(&self, id: RepoId) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::debug!("no tokio runtime; Kptfile fields are read on the next sync");
            return;
        };
        let Ok((repo, queue)) = self.handle(&id) else {
            return;
        };
        let this = self.clone();
        let span = tracing::debug_span!("kpt_fill", repository = %id.1);
        runtime.spawn(
            async move {
                let job = async move {
                    let metas: Vec<PackageRevisionMeta> = this
                        .with_index(&id, |ix| ix.git.values().cloned().collect())
                        .unwrap_or_default();
                    let loaded = this.load_kpt(&id, repo.as_ref(), &metas).await;
                    if !loaded.is_empty() {
                        this.mutate(&id, |ix| ix.add_kpt(loaded));
                    }
                };
                if let Err(e) = queue.run(job).await {
                    tracing::warn!("reading Kptfile fields failed: {e}");
                }
            }
            .instrument(span),
        );
    }
}
