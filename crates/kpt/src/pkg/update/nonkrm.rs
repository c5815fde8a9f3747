//! Non-KRM files in `resource-merge` (kpt `ReplaceNonKRMFiles`): whole-file 3-way
//! rules; there is no textual merge.

use std::collections::BTreeMap;

use crate::package::{PackageFiles, join};

/// Anything that is not the Kptfile, `*.yaml` or `*.yml`.
pub(super) fn is_non_krm(rel: &str) -> bool {
    let base = rel.rsplit('/').next().unwrap_or(rel);
    !(base == "Kptfile" || base.ends_with(".yaml") || base.ends_with(".yml"))
}

fn own_non_krm(files: &PackageFiles, dir: &str) -> BTreeMap<String, Vec<u8>> {
    files
        .own_files(dir)
        .into_iter()
        .filter(|(_, rel)| is_non_krm(rel))
        .filter_map(|(full, rel)| Some((rel, files.get(&full)?.to_vec())))
        .collect()
}

pub(super) fn replace_non_krm(
    original: &PackageFiles,
    updated: &PackageFiles,
    out: &mut PackageFiles,
    dir: &str,
) {
    let o = own_non_krm(original, dir);
    let u = own_non_krm(updated, dir);
    let l = own_non_krm(out, dir);
    let modified = |rel: &str| -> bool {
        match l.get(rel) {
            Some(lb) => o.get(rel) != Some(lb),
            None => false,
        }
    };
    for rel in l.keys() {
        if !modified(rel) && !u.contains_key(rel) {
            out.remove(&join(dir, rel));
        }
    }
    for (rel, ub) in &u {
        if !modified(rel) {
            out.insert(join(dir, rel), ub.clone());
        }
    }
}
