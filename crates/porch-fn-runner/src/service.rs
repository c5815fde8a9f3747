//! `evaluator.FunctionEvaluator`: one function on one ResourceList, with Porch's errors —
//! `NotFound` when no runtime provides the image, `Internal` ("Failed to execute function")
//! when it ran and failed, `InvalidArgument` for a request that is not a ResourceList, and
//! `DeadlineExceeded` when it outlived the caller's deadline or the runner's timeout.

use std::sync::Arc;
use std::time::Duration;

use kpt::resource_list::ResourceList;
use kpt::runtime::{
    Budget, BudgetExceeded, CancelToken, FunctionOutput, FunctionRef, FunctionRuntime, RunOptions,
    RuntimeError,
};
use porch_fn_proto::evaluator::function_evaluator_server::FunctionEvaluator;
use porch_fn_proto::evaluator::{EvaluateFunctionRequest, EvaluateFunctionResponse};
use porch_fn_proto::wire;
use tonic::metadata::{BinaryMetadataValue, MetadataValue};
use tonic::{Request, Response, Status};

/// Limits applied to every evaluation.
#[derive(Debug, Clone)]
pub struct EvaluatorOptions {
    /// Longest a function may run (a shorter caller deadline wins).
    pub timeout: Duration,
    /// Most bytes a function may write (the answer must fit in one gRPC message).
    pub max_output_bytes: usize,
    /// Most resources a function may output.
    pub max_output_items: Option<usize>,
}

/// Failed functions' results travel in a trailer; beyond this they are left out (HTTP/2
/// header lists are limited, 16 KiB by default on the client side).
const MAX_RESULTS_TRAILER: usize = 8 * 1024;

/// The service.
pub struct Evaluator {
    runtime: Arc<dyn FunctionRuntime>,
    options: EvaluatorOptions,
}

impl Evaluator {
    pub fn new(runtime: Arc<dyn FunctionRuntime>, options: EvaluatorOptions) -> Self {
        Evaluator { runtime, options }
    }
}

/// The caller's deadline, from the `grpc-timeout` header (`<digits><unit>`).
fn grpc_timeout<T>(request: &Request<T>) -> Option<Duration> {
    let value = request.metadata().get("grpc-timeout")?.to_str().ok()?;
    let (digits, unit) = value.split_at(value.len().checked_sub(1)?);
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n.saturating_mul(3600)),
        "M" => Duration::from_secs(n.saturating_mul(60)),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

#[tonic::async_trait]
impl FunctionEvaluator for Evaluator {
    async fn evaluate_function(
        &self,
        request: Request<EvaluateFunctionRequest>,
    ) -> Result<Response<EvaluateFunctionResponse>, Status> {
        let timeout =
            grpc_timeout(&request).map_or(self.options.timeout, |t| t.min(self.options.timeout));
        let req = request.into_inner();
        if req.image.is_empty() {
            return Err(Status::invalid_argument("image is required"));
        }
        let text = String::from_utf8(req.resource_list).map_err(|_| {
            Status::invalid_argument("resource_list is not UTF-8 text (a serialized ResourceList)")
        })?;
        let input = ResourceList::from_yaml(&text).map_err(|e| {
            Status::invalid_argument(format!("failed to parse the ResourceList: {e}"))
        })?;
        let image = req.image;
        tracing::info!(image = %image, tag = %req.tag, "Evaluating function");
        let cancel = CancelToken::new();
        let options = RunOptions {
            timeout,
            working_dir: None,
            // A deadline too, so in-process evaluators (starlark) stop as processes do.
            budget: Budget {
                cancel: cancel.clone(),
                max_output_bytes: Some(self.options.max_output_bytes),
                max_output_items: self.options.max_output_items,
                ..Budget::default()
            }
            .with_time_limit(timeout),
        };
        // When the caller goes away (its deadline, a reset), this future is dropped: the
        // guard cancels the run, which kills the function's process.
        let guard = cancel.drop_guard();
        let runtime = self.runtime.clone();
        let function = FunctionRef::Image(image.clone());
        let ran = tokio::task::spawn_blocking(move || runtime.run(&function, input, &options))
            .await
            .map_err(|e| Status::internal(format!("Failed to execute function {image:?}: {e}")))?;
        guard.disarm();
        let output = ran.map_err(|e| error_status(&image, e))?;
        if output.exit_code != 0 {
            return Err(failed_status(&image, &output));
        }
        tracing::info!(image = %image, items = output.list.items.len(), "Evaluated function");
        Ok(Response::new(EvaluateFunctionResponse {
            resource_list: output.list.to_yaml().into_bytes(),
            log: output.stderr.into_bytes(),
        }))
    }
}

/// A function that could not run, or was stopped.
fn error_status(image: &str, e: RuntimeError) -> Status {
    match e {
        RuntimeError::NotFound(message) => Status::not_found(message),
        RuntimeError::Timeout { .. }
        | RuntimeError::Budget {
            reason: BudgetExceeded::Time(_),
            ..
        } => Status::deadline_exceeded(e.to_string()),
        RuntimeError::Budget {
            reason: BudgetExceeded::Cancelled,
            ..
        } => Status::cancelled(e.to_string()),
        RuntimeError::Budget {
            reason: BudgetExceeded::Bytes(_) | BudgetExceeded::Items { .. },
            ..
        } => Status::resource_exhausted(e.to_string()),
        other => Status::internal(format!("Failed to execute function {image:?}: {other}")),
    }
}

/// A function that ran and failed: Porch's message, plus (for our client) its exit code
/// and results.
fn failed_status(image: &str, output: &FunctionOutput) -> Status {
    // What went wrong is in stderr, or only in the error results (built-ins report there).
    let mut details: Vec<&str> = output
        .list
        .results
        .iter()
        .filter(|r| r.is_error())
        .map(|r| r.message.as_str())
        .collect();
    let stderr = output.stderr.trim_end();
    if !stderr.is_empty() {
        details.insert(0, stderr);
    }
    let mut status = Status::internal(format!(
        "Failed to execute function {image:?}: exit status {} ({})",
        output.exit_code,
        details.join("; ")
    ));
    if let Ok(code) = MetadataValue::try_from(output.exit_code.to_string()) {
        status.metadata_mut().insert(wire::EXIT_CODE_TRAILER, code);
    }
    let results = ResourceList {
        results: output.list.results.clone(),
        ..ResourceList::default()
    }
    .to_yaml();
    if results.len() <= MAX_RESULTS_TRAILER {
        status.metadata_mut().insert_bin(
            wire::RESOURCE_LIST_TRAILER,
            BinaryMetadataValue::from_bytes(results.as_bytes()),
        );
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeouts_parse_in_every_unit() {
        let with = |v: &str| {
            let mut r = Request::new(());
            r.metadata_mut()
                .insert("grpc-timeout", v.parse().expect("ascii"));
            grpc_timeout(&r)
        };
        assert_eq!(with("2S"), Some(Duration::from_secs(2)));
        assert_eq!(with("1500m"), Some(Duration::from_millis(1500)));
        assert_eq!(with("3M"), Some(Duration::from_secs(180)));
        assert_eq!(with("x"), None);
        assert_eq!(with(""), None);
    }

    #[test]
    fn errors_map_to_porchs_status_codes() {
        let nf = error_status("i", RuntimeError::NotFound("none".into()));
        assert_eq!(nf.code(), tonic::Code::NotFound);
        let to = error_status(
            "i",
            RuntimeError::Timeout {
                function: "i".into(),
                seconds: 1,
            },
        );
        assert_eq!(to.code(), tonic::Code::DeadlineExceeded);
        let bad = error_status(
            "i",
            RuntimeError::BadOutput {
                function: "i".into(),
                reason: "junk".into(),
            },
        );
        assert_eq!(bad.code(), tonic::Code::Internal);
        assert!(
            bad.message()
                .starts_with("Failed to execute function \"i\"")
        );
    }
}
