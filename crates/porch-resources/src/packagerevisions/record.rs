//! The Events of package revisions: what each lifecycle change and render failure reports
//! (reasons listed in docs/server.md, "Events"). Recording is fire-and-forget. The same
//! changes annotate the request's audit event (`porch.kpt.dev/packagerevision`,
//! `porch.kpt.dev/lifecycle`).

use porch_core::lifecycle::Lifecycle;
use porch_engine::{EngineError, PackageRevision};

use super::convert::GROUP;
use crate::events::{EventSink, EventType, ObjectRef};

const KIND: &str = "PackageRevision";

/// The reference of revision `name` in `namespace` (its uid is derived from both).
pub fn reference(namespace: &str, name: &str) -> ObjectRef {
    ObjectRef {
        api_version: format!("{GROUP}/v1alpha1"),
        kind: KIND.into(),
        namespace: namespace.into(),
        name: name.into(),
        uid: porch_core::revision::package_revision_uid(namespace, name).to_string(),
    }
}

fn of(pr: &PackageRevision) -> ObjectRef {
    reference(&pr.namespace, pr.name().as_str())
}

fn by(user: &str) -> String {
    if user.is_empty() {
        String::new()
    } else {
        format!(" by {user}")
    }
}

/// Reason, action and message of a lifecycle change to `pr` (its new state).
pub fn lifecycle_change(
    from: Lifecycle,
    pr: &PackageRevision,
    user: &str,
) -> (&'static str, &'static str, String) {
    let by = by(user);
    match (from, pr.lifecycle) {
        (_, Lifecycle::Proposed) => ("Proposed", "Propose", format!("Proposed{by}")),
        (Lifecycle::Draft | Lifecycle::Proposed, Lifecycle::Published) => (
            "Approved",
            "Approve",
            format!("Approved{by}: published as revision {}", pr.key.revision),
        ),
        (Lifecycle::Proposed, Lifecycle::Draft) => {
            ("Rejected", "Reject", format!("Proposal rejected{by}"))
        }
        (_, Lifecycle::DeletionProposed) => (
            "DeletionProposed",
            "ProposeDelete",
            format!("Deletion proposed{by}"),
        ),
        (Lifecycle::DeletionProposed, Lifecycle::Published) => (
            "DeletionRejected",
            "RejectDelete",
            format!("Deletion proposal rejected{by}"),
        ),
        (from, to) => (
            "LifecycleChanged",
            "Update",
            format!("Lifecycle changed from {from} to {to}{by}"),
        ),
    }
}

/// Records a lifecycle change of `pr` from `from`.
/// Names the revision and its lifecycle change on the audit event of this request.
fn audit(pr: &PackageRevision, lifecycle: String) {
    porch_apiserver::audit::annotate("porch.kpt.dev/packagerevision", pr.name().as_str());
    porch_apiserver::audit::annotate("porch.kpt.dev/lifecycle", lifecycle);
}

pub fn changed(sink: &dyn EventSink, from: Lifecycle, pr: &PackageRevision, user: &str) {
    audit(pr, format!("{from}->{}", pr.lifecycle));
    let (reason, action, message) = lifecycle_change(from, pr, user);
    sink.record(&of(pr), EventType::Normal, reason, action, &message);
}

pub fn created(sink: &dyn EventSink, pr: &PackageRevision, user: &str) {
    audit(pr, format!("->{}", pr.lifecycle));
    let message = format!(
        "Created {} in repository {}{}",
        pr.lifecycle,
        pr.key.repository.as_str(),
        by(user)
    );
    sink.record(&of(pr), EventType::Normal, "Created", "Create", &message);
}

pub fn deleted(sink: &dyn EventSink, pr: &PackageRevision, user: &str) {
    audit(pr, format!("{}->Deleted", pr.lifecycle));
    let message = format!("Deleted{}", by(user));
    sink.record(&of(pr), EventType::Normal, "Deleted", "Delete", &message);
}

/// Records a render failure when `e` is one (the render error names the failing function's
/// image); other errors are the client's answer only.
pub fn render_failed(sink: &dyn EventSink, namespace: &str, name: &str, e: &EngineError) {
    if let EngineError::Render {
        message, pushed, ..
    } = e
    {
        let outcome = if *pushed {
            "pushed despite the failure"
        } else {
            "not saved"
        };
        sink.record(
            &reference(namespace, name),
            EventType::Warning,
            "RenderFailed",
            "Render",
            &format!("Rendering failed ({outcome}): {message}"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::revision;
    use super::*;

    #[test]
    fn every_transition_has_its_reason() {
        use Lifecycle::*;
        let cases = [
            (Draft, Proposed, 0, "Proposed", "Proposed by alice"),
            (
                Proposed,
                Published,
                3,
                "Approved",
                "Approved by alice: published as revision 3",
            ),
            (Proposed, Draft, 0, "Rejected", "Proposal rejected by alice"),
            (
                Published,
                DeletionProposed,
                3,
                "DeletionProposed",
                "Deletion proposed by alice",
            ),
            (
                DeletionProposed,
                Published,
                3,
                "DeletionRejected",
                "Deletion proposal rejected by alice",
            ),
        ];
        for (from, to, number, reason, message) in cases {
            let (r, _, m) = lifecycle_change(from, &revision(to, number), "alice");
            assert_eq!((r, m.as_str()), (reason, message), "{from} -> {to}");
        }
        let (_, _, anonymous) = lifecycle_change(Draft, &revision(Proposed, 0), "");
        assert_eq!(anonymous, "Proposed");
    }

    #[test]
    fn the_reference_carries_the_uid_clients_see() {
        let r = reference("ns", "repo.pkg.ws");
        assert_eq!(r.api_version, "porch.kpt.dev/v1alpha1");
        assert_eq!(
            r.uid,
            porch_core::revision::package_revision_uid("ns", "repo.pkg.ws").to_string()
        );
    }
}
