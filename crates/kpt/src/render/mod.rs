//! `kpt fn render`: hydrate a package tree through its Kptfile pipelines.
//!
//! Depth-first post-order by default (sub-packages, sorted by path, before their
//! parent; a parent's pipeline sees its own resources plus its descendants' rendered
//! ones), mutators then validators (on copies), selectors/exclude, function configs
//! from `configMap`/`configPath`, comment healing around every call, and kpt's
//! invariants after each function. Works on [`PackageFiles`] in memory; the result
//! says what to write, including the root Kptfile's `status`.

mod eval;
mod heal;
pub mod printer;
mod run;
pub use run::{check_krm, config_map, resolve_image};
pub mod select;
mod status;

use std::collections::BTreeSet;

pub use eval::{EvalOptions, eval, eval_items};
pub use heal::heal;

use crate::kptfile::{KPTFILE, Kptfile, KptfileError, SAVE_ON_RENDER_FAILURE, StepResult};
use crate::package::resources::{self, ResourceError, Sources};
use crate::package::{PackageFiles, join};
use crate::runtime::{FunctionRuntime, RunOptions};
use crate::yaml::Node;

/// How to render.
pub struct RenderOptions<'a> {
    /// Where functions run.
    pub runtime: &'a dyn FunctionRuntime,
    /// Timeouts and the directory exec functions run in.
    pub run: RunOptions,
    /// Name shown for the root package (kpt: the directory name).
    pub root_name: String,
    /// Write `status` into the root Kptfile (in-place render).
    pub write_status: bool,
}

/// Where render failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RenderError {
    /// No Kptfile at the root.
    #[error("No Kptfile found at {0:?}")]
    MissingKptfile(String),
    /// A Kptfile could not be read or is invalid.
    #[error("{path}: {source}")]
    Kptfile { path: String, source: KptfileError },
    /// Reading or writing resources failed.
    #[error(transparent)]
    Resources(#[from] ResourceError),
    /// A pipeline step failed or could not run.
    #[error("pkg.render: pkg {pkg}:\n\tpipeline.run: {message}")]
    Pipeline { pkg: String, message: String },
    /// A function config file is unusable (checked before anything runs).
    #[error("{0}")]
    Config(String),
    /// A package without a pipeline holds something that is not KRM.
    #[error("pkg.render: pkg {pkg}: {message}")]
    Package { pkg: String, message: String },
}

/// kpt's message for a pipeline failure whose step output was already printed.
pub(crate) const ALREADY_HANDLED: &str = "already handled error";

impl RenderError {
    /// The failing step was already shown on the console (`[FAIL]` with its results),
    /// so kpt prints no separate `Error:` line.
    pub fn already_reported(&self) -> bool {
        matches!(self, RenderError::Pipeline { message, .. } if message == ALREADY_HANDLED)
    }

    /// The text kpt shows on the console for this error.
    pub fn console_message(&self) -> String {
        match self {
            RenderError::Pipeline { message, .. } | RenderError::Package { message, .. } => {
                message.clone()
            }
            RenderError::Kptfile { source, .. } => source.to_string(),
            other => other.to_string(),
        }
    }
}

/// What a render produced.
#[derive(Debug, Clone)]
pub struct RenderOutput {
    /// The package files after render (on failure: as kpt leaves them).
    pub files: PackageFiles,
    /// Every step run, in order.
    pub mutation_steps: Vec<StepResult>,
    /// Validator steps.
    pub validation_steps: Vec<StepResult>,
    /// Number of packages whose pipelines ran.
    pub packages: usize,
    /// The failure, if any.
    pub error: Option<RenderError>,
    /// Console lines (kpt prints these on stderr).
    pub log: Vec<String>,
    /// The rendered items (paths root-relative, reader annotations still on) for
    /// out-of-place output (`write_status == false`); empty in place and on failure.
    pub items: Vec<Node>,
}

impl RenderOutput {
    /// Did render succeed?
    pub fn is_ok(&self) -> bool {
        self.error.is_none()
    }
}

pub(crate) struct Ctx<'a> {
    opts: &'a RenderOptions<'a>,
    files: &'a PackageFiles,
    sources: Sources,
    mutation_steps: Vec<StepResult>,
    validation_steps: Vec<StepResult>,
    log: Vec<String>,
    packages: usize,
    functions: usize,
    /// Items as they stood after the last successful step (for save-on-failure).
    last_good: Option<Vec<Node>>,
    /// Keep `last_good` only when the root asks for save-on-render-failure: copying
    /// every item after every step is otherwise pure cost.
    keep_last_good: bool,
    /// `fn eval`: the function config given on the command line.
    config_override: Option<Node>,
    /// `fn eval`: print `[RUNNING] "x"` without the package.
    eval_mode: bool,
}

/// Render the package tree rooted at the top of `files`.
pub fn render(files: &PackageFiles, opts: &RenderOptions<'_>) -> RenderOutput {
    let mut ctx = Ctx::new(opts, files);
    let root_text = match files.get_text(KPTFILE) {
        Some(t) => t.to_string(),
        None => {
            return ctx.finish(
                files.clone(),
                Some(RenderError::MissingKptfile(opts.root_name.clone())),
            );
        }
    };
    let root_kf = match Kptfile::parse(&root_text) {
        Ok(k) => k,
        Err(source) => {
            let err = RenderError::Kptfile {
                path: KPTFILE.into(),
                source,
            };
            return ctx.finish(files.clone(), Some(err));
        }
    };
    ctx.keep_last_good = root_kf.annotation_is_true(SAVE_ON_RENDER_FAILURE);
    let result = ctx.hydrate("", &mut BTreeSet::new());
    let mut out_files = files.clone();
    match result {
        Ok(items) => {
            let items = finalize_paths(items);
            // Out-of-place output needs the items; in place they are only written.
            let rendered = if opts.write_status {
                Vec::new()
            } else {
                items.clone()
            };
            match write_all(&mut out_files, items, &mut ctx.sources, true) {
                Ok(()) => {
                    let summary = format!(
                        "Successfully executed {} function(s) in {} package(s).",
                        ctx.functions, ctx.packages
                    );
                    ctx.log.push(String::new());
                    ctx.log.push(summary);
                    let ran = !ctx.mutation_steps.is_empty() || !ctx.validation_steps.is_empty();
                    if opts.write_status && ran {
                        status::write(&mut out_files, &root_kf, &ctx, None);
                    }
                    let mut out = ctx.finish(out_files, None);
                    out.items = rendered;
                    out
                }
                Err(e) => {
                    let err = RenderError::Resources(e);
                    ctx.fail(files, &root_kf, err)
                }
            }
        }
        Err(err) => ctx.fail(files, &root_kf, err),
    }
}

fn write_all(
    files: &mut PackageFiles,
    items: Vec<Node>,
    sources: &mut Sources,
    prune: bool,
) -> Result<(), ResourceError> {
    let written = resources::write_items(files, items, sources)?;
    if prune {
        resources::prune(files, sources, &written);
    }
    Ok(())
}

/// Make every item's path root-relative (prefix its package's directory).
fn finalize_paths(items: Vec<Node>) -> Vec<Node> {
    items
        .into_iter()
        .map(|mut item| {
            let pkg = resources::annotation(&item, resources::PACKAGE_PATH)
                .filter(|p| *p != ".")
                .unwrap_or_default()
                .to_string();
            let path = resources::item_path(&item).map(str::to_string);
            if let Some(path) = path {
                let full = join(&pkg, &path);
                resources::set_annotation(&mut item, resources::PATH, &full);
                resources::set_annotation(&mut item, resources::LEGACY_PATH, &full);
            } else if !pkg.is_empty() {
                let full = join(&pkg, &resources::default_path(&item));
                resources::set_annotation(&mut item, resources::PATH, &full);
            }
            item
        })
        .collect()
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(opts: &'a RenderOptions<'a>, files: &'a PackageFiles) -> Self {
        Ctx {
            opts,
            files,
            sources: Sources::default(),
            mutation_steps: Vec::new(),
            validation_steps: Vec::new(),
            log: Vec::new(),
            packages: 0,
            functions: 0,
            last_good: None,
            keep_last_good: false,
            config_override: None,
            eval_mode: false,
        }
    }

    fn finish(self, files: PackageFiles, error: Option<RenderError>) -> RenderOutput {
        RenderOutput {
            files,
            mutation_steps: self.mutation_steps,
            validation_steps: self.validation_steps,
            packages: self.packages,
            error,
            log: self.log,
            items: Vec::new(),
        }
    }

    fn fail(mut self, files: &PackageFiles, root_kf: &Kptfile, err: RenderError) -> RenderOutput {
        let mut out_files = files.clone();
        if root_kf.annotation_is_true(SAVE_ON_RENDER_FAILURE)
            && let Some(items) = self.last_good.take()
        {
            // Partial results are written, but nothing is pruned.
            let items = finalize_paths(items);
            let _ = write_all(&mut out_files, items, &mut self.sources, false);
        }
        // Errors found while validating Kptfiles and configs stop render before it
        // starts: kpt records no status for them.
        let before_start = matches!(err, RenderError::Kptfile { .. } | RenderError::Config(_));
        if self.opts.write_status && !before_start {
            status::write(&mut out_files, root_kf, &self, Some(&err));
        }
        self.finish(out_files, Some(err))
    }

    /// Display path of a package in console lines: `root/sub`.
    fn display_name(&self, pkg: &str) -> String {
        if pkg.is_empty() {
            self.opts.root_name.clone()
        } else {
            format!("{}/{}", self.opts.root_name, pkg)
        }
    }

    fn read_kptfile(&self, pkg: &str) -> Result<Kptfile, RenderError> {
        let path = join(pkg, KPTFILE);
        let text = self
            .files
            .get_text(&path)
            .ok_or_else(|| RenderError::MissingKptfile(path.clone()))?;
        let kf = Kptfile::parse(text).map_err(|source| RenderError::Kptfile {
            path: path.clone(),
            source,
        })?;
        kf.validate_pipeline()
            .map_err(|source| RenderError::Kptfile { path, source })?;
        Ok(kf)
    }

    fn hydrate(
        &mut self,
        pkg: &str,
        visiting: &mut BTreeSet<String>,
    ) -> Result<Vec<Node>, RenderError> {
        if !visiting.insert(pkg.to_string()) {
            return Err(RenderError::Pipeline {
                pkg: pkg_label(pkg),
                message: "cycle detected in pkg dependencies".into(),
            });
        }
        let kf = self.read_kptfile(pkg)?;
        let mut input = resources::read_package(self.files, pkg, &mut self.sources)?;
        // kpt's render lists a package's Kptfile after its other resources.
        if let Some(pos) = input
            .iter()
            .position(|n| resources::item_path(n) == Some(KPTFILE))
        {
            let kf_item = input.remove(pos);
            input.push(kf_item);
        }
        for sub in self.files.direct_subpackages(pkg) {
            let out = self.hydrate(&sub, visiting)?;
            input.extend(out);
        }
        let out = self.run_pipeline(pkg, &kf, input)?;
        visiting.remove(pkg);
        Ok(out)
    }
}

/// kpt's label for a package in error messages: `.` or `./sub`.
pub(crate) fn pkg_label(pkg: &str) -> String {
    if pkg.is_empty() {
        ".".to_string()
    } else {
        format!("./{pkg}")
    }
}
