//! Readings of porch-api's typed objects that the rpkg commands decide on, and decoding of
//! what the server sends into them.
//!
//! Decisions are taken on types, never on JSON paths; an object that does not decode is a
//! clear error naming it, not a silent empty field.

use porch_api::{PackageRevision, Repository, Task};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::remote::RemoteError;

/// The readings of a PackageRevision the commands need.
pub trait RevisionExt {
    fn name(&self) -> &str;
    /// `spec.lifecycle`, defaulting to Draft as the server does for an empty value.
    fn lifecycle(&self) -> &str;
    /// `spec.revision` (0 when omitted, as for drafts).
    fn revision(&self) -> i64;
    fn repository(&self) -> &str;
    fn package(&self) -> &str;
    /// The creating task (the first), if any.
    fn first_task(&self) -> Option<&Task>;
    /// Published or DeletionProposed: a revision with a number.
    fn is_published(&self) -> bool {
        matches!(self.lifecycle(), "Published" | "DeletionProposed")
    }
}

impl RevisionExt for PackageRevision {
    fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    fn lifecycle(&self) -> &str {
        match self.spec.lifecycle.as_deref() {
            None | Some("") => "Draft",
            Some(l) => l,
        }
    }

    fn revision(&self) -> i64 {
        self.spec.revision.unwrap_or(0)
    }

    fn repository(&self) -> &str {
        self.spec.repository.as_deref().unwrap_or_default()
    }

    fn package(&self) -> &str {
        self.spec.package_name.as_deref().unwrap_or_default()
    }

    fn first_task(&self) -> Option<&Task> {
        self.spec.tasks.as_deref().and_then(<[Task]>::first)
    }
}

/// One object as the server sent it.
pub fn decode<T: DeserializeOwned>(raw: &Value, what: &str) -> Result<T, RemoteError> {
    T::deserialize(raw)
        .map_err(|e| RemoteError::Failed(format!("the server's {what} does not decode: {e}")))
}

/// The `items` of a list as the server sent it.
pub fn decode_items<T: DeserializeOwned>(list: &Value, what: &str) -> Result<Vec<T>, RemoteError> {
    list.get("items")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|item| decode(item, what))
                .collect::<Result<Vec<T>, _>>()
        })
        .unwrap_or_else(|| Ok(Vec::new()))
}

/// `metadata.name` of a Repository.
pub fn repository_name(r: &Repository) -> &str {
    r.metadata.name.as_deref().unwrap_or_default()
}

/// The typed object as JSON for a request body.
pub fn to_body<T: serde::Serialize>(obj: &T) -> Result<Value, RemoteError> {
    serde_json::to_value(obj)
        .map_err(|e| RemoteError::Failed(format!("cannot encode the request: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn readings_default_as_the_server_does() {
        let pr: PackageRevision = decode(
            &json!({"apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision",
                    "metadata": {"name": "r.p.w"}, "spec": {}}),
            "package revision",
        )
        .expect("decodes");
        assert_eq!(pr.name(), "r.p.w");
        assert_eq!(pr.lifecycle(), "Draft");
        assert_eq!(pr.revision(), 0);
        assert!(!pr.is_published());
        assert!(pr.first_task().is_none());
    }

    #[test]
    fn a_list_item_that_does_not_decode_is_an_error() {
        let list = json!({"items": [{"spec": {"revision": "one"}}]});
        let e = decode_items::<PackageRevision>(&list, "package revision").expect_err("refused");
        assert!(e.to_string().contains("does not decode"), "{e}");
        assert!(
            decode_items::<PackageRevision>(&json!({}), "x")
                .expect("none")
                .is_empty()
        );
    }
}
