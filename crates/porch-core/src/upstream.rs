//! The UpstreamFetcher port: fetch a package from a git location that is not a registered
//! repository (a `clone` task with `upstreamRef.git`, spec §9.3).
//!
//! The engine knows the location and the name of the credentials secret; resolving that
//! secret and talking git are the adapter's business.

use crate::repository::{BoxFuture, PackageFiles, RepositoryError};

/// Where to fetch from: `clone.upstreamRef.git` plus the namespace of the new revision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpstreamFetch {
    /// Namespace of the package revision being created (where `secret_ref` lives).
    pub namespace: String,
    /// Repository URL.
    pub repo: String,
    /// Tag, branch or commit. Resolved as `<directory>/<ref>`, then `<ref>`.
    pub git_ref: String,
    /// Package directory in the repository (a leading `/` is allowed).
    pub directory: String,
    /// Name of the credentials secret, if any.
    pub secret_ref: Option<String>,
}

/// A fetched package.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchedPackage {
    /// Files of the package directory, relative to it.
    pub files: PackageFiles,
    /// The commit `git_ref` resolved to.
    pub commit: String,
}

/// Fetches packages from raw git locations.
pub trait UpstreamFetcher: Send + Sync {
    /// The package at `req`; `NotFound` when the ref or directory (or its Kptfile) is missing.
    fn fetch(&self, req: UpstreamFetch) -> BoxFuture<'_, Result<FetchedPackage, RepositoryError>>;
}
