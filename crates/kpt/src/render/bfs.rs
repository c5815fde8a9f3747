//! Top-down rendering, chosen by `kpt.dev/bfs-rendering: "true"` on the root Kptfile
//! (kpt's `hydrateBfsOrder`).
//!
//! Every package is discovered breadth-first (sub-packages sorted by path) and its own
//! resources loaded before any pipeline runs. Then, package by package in that order,
//! the pipeline sees the package's resources followed by those of its descendants (each
//! child, then that child's descendants), and its output is handed back to the packages
//! named by the items' package-path. A parent therefore runs before its children, and
//! they see what it changed; a child never sees its parent or siblings.
//!
//! Two of kpt's hand-back rules are kept on purpose: a package other than the one whose
//! pipeline ran is only replaced when some output item names it (so a descendant whose
//! items were all deleted keeps the items it had before), and an item naming a package
//! that does not exist is dropped.

use std::collections::{HashMap, VecDeque};

use super::{Ctx, RenderError, pkg_label};
use crate::kptfile::{KPTFILE, Kptfile};
use crate::package::resources;
use crate::yaml::Node;

/// A package of the tree, in discovery order.
struct PkgNode {
    /// Root-relative directory ("" = root).
    dir: String,
    kf: Kptfile,
    /// The package's own items as they stand now.
    items: Vec<Node>,
    /// Indexes of its direct sub-packages, sorted by path.
    children: Vec<usize>,
}

impl Ctx<'_> {
    /// Render top-down; the items of every package, in discovery order.
    pub(super) fn hydrate_bfs(&mut self) -> Result<Vec<Node>, RenderError> {
        let mut nodes = self.discover()?;
        // kpt counts every discovered package in its summary.
        self.packages = nodes.len();
        for i in 0..nodes.len() {
            let mut input = std::mem::take(&mut nodes[i].items);
            let mut scope = Vec::new();
            descendants(&nodes, i, &mut scope);
            // Kept only for a descendant that ends up with no output item: kpt leaves
            // such a package as it was before this pipeline.
            let mut before: HashMap<usize, Vec<Node>> = HashMap::new();
            let runs = nodes[i].kf.pipeline.as_ref().is_some_and(|p| !p.is_empty());
            for &d in &scope {
                let own = std::mem::take(&mut nodes[d].items);
                if runs && !own.is_empty() {
                    before.insert(d, own.clone());
                }
                input.extend(own);
            }
            let dir = nodes[i].dir.clone();
            let kf = nodes[i].kf.clone();
            match self.run_pipeline(&dir, &kf, input) {
                Ok(out) => hand_back(&mut nodes, i, out, &mut before),
                Err(err) => {
                    if self.keep_last_good {
                        // What the failing pipeline left (its input if it stopped
                        // before its first step), handed back like a success.
                        let out = self.last_good.take().unwrap_or_default();
                        hand_back(&mut nodes, i, out, &mut before);
                        self.last_good = Some(all_items(&mut nodes));
                    }
                    return Err(top_down_error(&dir, err));
                }
            }
        }
        Ok(all_items(&mut nodes))
    }

    /// Breadth-first discovery: read and validate every Kptfile, load every package's
    /// own resources (its Kptfile last, as kpt's reader lists it) and check its function
    /// config files, all before any function runs.
    fn discover(&mut self) -> Result<Vec<PkgNode>, RenderError> {
        let root = PkgNode {
            dir: String::new(),
            kf: self.read_kptfile("")?,
            items: Vec::new(),
            children: Vec::new(),
        };
        let mut nodes = Vec::new();
        let mut queue = VecDeque::from([root]);
        while let Some(mut node) = queue.pop_front() {
            let index = nodes.len();
            node.items = self.load_items(&node.dir)?;
            self.check_configs(&node.dir, &node.kf, &node.items)?;
            let subs = self.files.direct_subpackages(&node.dir);
            // Children are numbered after everything already queued: BFS order.
            let first = index + 1 + queue.len();
            for (k, sub) in subs.into_iter().enumerate() {
                let kf = self.read_kptfile(&sub)?;
                node.children.push(first + k);
                queue.push_back(PkgNode {
                    dir: sub,
                    kf,
                    items: Vec::new(),
                    children: Vec::new(),
                });
            }
            nodes.push(node);
        }
        Ok(nodes)
    }

    /// A package's own items, its Kptfile listed last (kpt's render order).
    pub(super) fn load_items(&mut self, pkg: &str) -> Result<Vec<Node>, RenderError> {
        let mut items = resources::read_package(self.files, pkg, &mut self.sources)?;
        if let Some(pos) = items
            .iter()
            .position(|n| resources::item_path(n) == Some(KPTFILE))
        {
            let kf_item = items.remove(pos);
            items.push(kf_item);
        }
        Ok(items)
    }
}

/// The descendants of `i`: each child, then that child's descendants (kpt's order).
fn descendants(nodes: &[PkgNode], i: usize, out: &mut Vec<usize>) {
    for &c in &nodes[i].children {
        out.push(c);
        descendants(nodes, c, out);
    }
}

/// Give each output item to the package its package-path names (the running package
/// when it names none). The running package keeps exactly what came back for it; any
/// other package is replaced only when something came back for it.
fn hand_back(
    nodes: &mut [PkgNode],
    current: usize,
    out: Vec<Node>,
    before: &mut HashMap<usize, Vec<Node>>,
) {
    let index: HashMap<String, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (pkg_key(&n.dir).to_string(), i))
        .collect();
    let mut by_pkg: HashMap<usize, Vec<Node>> = HashMap::new();
    for item in out {
        let target = match resources::annotation(&item, resources::PACKAGE_PATH) {
            Some(p) if !p.is_empty() => index.get(p).copied(),
            _ => Some(current),
        };
        // An item naming no known package has nowhere to go (kpt drops it too).
        if let Some(t) = target {
            by_pkg.entry(t).or_default().push(item);
        }
    }
    nodes[current].items = by_pkg.remove(&current).unwrap_or_default();
    for (t, items) in by_pkg {
        nodes[t].items = items;
        before.remove(&t);
    }
    for (t, items) in before.drain() {
        nodes[t].items = items;
    }
}

fn all_items(nodes: &mut [PkgNode]) -> Vec<Node> {
    let total = nodes.iter().map(|n| n.items.len()).sum();
    let mut all = Vec::with_capacity(total);
    for n in nodes {
        all.append(&mut n.items);
    }
    all
}

fn pkg_key(dir: &str) -> &str {
    if dir.is_empty() { "." } else { dir }
}

/// kpt reports a top-down failure against the root package, naming the failing
/// package inside the pipeline error.
fn top_down_error(dir: &str, err: RenderError) -> RenderError {
    match err {
        RenderError::Pipeline { .. } | RenderError::Package { .. } => RenderError::TopDown {
            failed: if dir.is_empty() {
                None
            } else {
                Some(pkg_label(dir))
            },
            source: Box::new(err),
        },
        other => other,
    }
}
