//! Render-on-write: run the package's Kptfile pipeline in memory (spec §10.1).

use std::sync::Arc;

use kpt::kptfile::{Condition, KPTFILE, Kptfile};
use kpt::render::RenderOptions;
use kpt::runtime::{FunctionRuntime, RunOptions};
use porch_core::repository::PackageFiles;

use crate::error::{EngineError, Result};
use crate::model::RenderStatus;

/// kpt's condition type for the outcome of the last render.
const RENDERED: &str = "Rendered";

/// The result of rendering: the files to keep and what happened.
pub(crate) struct Rendered {
    pub files: PackageFiles,
    pub status: RenderStatus,
}

/// Renders `files` (a package rooted at the top); skipped when there is no root Kptfile.
/// Runs on a blocking thread: functions are CPU-bound.
pub(crate) async fn render(
    runtime: Arc<dyn FunctionRuntime>,
    files: PackageFiles,
    root_name: String,
) -> Result<Rendered> {
    if !files.contains_key(KPTFILE) {
        return Ok(Rendered {
            files,
            status: RenderStatus::default(),
        });
    }
    tokio::task::spawn_blocking(move || {
        let input = kpt::package::PackageFiles::from_map(files);
        let out = kpt::render::render(
            &input,
            &RenderOptions {
                runtime: runtime.as_ref(),
                run: RunOptions::default(),
                root_name,
                write_status: true,
            },
        );
        let mut results = out.mutation_steps;
        results.extend(out.validation_steps);
        let mut files = out.files.into_map();
        // kpt writes the Rendered condition only when a step ran; Porch's render always
        // leaves one behind on success, empty pipelines included (CLI goldens rpkg-init,
        // rpkg-push). With steps, kpt has already written it.
        if out.error.is_none() && results.is_empty() {
            mark_rendered(&mut files);
        }
        Rendered {
            files,
            status: RenderStatus {
                results,
                error: out.error.map(|e| e.to_string()).unwrap_or_default(),
            },
        }
    })
    .await
    .map_err(|e| EngineError::Internal(format!("render task failed: {e}")))
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
