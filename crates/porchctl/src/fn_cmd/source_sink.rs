//! `porchctl fn source` and `porchctl fn sink`, kpt's ends of a function pipe:
//! `source` prints a directory's resources as a ResourceList, `sink` writes the
//! resources of a ResourceList read from stdin into a directory by their paths.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use kpt::kptfile::{KPTFILE, Kptfile};
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
    /// Also print the package meta resources (Kptfiles, pipeline function configs).
    #[arg(long)]
    pub include_meta_resources: bool,
}

/// Arguments of `fn sink`.
#[derive(Debug, Args)]
pub struct SinkArgs {
    /// Directory to write into (default: current directory).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
}

/// kpt's package meta resources: every Kptfile and every file a pipeline names as
/// `configPath`, as paths from the root.
fn meta_paths(files: &PackageFiles, dirs: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for dir in dirs {
        let kptfile = join(dir, KPTFILE);
        let Some(text) = files.get_text(&kptfile) else {
            continue;
        };
        out.insert(kptfile);
        let Some(pipeline) = Kptfile::parse(text).ok().and_then(|k| k.pipeline) else {
            continue;
        };
        for f in pipeline.mutators.iter().chain(&pipeline.validators) {
            if f.config_path.is_empty() {
                continue;
            }
            if let Ok(p) = resources::clean_path(&f.config_path) {
                out.insert(join(dir, &p));
            }
        }
    }
    out
}

pub fn source(a: SourceArgs) -> anyhow::Result<ExitCode> {
    let out = match a.output.as_str() {
        "stdout" => Output::Stdout,
        "unwrap" => Output::Unwrap,
        other => anyhow::bail!("invalid output {other:?}: allowed values are stdout|unwrap"),
    };
    let (files, _) =
        fs::read_dir(&a.dir).with_context(|| format!("reading directory {}", a.dir.display()))?;
    let mut dirs = files.package_dirs();
    if !dirs.iter().any(String::is_empty) {
        dirs.insert(0, String::new());
    }
    dirs.sort();
    let meta = if a.include_meta_resources {
        BTreeSet::new()
    } else {
        meta_paths(&files, &dirs)
    };
    let mut sources = Sources::default();
    let mut items = Vec::new();
    for dir in &dirs {
        for mut item in resources::read_package(&files, dir, &mut sources)? {
            if let Some(p) = resources::item_path(&item).map(str::to_string) {
                let full = join(dir, &p);
                if meta.contains(&full) {
                    continue;
                }
                resources::set_annotation(&mut item, resources::PATH, &full);
                resources::set_annotation(&mut item, resources::LEGACY_PATH, &full);
            }
            items.push(item);
        }
    }
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

pub fn sink(a: SinkArgs) -> anyhow::Result<ExitCode> {
    let list = output::read_stdin()?;
    let mut files = PackageFiles::new();
    resources::write_items(&mut files, list.items, &mut Sources::default())?;
    std::fs::create_dir_all(&a.dir).with_context(|| format!("creating {}", a.dir.display()))?;
    fs::write_changes(&a.dir, &PackageFiles::new(), &files)
        .with_context(|| format!("writing {}", a.dir.display()))?;
    Ok(ExitCode::SUCCESS)
}
