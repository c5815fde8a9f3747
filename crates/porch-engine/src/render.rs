//! Render-on-write: run the package's Kptfile pipeline in memory (spec §10.1).

use std::sync::Arc;

use kpt::kptfile::KPTFILE;
use kpt::render::RenderOptions;
use kpt::runtime::{FunctionRuntime, RunOptions};
use porch_core::repository::PackageFiles;

use crate::error::{EngineError, Result};
use crate::model::RenderStatus;

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
        Rendered {
            files: out.files.into_map(),
            status: RenderStatus {
                results,
                error: out.error.map(|e| e.to_string()).unwrap_or_default(),
            },
        }
    })
    .await
    .map_err(|e| EngineError::Internal(format!("render task failed: {e}")))
}
