//! Running one package's pipeline: function configs, selection, the runtime call,
//! healing, and the invariants kpt checks after every function.

use std::collections::HashMap;
use std::time::Instant;

use super::call::{self, Owner, pkg_of};
use super::elapsed::go_elapsed;
use super::image::resolve_image_tag;
use super::inputs::{check_krm, config_map, find_config_ref, pkg_key, prefix_image, refers_to};
// `image.rs` reaches the image resolution through here.
pub(super) use super::inputs::resolve_image;
use super::{Ctx, RenderError, pkg_label, printer, select, when};
use crate::kptfile::{Function, Kptfile, StepResult};
use crate::package::resources::{self as res, annotation, remove_annotation, set_annotation};
use crate::resource_list::{ResourceList, ResultItem};
use crate::runtime::{FunctionRef, RuntimeError};
use crate::yaml::Node;

impl Ctx<'_> {
    pub(super) fn run_step_pub(
        &mut self,
        f: &Function,
        items: Vec<Node>,
    ) -> Result<Vec<Node>, RenderError> {
        self.run_step("", "mutators", 0, f, items, false)
    }

    pub(super) fn run_pipeline(
        &mut self,
        pkg: &str,
        kf: &Kptfile,
        input: Vec<Node>,
    ) -> Result<Vec<Node>, RenderError> {
        // What save-on-failure writes if this pipeline stops before its first step.
        if self.keep_last_good {
            self.last_good = Some(input.clone());
        }
        // kpt names every package it reaches, with a pipeline or not; a pipeline that
        // runs through ends with a blank line.
        self.log
            .push(format!("Package {:?}:", self.display_name(pkg)));
        let pipeline = kf.pipeline.clone().unwrap_or_default();
        if pipeline.is_empty() {
            for item in &input {
                check_krm(item).map_err(|message| RenderError::Package {
                    pkg: pkg_label(pkg),
                    message,
                })?;
            }
            return Ok(input);
        }
        for (list, fns) in [
            ("mutators", &pipeline.mutators),
            ("validators", &pipeline.validators),
        ] {
            for (i, f) in fns.iter().enumerate() {
                if !f.config_path.is_empty() {
                    self.find_config(pkg, list, i, f, &input)?;
                }
                if let Some(r) = &f.config_ref {
                    find_config_ref(pkg, list, i, r, &input)?;
                }
            }
        }
        // kpt builds every mutator's runner before running the first (`fnChain`): a
        // mutator that may not run, or whose tag does not resolve, stops the pipeline
        // before anything ran, and only that step is recorded.
        let mut chain = Vec::with_capacity(pipeline.mutators.len());
        for f in &pipeline.mutators {
            match self.function_ref(f) {
                Ok(fref) => chain.push(fref),
                Err(failed) => {
                    let (step, message) = *failed;
                    self.mutation_steps.push(step);
                    return Err(RenderError::Pipeline {
                        pkg: pkg_label(pkg),
                        message,
                    });
                }
            }
        }
        let mut items = input;
        for (i, (f, fref)) in pipeline.mutators.iter().zip(chain).enumerate() {
            items = match self.run_resolved(pkg, "mutators", i, f, fref, items, false) {
                Ok(items) => items,
                Err(e) => {
                    self.clear_ids_on_mutator_failure(&e);
                    return Err(e);
                }
            };
            if self.keep_last_good {
                self.last_good = Some(items.clone());
            }
        }
        for (i, f) in pipeline.validators.iter().enumerate() {
            self.run_step(pkg, "validators", i, f, items.clone(), true)?;
        }
        self.log.push(String::new());
        Ok(items)
    }

    /// kpt's `clearAnnotationsOnMutFailure`: when a mutator's call fails, the items
    /// save-on-render-failure writes lose every call and selection id, those a source
    /// file carried included. A function config that cannot be found fails before the
    /// call, and kpt keeps the items as they are then.
    fn clear_ids_on_mutator_failure(&mut self, err: &RenderError) {
        if matches!(err, RenderError::Config(_) | RenderError::Package { .. }) {
            return;
        }
        if let Some(saved) = self.last_good.as_mut() {
            for item in saved {
                res::remove_annotations(
                    item,
                    &[
                        res::LEGACY_ID,
                        res::MIGRATION_ID,
                        res::ID,
                        res::KPT_RESOURCE_ID,
                    ],
                );
            }
        }
    }
    /// What kpt's `NewRunner` settles before a function runs: an exec function needs
    /// `--allow-exec` (a runtime that takes it), an image its `tag:` resolved. On failure,
    /// the step kpt records (`preExecFailureStep`) and the error.
    fn function_ref(&self, f: &Function) -> Result<FunctionRef, Box<(StepResult, String)>> {
        let failed = |message: String, image: String| {
            let step = StepResult {
                name: f.name.clone(),
                image,
                exec: f.exec.clone(),
                execution_error: message.clone(),
                exit_code: 1,
                ..Default::default()
            };
            Box::new((step, message))
        };
        let fref = if f.image.is_empty() {
            FunctionRef::Exec(f.exec.clone())
        } else {
            resolve_image_tag(&f.image, &f.tag, self.opts.runtime)
                .map(FunctionRef::Image)
                // kpt records the step with the image as its `NewRunner` left it: prefixed,
                // its tag not settled (`preExecFailureStep`).
                .map_err(|message| failed(message, prefix_image(&f.image)))?
        };
        if let Some(reason) = self.opts.runtime.refusal(&fref) {
            let image = match &fref {
                FunctionRef::Image(i) => i.clone(),
                FunctionRef::Exec(_) => String::new(),
            };
            return Err(failed(reason, image));
        }
        Ok(fref)
    }

    fn run_step(
        &mut self,
        pkg: &str,
        list: &str,
        index: usize,
        f: &Function,
        items: Vec<Node>,
        validator: bool,
    ) -> Result<Vec<Node>, RenderError> {
        let fref = match self.function_ref(f) {
            Ok(fref) => fref,
            Err(failed) => {
                let (step, message) = *failed;
                if validator {
                    self.validation_steps.push(step);
                } else {
                    self.mutation_steps.push(step);
                }
                return Err(RenderError::Pipeline {
                    pkg: pkg_label(pkg),
                    message,
                });
            }
        };
        self.run_resolved(pkg, list, index, f, fref, items, validator)
    }

    /// Runs one step whose function is settled.
    #[allow(clippy::too_many_arguments)]
    fn run_resolved(
        &mut self,
        pkg: &str,
        list: &str,
        index: usize,
        f: &Function,
        fref: FunctionRef,
        items: Vec<Node>,
        validator: bool,
    ) -> Result<Vec<Node>, RenderError> {
        let shown = fref.display().to_string();
        let mut step = StepResult {
            name: f.name.clone(),
            when: f.when.clone(),
            ..Default::default()
        };
        match &fref {
            FunctionRef::Image(i) => step.image = i.clone(),
            FunctionRef::Exec(e) => step.exec = e.clone(),
        }
        let pkg_name = self.display_name(pkg);
        let started = Instant::now();
        let fail = |ctx: &mut Self, step: StepResult, message: String| {
            if validator {
                ctx.validation_steps.push(step);
            } else {
                ctx.mutation_steps.push(step);
            }
            RenderError::Pipeline {
                pkg: pkg_label(pkg),
                message,
            }
        };

        // Function config, refreshed from the current items.
        let function_config = if let Some(c) = &self.config_override {
            Some(c.clone())
        } else if !f.config_path.is_empty() {
            Some(self.find_config(pkg, list, index, f, &items)?)
        } else if let Some(r) = &f.config_ref {
            Some(find_config_ref(pkg, list, index, r, &items)?)
        } else if !f.config_map.is_empty() {
            Some(config_map(&f.config_map))
        } else {
            None
        };

        let selective = !f.selectors.is_empty() || !f.exclusions.is_empty();
        let mut all = items;
        if selective {
            for (i, item) in all.iter_mut().enumerate() {
                set_annotation(item, res::KPT_RESOURCE_ID, &i.to_string());
            }
        }
        // A mutator over everything takes the items; validators (whose output is
        // discarded) and selective steps (which merge back) work on copies.
        let mut selected: Vec<Node> = if !selective && !validator {
            std::mem::take(&mut all)
        } else {
            all.iter()
                .filter(|n| !selective || select::is_selected(&f.selectors, &f.exclusions, n))
                .cloned()
                .collect()
        };
        // kpt HEAD hands a validator everything but its own function config (a
        // mutator still sees, and may change, the configs).
        if validator && !f.config_path.is_empty() && self.config_override.is_none() {
            let own = res::clean_path(&f.config_path).unwrap_or_default();
            selected.retain(|n| {
                !(res::item_path(n) == Some(own.as_str()) && pkg_of(n) == pkg_key(pkg))
            });
        }
        if validator
            && let Some(r) = &f.config_ref
            && self.config_override.is_none()
        {
            selected.retain(|n| !(pkg_of(n) == pkg_key(pkg) && refers_to(r, n)));
        }
        // `when:` decides over what the function would be given; a false condition
        // records a skipped step and hands the items on untouched.
        if !f.when.is_empty() {
            match when::evaluate(&f.when, &selected) {
                Ok(true) => {}
                Ok(false) => {
                    self.log
                        .push(format!("[SKIPPED] {shown:?} (celCondition not met)"));
                    step.skipped = true;
                    self.fn_results.push(step.clone());
                    let mut back = if !selective && !validator {
                        selected
                    } else {
                        all
                    };
                    if selective {
                        for item in &mut back {
                            remove_annotation(item, res::KPT_RESOURCE_ID);
                        }
                    }
                    if validator {
                        self.validation_steps.push(step);
                    } else {
                        self.mutation_steps.push(step);
                    }
                    return Ok(back);
                }
                Err(e) => {
                    let message = e.to_string();
                    step.execution_error = message.clone();
                    step.exit_code = 1;
                    self.fn_results.push(step.clone());
                    return Err(fail(self, step, message));
                }
            }
        }
        // What healing needs of each input, by call id (`i + 1`); the buffers are the
        // last call's.
        let mut originals = std::mem::take(&mut self.snapshots);
        let prepared = call::prepare(&mut selected, &mut originals);
        // kyaml refuses ids that disagree before the function starts (no `[RUNNING]`).
        if let Err(call::Unfit::Ids(message)) = prepared {
            return Err(RenderError::Input(message.to_string()));
        }
        // kpt names the resource count only for a function with selectors or exclusions
        // (`DisplayResourceCount`), counting what the function is given.
        let count = if selective {
            format!(" on {} resource(s)", selected.len())
        } else {
            String::new()
        };
        if self.eval_mode {
            self.log.push(format!("[RUNNING] {shown:?}{count}"));
        } else {
            self.log.push(format!(
                "[RUNNING] {shown:?}{count} on package {pkg_name:?}"
            ));
        }
        if let Err(call::Unfit::NotKrm(message)) = prepared {
            step.execution_error = message.clone();
            step.exit_code = 1;
            self.log.push(format!(
                "[FAIL] {shown:?} in {}",
                go_elapsed(started.elapsed())
            ));
            return Err(fail(self, step, message));
        }
        let input = ResourceList {
            items: selected,
            function_config,
            results: Vec::new(),
        };
        // The budget is checked before each call (a cancelled or overdue render runs
        // nothing more) and on each output (a function producing too much fails its step).
        let budget = &self.opts.run.budget;
        let ran = budget
            .check()
            .map_err(|reason| RuntimeError::Budget {
                function: shown.to_string(),
                reason,
            })
            .and_then(|()| self.opts.runtime.run(&fref, input, &self.opts.run))
            .and_then(|o| match budget.check_items(o.list.items.len()) {
                Ok(()) => Ok(o),
                Err(reason) => Err(RuntimeError::Budget {
                    function: shown.to_string(),
                    reason,
                }),
            });
        let output = match ran {
            Ok(o) => o,
            Err(e) => {
                // kpt's ExecFn: a process that never started is not an ExecError, so no
                // exit code is shown, and the error is Go's `exec` text wrapped.
                // Output kyaml cannot read is no ExecError either: its own words.
                let never_started = matches!(
                    (&e, &fref),
                    (RuntimeError::Start { reason, .. }, FunctionRef::Exec(_))
                        if crate::runtime::exec::is_go_start_error(reason)
                ) || matches!(
                    (&e, &fref),
                    (RuntimeError::BadOutput { reason, .. }, FunctionRef::Exec(_))
                        if ResourceList::is_kyaml_read_error(reason)
                );
                let message = match &e {
                    RuntimeError::ExecNotAllowed(_) => {
                        crate::runtime::exec::EXEC_NOT_ALLOWED.to_string()
                    }
                    RuntimeError::Start { reason, .. } if never_started => {
                        format!("unexpected function error: {reason}")
                    }
                    RuntimeError::BadOutput { reason, .. } if never_started => reason.clone(),
                    other => other.to_string(),
                };
                step.execution_error = message.clone();
                step.exit_code = 1;
                // A function that failed to run is still a call kpt's results list
                // records, with exit code 1.
                self.fn_results.push(step.clone());
                self.log.push(format!(
                    "[FAIL] {shown:?} in {}",
                    go_elapsed(started.elapsed())
                ));
                if !never_started {
                    self.log.extend(printer::step_details_styled(
                        &[],
                        "",
                        Some(1),
                        self.details_style,
                    ));
                }
                return Err(fail(self, step, message));
            }
        };
        // kpt's runner checks a function's output before it reads its results, whether
        // the function succeeded or not (`FunctionRunner.do`): path invariants and KRM.
        // A broken one fails the step with nothing but the error shown, and the call
        // never reaches kpt's results list, so the step keeps no results or stderr.
        let config_dir = f
            .config_path
            .rsplit_once('/')
            .map(|(d, _)| {
                d.strip_suffix("/functions")
                    .unwrap_or(if d == "functions" { "" } else { d })
                    .to_string()
            })
            .unwrap_or_default();
        let owner = Owner {
            pkg: pkg_key(pkg),
            config_dir: &config_dir,
        };
        let mut out_items = output.list.items;
        let checked = call::finish(&mut out_items, &originals, &owner, output.exit_code == 0);
        self.snapshots = originals;
        let took = go_elapsed(started.elapsed());
        if let Err(message) = checked {
            self.log.push(format!("[FAIL] {shown:?} in {took}"));
            step.execution_error = message.clone();
            step.exit_code = 1;
            return Err(fail(self, step, message));
        }
        step.exit_code = output.exit_code;
        step.stderr = output.stderr.clone();
        step.results = output.list.results.clone();
        step.error_results = output
            .list
            .results
            .iter()
            .filter(|r| r.is_error())
            .cloned()
            .collect::<Vec<ResultItem>>();
        self.fn_results.push(step.clone());
        if output.exit_code != 0 {
            self.log.push(format!("[FAIL] {shown:?} in {took}"));
            // A container's stderr comes line by line through the CLI filter (no final
            // newline); an exec function's failure keeps its stderr as written.
            let stderr = match &fref {
                FunctionRef::Exec(_) => output.stderr.as_str(),
                _ => output.stderr.trim_end_matches('\n'),
            };
            self.log.extend(printer::step_details_styled(
                &output.list.results,
                stderr,
                Some(output.exit_code),
                self.details_style,
            ));
            return Err(fail(self, step, super::ALREADY_HANDLED.into()));
        }
        self.log.push(format!("[PASS] {shown:?} in {took}"));
        self.log.extend(printer::step_details_styled(
            &output.list.results,
            &output.stderr,
            None,
            self.details_style,
        ));

        if validator {
            // kpt counts a function once it has passed (the summary after a failure).
            self.functions += 1;
            self.validation_steps.push(step);
            let mut back = all;
            if selective {
                for item in &mut back {
                    remove_annotation(item, res::KPT_RESOURCE_ID);
                }
            }
            return Ok(back);
        }

        let merged = if selective {
            let mut by_id: HashMap<String, Node> = HashMap::new();
            let mut fresh = Vec::new();
            for item in out_items {
                match annotation(&item, res::KPT_RESOURCE_ID).map(str::to_string) {
                    Some(id) => {
                        by_id.insert(id, item);
                    }
                    None => fresh.push(item),
                }
            }
            let mut merged = Vec::new();
            for item in all {
                let id = annotation(&item, res::KPT_RESOURCE_ID)
                    .unwrap_or_default()
                    .to_string();
                if select::is_selected(&f.selectors, &f.exclusions, &item) {
                    if let Some(out) = by_id.remove(&id) {
                        merged.push(out);
                    }
                } else {
                    merged.push(item);
                }
            }
            merged.extend(fresh);
            // kpt checks invariants on the function's output only (above), not on the
            // merged list.
            for item in &mut merged {
                remove_annotation(item, res::KPT_RESOURCE_ID);
            }
            merged
        } else {
            out_items
        };
        self.functions += 1;
        self.mutation_steps.push(step);
        Ok(merged)
    }
}
