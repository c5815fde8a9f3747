//! `rpkg propose | approve | reject | propose-delete | del`: lifecycle transitions on one
//! or more package revisions. Each name is reported as it is handled (`<name> proposed`
//! on stdout, `<name> failed (<why>)` on stderr) and failures end in one `errors:` summary.
//!
//! Readiness gates are checked here before propose and approve because the server does
//! not check them.

use clap::Args;
use serde_json::{Value, json};

use super::{errors_summary, lifecycle_of, retry_on_conflict};
use crate::remote::api::PACKAGE_REVISIONS;
use crate::remote::connection::Remote;
use crate::remote::spinner::Spinner;
use crate::remote::{self, ConnectionFlags, RemoteError};

/// Package revision names.
#[derive(Debug, Args)]
pub struct NamesArgs {
    /// The package revisions to act on.
    #[arg(value_name = "PACKAGE_REV_NAME")]
    pub names: Vec<String>,
}

/// Every `spec.readinessGates[].conditionType` has a `status.conditions` entry with status
/// `True` (upstream's `PackageRevisionIsReady`).
pub fn is_ready(pr: &Value) -> bool {
    let empty = Vec::new();
    let gates = pr
        .pointer("/spec/readinessGates")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let conditions = pr
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    gates.iter().all(|g| {
        let wanted = g
            .get("conditionType")
            .and_then(Value::as_str)
            .unwrap_or_default();
        conditions.iter().any(|c| {
            c.get("type").and_then(Value::as_str) == Some(wanted)
                && c.get("status").and_then(Value::as_str) == Some("True")
        })
    })
}

fn not_ready() -> RemoteError {
    RemoteError::Failed("readiness conditions not met".into())
}

fn with_lifecycle(mut pr: Value, lifecycle: &str) -> Value {
    pr["spec"]["lifecycle"] = json!(lifecycle);
    pr
}

/// Upstream's `UpdatePackageRevisionApproval`: the transitions the approval subresource
/// takes; a revision already in the target state is left alone.
async fn update_approval(remote: &Remote, pr: Value, new: &str) -> Result<(), RemoteError> {
    let old = lifecycle_of(&pr).to_string();
    let allowed = match old.as_str() {
        "Proposed" => new == "Published" || new == "Draft",
        "DeletionProposed" => new == "Published",
        _ if old == new => return Ok(()),
        _ => false,
    };
    if !allowed {
        return Err(RemoteError::Failed(format!(
            "cannot change approval from {old} to {new}"
        )));
    }
    let name = super::name_of(&pr).to_string();
    let body = with_lifecycle(pr, new);
    PACKAGE_REVISIONS
        .replace_subresource(&remote.client, &remote.namespace, &name, "approval", &body)
        .await?;
    Ok(())
}

async fn get(remote: &Remote, name: &str) -> Result<Value, RemoteError> {
    PACKAGE_REVISIONS
        .get(&remote.client, &remote.namespace, name)
        .await
}

async fn update(remote: &Remote, name: &str, body: &Value) -> Result<(), RemoteError> {
    PACKAGE_REVISIONS
        .replace(&remote.client, &remote.namespace, name, body)
        .await?;
    Ok(())
}

/// Collects per-name failures into the final summary.
#[derive(Default)]
struct Outcomes {
    messages: Vec<String>,
}

impl Outcomes {
    fn failed(&mut self, name: &str, err: &RemoteError) {
        eprintln!("{name} failed ({err})");
        self.messages.push(err.to_string());
    }

    fn finish(self) -> Result<(), RemoteError> {
        if self.messages.is_empty() {
            Ok(())
        } else {
            Err(errors_summary(&self.messages))
        }
    }
}

pub async fn propose(conn: &ConnectionFlags, a: NamesArgs) -> Result<(), RemoteError> {
    let remote = conn.connect().await?;
    let mut outcomes = Outcomes::default();
    for name in &a.names {
        let r = retry_on_conflict(|| async {
            let pr = get(&remote, name).await?;
            if !is_ready(&pr) {
                return Err(not_ready());
            }
            match lifecycle_of(&pr) {
                "Draft" => {
                    update(&remote, name, &with_lifecycle(pr, "Proposed")).await?;
                    remote::out(&format!("{name} proposed\n"))
                }
                "Proposed" => {
                    eprintln!("{name} is already proposed");
                    Ok(())
                }
                other => Err(RemoteError::Failed(format!(
                    "cannot propose {other} package"
                ))),
            }
        })
        .await;
        if let Err(e) = r {
            outcomes.failed(name, &e);
        }
    }
    outcomes.finish()
}

pub async fn approve(conn: &ConnectionFlags, a: NamesArgs) -> Result<(), RemoteError> {
    let remote = conn.connect().await?;
    let mut outcomes = Outcomes::default();
    for name in &a.names {
        // Approval merges and pushes to git: the one call here that can take a while.
        let spinner = Spinner::start(format!("approving {name}"));
        let r = retry_on_conflict(|| async {
            let pr = get(&remote, name).await?;
            if !is_ready(&pr) {
                return Err(not_ready());
            }
            update_approval(&remote, pr, "Published").await
        })
        .await;
        drop(spinner);
        match r {
            Ok(()) => remote::out(&format!("{name} approved\n"))?,
            Err(e) => outcomes.failed(name, &e),
        }
    }
    outcomes.finish()
}

pub async fn reject(conn: &ConnectionFlags, a: NamesArgs) -> Result<(), RemoteError> {
    if a.names.is_empty() {
        return Err(RemoteError::Usage(
            "PACKAGE_REVISION is a required positional argument".into(),
        ));
    }
    let remote = conn.connect().await?;
    let mut outcomes = Outcomes::default();
    for name in &a.names {
        let r = retry_on_conflict(|| async {
            let pr = get(&remote, name).await?;
            match lifecycle_of(&pr) {
                "Proposed" => {
                    update_approval(&remote, pr, "Draft").await?;
                    Ok("approval")
                }
                "DeletionProposed" => {
                    update(&remote, name, &with_lifecycle(pr, "Published")).await?;
                    Ok("deletion")
                }
                other => Err(RemoteError::Failed(format!(
                    "cannot reject {name} with lifecycle '{other}'"
                ))),
            }
        })
        .await;
        match r {
            Ok(what) => remote::out(&format!("{name} no longer proposed for {what}\n"))?,
            Err(e) => outcomes.failed(name, &e),
        }
    }
    outcomes.finish()
}

pub async fn propose_delete(conn: &ConnectionFlags, a: NamesArgs) -> Result<(), RemoteError> {
    let remote = conn.connect().await?;
    let mut outcomes = Outcomes::default();
    for name in &a.names {
        // Upstream stops at the first revision it cannot read.
        let pr = get(&remote, name).await?;
        match lifecycle_of(&pr) {
            "Published" => {}
            "DeletionProposed" => {
                eprintln!("{name} is already proposed for deletion");
                continue;
            }
            _ => {
                outcomes.failed(
                    name,
                    &RemoteError::Failed(format!(
                        "can only propose published packages for deletion; package {name} is not published"
                    )),
                );
                continue;
            }
        }
        match update(&remote, name, &with_lifecycle(pr, "DeletionProposed")).await {
            Ok(()) => remote::out(&format!("{name} proposed for deletion\n"))?,
            Err(e) => outcomes.failed(name, &e),
        }
    }
    outcomes.finish()
}

pub async fn delete(conn: &ConnectionFlags, a: NamesArgs) -> Result<(), RemoteError> {
    let remote = conn.connect().await?;
    let mut outcomes = Outcomes::default();
    for name in &a.names {
        match PACKAGE_REVISIONS
            .delete(&remote.client, &remote.namespace, name)
            .await
        {
            Ok(_) => remote::out(&format!("{name} deleted\n"))?,
            Err(e) => outcomes.failed(name, &e),
        }
    }
    outcomes.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_gates() {
        assert!(is_ready(&json!({"spec": {}})));
        let gated = |status: &str| {
            json!({"spec": {"readinessGates": [{"conditionType": "nephio.org.Specializer.specialize"}]},
                   "status": {"conditions": [{"type": "nephio.org.Specializer.specialize", "status": status}]}})
        };
        assert!(is_ready(&gated("True")));
        assert!(!is_ready(&gated("False")));
        assert!(!is_ready(
            &json!({"spec": {"readinessGates": [{"conditionType": "x"}]}})
        ));
    }

    #[test]
    fn lifecycle_is_set() {
        let pr = with_lifecycle(json!({"spec": {"lifecycle": "Draft"}}), "Proposed");
        assert_eq!(pr["spec"]["lifecycle"], "Proposed");
    }
}
