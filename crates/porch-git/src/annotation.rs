//! The `kpt:{json}` commit annotation and Porch's commit messages (spec §11.3).

use porch_core::revision::Task;

/// One `kpt:` line of a commit message.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Annotation {
    /// Full package path from the repository root.
    #[serde(default, rename = "package", skip_serializing_if = "String::is_empty")]
    pub package_path: String,
    /// Workspace of the revision the commit belongs to.
    #[serde(
        default,
        rename = "workspaceName",
        skip_serializing_if = "String::is_empty"
    )]
    pub workspace_name: String,
    /// Revision number as a string (`"0"` for drafts, legacy `"v1"`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub revision: String,
    /// Task that caused the commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Box<Task>>,
}

/// Parses every line starting with `kpt:` (after trimming); invalid JSON lines are skipped
/// with a debug log, as Porch only warns about them.
pub fn parse(message: &str) -> Vec<Annotation> {
    message
        .lines()
        .filter_map(|l| l.trim().strip_prefix("kpt:"))
        .filter_map(|json| match serde_json::from_str::<Annotation>(json) {
            Ok(a) => Some(a),
            Err(e) => {
                tracing::debug!(error = %e, "ignoring invalid kpt annotation");
                None
            }
        })
        .collect()
}

/// Appends the annotation as Porch does: `message + "\n\nkpt:" + json + "\n"`.
pub fn annotate(message: &str, annotation: &Annotation) -> String {
    let json = serde_json::to_string(annotation).unwrap_or_else(|_| "{}".into());
    format!("{message}\n\nkpt:{json}\n")
}

/// First line of a draft commit by task type.
pub fn draft_message(task: Option<&Task>) -> String {
    let t = task.map(|t| t.task_type.as_str()).unwrap_or("");
    match t {
        "init" => "Creating new empty revision".into(),
        "clone" => "Creating new revision by cloning".into(),
        "edit" => "Creating new revision by copying previous revision".into(),
        "upgrade" => "Upgrading revision".into(),
        "render" => "Rendering package".into(),
        "" => "Intermediate commit".into(),
        other => format!("Intermediate commit: {other}"),
    }
}

/// A draft commit message: the task line plus the annotation (Porch adds an extra newline).
pub fn draft_commit_message(full_path: &str, workspace: &str, task: Option<&Task>) -> String {
    let ann = Annotation {
        package_path: full_path.into(),
        workspace_name: workspace.into(),
        revision: "0".into(),
        task: task.cloned().map(Box::new),
    };
    annotate(&format!("{}\n", draft_message(task)), &ann)
}

/// The approval merge commit message.
pub fn approval_commit_message(full_path: &str, workspace: &str, revision: i64) -> String {
    let ann = Annotation {
        package_path: full_path.into(),
        workspace_name: workspace.into(),
        revision: revision.to_string(),
        task: None,
    };
    annotate(
        &format!("Approving package revision {full_path}/{revision}"),
        &ann,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use porch_core::revision::{CloneTask, RevisionRef, UpstreamPackage};

    #[test]
    fn parses_legacy_and_invalid() {
        let msg = "Approve pkg/v1\n\nkpt:{\"package\":\"pkg\",\"revision\":\"v1\"}\nkpt:{invalid:annotation}\n";
        let a = parse(msg);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].package_path, "pkg");
        assert_eq!(a[0].revision, "v1");
    }

    #[test]
    fn approval_shape() {
        let m = approval_commit_message("dir/pkg", "ws", 3);
        assert_eq!(
            m,
            "Approving package revision dir/pkg/3\n\nkpt:{\"package\":\"dir/pkg\",\"workspaceName\":\"ws\",\"revision\":\"3\"}\n"
        );
    }

    #[test]
    fn task_wire_shape() {
        let t = Task {
            task_type: "clone".into(),
            clone: Some(CloneTask {
                upstream: UpstreamPackage {
                    upstream_ref: Some(RevisionRef {
                        name: "bp.basens.v1".into(),
                    }),
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        };
        let m = draft_commit_message("pkg", "ws", Some(&t));
        assert!(m.starts_with("Creating new revision by cloning\n\n\nkpt:"));
        assert!(m.contains(r#""task":{"type":"clone","clone":{"upstreamRef":{"upstreamRef":{"name":"bp.basens.v1"}}}}"#));
        assert_eq!(parse(&m)[0].task.as_deref(), Some(&t));
    }
}
