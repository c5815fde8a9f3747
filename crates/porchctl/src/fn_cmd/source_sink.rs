//! `porchctl fn source` and `porchctl fn sink`, kpt's ends of a function pipe:
//! `source` prints a directory's resources as a ResourceList, `sink` writes the
//! resources of a ResourceList read from stdin into a directory by their paths.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use kpt::package::resources::{self, Sources};
use kpt::package::{PackageFiles, fs, walk};
use kpt::resource_list::ResourceList;

use super::output::{self, Output};

/// Arguments of `fn source`.
#[derive(Debug, Args)]
pub struct SourceArgs {
    /// Directory to read (default: current directory).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// `stdout` (a ResourceList) or `unwrap` (plain YAML).
    #[arg(short = 'o', long, default_value = "stdout")]
    pub output: String,
    /// A function config to put into the ResourceList.
    #[arg(long)]
    pub fn_config: Option<PathBuf>,
    /// Refused as kpt refuses it: the meta resources (Kptfiles, pipeline function
    /// configs) are always printed.
    #[arg(long, hide = true)]
    pub include_meta_resources: bool,
}

/// Arguments of `fn sink`.
#[derive(Debug, Args)]
pub struct SinkArgs {
    /// Directory to create and write into (it must not exist yet).
    pub dir: PathBuf,
}

/// kpt's `fn source`: every KRM file of the package and its sub-packages, the meta
/// resources included (kpt HEAD; `--include-meta-resources` is refused as needless).
pub fn source(a: SourceArgs) -> anyhow::Result<ExitCode> {
    if a.include_meta_resources {
        anyhow::bail!(
            "--include-meta-resources is no longer necessary because meta resources are now included by default"
        );
    }
    let out = match a.output.as_str() {
        "stdout" => Output::Stdout,
        "unwrap" => Output::Unwrap,
        other => anyhow::bail!(
            "invalid input for --output flag {other:?}, must be \"stdout\" or \"unwrap\""
        ),
    };
    // kpt reads the absolute path with its symlink resolved.
    let dir = super::resolve_symlink(&std::path::absolute(&a.dir)?)?;
    let (files, _) =
        fs::read_dir(&dir).with_context(|| format!("reading directory {}", dir.display()))?;
    // One walk over the package and its sub-packages, as kyaml's package reader with
    // `IncludeSubpackages` (a sub-package a `.krmignore` names is skipped whole); a file
    // it cannot read is named by its full path.
    let items = walk::read_tree(&files, &mut Sources::default()).map_err(|e| match e {
        resources::ResourceError::Yaml { path, message } => resources::ResourceError::Yaml {
            path: dir.join(path).display().to_string(),
            message,
        },
        other => other,
    })?;
    if let (Some(path), Output::Stdout) = (&a.fn_config, &out) {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("failed to read file {:?}", path.display()))?;
        let config = kpt::yaml::parse_one(&text).with_context(|| format!("{}", path.display()))?;
        let mut list = ResourceList::new(items);
        list.function_config = Some(config);
        print!("{}", list.to_yaml());
        return Ok(ExitCode::SUCCESS);
    }
    if out == Output::Unwrap {
        print!("{}", unwrapped(items));
        return Ok(ExitCode::SUCCESS);
    }
    output::write(&out, items)?;
    Ok(ExitCode::SUCCESS)
}

/// kpt's `fn source -o unwrap` writes through kyaml's `ByteWriter`, which removes the
/// reader's annotations only (path, index, seqindent; ids and merge sources a file
/// carries stay), indents each resource's lists as its seqindent said, and writes a
/// wrapped bare list as the list it was (one with items: an empty one keeps its
/// wrapper).
fn unwrapped(items: Vec<kpt::yaml::Node>) -> String {
    let docs: Vec<(kpt::yaml::Node, kpt::yaml::SeqIndent)> = items
        .into_iter()
        .map(|mut n| {
            let wide = resources::annotation(&n, resources::SEQ_INDENT) == Some("wide");
            resources::strip_reader(&mut n);
            let seq = if wide {
                kpt::yaml::SeqIndent::Wide
            } else {
                kpt::yaml::SeqIndent::Compact
            };
            (unwrap_bare_list(n), seq)
        })
        .collect();
    // One encoder for the whole stream, as kyaml's.
    kpt::yaml::emit_documents(docs.iter().map(|(n, s)| (n, *s)))
}

fn unwrap_bare_list(node: kpt::yaml::Node) -> kpt::yaml::Node {
    match node.get(resources::BARE_SEQ_KEY) {
        Some(list) if !list.items().is_empty() => list.clone(),
        _ => node,
    }
}

/// kpt's `fn sink DIR`: the directory must not exist (kpt's `CheckDirectoryNotPresent`).
pub fn sink(a: SinkArgs) -> anyhow::Result<ExitCode> {
    if std::fs::symlink_metadata(&a.dir).is_ok() {
        anyhow::bail!(
            "directory {:?} already exists, please delete the directory and retry",
            a.dir.display().to_string()
        );
    }
    // kpt creates the directory before it reads anything, so it is there even when the
    // input is refused.
    std::fs::create_dir_all(&a.dir).with_context(|| format!("creating {}", a.dir.display()))?;
    // stdin is read as kyaml's `ByteReader` reads it (a lone `ResourceList` or `List`
    // unwrapped, other documents taken as they are, empty ones skipped), in its words
    // when it cannot.
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).context("reading stdin")?;
    if let Some(message) = ResourceList::kyaml_read_error(&text) {
        anyhow::bail!(message);
    }
    let list = ResourceList::from_function_output(&text)?;
    let mut files = PackageFiles::new();
    // kyaml's `LocalPackageWriter` writes two resources at one path and index one after
    // the other; only kpt's function runner refuses them.
    resources::write_items_keeping_duplicates(&mut files, list.items)?;
    fs::write_changes(&a.dir, &PackageFiles::new(), &files)
        .with_context(|| format!("writing {}", a.dir.display()))?;
    Ok(ExitCode::SUCCESS)
}
