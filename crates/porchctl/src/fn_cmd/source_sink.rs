//! `porchctl fn source` and `porchctl fn sink`, kpt's ends of a function pipe:
//! `source` prints a directory's resources as a ResourceList, `sink` writes the
//! resources of a ResourceList read from stdin into a directory by their paths.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use kpt::package::resources::{self, Sources};
use kpt::package::{PackageFiles, fs, join};
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
    let mut dirs = files.package_dirs();
    if !dirs.iter().any(String::is_empty) {
        dirs.insert(0, String::new());
    }
    dirs.sort();
    let mut sources = Sources::default();
    let mut items = Vec::new();
    for dir in &dirs {
        for mut item in resources::read_package(&files, dir, &mut sources)? {
            if let Some(p) = resources::item_path(&item).map(str::to_string) {
                let full = join(dir, &p);
                resources::set_annotation(&mut item, resources::PATH, &full);
                resources::set_annotation(&mut item, resources::LEGACY_PATH, &full);
            }
            items.push(item);
        }
    }
    kpt::package::sort_in_walk_order(&mut items);
    if let (Some(path), Output::Stdout) = (&a.fn_config, &out) {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("failed to read file {:?}", path.display()))?;
        let config = kpt::yaml::parse_one(&text).with_context(|| format!("{}", path.display()))?;
        let mut list = ResourceList::new(items);
        list.function_config = Some(config);
        print!("{}", list.to_yaml());
        return Ok(ExitCode::SUCCESS);
    }
    output::write(&out, items)?;
    Ok(ExitCode::SUCCESS)
}

/// kpt's `fn sink DIR`: the directory must not exist (kpt's `CheckDirectoryNotPresent`).
pub fn sink(a: SinkArgs) -> anyhow::Result<ExitCode> {
    if std::fs::symlink_metadata(&a.dir).is_ok() {
        anyhow::bail!(
            "directory {:?} already exists, please delete the directory and retry",
            a.dir.display().to_string()
        );
    }
    let list = output::read_stdin()?;
    let mut files = PackageFiles::new();
    resources::write_items(&mut files, list.items)?;
    std::fs::create_dir_all(&a.dir).with_context(|| format!("creating {}", a.dir.display()))?;
    fs::write_changes(&a.dir, &PackageFiles::new(), &files)
        .with_context(|| format!("writing {}", a.dir.display()))?;
    Ok(ExitCode::SUCCESS)
}
