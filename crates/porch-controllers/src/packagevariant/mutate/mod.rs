//! The mutations a PackageVariant makes to its downstream package's files: package context,
//! pipeline functions, config injection (upstream `packagevariant_controller.go`
//! `ensureKRMFunctions`/`ensurePackageContext`, `injection.go`).

use porch_core::repository::PackageFiles;

use crate::objects::Objects;

/// Why the mutations could not be applied (the message goes into the PackageVariant status).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MutationError(pub String);

/// Applies every mutation of `pv` to `files`; true when a file changed.
///
/// Placeholder until the mutations land: changes nothing.
pub async fn apply(
    pv: &porch_api::PackageVariant,
    files: &mut PackageFiles,
    cluster: &dyn Objects,
) -> Result<bool, MutationError> {
    let _ = (pv, files, cluster);
    Ok(false)
}
