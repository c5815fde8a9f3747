//! The downstream revisions of a PackageVariant: which it owns, which it adopts, which are
//! its targets, and how it lets go of them (upstream `getDownstreamPRs`, `adoptPackageRevision`,
//! `deleteOrOrphan`, `deletePackageRevision`, `orphanPackageRevision`).

use porch_api::PackageVariant;
use porch_core::lifecycle::Lifecycle;
use porch_engine::{OwnerReference, PackageRevision};

use super::reconcile::{Reconciler, Variant};
use super::validate::{self, ADOPT_EXISTING};
use crate::events::EventType;
use crate::revisions::{MetaChange, RevisionError};

/// The ownerReference the controller puts on the revisions it creates or adopts.
pub fn owner_reference(pv: &Variant) -> OwnerReference {
    OwnerReference {
        api_version: "config.porch.kpt.dev/v1alpha1".into(),
        kind: "PackageVariant".into(),
        name: pv.name.clone(),
        uid: pv.uid.clone(),
        controller: Some(true),
        block_owner_deletion: None,
    }
}

/// Does `pr` carry an ownerReference with the variant's UID?
pub fn is_owned(uid: &str, pr: &PackageRevision) -> bool {
    pr.owner_references.iter().any(|o| o.uid == uid)
}

/// Upstream `getDownstreamPRs` minus its side effects: the targets among `revisions` (the
/// revisions of the downstream package), and the ones to adopt first. Owned (or, with
/// adoptExisting, any) revisions qualify; the drafts and proposed ones if any, else the
/// latest published.
pub fn select_targets<'a>(
    pv: &PackageVariant,
    uid: &str,
    revisions: &'a [PackageRevision],
) -> (Vec<&'a PackageRevision>, Vec<&'a PackageRevision>) {
    let adopt_existing = validate::adoption_policy(pv) == ADOPT_EXISTING;
    let mut to_adopt = Vec::new();
    let mut drafts = Vec::new();
    let mut latest: Option<&PackageRevision> = None;
    for pr in revisions {
        let owned = is_owned(uid, pr);
        if !owned && !adopt_existing {
            continue;
        }
        // The placeholder (`main`, -1) is a view of the branch, not a revision to target.
        if pr.key.revision.get() < 0 {
            continue;
        }
        if !owned {
            to_adopt.push(pr);
        }
        if pr.lifecycle.is_published() {
            if latest.is_none_or(|l| pr.key.revision.get() > l.key.revision.get()) {
                latest = Some(pr);
            }
        } else {
            drafts.push(pr);
        }
    }
    let targets = if drafts.is_empty() {
        latest.into_iter().collect()
    } else {
        drafts
    };
    (targets, to_adopt)
}

/// `labels`/`annotations` with the variant's added (adoption and new drafts).
fn with_pv_metadata(pv: &PackageVariant, mut change: MetaChange) -> MetaChange {
    change
        .labels
        .extend(pv.spec.labels.clone().unwrap_or_default());
    change
        .annotations
        .extend(pv.spec.annotations.clone().unwrap_or_default());
    change
}

impl Reconciler {
    /// Upstream `adoptPackageRevision`: our ownerReference plus the variant's labels and
    /// annotations.
    pub(super) async fn adopt(
        &self,
        v: &Variant,
        pr: &PackageRevision,
    ) -> Result<PackageRevision, RevisionError> {
        let mut change = with_pv_metadata(&v.pv, MetaChange::of(pr));
        change.owner_references.push(owner_reference(v));
        let adopted = self.revisions.update_meta(pr, change).await?;
        v.event(
            &*self.events,
            EventType::Normal,
            "Adopted",
            &format!("adopted package revision {:?}", pr.name().as_str()),
        );
        Ok(adopted)
    }

    /// Upstream `orphanPackageRevision`: removes our ownerReference (nothing when absent).
    pub(super) async fn orphan(
        &self,
        v: &Variant,
        pr: &PackageRevision,
    ) -> Result<PackageRevision, RevisionError> {
        if !is_owned(&v.uid, pr) {
            return Ok(pr.clone());
        }
        let mut change = MetaChange::of(pr);
        change.owner_references.retain(|o| o.uid != v.uid);
        let orphaned = self.revisions.update_meta(pr, change).await?;
        v.event(
            &*self.events,
            EventType::Normal,
            "Orphaned",
            &format!("orphaned package revision {:?}", pr.name().as_str()),
        );
        Ok(orphaned)
    }

    /// Upstream `deletePackageRevision`: drafts and proposed revisions are deleted, a
    /// published one is proposed for deletion, one already proposed is left. Returns what
    /// remains.
    pub(super) async fn delete_revision(
        &self,
        v: &Variant,
        pr: &PackageRevision,
    ) -> Result<Option<PackageRevision>, RevisionError> {
        match pr.lifecycle {
            Lifecycle::Draft | Lifecycle::Proposed => {
                self.revisions.delete(pr).await?;
                v.event(
                    &*self.events,
                    EventType::Normal,
                    "Deleted",
                    &format!("deleted package revision {:?}", pr.name().as_str()),
                );
                Ok(None)
            }
            Lifecycle::Published => {
                let proposed = self
                    .revisions
                    .set_lifecycle(pr, Lifecycle::DeletionProposed)
                    .await?;
                v.event(
                    &*self.events,
                    EventType::Normal,
                    "DeletionProposed",
                    &format!(
                        "proposed deletion of package revision {:?}",
                        pr.name().as_str()
                    ),
                );
                Ok(Some(proposed))
            }
            Lifecycle::DeletionProposed => Ok(Some(pr.clone())),
        }
    }

    /// Upstream `deleteOrOrphan`, by the variant's deletion policy; what remains.
    pub(super) async fn delete_or_orphan(
        &self,
        v: &Variant,
        pr: &PackageRevision,
    ) -> Result<Option<PackageRevision>, RevisionError> {
        if validate::deletion_policy(&v.pv) == validate::ORPHAN {
            self.orphan(v, pr).await.map(Some)
        } else {
            self.delete_revision(v, pr).await
        }
    }

    /// Upstream's finalization of one owned revision: delete or orphan it, and orphan it
    /// as well when it ends DeletionProposed (so that nothing collects it with the variant).
    pub(super) async fn release(
        &self,
        v: &Variant,
        pr: &PackageRevision,
    ) -> Result<(), RevisionError> {
        if let Some(left) = self.delete_or_orphan(v, pr).await?
            && left.lifecycle == Lifecycle::DeletionProposed
        {
            self.orphan(v, &left).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packagevariant::testing::{owned_by, pr, pv};
    use porch_core::lifecycle::Lifecycle::{Draft, Published};

    fn names(v: &[&PackageRevision]) -> Vec<String> {
        v.iter()
            .map(|p| p.key.workspace.as_str().to_owned())
            .collect()
    }

    /// Upstream `TestGetDownstreamPRs` (target selection; deleting revisions of other
    /// packages is `release_moved_targets`, tested with the engine).
    #[test]
    fn get_downstream_prs() {
        let v = pv("my-pv", "");
        let (t, a) = select_targets(&v, "pv-uid", &[]);
        assert!(t.is_empty() && a.is_empty(), "empty list");

        let two_drafts = [
            owned_by(
                pr("deployments", "bar", "packagevariant-1", 0, Draft),
                "pv-uid",
            ),
            pr("deployments", "bar", "packagevariant-2", 0, Draft),
        ];
        let (t, a) = select_targets(&v, "pv-uid", &two_drafts);
        assert_eq!(names(&t), ["packagevariant-1"], "the draft we own");
        assert!(a.is_empty());

        let published_and_drafts = [
            owned_by(
                pr("deployments", "bar", "packagevariant-1", 1, Published),
                "pv-uid",
            ),
            owned_by(
                pr("deployments", "bar", "packagevariant-2", 0, Draft),
                "pv-uid",
            ),
            owned_by(
                pr("deployments", "bar", "packagevariant-3", 0, Draft),
                "pv-uid",
            ),
        ];
        let (t, _) = select_targets(&v, "pv-uid", &published_and_drafts);
        assert_eq!(
            names(&t),
            ["packagevariant-2", "packagevariant-3"],
            "both drafts"
        );

        let three_published = [
            owned_by(
                pr("deployments", "bar", "packagevariant-2", 2, Published),
                "pv-uid",
            ),
            owned_by(
                pr("deployments", "bar", "packagevariant-1", 1, Published),
                "pv-uid",
            ),
            owned_by(
                owned_by(
                    pr("deployments", "bar", "packagevariant-3", 3, Published),
                    "some-other-uid-1",
                ),
                "some-other-uid-2",
            ),
        ];
        let (t, _) = select_targets(&v, "pv-uid", &three_published);
        assert_eq!(
            names(&t),
            ["packagevariant-2"],
            "the latest published we own"
        );
    }

    /// Upstream `TestAdoptionPolicy` (selection half; the adoption write is tested with the
    /// engine).
    #[test]
    fn adoption_policy() {
        let list = [
            owned_by(
                pr("deployments", "bar", "packagevariant-1", 1, Published),
                "pv-uid",
            ),
            pr("deployments", "bar", "packagevariant-2", 0, Draft),
        ];
        let existing = pv("my-pv", "  adoptionPolicy: adoptExisting\n");
        let (t, a) = select_targets(&existing, "pv-uid", &list);
        assert_eq!(
            names(&t),
            ["packagevariant-2"],
            "the unowned draft, adopted"
        );
        assert_eq!(names(&a), ["packagevariant-2"]);

        let none = pv("my-pv", "  adoptionPolicy: adoptNone\n");
        let drafts = [
            owned_by(
                pr("deployments", "bar", "packagevariant-1", 0, Draft),
                "pv-uid",
            ),
            pr("deployments", "bar", "packagevariant-2", 0, Draft),
        ];
        let (t, a) = select_targets(&none, "pv-uid", &drafts);
        assert_eq!(names(&t), ["packagevariant-1"]);
        assert!(a.is_empty(), "adoptNone adopts nothing");
    }

    #[test]
    fn the_placeholder_is_never_a_target_nor_adopted() {
        let existing = pv("my-pv", "  adoptionPolicy: adoptExisting\n");
        let list = [pr("deployments", "bar", "main", -1, Published)];
        let (t, a) = select_targets(&existing, "pv-uid", &list);
        assert!(t.is_empty() && a.is_empty());
    }
}
