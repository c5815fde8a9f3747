//! `rpkg propose | approve | reject | propose-delete | del`: lifecycle transitions on one
//! or more package revisions. Each name is reported as it is handled (`<name> proposed`
//! on stdout, `<name> failed (<why>)` on stderr) and failures end in one `errors:` summary.
//!
//! Readiness gates are checked here before propose and approve because the server does
//! not check them. Decisions are taken on porch-api's typed `PackageRevision`; writes send
//! back the object as the server sent it with only the lifecycle changed, so a field this
//! client's types do not know (a newer server's) is never dropped.

use clap::Args;
use porch_api::PackageRevision;
use serde::Deserialize as _;
use serde_json::{Value, json};

use super::{check_namespace_flag, errors_summary, retry_on_conflict};
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
pub fn is_ready(pr: &PackageRevision) -> bool {
    let conditions = pr
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    pr.spec
        .readiness_gates
        .as_deref()
        .unwrap_or_default()
        .iter()
        .all(|g| {
            let wanted = g.condition_type.as_deref().unwrap_or_default();
            conditions
                .iter()
                .any(|c| c.type_ == wanted && c.status == "True")
        })
}

/// `spec.lifecycle`, defaulting to Draft as the server does for an empty value.
fn lifecycle_of(pr: &PackageRevision) -> &str {
    match pr.spec.lifecycle.as_deref() {
        None | Some("") => "Draft",
        Some(l) => l,
    }
}

fn not_ready() -> RemoteError {
    RemoteError::Failed("readiness conditions not met".into())
}

/// A package revision as the server sent it, and its typed reading.
struct Fetched {
    raw: Value,
    typed: PackageRevision,
}

fn with_lifecycle(mut raw: Value, lifecycle: &str) -> Value {
    raw["spec"]["lifecycle"] = json!(lifecycle);
    raw
}

/// Upstream's `UpdatePackageRevisionApproval`: the transitions the approval subresource
/// takes; a revision already in the target state is left alone.
async fn update_approval(remote: &Remote, pr: Fetched, new: &str) -> Result<(), RemoteError> {
    let old = lifecycle_of(&pr.typed).to_string();
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
    let name = pr.typed.metadata.name.clone().unwrap_or_default();
    let body = with_lifecycle(pr.raw, new);
    PACKAGE_REVISIONS
        .replace_subresource(&remote.client, &remote.namespace, &name, "approval", &body)
        .await?;
    Ok(())
}

async fn get(remote: &Remote, name: &str) -> Result<Fetched, RemoteError> {
    let raw = PACKAGE_REVISIONS
        .get(&remote.client, &remote.namespace, name)
        .await?;
    let typed = decode(&raw, name)?;
    Ok(Fetched { raw, typed })
}

fn decode(raw: &Value, name: &str) -> Result<PackageRevision, RemoteError> {
    PackageRevision::deserialize(raw).map_err(|e| {
        RemoteError::Failed(format!(
            "the server's package revision {name} does not decode: {e}"
        ))
    })
}

async fn update(remote: &Remote, name: &str, body: Value) -> Result<(), RemoteError> {
    PACKAGE_REVISIONS
        .replace(&remote.client, &remote.namespace, name, &body)
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
    check_namespace_flag(conn)?;
    let remote = conn.connect().await?;
    let mut outcomes = Outcomes::default();
    for name in &a.names {
        let r = retry_on_conflict(|| async {
            let pr = get(&remote, name).await?;
            if !is_ready(&pr.typed) {
                return Err(not_ready());
            }
            match lifecycle_of(&pr.typed) {
                "Draft" => {
                    update(&remote, name, with_lifecycle(pr.raw, "Proposed")).await?;
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
    check_namespace_flag(conn)?;
    let remote = conn.connect().await?;
    let mut outcomes = Outcomes::default();
    for name in &a.names {
        // Approval merges and pushes to git: the one call here that can take a while.
        let spinner = Spinner::start(format!("approving {name}"));
        let r = retry_on_conflict(|| async {
            let pr = get(&remote, name).await?;
            if !is_ready(&pr.typed) {
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
    check_namespace_flag(conn)?;
    let remote = conn.connect().await?;
    let mut outcomes = Outcomes::default();
    for name in &a.names {
        let r = retry_on_conflict(|| async {
            let pr = get(&remote, name).await?;
            match lifecycle_of(&pr.typed) {
                "Proposed" => {
                    update_approval(&remote, pr, "Draft").await?;
                    Ok("approval")
                }
                "DeletionProposed" => {
                    // As upstream, through the approval subresource (an approver's right).
                    update_approval(&remote, pr, "Published").await?;
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
    check_namespace_flag(conn)?;
    let remote = conn.connect().await?;
    let mut outcomes = Outcomes::default();
    for name in &a.names {
        // Upstream's RunForEachPackage: a revision that cannot be read is reported and the
        // next name is tried.
        let r = retry_on_conflict(|| async {
            let pr = get(&remote, name).await?;
            match lifecycle_of(&pr.typed) {
                "Published" => {
                    update(&remote, name, with_lifecycle(pr.raw, "DeletionProposed")).await?;
                    remote::out(&format!("{name} proposed for deletion\n"))
                }
                "DeletionProposed" => {
                    eprintln!("{name} is already proposed for deletion");
                    Ok(())
                }
                _ => Err(RemoteError::Failed(format!(
                    "can only propose published packages for deletion; package {name} is not published"
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

pub async fn delete(conn: &ConnectionFlags, a: NamesArgs) -> Result<(), RemoteError> {
    check_namespace_flag(conn)?;
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

    fn pr(v: Value) -> PackageRevision {
        decode(&raw(v), "r.p.ws").expect("decodes")
    }

    fn raw(mut v: Value) -> Value {
        v["apiVersion"] = json!("porch.kpt.dev/v1alpha1");
        v["kind"] = json!("PackageRevision");
        v["metadata"] = json!({"name": "r.p.ws"});
        v
    }

    #[test]
    fn readiness_gates() {
        assert!(is_ready(&pr(json!({"spec": {}}))));
        let gated = |status: &str| {
            pr(
                json!({"spec": {"readinessGates": [{"conditionType": "nephio.org.Specializer.specialize"}]},
                   "status": {"conditions": [{"type": "nephio.org.Specializer.specialize", "status": status}]}}),
            )
        };
        assert!(is_ready(&gated("True")));
        assert!(!is_ready(&gated("False")));
        assert!(!is_ready(&pr(
            json!({"spec": {"readinessGates": [{"conditionType": "x"}]}})
        )));
    }

    #[test]
    fn lifecycle_defaults_to_draft() {
        assert_eq!(lifecycle_of(&pr(json!({"spec": {}}))), "Draft");
        assert_eq!(
            lifecycle_of(&pr(json!({"spec": {"lifecycle": "Proposed"}}))),
            "Proposed"
        );
    }

    #[test]
    fn writes_keep_fields_the_types_do_not_know() {
        let v = raw(json!({"spec": {"lifecycle": "Draft", "somethingNew": 1}}));
        assert_eq!(
            lifecycle_of(&decode(&v, "r.p.ws").expect("decodes")),
            "Draft"
        );
        let body = with_lifecycle(v, "Proposed");
        assert_eq!(body["spec"]["lifecycle"], "Proposed");
        assert_eq!(body["spec"]["somethingNew"], 1);
    }
}
