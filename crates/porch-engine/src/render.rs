//! Render-on-write: run the package's Kptfile pipeline in memory (spec §10.1), within a
//! budget, on a thread of its own, never while holding a repository's write queue
//! (callers render first and check, inside the queue, that the input is unchanged).

use kpt::kptfile::{Condition, KPTFILE, Kptfile, StepResult};
use kpt::render::RenderOptions;
use kpt::runtime::{Budget, FunctionRuntime, RunOptions};
use porch_core::repository::PackageFiles;

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::guardrails::{self, Guardrails};
use crate::index::RepoId;
use crate::model::RenderStatus;

/// kpt's condition type for the outcome of the last render.
const RENDERED: &str = "Rendered";

/// The result of rendering: the files to keep and what happened.
pub(crate) struct Rendered {
    pub files: PackageFiles,
    pub status: RenderStatus,
}

/// Stack of a render thread. Parsers, the merge walkers and the starlark evaluator recurse
/// as deep as their input's nesting limits allow; tokio's blocking threads (2 MiB) were
/// too small for that. Only touched pages are committed, so the reservation costs nothing.
const RENDER_STACK: usize = 256 << 20;

impl Rendered {
    /// The render's failure as the engine's error (nothing saved).
    pub(crate) fn into_error(self) -> EngineError {
        EngineError::Render {
            message: self.status.error.clone(),
            pushed: false,
            status: Box::new(self.status),
        }
    }
}

/// A render done before taking the repository's write queue. Inside the queue it stands
/// for a render of exactly the same input; any other input means the draft changed in
/// between, which is the same conflict a stale resourceVersion is.
pub(crate) struct Prerendered {
    input: PackageFiles,
    output: Rendered,
}

impl Prerendered {
    /// The render's failure, if it failed.
    pub(crate) fn failure(&self) -> Result<()> {
        if self.output.status.error.is_empty() {
            Ok(())
        } else {
            Err(EngineError::Render {
                message: self.output.status.error.clone(),
                pushed: false,
                status: Box::new(self.output.status.clone()),
            })
        }
    }

    /// The render of `files`, if that is what was rendered; else `Conflict`.
    pub(crate) fn take(self, name: &str, files: &PackageFiles) -> Result<Rendered> {
        if self.input == *files {
            Ok(self.output)
        } else {
            Err(EngineError::modified(name))
        }
    }
}

impl Engine {
    /// Renders `files` (a package rooted at the top) within the engine's render budget;
    /// skipped when there is no root Kptfile. Runs on a thread of its own: functions are
    /// CPU-bound and may need a deep stack. Dropping the returned future (an abandoned
    /// request) cancels the render, and so does [`Engine::cancel_renders`].
    pub(crate) async fn render(
        &self,
        id: &RepoId,
        files: PackageFiles,
        root_name: String,
    ) -> Result<Rendered> {
        self.render_as(id, files, root_name, Guarded::All).await
    }

    /// [`Engine::render`] or, with [`Guarded::ValidatorsOnly`], only the repository's
    /// validators over the files as they are (the check of an approval).
    pub(crate) async fn render_as(
        &self,
        id: &RepoId,
        files: PackageFiles,
        root_name: String,
        mode: Guarded,
    ) -> Result<Rendered> {
        let rails = self
            .with_index(id, |ix| ix.guardrails.clone())
            .unwrap_or_default();
        if !files.contains_key(KPTFILE) && rails.is_empty() {
            return Ok(Rendered {
                files,
                status: RenderStatus::default(),
            });
        }
        let limits = &self.inner.options.render;
        let mut budget = Budget {
            cancel: self.inner.renders.child(),
            max_output_items: limits.max_output_items,
            max_output_bytes: limits.max_output_bytes,
            max_memory_bytes: limits.max_memory_bytes,
            max_steps: limits.max_steps,
            ..Budget::default()
        };
        if let Some(t) = limits.timeout {
            budget = budget.with_time_limit(t);
        }
        let guard = budget.cancel.drop_guard();
        let runtime = self.inner.runtime.clone();
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("render".into())
            .stack_size(RENDER_STACK)
            .spawn(move || {
                let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    render_now(runtime.as_ref(), files, root_name, budget, &rails, mode)
                }));
                // The caller may have gone away; its guard has cancelled the budget.
                let _ = tx.send(out);
            })
            .map_err(|e| EngineError::Internal(format!("cannot start a render thread: {e}")))?;
        let out = rx
            .await
            .map_err(|_| EngineError::Internal("render thread ended without an answer".into()))?;
        guard.disarm();
        out.map_err(|_| {
            EngineError::Internal("render panicked (a bug; the server log has the details)".into())
        })
    }

    /// [`Engine::render`] before taking the write queue, kept for [`Prerendered::take`].
    pub(crate) async fn prerender(
        &self,
        id: &RepoId,
        files: PackageFiles,
        root_name: String,
    ) -> Result<Prerendered> {
        let input = files.clone();
        let output = self.render(id, files, root_name).await?;
        Ok(Prerendered { input, output })
    }

    /// The stored record (files included) of a store-backed revision.
    pub(crate) async fn stored_draft_of(
        &self,
        id: &crate::index::RepoId,
        current: &crate::model::PackageRevision,
    ) -> Result<crate::drafts::StoredDraft> {
        self.inner
            .store
            .get_draft(crate::drafts::object_key(&id.0, &current.name()))
            .await
    }

    /// Cancels every render running now or started later (server shutdown).
    pub fn cancel_renders(&self) {
        self.inner.renders.cancel();
    }
}

/// What a render runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Guarded {
    /// The package's pipeline, then the repository's mutators and validators.
    All,
    /// Only the repository's validators.
    ValidatorsOnly,
}

fn render_now(
    runtime: &dyn FunctionRuntime,
    files: PackageFiles,
    root_name: String,
    budget: Budget,
    guard: &Guardrails,
    mode: Guarded,
) -> Rendered {
    let input = kpt::package::PackageFiles::from_map(files);
    let run = RunOptions {
        budget,
        ..RunOptions::default()
    };
    if mode == Guarded::ValidatorsOnly {
        let checked = guardrails::run(runtime, input, guard, &run, &root_name, true);
        return Rendered {
            files: checked.files.into_map(),
            status: RenderStatus {
                results: checked.steps,
                error: checked.error.unwrap_or_default(),
            },
        };
    }
    let has_kptfile = input.get(KPTFILE).is_some();
    let out = if has_kptfile {
        kpt::render::render(
            &input,
            &RenderOptions {
                runtime,
                run: run.clone(),
                root_name: root_name.clone(),
                write_status: true,
            },
        )
    } else {
        kpt::render::RenderOutput {
            files: input,
            mutation_steps: Vec::new(),
            validation_steps: Vec::new(),
            packages: 0,
            error: None,
            log: Vec::new(),
            items: Vec::new(),
        }
    };
    let mut results = out.mutation_steps;
    results.extend(out.validation_steps);
    if out.error.is_none() && !guard.is_empty() {
        let pipeline_ran = !results.is_empty();
        let checked = guardrails::run(runtime, out.files, guard, &run, &root_name, false);
        results.extend(checked.steps);
        let mut files = checked.files.into_map();
        if checked.error.is_none() && has_kptfile && !pipeline_ran {
            mark_rendered(&mut files);
        }
        return Rendered {
            files,
            status: RenderStatus {
                results,
                error: checked.error.unwrap_or_default(),
            },
        };
    }
    let mut files = out.files.into_map();
    // kpt writes the Rendered condition only when a step ran; Porch's render always
    // leaves one behind on success, empty pipelines included (CLI goldens rpkg-init,
    // rpkg-push). With steps, kpt has already written it.
    if out.error.is_none() && results.is_empty() {
        mark_rendered(&mut files);
    }
    let error = out
        .error
        .map(|e| error_text(&e, &results))
        .unwrap_or_default();
    Rendered {
        files,
        status: RenderStatus { results, error },
    }
}

/// The render error as the server reports it. kpt prints a failing step's details on the
/// console and ends with "already handled error"; a server has no console, so the failing
/// function's image, exit code and first error (result or stderr) go into the message.
fn error_text(e: &kpt::render::RenderError, steps: &[StepResult]) -> String {
    let text = e.to_string();
    if !e.already_reported() {
        return text;
    }
    let Some(step) = steps.iter().rev().find(|s| s.exit_code != 0) else {
        return text;
    };
    let function = if step.image.is_empty() {
        &step.exec
    } else {
        &step.image
    };
    let detail = step
        .error_results
        .first()
        .or_else(|| step.results.iter().find(|r| r.is_error()))
        .map(|r| r.message.clone())
        .filter(|m| !m.is_empty())
        .or_else(|| {
            step.stderr
                .lines()
                .find(|l| !l.trim().is_empty())
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let what = format!(
        "function {function:?} failed with exit code {}{}{detail}",
        step.exit_code,
        if detail.is_empty() { "" } else { ": " }
    );
    text.replace(kpt::render::ALREADY_HANDLED, &what)
}

/// Records a successful render in the root Kptfile as kpt's in-place render does: any
/// earlier `Rendered` condition replaced by `True`/`RenderSuccess` at the end of
/// `status.conditions`, no `renderStatus` (nothing ran), the Kptfile re-encoded the way
/// kpt's struct marshalling writes it. A Kptfile that does not decode is left alone (it
/// could not have rendered either).
fn mark_rendered(files: &mut PackageFiles) {
    let Some(mut kf) = files
        .get(KPTFILE)
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|t| Kptfile::parse(t).ok())
    else {
        return;
    };
    let mut status = kf.status.take().unwrap_or_default();
    status.conditions.retain(|c| c.condition_type != RENDERED);
    status.conditions.push(Condition {
        condition_type: RENDERED.into(),
        status: "True".into(),
        reason: "RenderSuccess".into(),
        message: String::new(),
    });
    status.render_status = None;
    kf.status = Some(status);
    files.insert(KPTFILE.to_owned(), kf.to_yaml().into_bytes());
}
