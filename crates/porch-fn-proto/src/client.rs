//! A [`FunctionRuntime`] that evaluates image functions through a function runner over
//! gRPC: ours (`porch-fn-runner`) or Porch's. `exec:` functions are not sent (Porch's
//! protocol carries an image only); they stay with the local runtimes.

use std::time::Duration;

use kpt::resource_list::ResourceList;
use kpt::runtime::wait::{Waited, wait_within};
use kpt::runtime::{FunctionOutput, FunctionRef, FunctionRuntime, RunOptions, RuntimeError};
use tonic::Code;
use tonic::transport::{Channel, Endpoint};

use crate::evaluator::EvaluateFunctionRequest;
use crate::evaluator::function_evaluator_client::FunctionEvaluatorClient;
use crate::wire;

/// The runner's address could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// Not a valid URI or `host:port`.
    #[error("invalid function runner address {address:?}: {reason}")]
    Address { address: String, reason: String },
    /// The client's own I/O runtime could not start.
    #[error("cannot start the function runner client: {0}")]
    Runtime(#[from] std::io::Error),
}

impl RemoteError {
    /// A short machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            RemoteError::Address { .. } => "invalid-address",
            RemoteError::Runtime(_) => "runtime",
        }
    }
}

/// How long past its deadline a call waits for the runner's own answer.
const ANSWER_GRACE: Duration = Duration::from_secs(2);

/// Evaluates every image function on a remote runner.
pub struct RemoteRuntime {
    address: String,
    client: FunctionEvaluatorClient<Channel>,
    // Calls come from synchronous render code (blocking threads or plain threads), so the
    // client owns the runtime its connection lives on rather than borrowing the caller's.
    // Always `Some` until dropped (taken out to be shut down without blocking).
    io: Option<tokio::runtime::Runtime>,
}

impl Drop for RemoteRuntime {
    fn drop(&mut self) {
        // A plain drop blocks, which panics when the last owner is dropped in async code.
        if let Some(io) = self.io.take() {
            io.shutdown_background();
        }
    }
}

impl std::fmt::Debug for RemoteRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteRuntime")
            .field("address", &self.address)
            .finish()
    }
}

impl RemoteRuntime {
    /// A client of the runner at `address` (`host:port` or `http://host:port`), sending and
    /// accepting messages up to `max_message_bytes`. Connects on first use, and again after
    /// the runner restarts.
    pub fn connect(address: &str, max_message_bytes: usize) -> Result<Self, RemoteError> {
        let uri = if address.contains("://") {
            address.to_owned()
        } else {
            format!("http://{address}")
        };
        let endpoint = Endpoint::from_shared(uri).map_err(|e| RemoteError::Address {
            address: address.to_owned(),
            reason: e.to_string(),
        })?;
        let io = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("fn-runner-client")
            .enable_all()
            .build()?;
        let channel = {
            let _entered = io.enter();
            endpoint
                .connect_timeout(Duration::from_secs(10))
                .tcp_nodelay(true)
                .connect_lazy()
        };
        let client = FunctionEvaluatorClient::new(channel)
            .max_decoding_message_size(max_message_bytes)
            .max_encoding_message_size(max_message_bytes);
        Ok(RemoteRuntime {
            address: address.to_owned(),
            client,
            io: Some(io),
        })
    }

    /// The runner's address as configured.
    pub fn address(&self) -> &str {
        &self.address
    }

    async fn call(
        mut client: FunctionEvaluatorClient<Channel>,
        request: tonic::Request<EvaluateFunctionRequest>,
    ) -> Result<crate::evaluator::EvaluateFunctionResponse, tonic::Status> {
        client
            .evaluate_function(request)
            .await
            .map(tonic::Response::into_inner)
    }
}

impl FunctionRuntime for RemoteRuntime {
    fn handles(&self, function: &FunctionRef) -> bool {
        matches!(function, FunctionRef::Image(_))
    }

    fn run(
        &self,
        function: &FunctionRef,
        input: ResourceList,
        options: &RunOptions,
    ) -> Result<FunctionOutput, RuntimeError> {
        let image = match function {
            FunctionRef::Image(image) => image.clone(),
            FunctionRef::Exec(_) => {
                return Err(RuntimeError::NotFound(format!(
                    "the function runner at {} runs images only",
                    self.address
                )));
            }
        };
        let budget = &options.budget;
        // The call's deadline: the function timeout, or less when the render has less left.
        let timeout = budget
            .remaining()
            .map_or(options.timeout, |left| left.min(options.timeout));
        let mut request = tonic::Request::new(EvaluateFunctionRequest {
            resource_list: input.to_yaml().into_bytes(),
            image: image.clone(),
            tag: String::new(),
        });
        request.set_timeout(timeout);
        let client = self.client.clone();
        let started = std::time::Instant::now();
        // Spawned and waited for over a channel rather than `block_on`: the caller may be any
        // thread, including one of another runtime, where `block_on` would panic.
        let (done, outcome) = std::sync::mpsc::sync_channel(1);
        let Some(io) = self.io.as_ref() else {
            return Err(RuntimeError::Start {
                function: image,
                reason: "the function runner client is shut down".into(),
            });
        };
        let call = io.spawn(async move {
            let _ = done.send(Self::call(client, request).await);
        });
        // A little grace past the deadline for the runner's own answer; then give up.
        let result = match wait_within(&outcome, budget, started + timeout + ANSWER_GRACE) {
            Waited::Done(result) => result,
            waited => {
                // Dropping the call resets the stream: the runner stops the function.
                call.abort();
                match waited {
                    Waited::Stopped(reason) => {
                        return Err(RuntimeError::Budget {
                            function: image,
                            reason,
                        });
                    }
                    Waited::TimedOut => Err(tonic::Status::deadline_exceeded(
                        "no answer from the function runner",
                    )),
                    _ => Err(tonic::Status::unavailable(
                        "the function runner call stopped",
                    )),
                }
            }
        };
        match result {
            Ok(response) => {
                let text = String::from_utf8_lossy(&response.resource_list);
                let list = ResourceList::from_yaml(&text).map_err(|e| RuntimeError::BadOutput {
                    function: image.clone(),
                    reason: e.to_string(),
                })?;
                Ok(FunctionOutput {
                    list,
                    exit_code: 0,
                    stderr: String::from_utf8_lossy(&response.log).into_owned(),
                })
            }
            Err(status) => from_status(
                &image,
                &self.address,
                timeout,
                started.elapsed(),
                budget,
                status,
            ),
        }
    }
}

/// Turns a runner's error into the step failure an in-process run would give: a function
/// that ran and failed keeps its results (when the runner is ours), the rest are errors.
fn from_status(
    image: &str,
    address: &str,
    timeout: Duration,
    elapsed: Duration,
    budget: &kpt::runtime::Budget,
    status: tonic::Status,
) -> Result<FunctionOutput, RuntimeError> {
    let message = status.message().to_owned();
    // Runners report an expired deadline differently (Go: DeadlineExceeded; tonic: Cancelled
    // "Timeout expired"), so the time spent decides.
    let timed_out = status.code() == Code::DeadlineExceeded || elapsed >= timeout;
    match status.code() {
        Code::NotFound => Err(RuntimeError::NotFound(message)),
        _ if timed_out => match budget.check() {
            Err(reason) => Err(RuntimeError::Budget {
                function: image.to_owned(),
                reason,
            }),
            Ok(()) => Err(RuntimeError::Timeout {
                function: image.to_owned(),
                seconds: timeout.as_secs(),
            }),
        },
        // A function that ran and failed. Porch's runner sends only the message.
        Code::Internal => {
            let exit_code = status
                .metadata()
                .get(wire::EXIT_CODE_TRAILER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<i32>().ok())
                .unwrap_or(1);
            let list = status
                .metadata()
                .get_bin(wire::RESOURCE_LIST_TRAILER)
                .and_then(|v| v.to_bytes().ok())
                .and_then(|b| ResourceList::from_yaml(&String::from_utf8_lossy(&b)).ok())
                .unwrap_or_default();
            Ok(FunctionOutput {
                list,
                exit_code: if exit_code == 0 { 1 } else { exit_code },
                stderr: message,
            })
        }
        Code::Unavailable => Err(RuntimeError::Start {
            function: image.to_owned(),
            reason: format!("function runner {address} is unavailable: {message}"),
        }),
        code => Err(RuntimeError::Start {
            function: image.to_owned(),
            reason: format!("function runner {address} answered {code:?}: {message}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kpt::runtime::Budget;
    use tonic::metadata::{BinaryMetadataValue, MetadataValue};

    const SECOND: Duration = Duration::from_secs(1);

    fn map(status: tonic::Status, elapsed: Duration) -> Result<FunctionOutput, RuntimeError> {
        from_status(
            "img",
            "runner:9445",
            Duration::from_secs(5),
            elapsed,
            &Budget::default(),
            status,
        )
    }

    #[test]
    fn not_found_stays_not_found() {
        let r = map(tonic::Status::not_found("no runtime for img"), SECOND);
        assert!(matches!(r, Err(RuntimeError::NotFound(m)) if m == "no runtime for img"));
    }

    #[test]
    fn a_failure_from_our_runner_keeps_its_exit_code_and_results() {
        let mut status = tonic::Status::internal("Failed to execute function \"img\": boom");
        status
            .metadata_mut()
            .insert(wire::EXIT_CODE_TRAILER, MetadataValue::from_static("3"));
        status.metadata_mut().insert_bin(
            wire::RESOURCE_LIST_TRAILER,
            BinaryMetadataValue::from_bytes(
                b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nresults:\n- message: bad thing\n  severity: error\n",
            ),
        );
        let out = map(status, SECOND).expect("a failed run, not an error");
        assert_eq!(out.exit_code, 3);
        assert_eq!(out.list.results.len(), 1);
        assert_eq!(out.list.results[0].message, "bad thing");
        assert!(out.stderr.contains("boom"), "{}", out.stderr);
    }

    #[test]
    fn a_failure_from_porchs_runner_is_a_failed_run_with_its_message() {
        let out =
            map(tonic::Status::internal("func failed: exit 1"), SECOND).expect("a failed run");
        assert_eq!(out.exit_code, 1);
        assert!(out.list.results.is_empty());
        assert_eq!(out.stderr, "func failed: exit 1");
    }

    #[test]
    fn a_call_past_its_deadline_is_a_timeout_whatever_the_code() {
        for status in [
            tonic::Status::deadline_exceeded("late"),
            tonic::Status::cancelled("Timeout expired"),
        ] {
            let r = map(status, Duration::from_secs(6));
            assert!(
                matches!(r, Err(RuntimeError::Timeout { seconds: 5, .. })),
                "{r:?}"
            );
        }
    }

    #[test]
    fn an_unreachable_runner_is_named() {
        let r = map(tonic::Status::unavailable("connection refused"), SECOND);
        let Err(e) = r else { panic!("an error") };
        assert!(e.to_string().contains("runner:9445"), "{e}");
    }

    #[test]
    fn addresses_without_a_scheme_get_http() {
        let rt = RemoteRuntime::connect("127.0.0.1:1", 1024).expect("lazy connect");
        assert_eq!(rt.address(), "127.0.0.1:1");
        assert!(rt.handles(&FunctionRef::Image("x".into())));
        assert!(!rt.handles(&FunctionRef::Exec("x".into())));
        let err = RemoteRuntime::connect("http://bad host", 1024).expect_err("invalid");
        assert_eq!(err.kind(), "invalid-address");
    }
}
