//! The replacing strategies: `fast-forward`, `force-delete-replace`, `copy-merge`.

use super::{UpdateError, read_kptfile, remote_subpackages, under_any, write_kptfile};
use crate::kptfile::{KPTFILE, Kptfile};
use crate::package::PackageFiles;
use crate::package::resources::remove_annotation;
use crate::yaml;

/// Merge the root Kptfile (upstream/lock taken from updated when it has them).
fn merged_root_kptfile(
    original: Option<&PackageFiles>,
    updated: &PackageFiles,
    local: &PackageFiles,
) -> Result<Option<(Option<Kptfile>, Kptfile)>, UpdateError> {
    let lk = read_kptfile(local, KPTFILE)?;
    let uk = read_kptfile(updated, KPTFILE)?;
    let ok = match original {
        Some(o) => read_kptfile(o, KPTFILE)?,
        None => None,
    };
    Ok(match (lk, uk) {
        (Some(l), Some(u)) => {
            let m = super::kptfile::merge_kptfiles(&l, &u, ok.as_ref(), true, KPTFILE)?;
            Some((Some(l), m))
        }
        (None, Some(u)) => Some((None, u)),
        (Some(l), None) => Some((Some(l.clone()), l)),
        (None, None) => None,
    })
}

pub(super) fn force_delete_replace(
    updated: &PackageFiles,
    local: &PackageFiles,
) -> Result<PackageFiles, UpdateError> {
    replace_all(None, updated, local)
}

fn replace_all(
    original: Option<&PackageFiles>,
    updated: &PackageFiles,
    local: &PackageFiles,
) -> Result<PackageFiles, UpdateError> {
    let _ = original;
    let remote = remote_subpackages(local);
    // kpt 1.0.0-beta keeps the local root Kptfile as is; a missing one comes from
    // updated. kpt HEAD first merges updated's Kptfile into it, taking updated's
    // `upstream` and `upstreamLock` when it has them: those are taken here too
    // (the driver then sets both to what it fetched), the rest stays local's as
    // in 1.0.0-beta (COMPATIBILITY.md).
    let updated_kf = read_kptfile(updated, KPTFILE)?;
    let kf = match read_kptfile(local, KPTFILE)? {
        Some(l) => {
            let mut k = l.clone();
            if let Some(u) = &updated_kf {
                if u.upstream.is_some() {
                    k.upstream = u.upstream.clone();
                }
                if u.upstream_lock.is_some() {
                    k.upstream_lock = u.upstream_lock.clone();
                }
            }
            Some((Some(l), k))
        }
        None => updated_kf.map(|u| (None, u)),
    };
    let mut out = PackageFiles::new();
    for (p, b) in local.as_map() {
        if under_any(p, &remote) {
            out.insert(p.clone(), b.clone());
        }
    }
    for (p, b) in updated.as_map() {
        if p != KPTFILE && !under_any(p, &remote) {
            out.insert(p.clone(), b.clone());
        }
    }
    if let Some((before, k)) = kf {
        if let Some(b) = local.get(KPTFILE) {
            out.insert(KPTFILE, b.to_vec());
        }
        write_kptfile(&mut out, KPTFILE, before.as_ref(), &k);
    }
    Ok(out)
}

pub(super) fn copy_merge(
    original: &PackageFiles,
    updated: &PackageFiles,
    local: &PackageFiles,
) -> Result<PackageFiles, UpdateError> {
    let kf = merged_root_kptfile(Some(original), updated, local)?;
    let mut out = local.clone();
    for (p, b) in updated.as_map() {
        if p == KPTFILE && local.get(KPTFILE).is_some() {
            continue;
        }
        out.insert(p.clone(), b.clone());
    }
    for p in original.paths() {
        if p != KPTFILE && updated.get(p).is_none() {
            out.remove(p);
        }
    }
    if let Some((before, k)) = kf {
        write_kptfile(&mut out, KPTFILE, before.as_ref(), &k);
    }
    Ok(out)
}

/// Files of local (root and local sub-packages) that differ from origin.
fn local_changes(
    original: &PackageFiles,
    local: &PackageFiles,
) -> Result<Vec<String>, UpdateError> {
    let remote = remote_subpackages(local);
    let mut changed = Vec::new();
    let mut paths: Vec<&str> = original.paths().chain(local.paths()).collect();
    paths.sort();
    paths.dedup();
    for p in paths {
        if under_any(p, &remote) {
            continue;
        }
        let base = p.rsplit('/').next().unwrap_or(p);
        let (o, l) = (original.get(p), local.get(p));
        // kpt's `PkgDiff` counts a file on one side only as a change; a
        // sub-package's Kptfile added or removed locally is one (the root's is
        // compared by content: kpt's origin may have none).
        let differs = if base == KPTFILE && p != KPTFILE && o.is_some() != l.is_some() {
            true
        } else if base == KPTFILE {
            let norm = |b: Option<&[u8]>| -> Result<Kptfile, UpdateError> {
                let mut k = match b {
                    Some(b) => Kptfile::parse(&String::from_utf8_lossy(b)).map_err(|e| {
                        UpdateError::Kptfile {
                            path: p.to_string(),
                            source: e,
                        }
                    })?,
                    None => Kptfile::default(),
                };
                k.upstream = None;
                k.upstream_lock = None;
                // A render leaves no local change of its own.
                clear_render_status(&mut k);
                k.metadata.name.clear();
                k.api_version.clear();
                k.kind.clear();
                Ok(k)
            };
            norm(o)? != norm(l)?
        } else if (base.ends_with(".yaml") || base.ends_with(".yml")) && o.is_some() && l.is_some()
        {
            normalize_yaml(o) != normalize_yaml(l)
        } else {
            o != l
        };
        if differs {
            changed.push(p.to_string());
        }
    }
    Ok(changed)
}

fn normalize_yaml(b: Option<&[u8]>) -> Option<String> {
    let text = std::str::from_utf8(b?).ok()?;
    let mut docs = yaml::parse_stream(text).ok()?;
    for d in &mut docs {
        remove_annotation(&mut d.root, "cnrm.cloud.google.com/blueprint");
    }
    Some(
        docs.iter()
            .map(|d| d.to_yaml())
            .collect::<Vec<_>>()
            .join("---\n"),
    )
}

pub(super) fn fast_forward(
    original: &PackageFiles,
    updated: &PackageFiles,
    local: &PackageFiles,
) -> Result<PackageFiles, UpdateError> {
    let changed = local_changes(original, local)?;
    if !changed.is_empty() {
        return Err(UpdateError::LocalChanges(changed));
    }
    let mut out = replace_all(Some(original), updated, local)?;
    if let Some(mut k) = read_kptfile(&out, KPTFILE)?
        && clear_render_status(&mut k)
    {
        out.insert(KPTFILE, k.to_yaml().into_bytes());
    }
    Ok(out)
}

/// kpt `clearRenderStatus`: drop the render status and the `Rendered`
/// condition (other conditions stay), and the status when nothing is left.
/// Returns whether anything was removed.
fn clear_render_status(k: &mut Kptfile) -> bool {
    let Some(s) = &mut k.status else {
        return false;
    };
    let before = (s.render_status.is_some(), s.conditions.len());
    s.render_status = None;
    s.conditions.retain(|c| c.condition_type != RENDERED);
    let changed = before != (false, s.conditions.len());
    if s.conditions.is_empty() {
        k.status = None;
    }
    changed
}

/// The condition type a render records (kpt `ConditionTypeRendered`).
const RENDERED: &str = "Rendered";
