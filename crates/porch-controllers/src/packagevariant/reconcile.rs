//! One reconcile of one PackageVariant (spec §16.2; upstream `Reconcile`,
//! `ensurePackageVariant`, `findAndUpdateExistingRevisions`; the drafts are `drafts.rs`),
//! with upstream's bugs fixed:
//! every failure lands in the status, one draft at a time per target, nothing written when
//! nothing changed, and only revisions of a package the spec no longer names are released.

use std::collections::BTreeSet;
use std::sync::Arc;

use porch_api::PackageVariant;
use porch_core::lifecycle::Lifecycle;
use porch_engine::PackageRevision;
use serde_json::Value;

use super::downstream::{is_owned, select_targets};
use super::drafts::clone_task;
use super::status::Status;
use super::upstream::{self, is_up_to_date};
use super::validate::{combine_errors, validate};
use crate::access::{Access, CREATOR_ANNOTATION, Creator, GuardedObjects, GuardedRevisions};
use crate::events::{EventSink, EventType, InvolvedObject};
use crate::objects::{Gvr, ObjectError, Objects};
use crate::revisions::{RevisionError, Revisions};

/// The finalizer the controller keeps on every PackageVariant until it has released its
/// downstream revisions.
pub const FINALIZER: &str = "config.porch.kpt.dev/packagevariants";

/// `packagevariants.config.porch.kpt.dev/v1alpha1`.
pub fn gvr() -> Gvr {
    Gvr::new(porch_api::CONFIG_GROUP, "v1alpha1", "packagevariants")
}

/// Why a reconcile did not finish; the queue retries it with backoff.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReconcileError {
    #[error("{0}")]
    Objects(#[from] ObjectError),
    #[error("{0}")]
    Revisions(#[from] RevisionError),
    #[error("{0}")]
    Failed(String),
}

/// The PackageVariant being reconciled: typed spec, stored object, identity.
pub struct Variant {
    pub pv: PackageVariant,
    pub obj: Value,
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

impl Variant {
    pub(super) fn from_object(obj: Value) -> Result<Self, ReconcileError> {
        // The schema does not require `spec`; without one the variant is invalid (Stalled),
        // not unreadable.
        let mut typed = obj.clone();
        if typed.get("spec").is_none_or(Value::is_null) {
            typed["spec"] = Value::Object(Default::default());
        }
        let pv: PackageVariant = serde_json::from_value(typed)
            .map_err(|e| ReconcileError::Failed(format!("cannot read PackageVariant: {e}")))?;
        let s = |p: &str| {
            obj.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        Ok(Variant {
            namespace: s("/metadata/namespace"),
            name: s("/metadata/name"),
            uid: s("/metadata/uid"),
            pv,
            obj,
        })
    }

    pub(super) fn event(&self, sink: &dyn EventSink, t: EventType, reason: &str, message: &str) {
        let object = InvolvedObject {
            api_version: "config.porch.kpt.dev/v1alpha1".into(),
            kind: "PackageVariant".into(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            uid: self.uid.clone(),
        };
        sink.record(&object, t, reason, message);
    }

    fn finalizers(&self) -> Vec<String> {
        self.obj
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    pub(super) fn upstream(&self) -> porch_api::packagevariant::Upstream {
        self.pv.spec.upstream.clone().unwrap_or_default()
    }

    /// The downstream `(repo, package)` (validated non-empty before use).
    fn downstream(&self) -> (String, String) {
        let d = self.pv.spec.downstream.clone().unwrap_or_default();
        (d.repo.unwrap_or_default(), d.package.unwrap_or_default())
    }
}

/// A refusal of the variant's creator.
fn is_forbidden(e: &ReconcileError) -> bool {
    match e {
        ReconcileError::Revisions(e) => e.kind == porch_core::ErrorKind::Forbidden,
        ReconcileError::Objects(e) => e.kind == porch_core::ErrorKind::Forbidden,
        ReconcileError::Failed(_) => false,
    }
}

/// The PackageVariant reconciler: ports to objects and revisions, and where events go.
#[derive(Clone)]
pub struct Reconciler {
    pub objects: Arc<dyn Objects>,
    pub revisions: Arc<dyn Revisions>,
    pub events: Arc<dyn EventSink>,
    /// Authorization of the variants' creators (see [`crate::access`]); `None`: every
    /// action is allowed (a server without RBAC).
    pub access: Option<Arc<dyn Access>>,
}

impl Reconciler {
    /// Brings PackageVariant `namespace/name` to its desired state. `Ok` when done (a
    /// Stalled variant included: only a spec change helps it); `Err` to retry later.
    pub async fn reconcile(&self, namespace: &str, name: &str) -> Result<(), ReconcileError> {
        let Some(obj) = self.objects.get(&gvr(), namespace, name).await? else {
            return Ok(());
        };
        let mut v = Variant::from_object(obj)?;
        if v.obj
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|t| !t.is_null())
        {
            return self.finalize(&v).await;
        }
        if !v.finalizers().iter().any(|f| f == FINALIZER) {
            let mut obj = v.obj.clone();
            let mut finalizers = v.finalizers();
            finalizers.push(FINALIZER.into());
            obj["metadata"]["finalizers"] = finalizers.into();
            v.obj = self.objects.update(&gvr(), namespace, obj).await?;
        }
        let mut status = Status::of(&v.obj);
        let result = match self.as_creator(&v) {
            Ok(acting) => acting.ensure(&v, &mut status).await,
            Err(message) => {
                // No retry: only a recorded creator helps.
                status.forbidden(&message);
                Ok(())
            }
        };
        if let Err(e) = &result {
            v.event(&*self.events, EventType::Warning, "Error", &e.to_string());
        }
        self.write_status(&v, &status).await?;
        result
    }

    /// This reconciler with its package revision actions and injected reads checked for the
    /// variant's creator; `Err` when a check is needed and no creator is recorded.
    fn as_creator(&self, v: &Variant) -> Result<Reconciler, String> {
        let Some(access) = &self.access else {
            return Ok(self.clone());
        };
        let Some(creator) = Creator::of(&v.obj) else {
            return Err(format!(
                "no creator recorded (annotation {CREATOR_ANNOTATION}): the variant acts with its creator's rights; re-create it"
            ));
        };
        Ok(Reconciler {
            objects: Arc::new(GuardedObjects {
                inner: self.objects.clone(),
                access: access.clone(),
                creator: creator.clone(),
            }),
            revisions: Arc::new(GuardedRevisions {
                inner: self.revisions.clone(),
                access: access.clone(),
                creator,
            }),
            events: self.events.clone(),
            access: None,
        })
    }

    /// Writes `status` unless it is what is stored.
    async fn write_status(&self, v: &Variant, status: &Status) -> Result<(), ReconcileError> {
        let new = status.to_value();
        let old = v
            .obj
            .get("status")
            .cloned()
            .unwrap_or(Value::Object(Default::default()));
        if old == new {
            return Ok(());
        }
        let mut obj = v.obj.clone();
        obj["status"] = new;
        self.objects
            .update_status(&gvr(), &v.namespace, obj)
            .await?;
        Ok(())
    }

    /// Validation, upstream, then the downstream targets (spec §16.2 steps 1–7).
    async fn ensure(&self, v: &Variant, status: &mut Status) -> Result<(), ReconcileError> {
        let errs = validate(&v.pv);
        if !errs.is_empty() {
            // No retry: only a spec change helps.
            status.stalled(&combine_errors(&errs));
            return Ok(());
        }
        let up = v.upstream();
        let candidates = self.revisions.list(
            &v.namespace,
            up.repo.as_deref().unwrap_or(""),
            up.package.as_deref().unwrap_or(""),
        );
        let upstream = match upstream::resolve(&up, &candidates) {
            Ok(u) => u.clone(),
            Err(message) => {
                status.stalled(&message);
                // Retried: the upstream may appear.
                return Err(ReconcileError::Failed(message));
            }
        };
        // Each condition is set once per reconcile (a flip and back would move its
        // transition time and rewrite a converged status).
        match self.ensure_targets(v, &upstream, &candidates, status).await {
            Ok(targets) if status.has_missing_injections() => {
                status.retain_targets(&targets);
                // No retry: the object's appearance wakes the variant.
                status.stall_on_missing_injections();
                Ok(())
            }
            Ok(targets) => {
                status.valid();
                status.ready(&targets);
                Ok(())
            }
            Err(e) if is_forbidden(&e) => {
                // No retry: the creator's rights change by a binding, which a resync sees.
                status.forbidden(&e.to_string());
                Ok(())
            }
            Err(e) => {
                status.valid();
                status.failed(&e.to_string());
                Err(e)
            }
        }
    }

    /// Creates, adopts, upgrades and mutates the downstream targets; their names.
    async fn ensure_targets(
        &self,
        v: &Variant,
        upstream: &PackageRevision,
        upstream_candidates: &[PackageRevision],
        status: &mut Status,
    ) -> Result<Vec<String>, ReconcileError> {
        let (repo, package) = v.downstream();
        self.release_moved_targets(v, &status.target_names(), &repo, &package)
            .await?;
        let mut existing = self.revisions.list(&v.namespace, &repo, &package);
        let (targets, to_adopt) = select_targets(&v.pv, &v.uid, &existing);
        let mut targets: Vec<PackageRevision> = targets.into_iter().cloned().collect();
        for pr in to_adopt.into_iter().cloned().collect::<Vec<_>>() {
            let adopted = self.adopt(v, &pr).await?;
            if let Some(t) = targets.iter_mut().find(|t| t.name() == adopted.name()) {
                *t = adopted;
            }
        }
        if targets.is_empty() {
            let created = self
                .create_draft(v, &existing, &repo, &package, clone_task(upstream))
                .await?;
            v.event(
                &*self.events,
                EventType::Normal,
                "Created",
                &format!(
                    "created package revision {:?} cloned from {:?}",
                    created.name().as_str(),
                    upstream.name().as_str()
                ),
            );
            self.mutate_and_save(v, &created, status).await?;
            return Ok(vec![created.name().as_str().to_owned()]);
        }
        let mut names = Vec::with_capacity(targets.len());
        for mut target in targets {
            if target.lifecycle == Lifecycle::DeletionProposed {
                // Proposed for deletion earlier, wanted again.
                target = self
                    .revisions
                    .set_lifecycle(&target, Lifecycle::Published)
                    .await?;
                v.event(
                    &*self.events,
                    EventType::Normal,
                    "Restored",
                    &format!(
                        "package revision {:?} is wanted again: Published",
                        target.name().as_str()
                    ),
                );
            }
            if !is_up_to_date(&target, upstream.key.revision.get()) {
                if !target.lifecycle.is_published() {
                    return Err(ReconcileError::Failed(format!(
                        "cannot update upstream of downstream {:?} when it is not published",
                        target.name().as_str()
                    )));
                }
                let task = self.upgrade_task(v, &target, upstream, upstream_candidates)?;
                let draft = self
                    .create_draft(v, &existing, &repo, &package, task)
                    .await?;
                v.event(
                    &*self.events,
                    EventType::Normal,
                    "Upgraded",
                    &format!(
                        "created package revision {:?} upgrading {:?} to upstream {:?}",
                        draft.name().as_str(),
                        target.name().as_str(),
                        upstream.name().as_str()
                    ),
                );
                existing.push(draft.clone());
                target = draft;
            }
            let target = self
                .mutate_target(v, target, &mut existing, &repo, &package, status)
                .await?;
            names.push(target.name().as_str().to_owned());
        }
        Ok(names)
    }

    /// Deletes or orphans (by deletion policy) the owned revisions of packages the spec no
    /// longer names: those of the previous targets (status.downstreamTargets), so the cost
    /// is that of the packages involved, never a scan of the namespace.
    async fn release_moved_targets(
        &self,
        v: &Variant,
        previous: &[String],
        repo: &str,
        package: &str,
    ) -> Result<(), ReconcileError> {
        for (r, p) in self.packages_of(v, previous) {
            if r == repo && p == package {
                continue;
            }
            for pr in self.revisions.list(&v.namespace, &r, &p) {
                if is_owned(&v.uid, &pr) {
                    self.delete_or_orphan(v, &pr).await?;
                }
            }
        }
        Ok(())
    }

    /// The `(repository, package)` of the named revisions that still exist.
    fn packages_of(&self, v: &Variant, names: &[String]) -> BTreeSet<(String, String)> {
        names
            .iter()
            .filter_map(|n| self.revisions.get(&v.namespace, n))
            .map(|pr| {
                (
                    pr.key.repository.as_str().to_owned(),
                    pr.key.package.as_str().to_owned(),
                )
            })
            .collect()
    }

    /// The variant is being deleted (spec §16.2 step 8): release every owned revision, then
    /// drop the finalizer. A failure keeps the finalizer, and the reconcile is retried.
    async fn finalize(&self, v: &Variant) -> Result<(), ReconcileError> {
        if !v.finalizers().iter().any(|f| f == FINALIZER) {
            return Ok(());
        }
        let mut packages = self.packages_of(v, &Status::of(&v.obj).target_names());
        let (repo, package) = v.downstream();
        if !repo.is_empty() && !package.is_empty() {
            packages.insert((repo, package));
        }
        for (r, p) in packages {
            for pr in self.revisions.list(&v.namespace, &r, &p) {
                if is_owned(&v.uid, &pr) {
                    self.release(v, &pr).await?;
                }
            }
        }
        let mut obj = v.obj.clone();
        let finalizers: Vec<String> = v
            .finalizers()
            .into_iter()
            .filter(|f| f != FINALIZER)
            .collect();
        obj["metadata"]["finalizers"] = finalizers.into();
        self.objects.update(&gvr(), &v.namespace, obj).await?;
        Ok(())
    }
}
