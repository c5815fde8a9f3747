//! `kpt fn render`: hydrate a package tree through its Kptfile pipelines.
//!
//! Depth-first post-order by default (sub-packages, sorted by path, before their
//! parent; a parent's pipeline sees its own resources plus its descendants' rendered
//! ones), or top-down with `kpt.dev/bfs-rendering` ([`bfs`]); mutators then validators (on copies), selectors/exclude, function configs
//! from `configMap`/`configPath`, comment healing around every call, and kpt's
//! invariants after each function. Works on [`PackageFiles`] in memory; the result
//! says what to write, including the root Kptfile's `status`.

mod attribution;
mod bfs;
mod call;
mod elapsed;
mod eval;
mod heal;
mod image;
mod inputs;
mod kind;
pub mod printer;
mod run;
mod semver;
pub use image::resolve_image_tag;
pub use inputs::{check_krm, config_map, resolve_image};
pub mod select;
mod status;
pub mod when;

use std::collections::BTreeSet;

pub use eval::{EvalFlags, EvalOptions, eval, eval_items, eval_with};
pub use heal::heal;

use crate::kptfile::{
    BFS_RENDERING, KPTFILE, Kptfile, KptfileError, SAVE_ON_RENDER_FAILURE, StepResult,
};
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
    /// A sub-package's Kptfile does not decode: found while listing the parent's
    /// sub-packages, so render records it against the root.
    #[error(
        "pkg.render: pkg .:\n\tpkg.Subpackages: pkg {pkg}: error reading Kptfile at {pkg:?}: {}",
        reading_details(source)
    )]
    SubpackageKptfile { pkg: String, source: KptfileError },
    /// Reading or writing resources failed.
    #[error(transparent)]
    Resources(#[from] ResourceError),
    /// A pipeline step failed or could not run.
    #[error("pkg.render: pkg {pkg}:\n\tpipeline.run: {message}")]
    Pipeline { pkg: String, message: String },
    /// A function config file is unusable (checked before anything runs).
    #[error("{0}")]
    Config(String),
    /// The resources a function is about to be given carry something kyaml refuses
    /// before any function starts (two call ids that disagree).
    #[error("{0}")]
    Input(String),
    /// A package without a pipeline holds something that is not KRM.
    #[error("pkg.render: pkg {pkg}: {message}")]
    Package { pkg: String, message: String },
    /// A pipeline failed in top-down rendering: kpt reports it against the root,
    /// naming the failing package (`failed`, `None` for the root) inside.
    #[error("{}", top_down_message(failed.as_deref(), source))]
    TopDown {
        failed: Option<String>,
        source: Box<RenderError>,
    },
}

/// kpt's text for a top-down failure: the root's `pkg.render`, then the failing
/// package's `pipeline.run` (or the bare error when no pipeline step was involved).
fn top_down_message(failed: Option<&str>, source: &RenderError) -> String {
    match source {
        RenderError::Pipeline { message, .. } => match failed {
            Some(pkg) => format!("pkg.render: pkg .:\n\tpipeline.run: pkg {pkg}: {message}"),
            None => format!("pkg.render: pkg .:\n\tpipeline.run: {message}"),
        },
        RenderError::Package { message, .. } => format!("pkg.render: pkg .: {message}"),
        other => other.to_string(),
    }
}

/// What follows `error reading Kptfile at "...": `: the decoder's own words.
fn reading_details(source: &KptfileError) -> String {
    match source {
        KptfileError::Syntax(details) => details.clone(),
        other => other.to_string(),
    }
}

/// kpt's message for a pipeline failure whose step output was already printed.
pub const ALREADY_HANDLED: &str = "already handled error";

impl RenderError {
    /// The failing step was already shown on the console (`[FAIL]` with its results),
    /// so kpt prints no separate `Error:` line.
    pub fn already_reported(&self) -> bool {
        match self {
            RenderError::Pipeline { message, .. } => message == ALREADY_HANDLED,
            RenderError::TopDown { source, .. } => source.already_reported(),
            _ => false,
        }
    }

    /// The Kptfile this error is about, if it is one that does not decode or
    /// validate: its package directory (root-relative, `""` for the root) and why.
    /// kpt's console names such a Kptfile by its absolute directory.
    pub fn kptfile_problem(&self) -> Option<(String, &KptfileError)> {
        match self {
            RenderError::Kptfile { path, source } => {
                let dir = path.strip_suffix(KPTFILE).unwrap_or(path);
                Some((dir.trim_end_matches('/').to_string(), source))
            }
            RenderError::SubpackageKptfile { pkg, source } => {
                Some((pkg.trim_start_matches("./").to_string(), source))
            }
            RenderError::TopDown { source, .. } => source.kptfile_problem(),
            _ => None,
        }
    }

    /// The text kpt shows on the console for this error.
    pub fn console_message(&self) -> String {
        match self {
            RenderError::Pipeline { message, .. } | RenderError::Package { message, .. } => {
                message.clone()
            }
            RenderError::Kptfile { source, .. } | RenderError::SubpackageKptfile { source, .. } => {
                source.to_string()
            }
            RenderError::TopDown { source, .. } => source.console_message(),
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
    /// Number of packages rendered (kpt's summary counts those without a pipeline too).
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
    fn_results: Vec<StepResult>,
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
    /// How function stderr is printed (`fn eval` quotes and truncates it).
    details_style: printer::DetailsStyle,
    /// Healing snapshots of the current call, kept between calls for their buffers.
    snapshots: heal::Snapshots,
}

/// Render the package tree rooted at the top of `files`.
pub fn render(files: &PackageFiles, opts: &RenderOptions<'_>) -> RenderOutput {
    render_recorded(files, opts).output
}

/// A render and what kpt's results list (`--results-dir`) records of it.
pub struct Recorded {
    /// The render.
    pub output: RenderOutput,
    /// The calls kpt's results list records, in the order they ran (mutators and
    /// validators of every package interleaved): every function that was started, not
    /// those refused before they ran or whose output broke kpt's checks.
    pub fn_results: Vec<StepResult>,
}

impl Recorded {
    /// The results list's `exitCode`: kpt sets it when a call it recorded failed, not
    /// for errors outside a function call.
    pub fn fn_results_failed(&self) -> bool {
        self.fn_results.iter().any(|s| s.exit_code != 0)
    }
}

/// [`render`], keeping what kpt's results list records.
pub fn render_recorded(files: &PackageFiles, opts: &RenderOptions<'_>) -> Recorded {
    let mut ctx = Ctx::new(opts, files);
    let output = render_in(&mut ctx, files, opts);
    Recorded {
        output,
        fn_results: std::mem::take(&mut ctx.fn_results),
    }
}

fn render_in(ctx: &mut Ctx<'_>, files: &PackageFiles, opts: &RenderOptions<'_>) -> RenderOutput {
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
    let result = if root_kf.annotation_is_true(BFS_RENDERING) {
        ctx.hydrate_bfs()
    } else {
        ctx.hydrate("", &mut BTreeSet::new())
    };
    let mut out_files = files.clone();
    match result {
        Ok(items) => {
            let items = finalize_paths(items, true);
            // Out-of-place output needs the items; in place they are only written.
            let rendered = if opts.write_status {
                Vec::new()
            } else {
                items.clone()
            };
            match write_all(&mut out_files, items, &ctx.sources, true) {
                Ok(()) => {
                    let summary = format!(
                        "Successfully executed {} function(s) in {} package(s).",
                        ctx.functions, ctx.packages
                    );
                    ctx.log.push(summary);
                    // kpt HEAD records the Rendered condition after every in-place
                    // render, one that ran no function too (`updateRenderStatus`).
                    if opts.write_status {
                        status::write(&mut out_files, &root_kf, ctx, None);
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
    sources: &Sources,
    prune: bool,
) -> Result<(), ResourceError> {
    let written = resources::write_items(files, items)?;
    if prune {
        resources::prune(files, sources, &written);
    }
    Ok(())
}

/// Make every item's path root-relative (prefix its package's directory), and, for
/// render (`attribute`), mark Config Connector resources as kpt's render does before it
/// writes (`fn eval` does not).
fn finalize_paths(items: Vec<Node>, attribute: bool) -> Vec<Node> {
    let attribute = attribute && !attribution::disabled();
    items
        .into_iter()
        .map(|mut item| {
            if attribute {
                attribution::attribute(&mut item, "fn");
            }
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
            fn_results: Vec::new(),
            log: Vec::new(),
            packages: 0,
            functions: 0,
            last_good: None,
            keep_last_good: false,
            config_override: None,
            eval_mode: false,
            details_style: printer::DetailsStyle::Render,
            snapshots: heal::Snapshots::default(),
        }
    }

    /// The output so far (steps and log are moved out; what kpt's results list
    /// recorded stays for [`render_recorded`]).
    fn finish(&mut self, files: PackageFiles, error: Option<RenderError>) -> RenderOutput {
        RenderOutput {
            files,
            mutation_steps: std::mem::take(&mut self.mutation_steps),
            validation_steps: std::mem::take(&mut self.validation_steps),
            packages: self.packages,
            error,
            log: std::mem::take(&mut self.log),
            items: Vec::new(),
        }
    }

    fn fail(&mut self, files: &PackageFiles, root_kf: &Kptfile, err: RenderError) -> RenderOutput {
        let mut out_files = files.clone();
        let save = root_kf.annotation_is_true(SAVE_ON_RENDER_FAILURE);
        if save && let Some(items) = self.last_good.take() {
            // Partial results are written, but nothing is pruned.
            let items = finalize_paths(items, true);
            let _ = write_all(&mut out_files, items, &self.sources, false);
        }
        // Saving on failure goes on to kpt's write step, which ends with a summary;
        // only an unusable root Kptfile stops render before that.
        let root_invalid = matches!(&err, RenderError::Kptfile { path, .. } if path == KPTFILE);
        if save && self.opts.write_status && !root_invalid {
            let summary = if self.functions == 0 {
                format!(
                    "Failed to execute any functions in {} package(s).",
                    self.packages
                )
            } else {
                format!(
                    "Partially executed {} function(s) in {} package(s).",
                    self.functions, self.packages
                )
            };
            self.log.push(String::new());
            self.log.push(summary);
        }
        // Errors found while validating Kptfiles and configs stop render before it
        // starts: kpt records no status for them.
        let before_start = matches!(err, RenderError::Kptfile { .. } | RenderError::Config(_));
        if self.opts.write_status && !before_start {
            status::write(&mut out_files, root_kf, self, Some(&err));
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
        // A `configPath` must name a file of this package: kpt checks that when it
        // loads the package, before anything of it (or below it) renders.
        let files = self.files;
        kf.validate_pipeline_in(&|rel| files.get(&join(pkg, rel)).is_some())
            .map_err(|source| RenderError::Kptfile { path, source })?;
        Ok(kf)
    }

    /// kpt lists a package's direct sub-packages (reading each one's Kptfile) before
    /// it renders any of them: a sub-package Kptfile that does not decode stops render
    /// there, naming the sub-package.
    fn check_subpackages_decode(&self, subs: &[String]) -> Result<(), RenderError> {
        for sub in subs {
            let path = join(sub, KPTFILE);
            if let Some(text) = self.files.get_text(&path)
                && let Err(source) = Kptfile::parse(text)
            {
                return Err(RenderError::SubpackageKptfile {
                    pkg: pkg_label(sub),
                    source,
                });
            }
        }
        Ok(())
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
        // Save-on-failure: after an error, `last_good` holds what kpt's hydrate hands
        // its parent (`None` for nothing), or at the root what is written.
        let start = self.read_kptfile(pkg).and_then(|kf| {
            self.packages += 1;
            Ok((kf, self.load_items(pkg)?))
        });
        let (kf, mut input) = start.inspect_err(|_| self.last_good = None)?;
        let subs = self.files.direct_subpackages(pkg);
        self.check_subpackages_decode(&subs)
            .inspect_err(|_| self.last_good = None)?;
        for sub in subs {
            match self.hydrate(&sub, visiting) {
                Ok(out) => input.extend(out),
                Err(err) => {
                    // A failed child's partial output joins what this package had
                    // gathered; kpt keeps that only at the root (a package further
                    // down hands its parent nothing).
                    let partial = self.last_good.take();
                    if pkg.is_empty()
                        && let Some(partial) = partial
                    {
                        input.extend(partial);
                        self.last_good = Some(input);
                    }
                    return Err(err);
                }
            }
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
