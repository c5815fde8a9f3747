//! The `resource-merge` strategy: per (sub)package, merge the Kptfile, 3-way merge
//! the resources, then reconcile non-KRM files.

use super::{
    UpdateError, UpdateOptions, nonkrm, read_kptfile, remote_subpackages, under_any, write_kptfile,
};
use crate::kptfile::KPTFILE;
use crate::package::resources::{
    Sources, prune, read_package, strip_bookkeeping, write_items_keeping_duplicates,
};
use crate::package::{PackageFiles, join, relative_to};
use crate::pkg::merge3::{SchemaRegistry, merge_resources};
use crate::yaml::Node;

pub(super) fn resource_merge(
    original: &PackageFiles,
    updated: &PackageFiles,
    local: &PackageFiles,
    opts: &UpdateOptions,
) -> Result<PackageFiles, UpdateError> {
    let remote = remote_subpackages(local);
    let mut dirs: Vec<String> = original
        .package_dirs()
        .into_iter()
        .chain(updated.package_dirs())
        .chain(local.package_dirs())
        .chain(std::iter::once(String::new()))
        .filter(|d| !under_any(d, &remote))
        .collect();
    dirs.sort();
    dirs.dedup();
    let mut out = local.clone();
    // Remote sub-packages are updated on their own, but their Kptfile is merged
    // here first so a new upstream ref from the parent's upstream reaches them.
    for r in &remote {
        let kf = join(r, KPTFILE);
        if let (Some(lk), Some(uk)) = (read_kptfile(local, &kf)?, read_kptfile(updated, &kf)?) {
            let ok = read_kptfile(original, &kf)?;
            if upstream_changed_locally(&lk, ok.as_ref()) {
                continue;
            }
            let merged = super::kptfile::merge_kptfiles(&lk, &uk, ok.as_ref(), true, &kf)?;
            write_kptfile(&mut out, &kf, Some(&lk), &merged);
        }
    }
    for p in dirs {
        let kf = join(&p, KPTFILE);
        let root = p.is_empty();
        let o = root || original.get(&kf).is_some();
        let u = root || updated.get(&kf).is_some();
        let l = local.get(&kf).is_some() || root;
        // kpt's ResourceMergeUpdater asks whether the package's *directory* exists
        // upstream (`pkgutil.Exists`): a sub-package whose Kptfile upstream removed
        // while keeping its files is merged, not deleted.
        let u_dir = u || updated.paths().any(|f| relative_to(f, &p).is_some());
        match (o, u, l) {
            (false, true, true) => return Err(UpdateError::AddedInBoth(p)),
            (false, true, false) => copy_subtree(updated, &mut out, &p),
            (true, false, true) if u_dir => merge_one(original, updated, &mut out, &p, opts)?,
            (true, false, true) if own_files_equal(original, local, &p) => {
                remove_subtree(&mut out, &p);
            }
            (true, true, true) => merge_one(original, updated, &mut out, &p, opts)?,
            _ => {}
        }
    }
    Ok(out)
}

/// kpt's `PkgHasUpdatedUpstream`: a resource-merge sub-package whose
/// `upstream.git` differs from origin's was updated on its own by the user, so its
/// parent's update leaves it alone.
pub(super) fn upstream_changed_locally(
    local: &crate::kptfile::Kptfile,
    origin: Option<&crate::kptfile::Kptfile>,
) -> bool {
    let Some(origin) = origin else {
        return false;
    };
    let strategy = local
        .upstream
        .as_ref()
        .map(|u| u.update_strategy.as_str())
        .unwrap_or_default();
    let git = |k: &crate::kptfile::Kptfile| k.upstream.as_ref().and_then(|u| u.git.clone());
    matches!(strategy, "" | "resource-merge") && git(local) != git(origin)
}

fn copy_subtree(from: &PackageFiles, to: &mut PackageFiles, dir: &str) {
    for (path, bytes) in from.as_map() {
        if relative_to(path, dir).is_some() {
            to.insert(path.clone(), bytes.clone());
        }
    }
}

fn remove_subtree(files: &mut PackageFiles, dir: &str) {
    let gone: Vec<String> = files
        .paths()
        .filter(|p| relative_to(p, dir).is_some())
        .map(str::to_string)
        .collect();
    for p in gone {
        files.remove(&p);
    }
}

fn own_files_equal(a: &PackageFiles, b: &PackageFiles, dir: &str) -> bool {
    let fa = a.own_files(dir);
    let fb = b.own_files(dir);
    fa.len() == fb.len() && fa.iter().all(|(full, _)| a.get(full) == b.get(full))
}

/// The package's own `*.yaml`/`*.yml` files (not the Kptfile), re-rooted at `dir`.
fn yaml_subtree(files: &PackageFiles, dir: &str) -> PackageFiles {
    let mut t = PackageFiles::new();
    for (full, rel) in files.own_files(dir) {
        let base = rel.rsplit('/').next().unwrap_or(&rel);
        if (base.ends_with(".yaml") || base.ends_with(".yml"))
            && let Some(b) = files.get(&full)
        {
            t.insert(rel, b.to_vec());
        }
    }
    t
}

fn read(
    files: &PackageFiles,
    dir: &str,
    label: &str,
) -> Result<(Vec<Node>, Sources, PackageFiles), UpdateError> {
    let sub = yaml_subtree(files, dir);
    let mut sources = Sources::default();
    let items = read_package(&sub, "", &mut sources).map_err(|e| UpdateError::Resources {
        path: format!("{label} {}", if dir.is_empty() { "." } else { dir }),
        source: e,
    })?;
    Ok((items, sources, sub))
}

fn merge_one(
    original: &PackageFiles,
    updated: &PackageFiles,
    out: &mut PackageFiles,
    dir: &str,
    opts: &UpdateOptions,
) -> Result<(), UpdateError> {
    let kf = join(dir, KPTFILE);
    // 1. Kptfile
    let lk = read_kptfile(out, &kf)?;
    let uk = read_kptfile(updated, &kf)?;
    let ok = read_kptfile(original, &kf)?;
    if let (Some(lk), Some(uk)) = (&lk, &uk) {
        let merged = super::kptfile::merge_kptfiles(lk, uk, ok.as_ref(), !dir.is_empty(), &kf)?;
        write_kptfile(out, &kf, Some(lk), &merged);
    } else if let (None, Some(_)) = (&lk, &uk)
        && let Some(b) = updated.get(&kf)
    {
        out.insert(kf.clone(), b.to_vec());
    }
    // 2. resources
    let (o_items, _, _) = read(original, dir, "origin")?;
    let (u_items, _, _) = read(updated, dir, "updated")?;
    let (l_items, l_sources, mut l_sub) = read(out, dir, "local")?;
    let mut schemas = SchemaRegistry::default();
    if !opts.merge.ignore_crd_schemas {
        schemas.add_crds_from(u_items.iter().chain(l_items.iter()));
    }
    let shown = if dir.is_empty() { "." } else { dir };
    let mut merged =
        merge_resources(o_items, u_items, l_items, &schemas, &opts.merge).map_err(|e| {
            UpdateError::Merge {
                path: shown.to_string(),
                source: e,
            }
        })?;
    let before = l_sub.clone();
    // The merge's own bookkeeping (ids, merge sources) goes with the reader's.
    merged.iter_mut().for_each(strip_bookkeeping);
    let written =
        write_items_keeping_duplicates(&mut l_sub, merged).map_err(|e| UpdateError::Resources {
            path: shown.to_string(),
            source: e,
        })?;
    prune(&mut l_sub, &l_sources, &written);
    for p in before.paths() {
        if l_sub.get(p).is_none() {
            out.remove(&join(dir, p));
        }
    }
    for (p, b) in l_sub.as_map() {
        out.insert(join(dir, p), b.clone());
    }
    // 3. non-KRM files
    nonkrm::replace_non_krm(original, updated, out, dir);
    Ok(())
}
