//! How the kustomize-plugin catalog functions (set-annotations, and the
//! kustomize-based releases of set-labels and set-namespace) judge a typed
//! config in their `plugin.Config`: sigs.k8s.io/yaml turns the YAML into JSON
//! guided by the target struct, so a scalar bound for a Go string (an
//! annotation value, a field spec's path) becomes its text whatever its YAML
//! type, and only a collection where a scalar belongs (or a scalar where a
//! collection belongs) is an `encoding/json` type error. The first error, in
//! the order Go decodes the sorted JSON keys, is reported wrapped as
//! `failed to unmarshal config "<yaml>": ...`.

// Go's `%#v` of a string is `strconv.Quote`'s.
use kpt::goquote::go_quote;
use kpt::yaml::{Node, NodeKind, SeqIndent, emit_node};

use super::gomsg;

/// The JSON kind of a node (`None` for null, which fits anything).
fn json_kind(n: &Node) -> Option<&'static str> {
    match &n.kind {
        NodeKind::Mapping(_) => Some("object"),
        NodeKind::Sequence(_) => Some("array"),
        _ => gomsg::json_type(n),
    }
}

/// First decoding error of `plugin` fields, `Go struct field <S>.<path>`.
struct Check {
    first: Option<String>,
}

impl Check {
    fn fail(&mut self, value: &str, strukt: &str, field: &str, go_type: &str) {
        if self.first.is_none() {
            self.first = Some(gomsg::json_type_error(value, strukt, field, go_type));
        }
    }

    /// A value bound for a Go string: scalars are stringified.
    fn string(&mut self, n: &Node, strukt: &str, field: &str) {
        if let Some(k @ ("object" | "array")) = json_kind(n) {
            self.fail(k, strukt, field, "string");
        }
    }

    /// `map[string]string`.
    fn string_map(&mut self, n: &Node, strukt: &str, field: &str) {
        match json_kind(n) {
            None => {}
            Some("object") => {
                let mut entries: Vec<(&str, &Node)> = n
                    .entries()
                    .iter()
                    .map(|(k, v)| (k.as_str().unwrap_or(""), v))
                    .collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                for (_, v) in entries {
                    self.string(v, strukt, field);
                }
            }
            Some(k) => self.fail(k, strukt, field, "map[string]string"),
        }
    }

    /// `[]types.FieldSpec` (Gvk inline: group, version, kind; path; create).
    fn field_specs(&mut self, n: &Node, field: &str) {
        match json_kind(n) {
            None => {}
            Some("array") => {
                for spec in n.items() {
                    match json_kind(spec) {
                        None => {}
                        Some("object") => {
                            let mut entries: Vec<(&str, &Node)> = spec
                                .entries()
                                .iter()
                                .map(|(k, v)| (k.as_str().unwrap_or(""), v))
                                .collect();
                            entries.sort_by(|a, b| a.0.cmp(b.0));
                            for (key, v) in entries {
                                let name = ["create", "group", "kind", "path", "version"]
                                    .into_iter()
                                    .find(|f| f.eq_ignore_ascii_case(key));
                                match name {
                                    Some("create") => match json_kind(v) {
                                        None | Some("bool") => {}
                                        Some(k) => self.fail(
                                            k,
                                            "FieldSpec",
                                            &format!("{field}.create"),
                                            "bool",
                                        ),
                                    },
                                    Some(f) => self.string(v, "FieldSpec", &format!("{field}.{f}")),
                                    None => {}
                                }
                            }
                        }
                        Some(k) => self.fail(k, "plugin", field, "types.FieldSpec"),
                    }
                }
            }
            Some(k) => self.fail(k, "plugin", field, "[]types.FieldSpec"),
        }
    }
}

/// The fields of a kustomize `plugin` struct that a config can get wrong.
pub struct Plugin {
    /// A `map[string]string` field (`annotations`, `labels`).
    pub string_map: Option<&'static str>,
    /// Plain `string` fields (`namespace`).
    pub strings: &'static [&'static str],
    /// `[]types.FieldSpec` fields (`fieldSpecs`, `additional…Fields`).
    pub field_specs: &'static [&'static str],
}

/// `plugin.Config`'s unmarshal error for a typed config, if any.
pub fn plugin_error(fc: &Node, plugin: &Plugin) -> Option<String> {
    let mut check = Check { first: None };
    // Go matches keys to fields exactly or case-insensitively; the JSON
    // object is decoded in sorted key order.
    let mut keys: Vec<(&str, &Node)> = fc
        .entries()
        .iter()
        .map(|(k, v)| (k.as_str().unwrap_or(""), v))
        .collect();
    keys.sort_by(|a, b| a.0.cmp(b.0));
    for (key, v) in keys {
        if let Some(name) = plugin.string_map.filter(|n| key.eq_ignore_ascii_case(n)) {
            check.string_map(v, "plugin", name);
        } else if let Some(name) = plugin.strings.iter().find(|n| key.eq_ignore_ascii_case(n)) {
            check.string(v, "plugin", name);
        } else if let Some(name) = plugin
            .field_specs
            .iter()
            .find(|n| key.eq_ignore_ascii_case(n))
        {
            check.field_specs(v, name);
        }
    }
    let error = check.first?;
    Some(format!(
        "failed to unmarshal config {}: error unmarshaling JSON: while decoding JSON: {error}",
        go_quote(&emit_node(fc, SeqIndent::Compact))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testing::node;

    static ANNOTATIONS: Plugin = Plugin {
        string_map: Some("annotations"),
        strings: &["namespace"],
        field_specs: &["fieldSpecs", "additionalAnnotationFields"],
    };

    fn err(body: &str) -> Option<String> {
        plugin_error(
            &node(&format!(
                "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetAnnotations\n{body}"
            )),
            &ANNOTATIONS,
        )
        .map(|e| {
            e.split_once("while decoding JSON: ")
                .map(|(_, b)| b.to_string())
                .unwrap_or(e)
        })
    }

    #[test]
    fn scalars_become_strings_collections_do_not() {
        assert_eq!(err("annotations:\n  a: 1\n  b: true\n  c: ~\n"), None);
        assert_eq!(
            err("annotations:\n  a: [x]\n").as_deref(),
            Some(
                "json: cannot unmarshal array into Go struct field plugin.annotations of type string"
            )
        );
        assert_eq!(
            err("annotations: [a]\n").as_deref(),
            Some(
                "json: cannot unmarshal array into Go struct field plugin.annotations of type \
                 map[string]string"
            )
        );
        assert_eq!(
            err("annotations: x\n").as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field plugin.annotations of type \
                 map[string]string"
            )
        );
    }

    #[test]
    fn plain_string_fields() {
        assert_eq!(err("namespace: 3\n"), None);
        assert_eq!(
            err("namespace: [a]\n").as_deref(),
            Some(
                "json: cannot unmarshal array into Go struct field plugin.namespace of type string"
            )
        );
    }

    #[test]
    fn field_specs_and_key_order() {
        assert_eq!(
            err("fieldSpecs: {path: x}\n").as_deref(),
            Some(
                "json: cannot unmarshal object into Go struct field plugin.fieldSpecs of type \
                 []types.FieldSpec"
            )
        );
        assert_eq!(
            err("additionalAnnotationFields:\n- x\n").as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field \
                 plugin.additionalAnnotationFields of type types.FieldSpec"
            )
        );
        assert_eq!(
            err("fieldSpecs:\n- {path: [a], create: 'true'}\n").as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field FieldSpec.fieldSpecs.create \
                 of type bool"
            ),
            "create sorts before path"
        );
        // `additionalAnnotationFields` sorts before `annotations`.
        assert_eq!(
            err("annotations: [a]\nadditionalAnnotationFields: x\n").as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field \
                 plugin.additionalAnnotationFields of type []types.FieldSpec"
            )
        );
        assert_eq!(
            err("fieldSpecs:\n- {path: a, create: true, kind: 1}\n"),
            None
        );
    }

    #[test]
    fn message_quotes_the_config_like_go() {
        let e = plugin_error(
            &node("apiVersion: fn.kpt.dev/v1alpha1\nkind: SetAnnotations\nannotations:\n  a: [\"x\"]\n"),
            &ANNOTATIONS,
        )
        .unwrap_or_default();
        assert_eq!(
            e,
            "failed to unmarshal config \"apiVersion: fn.kpt.dev/v1alpha1\\nkind: \
             SetAnnotations\\nannotations:\\n  a: [\\\"x\\\"]\\n\": error unmarshaling JSON: \
             while decoding JSON: json: cannot unmarshal array into Go struct field \
             plugin.annotations of type string"
        );
    }
}
