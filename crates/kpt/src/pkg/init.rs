//! `kpt pkg init`: the files of a new, empty package, as kpt writes them.

use crate::package::{PackageFiles, join};
use crate::yaml::{self, Node, SeqIndent, Style};

/// Options of `init`.
#[derive(Debug, Clone, Default)]
pub struct InitOptions {
    /// Package name (kpt defaults it to the directory's base name).
    pub name: String,
    /// `info.description`; kpt's default is "sample description".
    pub description: String,
    pub keywords: Vec<String>,
    pub site: String,
}

/// kpt's default description.
pub const DEFAULT_DESCRIPTION: &str = "sample description";

/// Files `kpt pkg init` writes, under directory `dir` ("" = root). Existing files
/// in `existing` are not overwritten (kpt only writes what is missing).
pub fn init(existing: &PackageFiles, dir: &str, opts: &InitOptions) -> PackageFiles {
    let mut out = PackageFiles::new();
    let kptfile = join(dir, "Kptfile");
    if existing.get(&kptfile).is_none() {
        out.insert(kptfile, kptfile_text(opts).into_bytes());
    }
    let readme = join(dir, "README.md");
    if existing.get(&readme).is_none() {
        out.insert(readme, readme_text(opts).into_bytes());
    }
    let ctx = join(dir, "package-context.yaml");
    if existing.get(&ctx).is_none() {
        out.insert(ctx, package_context("example", None).into_bytes());
    }
    out
}

fn quoted(s: &str) -> Node {
    let mut n = Node::string(s);
    n.style = Style::DoubleQuoted;
    n
}

fn kptfile_text(opts: &InitOptions) -> String {
    let mut root = Node::mapping();
    root.set("apiVersion", Node::string("kpt.dev/v1"));
    root.set("kind", Node::string("Kptfile"));
    let meta = root.ensure_mapping(&["metadata"]);
    meta.set("name", Node::string(opts.name.as_str()));
    meta.ensure_mapping(&["annotations"])
        .set("config.kubernetes.io/local-config", quoted("true"));
    let info = root.ensure_mapping(&["info"]);
    if !opts.site.is_empty() {
        info.set("site", Node::string(opts.site.as_str()));
    }
    if !opts.description.is_empty() {
        info.set("description", Node::string(opts.description.as_str()));
    }
    if !opts.keywords.is_empty() {
        let mut seq = Node::sequence();
        if let Some(items) = seq.items_mut() {
            items.extend(opts.keywords.iter().map(|k| Node::string(k.as_str())));
        }
        info.set("keywords", seq);
    }
    yaml::emit_node(&root, SeqIndent::Compact)
}

fn readme_text(opts: &InitOptions) -> String {
    let n = &opts.name;
    format!(
        "# {n}\n\n## Description\n{}\n\n## Usage\n\n### Fetch the package\n\
`kpt pkg get REPO_URI[.git]/PKG_PATH[@VERSION] {n}`\n\
Details: https://kpt.dev/reference/cli/pkg/get/\n\n### View package content\n\
`kpt pkg tree {n}`\nDetails: https://kpt.dev/reference/cli/pkg/tree/\n\n\
### Apply the package\n```\nkpt live init {n}\nkpt live apply {n} --reconcile-timeout=2m --output=table\n```\n\
Details: https://kpt.dev/reference/cli/live/\n",
        opts.description
    )
}

/// The package context ConfigMap (`package-context.yaml`).
pub fn package_context(name: &str, package_path: Option<&str>) -> String {
    let mut root = Node::mapping();
    root.set("apiVersion", Node::string("v1"));
    root.set("kind", Node::string("ConfigMap"));
    let meta = root.ensure_mapping(&["metadata"]);
    meta.set("name", Node::string("kptfile.kpt.dev"));
    meta.ensure_mapping(&["annotations"])
        .set("config.kubernetes.io/local-config", quoted("true"));
    let data = root.ensure_mapping(&["data"]);
    data.set("name", Node::string(name));
    if let Some(p) = package_path {
        data.set("package-path", Node::string(p));
    }
    yaml::emit_node(&root, SeqIndent::Compact)
}
