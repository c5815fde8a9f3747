//! Writing `status.conditions` (Rendered) and `status.renderStatus` into the root
//! Kptfile, as current kpt does after an in-place render (also on failure).

use super::{Ctx, RenderError};
use crate::kptfile::{Condition, KPTFILE, Kptfile, RenderStatus, StepResult};
use crate::package::PackageFiles;

fn summary<'s>(steps: impl Iterator<Item = &'s StepResult>) -> String {
    steps
        .filter(|s| s.exit_code != 0 || !s.execution_error.is_empty())
        .map(|s| {
            let who = if s.image.is_empty() {
                &s.exec
            } else {
                &s.image
            };
            if s.execution_error.is_empty() {
                format!("{who}: exit code {}", s.exit_code)
            } else {
                format!("{who}: {}", s.execution_error)
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Update the root Kptfile in `files` with the outcome. The Kptfile is re-encoded
/// the way kpt's struct marshalling writes it. A Kptfile that no longer decodes is
/// left alone (the error already says why).
pub(super) fn write(
    files: &mut PackageFiles,
    original: &Kptfile,
    ctx: &Ctx<'_>,
    err: Option<&RenderError>,
) {
    let mut kf = files
        .get_text(KPTFILE)
        .and_then(|t| Kptfile::parse(t).ok())
        .unwrap_or_else(|| original.clone());
    let mut status = kf.status.take().unwrap_or_default();
    status.conditions.retain(|c| c.condition_type != "Rendered");
    let condition = match err {
        None => Condition {
            condition_type: "Rendered".into(),
            status: "True".into(),
            reason: "RenderSuccess".into(),
            message: String::new(),
        },
        Some(e) => Condition {
            condition_type: "Rendered".into(),
            status: "False".into(),
            reason: "RenderFailed".into(),
            message: e.to_string(),
        },
    };
    status.conditions.push(condition);
    let render_status = RenderStatus {
        mutation_steps: ctx.mutation_steps.clone(),
        validation_steps: ctx.validation_steps.clone(),
        error_summary: if err.is_some() {
            summary(ctx.mutation_steps.iter().chain(&ctx.validation_steps))
        } else {
            String::new()
        },
    };
    status.render_status = if render_status == RenderStatus::default() {
        None
    } else {
        Some(render_status)
    };
    kf.status = Some(status);
    files.insert(KPTFILE, kf.to_yaml().into_bytes());
}
