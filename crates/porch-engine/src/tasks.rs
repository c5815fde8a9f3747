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

/// Points a cloned package at its upstream: Kptfile `metadata.name`, `upstream`, `upstreamLock`.
pub(crate) fn clone_files(
    mut files: PackageFiles,
    package: &PackagePath,
    upstream: Option<&CoreLocator>,
) -> Result<PackageFiles> {
    let text = files
        .get(KPTFILE)
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .ok_or_else(|| EngineError::Invalid("upstream package has no Kptfile".into()))?;
    let mut kf = Kptfile::parse(&text)
        .map_err(|e| EngineError::Invalid(format!("upstream Kptfile is invalid: {e}")))?;
    kf.metadata.name = package.package().to_owned();
    if let Some(lock) = upstream.and_then(|u| u.git.as_ref()) {
        kf.upstream = Some(Upstream {
            origin_type: "git".into(),
            git: Some(kpt::kptfile::Git {
                repo: lock.repo.clone(),
                directory: lock.directory.clone(),
                git_ref: lock.git_ref.clone(),
            }),
            update_strategy: "resource-merge".into(),
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
    files.insert(KPTFILE.to_owned(), kf.to_yaml().into_bytes());
    Ok(files)
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
