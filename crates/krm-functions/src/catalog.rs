//! What each built-in function is for: the discovery data of Porch's `Function` resource
//! (description, mutator/validator, keywords, the functionConfig kinds it takes), kept
//! beside the table of [`crate::registry`] so that a new built-in cannot miss it.

/// Discovery data of one built-in function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Info {
    /// Short image name (`set-labels`).
    pub name: &'static str,
    /// The catalog version the built-in follows.
    pub version: &'static str,
    pub description: &'static str,
    /// `mutator` and/or `validator`.
    pub types: &'static [&'static str],
    pub keywords: &'static [&'static str],
    /// Accepted functionConfig kinds as `(apiVersion, kind)`.
    pub configs: &'static [(&'static str, &'static str)],
}

const CM: (&str, &str) = ("v1", "ConfigMap");
const FN: &str = "fn.kpt.dev/v1alpha1";
const M: &[&str] = &["mutator"];

/// Every built-in, by name.
pub const BUILTINS: &[Info] = &[
    Info {
        name: "apply-replacements",
        version: "v0.1.1",
        description: "Copy field values from one resource to fields of others.",
        types: M,
        keywords: &["replacements", "kustomize"],
        configs: &[(FN, "ApplyReplacements")],
    },
    Info {
        name: "apply-setters",
        version: "v0.2.0",
        description: "Set field values marked by setter comments.",
        types: M,
        keywords: &["setters", "parameters"],
        configs: &[CM, ("fn.kpt.dev/v1alpha1", "ApplySetters")],
    },
    Info {
        name: "create-setters",
        version: "v0.1.0",
        description: "Add setter comments to fields whose values match.",
        types: M,
        keywords: &["setters", "parameters"],
        configs: &[CM, ("fn.kpt.dev/v1alpha1", "CreateSetters")],
    },
    Info {
        name: "delete-annotations",
        version: "v0.1",
        description: "Delete the given annotations from every resource.",
        types: M,
        keywords: &["annotations", "metadata"],
        configs: &[CM],
    },
    Info {
        name: "drop-comments",
        version: "v0.1.0",
        description: "Remove comments from resources.",
        types: M,
        keywords: &["comments"],
        configs: &[],
    },
    Info {
        name: "ensure-name-substring",
        version: "v0.2.0",
        description: "Prepend or append a substring to resource names.",
        types: M,
        keywords: &["name", "prefix", "suffix"],
        configs: &[CM, (FN, "EnsureNameSubstring")],
    },
    Info {
        name: "no-op",
        version: "v0.1.0",
        description: "Change nothing (for tests and examples).",
        types: M,
        keywords: &["test"],
        configs: &[],
    },
    Info {
        name: "remove-local-config-resources",
        version: "v0.1.0",
        description: "Remove resources annotated config.kubernetes.io/local-config.",
        types: M,
        keywords: &["local-config"],
        configs: &[],
    },
    Info {
        name: "search-replace",
        version: "v0.2.0",
        description: "Search fields by path or value and replace their values.",
        types: M,
        keywords: &["search", "replace"],
        configs: &[CM],
    },
    Info {
        name: "set-annotations",
        version: "v0.1.4",
        description: "Add or update annotations of every resource.",
        types: M,
        keywords: &["annotations", "metadata"],
        configs: &[CM, (FN, "SetAnnotations")],
    },
    Info {
        name: "set-enforcement-action",
        version: "v0.1.0",
        description: "Set the enforcementAction of Gatekeeper constraints.",
        types: M,
        keywords: &["gatekeeper", "policy"],
        configs: &[CM],
    },
    Info {
        name: "set-image",
        version: "v0.1.1",
        description: "Set container image names, tags and digests.",
        types: M,
        keywords: &["image", "containers"],
        configs: &[CM, (FN, "SetImage")],
    },
    Info {
        name: "set-labels",
        version: "v0.2.0",
        description: "Add or update labels (and selectors) of every resource.",
        types: M,
        keywords: &["labels", "metadata"],
        configs: &[CM, (FN, "SetLabels")],
    },
    Info {
        name: "set-namespace",
        version: "v0.4.1",
        description: "Set the namespace of every namespaced resource.",
        types: M,
        keywords: &["namespace", "metadata"],
        configs: &[CM, (FN, "SetNamespace")],
    },
    Info {
        name: "starlark",
        version: "v0.5.0",
        description: "Run a Starlark script over the resources (mutate or validate).",
        types: &["mutator", "validator"],
        keywords: &["starlark", "script"],
        configs: &[(FN, "StarlarkRun")],
    },
    Info {
        name: "upsert-resource",
        version: "v0.2.0",
        description: "Insert a resource, or replace the one of the same identity.",
        types: M,
        keywords: &["resource"],
        configs: &[],
    },
];

/// The discovery data of a built-in, by short name.
pub fn info(name: &str) -> Option<&'static Info> {
    BUILTINS.iter().find(|i| i.name == name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_builtin_is_described() {
        use kpt::runtime::FunctionRuntime;
        let names = crate::Builtins.builtin_names();
        assert_eq!(names.len(), super::BUILTINS.len());
        for n in names {
            let i = super::info(&n).unwrap_or_else(|| panic!("{n} has no catalog entry"));
            assert!(!i.description.is_empty() && !i.types.is_empty(), "{n}");
        }
    }
}
