//! `remove-local-config-resources`: drop every item whose
//! `config.kubernetes.io/local-config` annotation is (case-insensitively)
//! `"true"`, reporting the count and each removed resource by name and file.

use kpt::resource_list::{FileRef, ResourceList, ResultItem};

use crate::FnError;
use crate::common::meta;

/// Run the function.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    let mut removed = Vec::new();
    list.items.retain(|node| {
        // kyaml `IsNilOrEmpty` items are dropped without a word.
        if node.is_null() || (node.is_mapping() && node.entries().is_empty()) {
            return false;
        }
        if !meta::annotation(node, meta::LOCAL_CONFIG).eq_ignore_ascii_case("true") {
            return true;
        }
        let mut r = ResultItem::info(format!("Resource name: [{}]", meta::name(node)));
        r.file = Some(FileRef {
            path: meta::file_ref(node).map(|f| f.path).unwrap_or_default(),
            index: 0,
        });
        removed.push(r);
        false
    });
    if removed.is_empty() {
        list.results.push(ResultItem::warning(
            "Found no resources to prune with the local config annotation",
        ));
    } else {
        list.results.push(ResultItem::info(format!(
            "Number of resources pruned: {}",
            removed.len()
        )));
        list.results.extend(removed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::common::testing::{messages, run};

    #[test]
    fn prunes_only_true() {
        let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: keep
  annotations:
    config.kubernetes.io/local-config: \"false\"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: drop
  annotations:
    config.kubernetes.io/local-config: \"TRUE\"
    internal.config.kubernetes.io/path: r.yaml
";
        let (out, results, err) = run(super::run, input, None);
        assert!(err.is_none());
        assert!(out.contains("name: keep") && !out.contains("name: drop"));
        assert_eq!(
            messages(&results),
            vec!["Number of resources pruned: 1", "Resource name: [drop]"]
        );
        assert_eq!(
            results[1].file.as_ref().map(|f| f.path.as_str()),
            Some("r.yaml")
        );

        let (_, results, _) = run(
            super::run,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
            None,
        );
        assert_eq!(
            messages(&results),
            vec!["Found no resources to prune with the local config annotation"]
        );
    }
}
