//! The mutations a PackageVariant makes to its downstream package's files: package context,
//! pipeline functions, config injection (upstream `packagevariant_controller.go`
//! `ensurePackageContext`/`ensureKRMFunctions`/`calculateDraftResources`, `injection.go`).
//!
//! Files are edited through kpt's lossless YAML: a document the mutations leave alone keeps
//! its bytes, a changed one is written as kpt writes it, comments kept. Unlike upstream, which
//! re-serialises the Kptfile on every pass, a converged package is not rewritten at all.

mod context;
mod files;
mod gates;
mod injection;
mod pipeline;
#[cfg(test)]
mod testing;

use porch_core::repository::PackageFiles;

use crate::objects::Objects;

pub use context::validate_package_context;
pub use pipeline::{generate_pv_func_name, is_package_variant_func_name};

/// Why the mutations could not be applied (the message goes into the PackageVariant status).
/// Every cause is the package's or the PackageVariant's content: see [`MutationError::kind`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MutationError(pub String);

impl MutationError {
    /// Always `Invalid`: the files or the PackageVariant must change before a retry can
    /// succeed (failures to read in-cluster objects become injection conditions instead).
    pub fn kind(&self) -> porch_core::ErrorKind {
        porch_core::ErrorKind::Invalid
    }
}

/// Applies every mutation of `pv` to `files`; true when a file changed.
///
/// Error texts name the package revision as `'<namespace>/'` since its name is not known
/// here; [`apply_to_revision`] takes it.
pub async fn apply(
    pv: &porch_api::PackageVariant,
    files: &mut PackageFiles,
    cluster: &dyn Objects,
) -> Result<bool, MutationError> {
    apply_to_revision(pv, "", files, cluster).await
}

/// [`apply`] for the package revision `revision` (its name, used in error texts as upstream
/// names the PackageRevisionResources). On error `files` is left as it was.
pub async fn apply_to_revision(
    pv: &porch_api::PackageVariant,
    revision: &str,
    files: &mut PackageFiles,
    cluster: &dyn Objects,
) -> Result<bool, MutationError> {
    let namespace = pv.metadata.namespace.as_deref().unwrap_or_default();
    let prr = files::Prr {
        namespace,
        name: revision,
    };
    let original = files.clone();
    let result = mutate_all(pv, &prr, files, cluster).await;
    let changed = match result {
        Ok(()) => files::changed(&original, files),
        Err(e) => {
            *files = original;
            return Err(e);
        }
    };
    if !changed {
        // Semantically equal Kptfile text counts as unchanged (upstream's rule): keep the
        // bytes as they were so nothing is written.
        *files = original;
    }
    Ok(changed)
}

async fn mutate_all(
    pv: &porch_api::PackageVariant,
    prr: &files::Prr<'_>,
    files: &mut PackageFiles,
    cluster: &dyn Objects,
) -> Result<(), MutationError> {
    context::ensure_package_context(pv, prr, files)?;
    pipeline::ensure_krm_functions(pv, prr, files)?;
    injection::ensure_config_injection(pv, prr, files, cluster).await
}

#[cfg(test)]
mod tests;
