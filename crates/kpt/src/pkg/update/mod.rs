//! `kpt pkg update` over in-memory packages: every strategy as a pure function of
//! the original upstream, the updated upstream and the local package.
//!
//! [`update_package`] handles the package and its *local* sub-packages; sub-packages
//! with their own `upstream` (remote ones) are left untouched here and updated on
//! their own by the [`driver`], which also fetches and writes to disk.

pub mod driver;
pub mod kptfile;
mod nonkrm;
mod replace;
mod resources;

use std::fmt;
use std::str::FromStr;

use crate::kptfile::{KPTFILE, Kptfile, KptfileError};
use crate::package::PackageFiles;
use crate::package::resources::ResourceError;
use crate::pkg::merge3::{MergeError, MergeOptions};

/// How upstream changes are applied to the local package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// 3-way merge of resources (kpt's default).
    #[default]
    ResourceMerge,
    /// Refuse when local differs from origin, else replace.
    FastForward,
    /// Wipe local and copy upstream.
    ForceDeleteReplace,
    /// Copy upstream over local, delete what upstream deleted.
    CopyMerge,
}

impl Strategy {
    /// The name used in Kptfiles and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::ResourceMerge => "resource-merge",
            Strategy::FastForward => "fast-forward",
            Strategy::ForceDeleteReplace => "force-delete-replace",
            Strategy::CopyMerge => "copy-merge",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Strategy {
    type Err = UpdateError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "resource-merge" | "" => Strategy::ResourceMerge,
            "fast-forward" => Strategy::FastForward,
            "force-delete-replace" => Strategy::ForceDeleteReplace,
            "copy-merge" => Strategy::CopyMerge,
            other => return Err(UpdateError::UnknownStrategy(other.to_string())),
        })
    }
}

/// Errors of an update.
#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    #[error(
        "unknown update strategy {0:?}; use resource-merge, fast-forward, force-delete-replace or copy-merge"
    )]
    UnknownStrategy(String),
    #[error("{path}: {source}")]
    Kptfile {
        path: String,
        #[source]
        source: KptfileError,
    },
    #[error("{path}: {source}")]
    Merge {
        path: String,
        #[source]
        source: MergeError,
    },
    #[error("{path}: {source}")]
    Resources {
        path: String,
        #[source]
        source: ResourceError,
    },
    #[error("subpackage {} added in both upstream and local", crate::goquote::go_quote(.0))]
    AddedInBoth(String),
    /// kpt's `mergePackage`: updated upstream has the package fetched, origin had
    /// it unfetched.
    #[error("no origin available for package")]
    NoOrigin,
    #[error(
        "local package files have been modified: [{}].\n  use a different update --strategy.",
        .0.join(" ")
    )]
    LocalChanges(Vec<String>),
    #[error("{0}")]
    Fetch(String),
    /// The root package cannot be updated at all (kpt's checks before it names the
    /// package): no Kptfile, or no git upstream in it.
    #[error("{0}")]
    NotUpdatable(&'static str),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl UpdateError {
    /// A short machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            UpdateError::UnknownStrategy(_) => "unknown-strategy",
            UpdateError::Kptfile { .. } => "kptfile",
            UpdateError::Merge { .. } => "merge",
            UpdateError::Resources { .. } => "resources",
            UpdateError::AddedInBoth(_) => "added-in-both",
            UpdateError::NoOrigin => "no-origin",
            UpdateError::LocalChanges(_) => "local-changes",
            UpdateError::Fetch(_) => "fetch",
            UpdateError::NotUpdatable(_) => "not-updatable",
            UpdateError::Io { .. } => "io",
        }
    }
}

/// Options of [`update_package`].
#[derive(Debug, Clone, Default)]
pub struct UpdateOptions {
    pub merge: MergeOptions,
    /// Add `# kpt-merge` comments and upstream identifiers afterwards (kpt CLI does;
    /// Porch's update task does not).
    pub add_identities: bool,
}

/// Update `local` from `original` to `updated` upstream. All three trees are rooted at
/// the package being updated ("" = its directory). Pure: returns the new local tree.
pub fn update_package(
    original: &PackageFiles,
    updated: &PackageFiles,
    local: &PackageFiles,
    strategy: Strategy,
    opts: &UpdateOptions,
) -> Result<PackageFiles, UpdateError> {
    let mut out = match strategy {
        Strategy::ResourceMerge => resources::resource_merge(original, updated, local, opts)?,
        Strategy::FastForward => replace::fast_forward(original, updated, local)?,
        Strategy::ForceDeleteReplace => replace::force_delete_replace(updated, local)?,
        Strategy::CopyMerge => replace::copy_merge(original, updated, local)?,
    };
    drop_remote_subpackages_deleted_upstream(original, updated, local, &mut out);
    if opts.add_identities {
        crate::pkg::ids::add_identities(&mut out);
    }
    Ok(out)
}

/// kpt's `updatePackage` for a remote sub-package that upstream deleted: it goes
/// when the local copy has no changes from origin (every file of its tree equal),
/// else it stays. Whatever the strategy.
fn drop_remote_subpackages_deleted_upstream(
    original: &PackageFiles,
    updated: &PackageFiles,
    local: &PackageFiles,
    out: &mut PackageFiles,
) {
    for sub in remote_subpackages(local) {
        let kf = crate::package::join(&sub, KPTFILE);
        if original.get(&kf).is_none() || updated.get(&kf).is_some() {
            continue;
        }
        let tree = |f: &PackageFiles| -> Vec<(String, Vec<u8>)> {
            f.as_map()
                .iter()
                .filter(|(p, _)| under_any(p, std::slice::from_ref(&sub)))
                .map(|(p, b)| (p.clone(), b.clone()))
                .collect()
        };
        if tree(original) == tree(local) {
            let gone: Vec<String> = out
                .paths()
                .filter(|p| under_any(p, std::slice::from_ref(&sub)))
                .map(str::to_string)
                .collect();
            for p in gone {
                out.remove(&p);
            }
        }
    }
}

/// Parse the Kptfile at `path` of a tree.
pub(crate) fn read_kptfile(
    files: &PackageFiles,
    path: &str,
) -> Result<Option<Kptfile>, UpdateError> {
    let Some(bytes) = files.get(path) else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(bytes);
    Kptfile::parse(&text)
        .map(Some)
        .map_err(|e| UpdateError::Kptfile {
            path: path.to_string(),
            source: e,
        })
}

/// Write a merged Kptfile: the local bytes are kept when nothing changed, else kpt's
/// struct marshalling.
pub(crate) fn write_kptfile(
    files: &mut PackageFiles,
    path: &str,
    before: Option<&Kptfile>,
    k: &Kptfile,
) {
    if before == Some(k) && files.get(path).is_some() {
        return;
    }
    files.insert(path.to_string(), k.to_yaml().into_bytes());
}

/// Directories ("" excluded) whose local Kptfile has an `upstream`: remote
/// sub-packages, updated on their own.
pub fn remote_subpackages(local: &PackageFiles) -> Vec<String> {
    local
        .package_dirs()
        .into_iter()
        .filter(|d| !d.is_empty())
        .filter(|d| {
            read_kptfile(local, &crate::package::join(d, KPTFILE))
                .ok()
                .flatten()
                .is_some_and(|k| k.upstream.is_some())
        })
        .collect()
}

/// Is `path` inside (or equal to) one of `dirs`?
pub(crate) fn under_any(path: &str, dirs: &[String]) -> bool {
    dirs.iter()
        .any(|d| path == d || path.starts_with(&format!("{d}/")))
}
