//! Which lists are associative, and by which keys: the built-in Kubernetes schema
//! kpt embeds ([`super::builtin`]) plus the schemas of CustomResourceDefinitions
//! found in the packages being merged.
//!
//! This is kyaml's `openapi.ResourceSchema` as the merge walker uses it: a schema
//! position is found from the resource's `apiVersion` and `kind`, then followed
//! field by field (`properties`, else `additionalProperties`) and into list elements
//! (`items` of an `array`); a list merges by key only where its schema has
//! `x-kubernetes-patch-strategy: merge`.

use std::collections::HashMap;

use super::builtin::{self, Child, Def};
use crate::yaml::Node;

/// kyaml `AssociativeSequenceKeys`, tried in order when inferring a merge key.
const INFER_KEYS: &[&str] = &[
    "mountPath",
    "devicePath",
    "ip",
    "type",
    "topologyKey",
    "name",
    "containerPort",
];

/// CRD schemas registered for a merge, keyed by group, version and kind.
#[derive(Debug, Default, Clone)]
pub struct SchemaRegistry {
    crds: HashMap<(String, String, String), Node>,
}

impl SchemaRegistry {
    /// Register every `spec.versions[].schema.openAPIV3Schema` of a CRD.
    pub fn add_crd(&mut self, crd: &Node) {
        let group = crd
            .get_path(&["spec", "group"])
            .and_then(Node::as_str)
            .unwrap_or_default();
        let kind = crd
            .get_path(&["spec", "names", "kind"])
            .and_then(Node::as_str)
            .unwrap_or_default();
        let Some(versions) = crd.get_path(&["spec", "versions"]) else {
            return;
        };
        for v in versions.items() {
            let name = v.get("name").and_then(Node::as_str).unwrap_or_default();
            if let Some(s) = v.get_path(&["schema", "openAPIV3Schema"]) {
                self.crds.insert(
                    (group.to_string(), name.to_string(), kind.to_string()),
                    s.clone(),
                );
            }
        }
    }

    /// Register the CRDs among `resources`.
    pub fn add_crds_from<'a>(&mut self, resources: impl IntoIterator<Item = &'a Node>) {
        for r in resources {
            if r.get("kind").and_then(Node::as_str) == Some("CustomResourceDefinition") {
                self.add_crd(r);
            }
        }
    }

    /// The schema of a resource, from its `apiVersion` and `kind` (kyaml
    /// `SchemaForResourceType`): a registered CRD first, then the built-in types.
    /// [`Schema::None`] when `node` is no mapping with both, or the type is unknown.
    pub(crate) fn resource(&self, node: &Node) -> Schema<'_> {
        if !node.is_mapping() {
            return Schema::None;
        }
        let text = |k| node.get(k).and_then(Node::as_str).unwrap_or_default();
        let (api, kind) = (text("apiVersion"), text("kind"));
        if api.is_empty() || kind.is_empty() {
            return Schema::None;
        }
        let (group, version) = api.rsplit_once('/').unwrap_or(("", api));
        if let Some(s) = self
            .crds
            .get(&(group.to_string(), version.to_string(), kind.to_string()))
        {
            return Schema::Crd(s);
        }
        Schema::from_child(builtin::kind(api, kind))
    }

    /// kyaml `Walker.GetSchema` where no schema was inherited: the first of the
    /// sources (local, origin, updated) that is a resource of a known type.
    pub(crate) fn of_sources(&self, sources: [Option<&Node>; 3]) -> Schema<'_> {
        sources
            .into_iter()
            .flatten()
            .map(|n| self.resource(n))
            .find(|s| !matches!(s, Schema::None))
            .unwrap_or(Schema::None)
    }
}

/// A position in a schema while walking.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Schema<'a> {
    /// No schema: lists are replaced wholesale (or inferred, for the Kptfile), and
    /// a map that names its `apiVersion` and `kind` gets that type's schema.
    None,
    /// A built-in schema with no merge list below it.
    Opaque,
    Builtin(&'static Def),
    Crd(&'a Node),
}

impl<'a> Schema<'a> {
    fn from_child(c: Child) -> Schema<'a> {
        match c {
            Child::N(i) => Schema::Builtin(builtin::def(i)),
            Child::O => Schema::Opaque,
            Child::X => Schema::None,
        }
    }

    pub(crate) fn is_none(&self) -> bool {
        matches!(self, Schema::None)
    }

    /// kyaml `ResourceSchema.Field`: the declared property, else the schema of
    /// `additionalProperties`.
    pub(crate) fn field(&self, key: &str) -> Schema<'a> {
        match *self {
            Schema::None => Schema::None,
            Schema::Opaque => Schema::Opaque,
            Schema::Builtin(d) => Schema::from_child(d.field(key)),
            Schema::Crd(n) => n
                .get_path(&["properties", key])
                .or_else(|| n.get("additionalProperties").filter(|a| a.is_mapping()))
                .map_or(Schema::None, Schema::Crd),
        }
    }

    /// kyaml `ResourceSchema.Elements`: `items`, for a schema of type `array`.
    pub(crate) fn elements(&self) -> Schema<'a> {
        match *self {
            Schema::None => Schema::None,
            Schema::Opaque => Schema::Opaque,
            Schema::Builtin(d) => Schema::from_child(d.items),
            Schema::Crd(n) => {
                if n.get("type").and_then(Node::as_str) != Some("array") {
                    return Schema::None;
                }
                n.get("items")
                    .filter(|i| i.is_mapping())
                    .map_or(Schema::None, Schema::Crd)
            }
        }
    }

    /// The schema's merge strategy and keys, if it declares `merge`.
    fn patch_keys(&self) -> Option<Vec<String>> {
        match self {
            Schema::None | Schema::Opaque => None,
            Schema::Builtin(d) => d
                .merge
                .map(|k| k.iter().map(|k| (*k).to_string()).collect()),
            Schema::Crd(n) => {
                let strategy = n.get("x-kubernetes-patch-strategy")?.as_str()?;
                if !strategy.split(',').any(|s| s == "merge") {
                    return None;
                }
                if let Some(list) = n.get("x-kubernetes-list-map-keys")
                    && list.is_sequence()
                {
                    return Some(
                        list.items()
                            .iter()
                            .filter_map(Node::as_str)
                            // trim: the flow parser keeps a trailing space in `[ name ]`
                            .map(|k| k.trim().to_string())
                            .collect(),
                    );
                }
                Some(
                    n.get("x-kubernetes-patch-merge-key")
                        .and_then(Node::as_str)
                        .map(|k| vec![k.to_string()])
                        .unwrap_or_default(),
                )
            }
        }
    }

    /// `Some(keys)` when the list at this position merges by key (empty keys: a
    /// list of scalars merged as a set); `None` when it is replaced wholesale.
    pub(crate) fn list_keys(
        &self,
        sources: [Option<&Node>; 3],
        infer: bool,
    ) -> Option<Vec<String>> {
        if !matches!(self, Schema::None) {
            return self.patch_keys();
        }
        if !infer {
            return None;
        }
        let mut key: Option<&str> = None;
        for s in sources.into_iter().flatten() {
            if s.items().is_empty() {
                continue;
            }
            let k = associative_key(s)?;
            if key.is_some_and(|x| x != k) {
                return None;
            }
            key = Some(k);
        }
        key.map(|k| vec![k.to_string()])
    }
}

/// kyaml `GetAssociativeKey`: the first inference key every element has.
pub(crate) fn associative_key(seq: &Node) -> Option<&'static str> {
    INFER_KEYS.iter().copied().find(|k| {
        seq.items()
            .iter()
            .all(|e| e.is_mapping() && e.get(k).is_some())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_one;

    #[test]
    fn crd_schema_gives_list_keys() {
        let crd = parse_one(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: g.io\n  names:\n    kind: F\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties:\n          spec:\n            properties:\n              l:\n                x-kubernetes-list-map-keys: [ name ]\n                x-kubernetes-patch-strategy: merge\n",
        )
        .expect("crd");
        let mut r = SchemaRegistry::default();
        r.add_crds_from([&crd]);
        let res = parse_one("apiVersion: g.io/v1\nkind: F\n").expect("res");
        let s = r.resource(&res).field("spec").field("l");
        assert_eq!(
            s.list_keys([None, None, None], false),
            Some(vec!["name".to_string()])
        );
        let dep = parse_one("apiVersion: apps/v1\nkind: Deployment\n").expect("dep");
        let c = r
            .resource(&dep)
            .field("spec")
            .field("template")
            .field("spec")
            .field("containers");
        assert_eq!(
            c.list_keys([None, None, None], false),
            Some(vec!["name".to_string()])
        );
        let env = c.elements().field("env");
        assert_eq!(
            env.list_keys([None, None, None], false),
            Some(vec!["name".to_string()])
        );
    }
}
