//! `kpt pkg update` on a directory: fetch origin and updated from git, run the pure
//! update for the package and each remote sub-package, advance `upstreamLock`, and
//! write the changes. On any error nothing is written.

use std::path::Path;

use super::{
    Strategy, UpdateError, UpdateOptions, read_kptfile, remote_subpackages, update_package,
};
use crate::kptfile::KPTFILE;
use crate::package::{PackageFiles, fs, join};
use crate::pkg::get::{lock, subtree};
use crate::pkg::merge3::MergeOptions;
use crate::pkg::{git, ids};

fn fetch_err(e: git::FetchError) -> UpdateError {
    UpdateError::Fetch(e.to_string())
}

/// Update the package tree `local` (rooted at a package with `upstream.git`), in
/// memory. `new_ref`/`strategy` override the Kptfile's.
pub fn update_tree(
    local: &PackageFiles,
    new_ref: Option<&str>,
    strategy: Option<Strategy>,
) -> Result<PackageFiles, UpdateError> {
    update_tree_with(local, new_ref, strategy, &MergeOptions::default())
}

/// [`update_tree`] with explicit merge options.
pub fn update_tree_with(
    local: &PackageFiles,
    new_ref: Option<&str>,
    strategy: Option<Strategy>,
    merge: &MergeOptions,
) -> Result<PackageFiles, UpdateError> {
    let Some(mut k) = read_kptfile(local, KPTFILE)? else {
        return Err(UpdateError::NotUpdatable("no Kptfile in the package"));
    };
    // kpt's update.Run: no upstream, or one that is not git, is the same refusal.
    let no_upstream = || UpdateError::NotUpdatable("package must have an upstream reference");
    let Some(up) = k.upstream.as_mut() else {
        return Err(no_upstream());
    };
    let old_git = up.git.clone();
    let Some(g) = up.git.as_mut() else {
        return Err(no_upstream());
    };
    if let Some(r) = new_ref {
        g.git_ref = r.to_string();
    }
    if let Some(s) = strategy {
        up.update_strategy = s.as_str().to_string();
    }
    let strat: Strategy = up.update_strategy.parse()?;
    let g = g.clone();
    let mut updated = git::fetch(&g.repo, &g.directory, &g.git_ref).map_err(fetch_err)?;
    let mut original = match k.upstream_lock.as_ref().and_then(|l| l.git.as_ref()) {
        Some(l) if !l.commit.is_empty() => {
            git::fetch(&l.repo, &l.directory, &l.commit)
                .map_err(fetch_err)?
                .files
        }
        _ => PackageFiles::new(),
    };
    // kpt fetches both through `get`, which adds the identity markers; without them
    // every fetched resource would look locally modified.
    ids::add_identities(&mut updated.files);
    ids::add_identities(&mut original);
    let mut input = local.clone();
    input.insert(KPTFILE, k.to_yaml().into_bytes());
    if let Some(old) = &old_git {
        propagate_ref(&mut input, old, &g, strategy)?;
    }
    // kpt adds the identity markers to local resources before merging.
    ids::add_identities(&mut input);
    let opts = UpdateOptions {
        add_identities: false,
        merge: merge.clone(),
    };
    let mut out = update_package(&original, &updated.files, &input, strat, &opts)?;
    if let Some(mut merged) = read_kptfile(&out, KPTFILE)? {
        merged.upstream = k.upstream.clone();
        merged.upstream_lock = Some(lock(&g.repo, &g.directory, &updated));
        out.insert(KPTFILE, merged.to_yaml().into_bytes());
    }
    for sub in remote_subpackages(&out) {
        let tree = subtree(&out, &sub);
        let new = update_tree_with(&tree, None, None, merge)?;
        let gone: Vec<String> = out
            .paths()
            .filter(|p| p.starts_with(&format!("{sub}/")))
            .map(str::to_string)
            .collect();
        for p in gone {
            out.remove(&p);
        }
        for (p, b) in new.as_map() {
            out.insert(join(&sub, p), b.clone());
        }
    }
    Ok(out)
}

/// `kpt pkg update DIR[@REF] [--strategy S]`.
pub fn update_dir(
    dir: &Path,
    new_ref: Option<&str>,
    strategy: Option<Strategy>,
) -> Result<(), UpdateError> {
    update_dir_with(dir, new_ref, strategy, &MergeOptions::default())
}

/// [`update_dir`] with explicit merge options.
pub fn update_dir_with(
    dir: &Path,
    new_ref: Option<&str>,
    strategy: Option<Strategy>,
    merge: &MergeOptions,
) -> Result<(), UpdateError> {
    let io = |e: std::io::Error| UpdateError::Io {
        path: dir.display().to_string(),
        source: e,
    };
    let (local, _) = fs::read_dir(dir).map_err(io)?;
    let mut out = update_tree_with(&local, new_ref, strategy, merge)?;
    crate::pkg::ids::add_identities(&mut out);
    fs::write_changes(dir, &local, &out).map_err(io)?;
    remove_empty_dirs(dir);
    Ok(())
}

fn remove_empty_dirs(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) && e.file_name() != ".git" {
            remove_empty_dirs(&p);
            let _ = std::fs::remove_dir(&p);
        }
    }
}

/// kpt gives remote sub-packages from the same repository, at the root's old ref
/// and under the root's directory, the root's new ref (and strategy).
fn propagate_ref(
    files: &mut PackageFiles,
    old: &crate::kptfile::Git,
    new: &crate::kptfile::Git,
    strategy: Option<Strategy>,
) -> Result<(), UpdateError> {
    if old.git_ref == new.git_ref && strategy.is_none() {
        return Ok(());
    }
    let root_dir = old.directory.trim_matches('/');
    for sub in remote_subpackages(files) {
        let kf = join(&sub, KPTFILE);
        let Some(mut k) = read_kptfile(files, &kf)? else {
            continue;
        };
        let Some(up) = k.upstream.as_mut() else {
            continue;
        };
        let Some(g) = up.git.as_mut() else { continue };
        let dir = g.directory.trim_matches('/');
        let under =
            root_dir.is_empty() || dir == root_dir || dir.starts_with(&format!("{root_dir}/"));
        if g.repo != old.repo || g.git_ref != old.git_ref || !under {
            continue;
        }
        g.git_ref = new.git_ref.clone();
        if let Some(s) = strategy {
            up.update_strategy = s.as_str().to_string();
        }
        files.insert(kf, k.to_yaml().into_bytes());
    }
    Ok(())
}
