//! Package-level access checks RBAC cannot express on the request itself: a new revision made
//! from another one reads it, so its author must be allowed to read that revision (and the
//! Secret a git upstream names), whatever the create itself is allowed.
//!
//! Without this a user who may create revisions but not read a package could copy it into a
//! draft of their own, or use an administrator's Secret to clone a private repository.

use porch_apiserver::{ApiError, RequestContext};
use serde_json::Value;

const REVISIONS: (&str, &str) = ("porch.kpt.dev", "packagerevisions");
const SECRETS: (&str, &str) = ("", "secrets");

/// What the tasks of `obj` read: `(group and resource, name, why)`.
fn reads(obj: &Value) -> Vec<((&'static str, &'static str), String, &'static str)> {
    let mut out = Vec::new();
    let tasks = obj
        .pointer("/spec/tasks")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for task in tasks {
        let name = |p: &str| {
            task.pointer(p)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let mut read = |what, pointer: &str, why| {
            if let Some(n) = name(pointer) {
                out.push((what, n, why));
            }
        };
        read(
            REVISIONS,
            "/clone/upstreamRef/upstreamRef/name",
            "a clone reads its upstream",
        );
        read(
            SECRETS,
            "/clone/upstreamRef/git/secretRef/name",
            "a clone reads the credentials of its git upstream",
        );
        read(
            REVISIONS,
            "/update/upstreamRef/upstreamRef/name",
            "an update reads its new upstream",
        );
        read(
            SECRETS,
            "/update/upstreamRef/git/secretRef/name",
            "an update reads the credentials of its git upstream",
        );
        read(REVISIONS, "/edit/sourceRef/name", "a copy reads its source");
        for field in [
            "oldUpstreamRef",
            "newUpstreamRef",
            "localPackageRevisionRef",
        ] {
            read(
                REVISIONS,
                &format!("/upgrade/{field}/name"),
                "an upgrade reads the revisions it merges",
            );
        }
    }
    out
}

/// Refuses the creation of `obj` in `namespace` when its task reads what the requester may
/// not read.
pub async fn check_create(
    ctx: &RequestContext,
    namespace: &str,
    obj: &Value,
) -> Result<(), ApiError> {
    for (what, name, why) in reads(obj) {
        ctx.require("get", what, namespace, &name, why).await?;
    }
    Ok(())
}

/// Refuses an update of `old` to `new` when `new`'s tasks read what `old`'s did not and the
/// requester may not read it (a Draft moved to another upstream).
pub async fn check_update(
    ctx: &RequestContext,
    namespace: &str,
    old: &Value,
    new: &Value,
) -> Result<(), ApiError> {
    let before = reads(old);
    for (what, name, why) in reads(new) {
        if !before.iter().any(|(w, n, _)| *w == what && *n == name) {
            ctx.require("get", what, namespace, &name, why).await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_task_names_what_it_reads() {
        let clone = json!({"spec": {"tasks": [{"type": "clone", "clone": {"upstreamRef": {
            "upstreamRef": {"name": "bp.app.v1"}}}}]}});
        assert_eq!(reads(&clone)[0].1, "bp.app.v1");
        let git = json!({"spec": {"tasks": [{"type": "clone", "clone": {"upstreamRef": {
            "type": "git", "git": {"repo": "r", "secretRef": {"name": "creds"}}}}}]}});
        assert_eq!(
            reads(&git)[0],
            (
                SECRETS,
                "creds".into(),
                "a clone reads the credentials of its git upstream"
            )
        );
        let no_secret = json!({"spec": {"tasks": [{"type": "clone", "clone": {"upstreamRef": {
            "type": "git", "git": {"repo": "r", "secretRef": {"name": ""}}}}}]}});
        assert!(reads(&no_secret).is_empty());
        let upgrade = json!({"spec": {"tasks": [{"type": "upgrade", "upgrade": {
            "oldUpstreamRef": {"name": "a"}, "newUpstreamRef": {"name": "b"},
            "localPackageRevisionRef": {"name": "c"}}}]}});
        let names: Vec<String> = reads(&upgrade).into_iter().map(|r| r.1).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert!(reads(&json!({"spec": {"tasks": [{"type": "init"}]}})).is_empty());
    }

    #[test]
    fn every_task_is_read_an_appended_update_too() {
        let moved = json!({"spec": {"tasks": [
            {"type": "clone", "clone": {"upstreamRef": {"upstreamRef": {"name": "bp.a.v1"}}}},
            {"type": "update", "update": {"upstreamRef": {"upstreamRef": {"name": "bp.a.v2"}}}},
            {"type": "update", "update": {"upstreamRef": {"type": "git", "git": {
                "repo": "r", "secretRef": {"name": "creds"}}}}}]}});
        let got: Vec<(&str, String)> = reads(&moved).into_iter().map(|r| (r.0.1, r.1)).collect();
        assert_eq!(
            got,
            [
                ("packagerevisions", "bp.a.v1".to_string()),
                ("packagerevisions", "bp.a.v2".to_string()),
                ("secrets", "creds".to_string()),
            ]
        );
    }

    #[tokio::test]
    async fn without_an_authorizer_everything_is_allowed() {
        let clone = json!({"spec": {"tasks": [{"type": "clone", "clone": {"upstreamRef": {
            "upstreamRef": {"name": "bp.app.v1"}}}}]}});
        assert!(
            check_create(&RequestContext::default(), "ns", &clone)
                .await
                .is_ok()
        );
    }
}
