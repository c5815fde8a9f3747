//! The per-item bookkeeping around one function call: call ids and healing snapshots
//! before it, healing, id removal and kpt's checks after it.
//!
//! Each side is one pass over the items doing everything an item needs while it is
//! in cache. At 10,000 resources the items no longer fit in the cache, and separate
//! passes for ids, snapshots, KRM checks, healing, package claims and invariants each
//! went out to memory: per resource, a render cost twice what it cost at 1,000.

use std::borrow::Cow;
use std::collections::HashSet;

use super::heal::{Snapshot, Snapshots};
use super::inputs::{check_krm, krm_problem};
use crate::package::resources::{self as res, annotation, set_annotation};
use crate::yaml::Node;

/// Why the items cannot be handed to a function.
pub(super) enum Unfit {
    /// kyaml refuses them before the function starts: two call id annotations
    /// carried over from a source file disagree.
    Ids(&'static str),
    /// An item is not KRM (kpt's message); the step fails.
    NotKrm(String),
}

/// Before a call: check kyaml's id invariant, give every item its call id (`1`, `2`,
/// ... in both id annotations), take the snapshot healing needs into `originals`
/// (emptied first), and check it is KRM.
pub(super) fn prepare(items: &mut [Node], originals: &mut Snapshots) -> Result<(), Unfit> {
    originals.clear();
    for (i, item) in items.iter_mut().enumerate() {
        if let Some(message) = res::mismatched_ids(item) {
            return Err(Unfit::Ids(message));
        }
        let id = (i + 1).to_string();
        // kyaml hands a function the root node, not the document around it, and gives
        // the document's head back without the blank line after it.
        let head = crate::yaml::collapse_document_head(&item.head_comment);
        if head.len() != item.head_comment.len() {
            item.head_comment = head.into_owned();
        }
        res::set_annotations(item, &[(res::ID, &id), (res::LEGACY_ID, &id)]);
        originals.push(item);
        // The document's head and foot comments (kept here as the root's own; the
        // first key holds the root's head) stay out of the call: healing puts them back
        // from the snapshot, as kyaml's copier restores the document's.
        item.head_comment.clear();
        item.foot_comment.clear();
        check_krm(item).map_err(Unfit::NotKrm)?;
    }
    Ok(())
}

/// The package a mutator's output belongs to, for items that name none.
pub(super) struct Owner<'a> {
    /// The package's key (`.` for the root).
    pub pkg: &'a str,
    /// Where generated resources without a path go (next to the function config).
    pub config_dir: &'a str,
}

impl Owner<'_> {
    /// What kpt and kyaml give an output item that lacks them: this package's path
    /// annotation (kpt's `setPkgPathAnnotationIfNotExist`) and, when the function
    /// succeeded, a default file next to the function config (kyaml's
    /// `DefaultPathAnnotation`, which a failed function's output never reaches).
    pub fn claim(&self, item: &mut Node, with_path: bool) {
        if annotation(item, res::PACKAGE_PATH).is_none() {
            set_annotation(item, res::PACKAGE_PATH, self.pkg);
        }
        if with_path && res::item_path(item).is_none() {
            let p = crate::package::join(self.config_dir, &res::default_path(item));
            set_annotation(item, res::PATH, &p);
            set_annotation(item, res::LEGACY_PATH, &p);
        }
    }
}

/// After a call: heal each output item from the input its call id names, drop the
/// ids, claim unowned items for `owner`'s package and check what kpt's runner checks
/// on every function's output (`FunctionRunner.do`), whether the function succeeded
/// or not: first the path invariants over all items, then that each is KRM.
///
/// The error is kpt's: the first invariant broken, else the first item that is not
/// KRM (`output resource list must contain only KRM resources: ...`).
pub(super) fn finish(
    items: &mut [Node],
    originals: &Snapshots,
    owner: &Owner<'_>,
    succeeded: bool,
) -> Result<(), String> {
    let mut invariants = Invariants::with_capacity(items.len());
    let mut not_krm = None;
    for item in items.iter_mut() {
        if let Some(orig) = annotation(item, res::ID)
            .and_then(call_index)
            .and_then(|i| originals.get(i))
        {
            orig.heal(item);
            reconcile_twins(&orig, item);
        }
        // kyaml drops its migration id after every function along with the call ids.
        res::remove_annotations(item, &[res::ID, res::LEGACY_ID, res::MIGRATION_ID]);
        owner.claim(item, succeeded);
        if not_krm.is_none() {
            not_krm = krm_problem(item);
        }
        // Done changing it: the check keeps borrowed keys into the item.
        let item: &Node = item;
        invariants.check(item);
    }
    invariants.result()?;
    match not_krm {
        Some(problem) => Err(format!(
            "output resource list must contain only KRM resources: {problem}"
        )),
        None => Ok(()),
    }
}

/// The position of the input an id annotation (`1`, `2`, ...) names; ids written
/// differently (`01`, `+1`) name no input, as they would in a lookup by string.
fn call_index(id: &str) -> Option<usize> {
    if id.starts_with('0') || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    id.parse::<usize>().ok()?.checked_sub(1)
}

/// If a function changed only one of the path/index twins, the changed one wins.
fn reconcile_twins(orig: &Snapshot<'_>, item: &mut Node) {
    let before = orig.annotations();
    for (internal, legacy) in [
        (res::PATH, res::LEGACY_PATH),
        (res::INDEX, res::LEGACY_INDEX),
    ] {
        let (oi, ol) = (before.get(internal), before.get(legacy));
        let (ni, nl) = (annotation(item, internal), annotation(item, legacy));
        // Copied only when one must be written (rarely: functions seldom move items).
        let (key, value) = if nl != ol && ni == oi {
            match nl {
                Some(v) => (internal, v.to_string()),
                None => continue,
            }
        } else if ni != oi
            && let Some(v) = ni
        {
            (legacy, v.to_string())
        } else {
            continue;
        };
        set_annotation(item, key, &value);
    }
}

/// kpt's invariants over a package's items: none outside the package, no two in one
/// (path, index) slot. Remembers the first broken one.
pub(super) struct Invariants<'a> {
    // Borrowed keys: this runs over every item after every function.
    seen: HashSet<(&'a str, Cow<'a, str>, &'a str)>,
    error: Option<String>,
}

impl<'a> Invariants<'a> {
    pub fn with_capacity(n: usize) -> Self {
        Invariants {
            seen: HashSet::with_capacity(n),
            error: None,
        }
    }

    /// Check the next item (in list order). As kyaml's `GetFileAnnotations`, a missing
    /// path or index reads as empty (a path that is empty is `.` once cleaned), so two
    /// items without them, or with one path and no index, clash.
    pub fn check(&mut self, item: &'a Node) {
        if self.error.is_some() {
            return;
        }
        let cleaned = match res::item_path(item) {
            None | Some("") => Cow::Borrowed("."),
            Some(path) => match res::clean_path_cow(path) {
                Ok(c) => c,
                Err(e) => {
                    self.error = Some(e.to_string());
                    return;
                }
            },
        };
        let index = res::item_index(item).unwrap_or_default();
        if !self.seen.insert((pkg_of(item), cleaned.clone(), index)) {
            self.error = Some(format!(
                "resource at path {cleaned:?} and index {index:?} already exists"
            ));
        }
    }

    /// The first invariant broken, if any.
    pub fn result(self) -> Result<(), String> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The package an item belongs to (`.` when it names none).
pub(super) fn pkg_of(item: &Node) -> &str {
    annotation(item, res::PACKAGE_PATH).unwrap_or(".")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_one;

    fn item(name: &str, annotations: &str) -> Node {
        parse_one(&format!(
            "apiVersion: v1\nkind: Thing\nmetadata:\n  name: {name}\n  annotations:\n    x: y\n{annotations}"
        ))
        .expect("yaml")
    }

    fn check(items: &[Node]) -> Result<(), String> {
        let mut inv = Invariants::with_capacity(items.len());
        for i in items {
            inv.check(i);
        }
        inv.result()
    }

    #[test]
    fn a_missing_path_or_index_reads_as_empty() {
        let no_path = [item("a", ""), item("b", "")];
        assert_eq!(
            check(&no_path),
            Err("resource at path \".\" and index \"\" already exists".into())
        );
        let path = "    internal.config.kubernetes.io/path: 'out/t.yaml'\n";
        let no_index = [item("a", path), item("b", path)];
        assert_eq!(
            check(&no_index),
            Err("resource at path \"out/t.yaml\" and index \"\" already exists".into())
        );
        let other = "    internal.config.kubernetes.io/path: './out/t.yaml'\n    internal.config.kubernetes.io/index: '1'\n";
        assert_eq!(check(&[item("a", path), item("b", other)]), Ok(()));
    }

    #[test]
    fn the_same_slot_in_two_packages_is_no_clash() {
        let at = |pkg: &str| {
            format!(
                "    internal.config.kubernetes.io/path: 't.yaml'\n    internal.config.kubernetes.io/index: '0'\n    internal.config.kubernetes.io/package-path: '{pkg}'\n"
            )
        };
        assert_eq!(check(&[item("a", &at(".")), item("b", &at("sub"))]), Ok(()));
        assert!(check(&[item("a", &at("sub")), item("b", &at("sub"))]).is_err());
    }
}
