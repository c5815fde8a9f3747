//! Writing `status.conditions` (Rendered) and `status.renderStatus` into the root
//! Kptfile, as current kpt does after an in-place render (also on failure).

use super::{Ctx, RenderError};
use crate::kptfile::{Condition, KPTFILE, Kptfile, RenderStatus, StepResult};
use crate::package::PackageFiles;

fn summary<'s>(steps: impl Iterator<Item = &'s StepResult>) -> String {
    steps
        .filter(|s| s.exit_code != 0 || !s.execution_error.is_empty())
        .map(|s| {
            // kpt's `stepName`: the step's own name, else its image, else its exec.
            let who = [&s.name, &s.image, &s.exec]
                .into_iter()
                .find(|w| !w.is_empty())
                .unwrap_or(&s.exec);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn step(name: &str, image: &str, exec: &str, exit_code: i32, error: &str) -> StepResult {
        StepResult {
            name: name.into(),
            image: image.into(),
            exec: exec.into(),
            exit_code,
            execution_error: error.into(),
            ..Default::default()
        }
    }

    #[test]
    fn the_summary_names_a_step_by_its_name_then_image_then_exec() {
        let steps = [
            step("tidy-up", "example.org/tidy:v2", "", 3, ""),
            step("", "example.org/check:v1", "", 1, ""),
            step("", "", "./local.sh", 1, "could not start"),
            step("fine", "example.org/ok:v1", "", 0, ""),
        ];
        assert_eq!(
            summary(steps.iter()),
            "tidy-up: exit code 3\nexample.org/check:v1: exit code 1\n./local.sh: could not start"
        );
    }
}
