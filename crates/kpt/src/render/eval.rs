//! `kpt fn eval`: run one function, named on the command line, over every resource of
//! a directory (sub-packages included, paths relative to that directory).

use super::{Ctx, RenderError, RenderOptions, RenderOutput, finalize_paths, write_all};
use crate::kptfile::{Function, Selector};
use crate::package::PackageFiles;
use crate::package::resources;
use crate::runtime::FunctionRef;
use crate::yaml::Node;

/// What to evaluate.
pub struct EvalOptions {
    /// The function.
    pub function: FunctionRef,
    /// Its config (`--fn-config` content or the `-- k=v` ConfigMap).
    pub function_config: Option<Node>,
    /// Package-relative path of the `--fn-config` file when it lies inside the
    /// package: that resource is not passed as an item and is left untouched.
    pub config_in_package: Option<String>,
    /// `--match-*` flags.
    pub selector: Selector,
    /// `--exclude-*` flags.
    pub exclusion: Selector,
}

/// The `fn eval` command-line choices beyond [`EvalOptions`].
#[derive(Debug, Clone, Default)]
pub struct EvalFlags {
    /// `--when`: a CEL condition over the input; false skips the function.
    pub when: String,
    /// `--truncate-output=false`: show all of a function's stderr.
    pub full_output: bool,
}

impl EvalFlags {
    fn details_style(&self) -> super::printer::DetailsStyle {
        super::printer::DetailsStyle::Eval {
            truncate: !self.full_output,
        }
    }
}

/// Evaluate one function over `files`.
pub fn eval(files: &PackageFiles, render: &RenderOptions<'_>, opts: &EvalOptions) -> RenderOutput {
    eval_with(files, render, opts, &EvalFlags::default())
}

/// Evaluate one function over `files` with `fn eval`'s command-line choices.
pub fn eval_with(
    files: &PackageFiles,
    render: &RenderOptions<'_>,
    opts: &EvalOptions,
    flags: &EvalFlags,
) -> RenderOutput {
    let mut ctx = Ctx::new(render, files);
    ctx.config_override = opts.function_config.clone();
    ctx.eval_mode = true;
    ctx.details_style = flags.details_style();
    // One walk over the package and its sub-packages, as kyaml's LocalPackageReader
    // with IncludeSubpackages: a `.krmignore` may skip a whole sub-package.
    let mut items = match crate::package::walk::read_tree(files, &mut ctx.sources) {
        Ok(items) => items,
        Err(e) => return ctx.finish(files.clone(), Some(RenderError::Resources(e))),
    };
    for item in &mut items {
        // Flat list: every item belongs to the eval directory.
        resources::set_annotation(item, resources::PACKAGE_PATH, ".");
    }
    crate::package::sort_in_walk_order(&mut items);
    let (held_back, items): (Vec<Node>, Vec<Node>) = items.into_iter().partition(|n| {
        opts.config_in_package.is_some()
            && resources::item_path(n) == opts.config_in_package.as_deref()
    });
    let mut f = opts.step();
    f.when = flags.when.clone();
    match ctx.run_step_pub(&f, items) {
        Ok(mut out) => {
            out.extend(held_back);
            let out = finalize_paths(out, false);
            let rendered = out.clone();
            let mut out_files = files.clone();
            match write_all(&mut out_files, out, &ctx.sources, true) {
                Ok(()) => {
                    let mut o = ctx.finish(out_files, None);
                    o.items = rendered;
                    o
                }
                Err(e) => ctx.finish(files.clone(), Some(RenderError::Resources(e))),
            }
        }
        Err(e) => ctx.finish(files.clone(), Some(e)),
    }
}

/// Evaluate one function over items that came as a ResourceList (`fn eval -`).
/// The output items are in `RenderOutput::items`; no files are involved.
pub fn eval_items(
    items: Vec<Node>,
    render: &RenderOptions<'_>,
    opts: &EvalOptions,
    flags: &EvalFlags,
) -> RenderOutput {
    let empty = PackageFiles::new();
    let mut ctx = Ctx::new(render, &empty);
    ctx.config_override = opts.function_config.clone();
    ctx.eval_mode = true;
    ctx.details_style = flags.details_style();
    let mut f = opts.step();
    f.when = flags.when.clone();
    match ctx.run_step_pub(&f, items) {
        Ok(mut out) => {
            for item in &mut out {
                resources::remove_annotation(item, resources::PACKAGE_PATH);
            }
            let mut o = ctx.finish(PackageFiles::new(), None);
            o.items = out;
            o
        }
        Err(e) => ctx.finish(PackageFiles::new(), Some(e)),
    }
}

impl EvalOptions {
    /// The pipeline step the command line describes.
    fn step(&self) -> Function {
        let mut f = Function::default();
        match &self.function {
            FunctionRef::Image(i) => f.image = i.clone(),
            FunctionRef::Exec(e) => f.exec = e.clone(),
        }
        if !self.selector.is_empty() {
            f.selectors.push(self.selector.clone());
        }
        if !self.exclusion.is_empty() {
            f.exclusions.push(self.exclusion.clone());
        }
        f
    }
}
