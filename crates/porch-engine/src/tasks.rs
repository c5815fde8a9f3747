//! The content of a new draft from its creating task (spec §9): `init`, `clone` from a
//! registered revision, `edit` (copy) of a published revision of the same package.

use kpt::kptfile::{GitLock, KPTFILE, Kptfile, Locator, Upstream};
use porch_core::names::PackagePath;
use porch_core::repository::PackageFiles;
use porch_core::revision::{InitTask, Locator as CoreLocator};

use crate::error::{EngineError, Result};

/// `kpt pkg init` in memory.
pub(crate) fn init_files(package: &PackagePath, init: &InitTask) -> PackageFiles {
    let dir = init.subpackage.trim_matches('/');
    let name = if dir.is_empty() {
        package.package()
    } else {
        dir.rsplit('/').next().unwrap_or(dir)
    };
    let opts = kpt::pkg::init::InitOptions {
        name: name.to_owned(),
        description: init.description.clone(),
        keywords: init.keywords.clone(),
        site: init.site.clone(),
    };
    kpt::pkg::init::init(&kpt::package::PackageFiles::new(), dir, &opts).into_map()
}

/// Points a cloned or upgraded package at its upstream: Kptfile `metadata.name`,
/// `upstream`, `upstreamLock`, then kpt's merge-key markers on every resource.
///
/// `upstream` carries no `updateStrategy`: Go Porch writes the upstream from the lock
/// alone (only `kpt pkg get` adds a strategy), and the CLI goldens pin that.
pub(crate) fn clone_files(
    mut files: PackageFiles,
    name: &str,
    upstream: Option<&CoreLocator>,
) -> Result<PackageFiles> {
    let text = files
        .get(KPTFILE)
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .ok_or_else(|| EngineError::Invalid("upstream package has no Kptfile".into()))?;
    let mut kf = Kptfile::parse(&text)
        .map_err(|e| EngineError::Invalid(format!("upstream Kptfile is invalid: {e}")))?;
    kf.metadata.name = name.to_owned();
    if let Some(lock) = upstream.and_then(|u| u.git.as_ref()) {
        kf.upstream = Some(Upstream {
            origin_type: "git".into(),
            git: Some(kpt::kptfile::Git {
                repo: lock.repo.clone(),
                directory: lock.directory.clone(),
                git_ref: lock.git_ref.clone(),
            }),
            update_strategy: String::new(),
        });
        kf.upstream_lock = Some(Locator {
            origin_type: "git".into(),
            git: Some(GitLock {
                repo: lock.repo.clone(),
                directory: lock.directory.clone(),
                git_ref: lock.git_ref.clone(),
                commit: lock.commit.clone(),
            }),
            generic: None,
        });
    }
    add_kptfile_identity(&mut kf);
    files.insert(KPTFILE.to_owned(), kf.to_yaml().into_bytes());
    let mut kpt_files = kpt::package::PackageFiles::from_map(files);
    kpt::pkg::ids::add_identities(&mut kpt_files);
    Ok(kpt_files.into_map())
}

/// The Kptfile's `internal.kpt.dev/upstream-identifier`, computed by kpt's own rule.
/// `add_identities` only visits `*.yaml` files, but Porch's merge-key pass reads the
/// Kptfile as a resource too (the goldens show `kpt.dev|Kptfile|default|<name>`). The
/// Kptfile keeps kpt's struct encoding, so only the annotation is taken from the node.
fn add_kptfile_identity(kf: &mut Kptfile) {
    let mut node = kf.to_node();
    kpt::pkg::ids::add_identity(&mut node);
    let id = node
        .get_path(&[
            "metadata",
            "annotations",
            kpt::pkg::ids::UPSTREAM_IDENTIFIER,
        ])
        .and_then(kpt::yaml::Node::as_str)
        .map(str::to_owned);
    if let Some(id) = id {
        kf.metadata
            .annotations
            .entry(kpt::pkg::ids::UPSTREAM_IDENTIFIER.to_owned())
            .or_insert(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_writes_kptfile_named_after_the_package() {
        let p = PackagePath::new("a/b").expect("valid");
        let files = init_files(&p, &InitTask::default());
        let kf =
            String::from_utf8(files.get("Kptfile").cloned().unwrap_or_default()).expect("utf8");
        assert!(kf.contains("name: b"), "{kf}");
        assert!(files.contains_key("package-context.yaml"));
    }
}
