//! Repository guardrails (Porch's legacy `Repository.spec.mutators` / `spec.validators`):
//! functions run over every package of the repository after its own pipeline, on every
//! change. Mutators' output is kept; validators' is not, and one failing refuses the change.

use std::collections::BTreeMap;

use kpt::kptfile::StepResult;
use kpt::package::PackageFiles;
use kpt::render::{EvalOptions, RenderOptions};
use kpt::runtime::{FunctionRef, FunctionRuntime, RunOptions};

/// One guardrail function.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GuardrailFunction {
    /// The image (resolved as a pipeline's image: short names go to kpt's catalog).
    pub image: String,
    /// Its functionConfig, as a ConfigMap's data (none when empty).
    pub config_map: BTreeMap<String, String>,
}

/// A repository's guardrails.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Guardrails {
    pub mutators: Vec<GuardrailFunction>,
    pub validators: Vec<GuardrailFunction>,
}

impl Guardrails {
    pub fn is_empty(&self) -> bool {
        self.mutators.is_empty() && self.validators.is_empty()
    }
}

/// What running the guardrails did: the steps (mutators, then validators) and the failure.
pub(crate) struct Outcome {
    pub files: PackageFiles,
    pub steps: Vec<StepResult>,
    pub error: Option<String>,
}

/// Runs the mutators (unless `validators_only`), then the validators, over `files`.
pub(crate) fn run(
    runtime: &dyn FunctionRuntime,
    files: PackageFiles,
    guard: &Guardrails,
    run: &RunOptions,
    root_name: &str,
    validators_only: bool,
) -> Outcome {
    let mut out = Outcome {
        files,
        steps: Vec::new(),
        error: None,
    };
    let mutators = if validators_only {
        &[][..]
    } else {
        &guard.mutators[..]
    };
    let phases = [("mutator", mutators), ("validator", &guard.validators[..])];
    for (role, functions) in phases {
        for f in functions {
            let opts = RenderOptions {
                runtime,
                run: run.clone(),
                root_name: root_name.to_owned(),
                write_status: false,
            };
            let eval = EvalOptions {
                function: FunctionRef::Image(f.image.clone()),
                function_config: (!f.config_map.is_empty())
                    .then(|| kpt::render::config_map(&f.config_map)),
                config_in_package: None,
                selector: Default::default(),
                exclusion: Default::default(),
            };
            let result = kpt::render::eval(&out.files, &opts, &eval);
            let failed_step = result
                .mutation_steps
                .iter()
                .chain(&result.validation_steps)
                .find(|s| s.exit_code != 0)
                .cloned();
            out.steps.extend(result.mutation_steps);
            out.steps.extend(result.validation_steps);
            if let Some(e) = result.error {
                let detail = failed_step
                    .and_then(|s| {
                        s.error_results
                            .first()
                            .or_else(|| s.results.iter().find(|r| r.is_error()))
                            .map(|r| r.message.clone())
                            .filter(|m| !m.is_empty())
                            .or_else(|| {
                                s.stderr
                                    .lines()
                                    .find(|l| !l.trim().is_empty())
                                    .map(str::to_owned)
                            })
                    })
                    .unwrap_or_else(|| e.to_string());
                out.error = Some(format!("repository {role} {:?} failed: {detail}", f.image));
                return out;
            }
            if role == "mutator" {
                out.files = result.files;
            }
        }
    }
    out
}
