//! What a revision's Kptfile says that the API serves (`spec.packageMetadata`,
//! `spec.readinessGates`, `status.conditions`), read once when the revision enters the
//! index, and the Kptfile edits that write those fields back (spec §2.1, §8.3, §9.1).
//!
//! Edits work on the YAML tree, not on a decoded struct, so comments and the order of
//! everything else in the Kptfile survive.

use kpt::kptfile::KPTFILE;
use kpt::yaml::{self, Node};
use porch_core::repository::PackageFiles;

use crate::error::{EngineError, Result};
use crate::model::{Condition, PackageMetadata};

/// The served Kptfile fields of one revision.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct KptInfo {
    pub package_metadata: PackageMetadata,
    pub readiness_gates: Vec<String>,
    pub conditions: Vec<Condition>,
}

impl KptInfo {
    /// From a package's files; empty when there is no readable Kptfile (a broken Kptfile
    /// must not hide the revision).
    pub(crate) fn from_files(files: &PackageFiles) -> Self {
        files
            .get(KPTFILE)
            .map(|b| Self::from_kptfile(b))
            .unwrap_or_default()
    }

    /// From Kptfile bytes.
    pub(crate) fn from_kptfile(bytes: &[u8]) -> Self {
        let Ok(root) = yaml::parse_one(&String::from_utf8_lossy(bytes)) else {
            return KptInfo::default();
        };
        let string_map = |path: &[&str]| {
            root.get_path(path)
                .map(|m| {
                    m.entries()
                        .iter()
                        .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), scalar(v))))
                        .collect()
                })
                .unwrap_or_default()
        };
        let package_metadata = PackageMetadata {
            labels: string_map(&["metadata", "labels"]),
            annotations: string_map(&["metadata", "annotations"]),
        };
        let readiness_gates = root
            .get_path(&["info", "readinessGates"])
            .map(|s| {
                s.items()
                    .iter()
                    .filter_map(|g| g.get("conditionType").and_then(Node::as_str))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let conditions = root
            .get_path(&["status", "conditions"])
            .map(|s| s.items().iter().map(condition_of).collect())
            .unwrap_or_default();
        KptInfo {
            package_metadata,
            readiness_gates,
            conditions,
        }
    }
}

fn scalar(n: &Node) -> String {
    n.as_str().unwrap_or_default().to_owned()
}

fn field(n: &Node, key: &str) -> String {
    n.get(key).map(scalar).unwrap_or_default()
}

fn condition_of(n: &Node) -> Condition {
    Condition {
        condition_type: field(n, "type"),
        status: field(n, "status"),
        reason: field(n, "reason"),
        message: field(n, "message"),
    }
}

/// A change to the Kptfile's served fields.
#[derive(Debug, Default)]
pub(crate) struct KptfileEdit<'a> {
    /// Labels/annotations: replace wholesale (`additive: false`) or add (`additive: true`).
    pub package_metadata: Option<&'a PackageMetadata>,
    /// Readiness gates: replace or add the missing ones.
    pub readiness_gates: Option<&'a [String]>,
    /// Conditions upserted by type.
    pub conditions: Option<&'a [Condition]>,
    /// Merge (create) instead of replace (update).
    pub additive: bool,
}

impl KptfileEdit<'_> {
    /// Is there anything to write?
    pub(crate) fn changes_something(&self) -> bool {
        self.package_metadata.is_some()
            || self.readiness_gates.is_some()
            || self.conditions.is_some()
    }

    /// Applies the edit to the root Kptfile of `files`. Without a Kptfile an edit that
    /// changes something is an error (there is nowhere to keep the fields).
    pub(crate) fn apply(&self, files: &mut PackageFiles) -> Result<()> {
        if !self.changes_something() {
            return Ok(());
        }
        let Some(bytes) = files.get(KPTFILE) else {
            return Err(EngineError::Invalid(
                "package has no Kptfile to hold packageMetadata, readinessGates or conditions"
                    .into(),
            ));
        };
        let text = String::from_utf8_lossy(bytes).into_owned();
        let mut docs = yaml::parse_stream(&text)
            .map_err(|e| EngineError::Invalid(format!("Kptfile is not valid YAML: {e}")))?;
        let Some(root) = docs.first_mut().map(|d| &mut d.root) else {
            return Err(EngineError::Invalid("Kptfile is empty".into()));
        };
        if let Some(pm) = self.package_metadata {
            set_string_map(root, "labels", &pm.labels, self.additive);
            set_string_map(root, "annotations", &pm.annotations, self.additive);
        }
        if let Some(gates) = self.readiness_gates {
            set_gates(root, gates, self.additive);
        }
        if let Some(conditions) = self.conditions {
            upsert_conditions(root, conditions);
        }
        files.insert(KPTFILE.to_owned(), yaml::emit_stream(&docs).into_bytes());
        Ok(())
    }
}

fn set_string_map(
    root: &mut Node,
    key: &str,
    want: &std::collections::BTreeMap<String, String>,
    additive: bool,
) {
    let current = root
        .get_path(&["metadata", key])
        .map(|m| {
            m.entries()
                .iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), scalar(v))))
                .collect::<std::collections::BTreeMap<_, _>>()
        })
        .unwrap_or_default();
    let unchanged = if additive {
        want.iter().all(|(k, v)| current.get(k) == Some(v))
    } else {
        current == *want
    };
    if unchanged {
        // Leave the text (and its comments) alone.
        return;
    }
    let meta = root.ensure_mapping(&["metadata"]);
    if !additive && want.is_empty() {
        meta.remove(key);
        return;
    }
    let map = meta.ensure_mapping(&[key]);
    if !additive {
        let stale: Vec<String> = current
            .keys()
            .filter(|k| !want.contains_key(*k))
            .cloned()
            .collect();
        for k in stale {
            map.remove(&k);
        }
    }
    for (k, v) in want {
        map.set_string(k, v);
    }
}

fn set_gates(root: &mut Node, gates: &[String], additive: bool) {
    let current: Vec<String> = root
        .get_path(&["info", "readinessGates"])
        .map(|s| {
            s.items()
                .iter()
                .filter_map(|g| g.get("conditionType").and_then(Node::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut want: Vec<String> = if additive {
        current.clone()
    } else {
        Vec::new()
    };
    for g in gates {
        if !want.contains(g) {
            want.push(g.clone());
        }
    }
    if want == current {
        return;
    }
    let info = root.ensure_mapping(&["info"]);
    if want.is_empty() {
        info.remove("readinessGates");
        return;
    }
    let mut seq = Node::sequence();
    if let Some(items) = seq.items_mut() {
        for g in &want {
            let mut item = Node::mapping();
            item.set("conditionType", Node::string(g.as_str()));
            items.push(item);
        }
    }
    info.set("readinessGates", seq);
}

fn condition_node(c: &Condition) -> Node {
    let mut n = Node::mapping();
    n.set("type", Node::string(c.condition_type.as_str()));
    n.set("status", Node::string(c.status.as_str()));
    if !c.reason.is_empty() {
        n.set("reason", Node::string(c.reason.as_str()));
    }
    if !c.message.is_empty() {
        n.set("message", Node::string(c.message.as_str()));
    }
    n
}

fn upsert_conditions(root: &mut Node, conditions: &[Condition]) {
    if conditions.is_empty() {
        return;
    }
    let status = root.ensure_mapping(&["status"]);
    if !status.get("conditions").is_some_and(Node::is_sequence) {
        status.set("conditions", Node::sequence());
    }
    let Some(items) = status.get_mut("conditions").and_then(Node::items_mut) else {
        return;
    };
    for c in conditions {
        let node = condition_node(c);
        match items
            .iter_mut()
            .find(|i| i.get("type").and_then(Node::as_str) == Some(c.condition_type.as_str()))
        {
            Some(existing) => {
                if condition_of(existing) != *c {
                    *existing = node;
                }
            }
            None => items.push(node),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KPTFILE_TEXT: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app # the app\n  labels:\n    a: \"1\"\ninfo:\n  description: d\n  readinessGates:\n    - conditionType: Ready\nstatus:\n  conditions:\n    - type: Ready\n      status: \"False\"\n";

    fn files() -> PackageFiles {
        PackageFiles::from([(KPTFILE.to_owned(), KPTFILE_TEXT.as_bytes().to_vec())])
    }

    #[test]
    fn reads_the_served_fields() {
        let info = KptInfo::from_files(&files());
        assert_eq!(
            info.package_metadata.labels.get("a").map(String::as_str),
            Some("1")
        );
        assert_eq!(info.readiness_gates, vec!["Ready".to_owned()]);
        assert_eq!(info.conditions[0].status, "False");
    }

    #[test]
    fn replace_and_merge_keep_comments() -> Result<()> {
        let mut f = files();
        let pm = PackageMetadata {
            labels: [("b".to_owned(), "2".to_owned())].into(),
            ..PackageMetadata::default()
        };
        KptfileEdit {
            package_metadata: Some(&pm),
            conditions: Some(&[Condition {
                condition_type: "Ready".into(),
                status: "True".into(),
                ..Condition::default()
            }]),
            ..KptfileEdit::default()
        }
        .apply(&mut f)?;
        let info = KptInfo::from_files(&f);
        assert_eq!(info.package_metadata.labels, pm.labels);
        assert_eq!(info.conditions.len(), 1);
        assert_eq!(info.conditions[0].status, "True");
        let text = String::from_utf8_lossy(&f[KPTFILE]).into_owned();
        assert!(text.contains("# the app"), "{text}");

        KptfileEdit {
            package_metadata: Some(&PackageMetadata {
                labels: [("c".to_owned(), "3".to_owned())].into(),
                ..PackageMetadata::default()
            }),
            readiness_gates: Some(&["Other".to_owned()]),
            additive: true,
            ..KptfileEdit::default()
        }
        .apply(&mut f)?;
        let info = KptInfo::from_files(&f);
        assert_eq!(info.package_metadata.labels.len(), 2);
        assert_eq!(
            info.readiness_gates,
            vec!["Ready".to_owned(), "Other".to_owned()]
        );
        Ok(())
    }
}
