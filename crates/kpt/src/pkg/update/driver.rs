//! `kpt pkg update` on a directory: fetch origin and updated from git, run the pure
//! update for the package and each remote sub-package, advance `upstreamLock`, and
//! write the changes. On any error nothing is written.
//!
//! The packages are visited as kpt's `update.Run` visits them: the root, then, from
//! a stack, the direct sub-packages with a git `upstream` of each package updated
//! (pushed in path order, so the last is updated first). Each prints what kpt
//! prints (`Package "<path>":`, `Fetching upstream from …`, git's fetch output,
//! `Fetching origin from …`, then a line per package its walk meets) to the
//! [`Console`](crate::pkg::console::Console) of the [`Fetcher`].

use std::collections::BTreeSet;
use std::path::Path;

use super::kptfile::merge_kptfiles;
use super::resources::upstream_changed_locally;
use super::{
    Strategy, UpdateError, UpdateOptions, read_kptfile, remote_subpackages, update_package,
    write_kptfile,
};
use crate::goquote::go_quote;
use crate::kptfile::KPTFILE;
use crate::package::{PackageFiles, fs, join, relative_to};
use crate::pkg::console::{Console, Silent, display_name, package_line};
use crate::pkg::get::{lock, subtree};
use crate::pkg::git::{self, Fetcher, RepoCache};
use crate::pkg::ids;
use crate::pkg::merge3::MergeOptions;

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
    let mut quiet = Silent;
    let cache = RepoCache::temporary().map_err(fetch_err)?;
    let mut fx = Fetcher::new(cache, &mut quiet, true);
    update_tree_into(local, "", new_ref, strategy, merge, &mut fx)
}

/// kpt's `update.Run` on the package tree `local`, in memory, fetching through `fx`
/// and printing to its console; `display` is the root's display name (its
/// directory's name). Ends with `Updated N package(s).` after a blank line.
pub fn update_tree_into(
    local: &PackageFiles,
    display: &str,
    new_ref: Option<&str>,
    strategy: Option<Strategy>,
    merge: &MergeOptions,
    fx: &mut Fetcher<'_>,
) -> Result<PackageFiles, UpdateError> {
    // kpt refuses a root without a git upstream before it prints anything.
    let Some(k) = read_kptfile(local, KPTFILE)? else {
        return Err(UpdateError::NotUpdatable("no Kptfile in the package"));
    };
    if k.upstream.as_ref().and_then(|u| u.git.as_ref()).is_none() {
        return Err(UpdateError::NotUpdatable(
            "package must have an upstream reference",
        ));
    }
    let mut tree = local.clone();
    let mut count = 0;
    let mut stack = vec![String::new()];
    while let Some(p) = stack.pop() {
        count += 1;
        if p.is_empty() {
            tree = update_one(&tree, display, false, new_ref, strategy, merge, fx)?;
        } else {
            let shown = format!("{display}/{p}");
            let new = update_one(&subtree(&tree, &p), &shown, true, None, None, merge, fx)?;
            let gone: Vec<String> = tree
                .paths()
                .filter(|f| relative_to(f, &p).is_some())
                .map(str::to_string)
                .collect();
            for f in gone {
                tree.remove(&f);
            }
            for (f, b) in new.as_map() {
                tree.insert(join(&p, f), b.clone());
            }
        }
        for d in tree.direct_subpackages(&p) {
            let k = read_kptfile(&tree, &join(&d, KPTFILE))?;
            if k.and_then(|k| k.upstream).and_then(|u| u.git).is_some() {
                stack.push(d);
            }
        }
    }
    fx.console()
        .print(&format!("\nUpdated {count} package(s).\n"));
    Ok(tree)
}

/// kpt's `updateRootPackage` for one package (`local` rooted at it): fetch its
/// updated upstream and its origin (`upstreamLock`), merge, lock to updated.
fn update_one(
    local: &PackageFiles,
    shown: &str,
    leading_newline: bool,
    new_ref: Option<&str>,
    strategy: Option<Strategy>,
    merge: &MergeOptions,
    fx: &mut Fetcher<'_>,
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
    let g = g.clone();
    let c = fx.console();
    c.print(&package_line(shown, leading_newline));
    // A password in the URL is never shown (kpt prints it).
    let shown_repo = git::redact(&g.repo);
    c.print(&format!(
        "Fetching upstream from {shown_repo}@{}\n",
        g.git_ref
    ));
    let mut updated = fx
        .fetch(&g.repo, &g.directory, &g.git_ref)
        .map_err(fetch_err)?;
    let mut original = match k.upstream_lock.as_ref().and_then(|l| l.git.as_ref()) {
        Some(l) if !l.commit.is_empty() => {
            // kpt names the upstream here, not the locked commit.
            fx.console().print(&format!(
                "Fetching origin from {shown_repo}@{}\n",
                g.git_ref
            ));
            fx.fetch(&l.repo, &l.directory, &l.commit)
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
    let name = shown.rsplit('/').next().unwrap_or(shown);
    let plan = report_root(&original, &updated.files, &input, name, fx.console())?;
    let opts = UpdateOptions {
        add_identities: false,
        merge: merge.clone(),
    };
    let mut out = match plan {
        RootPlan::Merge(strat) => update_package(&original, &updated.files, &input, strat, &opts)?,
        RootPlan::KptfileOnly => {
            let mut out = input.clone();
            if let (Some(lk), Some(uk)) = (
                read_kptfile(&input, KPTFILE)?,
                read_kptfile(&updated.files, KPTFILE)?,
            ) {
                let ok = read_kptfile(&original, KPTFILE)?;
                let merged = merge_kptfiles(&lk, &uk, ok.as_ref(), true, KPTFILE)?;
                write_kptfile(&mut out, KPTFILE, Some(&lk), &merged);
            }
            out
        }
    };
    report_subpackages(
        &original,
        &updated.files,
        &input,
        &mut out,
        &opts,
        fx.console(),
    )?;
    if let Some(mut merged) = read_kptfile(&out, KPTFILE)? {
        merged.upstream = k.upstream.clone();
        merged.upstream_lock = Some(lock(&g.repo, &g.directory, &updated));
        out.insert(KPTFILE, merged.to_yaml().into_bytes());
    }
    Ok(out)
}

/// What kpt does with the package a pass updates (`mergePackage` on `.`).
enum RootPlan {
    /// Run the strategy.
    Merge(Strategy),
    /// Updated upstream's Kptfile has an `upstream` but no `upstreamLock` (an
    /// unfetched package): only the Kptfile is merged.
    KptfileOnly,
}

fn unfetched(files: &PackageFiles, kf: &str) -> Result<bool, UpdateError> {
    Ok(read_kptfile(files, kf)?.is_some_and(|k| k.upstream.is_some() && k.upstream_lock.is_none()))
}

/// kpt's `mergePackage` checks for the package a pass updates, and its `Updating
/// package "<name>" with strategy "<strategy>".` line (the strategy of its Kptfile;
/// one without any is a resource-merge here, where kpt stops with `unrecognized
/// update strategy`).
fn report_root(
    original: &PackageFiles,
    updated: &PackageFiles,
    local: &PackageFiles,
    name: &str,
    console: &mut dyn Console,
) -> Result<RootPlan, UpdateError> {
    if unfetched(updated, KPTFILE)? {
        return Ok(RootPlan::KptfileOnly);
    }
    if unfetched(original, KPTFILE)? {
        return Err(UpdateError::NoOrigin);
    }
    let strategy = read_kptfile(local, KPTFILE)?
        .and_then(|k| k.upstream)
        .map(|u| u.update_strategy)
        .unwrap_or_default();
    let strat: Strategy = strategy.parse()?;
    console.print(&format!(
        "Updating package {} with strategy {}.\n",
        go_quote(name),
        go_quote(strat.as_str())
    ));
    Ok(RootPlan::Merge(strat))
}

/// Direct sub-packages of `dir` in `files` whose Kptfile has an `upstream` (kpt's
/// `Subpackages(Remote, recursive=false)`).
fn remote_direct_subpackages(files: &PackageFiles, dir: &str) -> Result<Vec<String>, UpdateError> {
    let mut out = Vec::new();
    for d in files.direct_subpackages(dir) {
        if read_kptfile(files, &join(&d, KPTFILE))?.is_some_and(|k| k.upstream.is_some()) {
            out.push(d);
        }
    }
    Ok(out)
}

/// Every file under `dir` equal in `a` and `b` (kpt's `copyutil.Diff` is empty).
fn same_tree(a: &PackageFiles, b: &PackageFiles, dir: &str) -> bool {
    let under = |f: &PackageFiles| -> Vec<(String, Vec<u8>)> {
        f.as_map()
            .iter()
            .filter(|(p, _)| relative_to(p, dir).is_some())
            .map(|(p, c)| (p.clone(), c.clone()))
            .collect()
    };
    under(a) == under(b)
}

/// The rest of kpt's walk in `updateRootPackage`: the remote sub-packages (and
/// theirs) of local, updated and origin, each named by a line saying what happens
/// to it (added, ignored, deleted, kept, updated with its strategy), in kpt's order
/// (a stack, the last path first); a sub-package added both locally and upstream,
/// or fetched upstream but not in origin, stops the update as it stops kpt's. One
/// that is fetched in origin and updated alike is updated in `out` from them, with
/// its own strategy ([`merge_subpackage`]); the others were handled by the merge.
fn report_subpackages(
    original: &PackageFiles,
    updated: &PackageFiles,
    local: &PackageFiles,
    out: &mut PackageFiles,
    opts: &UpdateOptions,
    console: &mut dyn Console,
) -> Result<(), UpdateError> {
    let children = |rel: &str, local_counts: bool| -> Result<Vec<String>, UpdateError> {
        let mut all = BTreeSet::new();
        if local_counts {
            all.extend(remote_direct_subpackages(local, rel)?);
        }
        all.extend(remote_direct_subpackages(updated, rel)?);
        all.extend(remote_direct_subpackages(original, rel)?);
        Ok(all.into_iter().collect())
    };
    let mut stack = children("", true)?;
    while let Some(rel) = stack.pop() {
        let kf = join(&rel, KPTFILE);
        let (o, l, u) = (
            original.get(&kf).is_some(),
            local.get(&kf).is_some(),
            updated.get(&kf).is_some(),
        );
        let name = go_quote(rel.rsplit('/').next().unwrap_or(&rel));
        // Whether local's own sub-packages are still there for the walk to find.
        let mut local_counts = true;
        match (o, l, u) {
            (false, true, true) => {
                console.print(&format!(
                    "Package {name} added in both local and upstream.\n"
                ));
                return Err(UpdateError::AddedInBoth(rel));
            }
            (false, false, true) => {
                console.print(&format!("Adding package {name} from upstream.\n"));
                local_counts = false;
            }
            (true, false, true) => console.print(&format!(
                "Ignoring package {name} in upstream since it is deleted from local.\n"
            )),
            (true, true, false) if same_tree(original, local, &rel) => {
                console.print(&format!(
                    "Deleting package {name} from local since it is removed in upstream.\n"
                ));
                local_counts = false;
            }
            (true, true, false) => console.print(&format!(
                "Package {name} deleted from upstream, but keeping local since it has changes.\n"
            )),
            (true, true, true) if unfetched(updated, &kf)? => {}
            (true, true, true) if unfetched(original, &kf)? => {
                return Err(UpdateError::NoOrigin);
            }
            (true, true, true) => {
                let strategy = read_kptfile(local, &kf)?
                    .and_then(|k| k.upstream)
                    .map(|u| u.update_strategy)
                    .unwrap_or_default();
                let strat: Strategy = strategy.parse()?;
                console.print(&format!(
                    "Updating package {name} with strategy {}.\n",
                    go_quote(strat.as_str())
                ));
                merge_subpackage(original, updated, out, &rel, strat, opts)?;
            }
            _ => {}
        }
        stack.extend(children(&rel, local_counts)?);
    }
    Ok(())
}

/// kpt's `mergePackage` for a remote sub-package that origin and updated upstream
/// both hold fetched: its strategy runs on it with origin's and updated's copies,
/// and its Kptfile takes `upstream` and `upstreamLock` from updated's (it is not
/// the root of the pass). A resource-merge sub-package whose `upstream.git` the
/// user changed is left alone (kpt's `PkgHasUpdatedUpstream`).
fn merge_subpackage(
    original: &PackageFiles,
    updated: &PackageFiles,
    out: &mut PackageFiles,
    rel: &str,
    strategy: Strategy,
    opts: &UpdateOptions,
) -> Result<(), UpdateError> {
    let (o, u, l) = (
        subtree(original, rel),
        subtree(updated, rel),
        subtree(out, rel),
    );
    let (Some(lk), ok, uk) = (
        read_kptfile(&l, KPTFILE)?,
        read_kptfile(&o, KPTFILE)?,
        read_kptfile(&u, KPTFILE)?,
    ) else {
        return Ok(());
    };
    if upstream_changed_locally(&lk, ok.as_ref()) {
        return Ok(());
    }
    let mut new = update_package(&o, &u, &l, strategy, opts)?;
    if let (Some(mut nk), Some(uk)) = (read_kptfile(&new, KPTFILE)?, uk) {
        if uk.upstream.is_some() {
            nk.upstream = uk.upstream;
        }
        if uk.upstream_lock.is_some() {
            nk.upstream_lock = uk.upstream_lock;
        }
        new.insert(KPTFILE, nk.to_yaml().into_bytes());
    }
    let gone: Vec<String> = out
        .paths()
        .filter(|f| relative_to(f, rel).is_some())
        .map(str::to_string)
        .collect();
    for f in gone {
        out.remove(&f);
    }
    for (f, b) in new.as_map() {
        out.insert(join(rel, f), b.clone());
    }
    Ok(())
}

/// `kpt pkg update DIR[@REF] [--strategy S]`, reporting nothing.
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
    let mut quiet = Silent;
    let cache = RepoCache::temporary().map_err(fetch_err)?;
    let mut fx = Fetcher::new(cache, &mut quiet, true);
    update_dir_into(dir, new_ref, strategy, merge, &mut fx)
}

/// `kpt pkg update DIR[@REF] [--strategy S]`, fetching through `fx` and printing
/// to its console what kpt prints.
pub fn update_dir_into(
    dir: &Path,
    new_ref: Option<&str>,
    strategy: Option<Strategy>,
    merge: &MergeOptions,
    fx: &mut Fetcher<'_>,
) -> Result<(), UpdateError> {
    let io = |e: std::io::Error| UpdateError::Io {
        path: dir.display().to_string(),
        source: e,
    };
    let (local, _) = fs::read_dir(dir).map_err(io)?;
    let mut out = update_tree_into(&local, &display_name(dir), new_ref, strategy, merge, fx)?;
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
/// and under the root's directory, the root's new ref (and strategy). "Under" is a path
/// test on the cleaned directories; kpt compares them as strings, so a sibling that
/// shares a prefix (`/app-lib` beside `/app`) moves with the root there (COMPATIBILITY.md).
fn propagate_ref(
    files: &mut PackageFiles,
    old: &crate::kptfile::Git,
    new: &crate::kptfile::Git,
    strategy: Option<Strategy>,
) -> Result<(), UpdateError> {
    if old.git_ref == new.git_ref && strategy.is_none() {
        return Ok(());
    }
    let root_dir = crate::pkg::url::clean(&old.directory);
    for sub in remote_subpackages(files) {
        let kf = join(&sub, KPTFILE);
        let Some(mut k) = read_kptfile(files, &kf)? else {
            continue;
        };
        let Some(up) = k.upstream.as_mut() else {
            continue;
        };
        let Some(g) = up.git.as_mut() else { continue };
        let under = is_under(&crate::pkg::url::clean(&g.directory), &root_dir);
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

/// Whether cleaned directory `dir` is `root` or inside it.
fn is_under(dir: &str, root: &str) -> bool {
    dir == root || root == "/" || root == "." || dir.starts_with(&format!("{root}/"))
}

#[cfg(test)]
mod tests {
    use super::is_under;

    #[test]
    fn under_is_a_path_test_not_a_string_prefix() {
        assert!(is_under("/app", "/app"));
        assert!(is_under("/app/sub", "/app"));
        assert!(is_under("/anything", "/"));
        assert!(!is_under("/app-lib", "/app"));
        assert!(!is_under("/ap", "/app"));
    }
}
