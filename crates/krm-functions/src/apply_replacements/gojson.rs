//! kustomize's `types.Replacement` structs as Go's `encoding/json` sees
//! them, for the first type error decoding the config gives (checked by
//! `common::gojson`). The Go function reads the config through kyaml's
//! `MarshalJSON` (keys sorted at every level, numbers through `float64`),
//! so the check runs on that JSON data.

use serde_json::Value;

use crate::common::gojson::{self, GoStruct, GoType};

/// `types.ResId`'s fields, inlined into the selectors.
macro_rules! res_id_fields {
    ($($extra:expr),* $(,)?) => {
        &[
            ("group", GoType::String),
            ("version", GoType::String),
            ("kind", GoType::String),
            ("name", GoType::String),
            ("namespace", GoType::String),
            $($extra),*
        ]
    };
}

static OPTIONS: GoStruct = GoStruct {
    qualified: "types.FieldOptions",
    name: "FieldOptions",
    fields: &[
        ("delimiter", GoType::String),
        ("index", GoType::Int),
        ("encoding", GoType::String),
        ("create", GoType::Bool),
    ],
};
static SOURCE: GoStruct = GoStruct {
    qualified: "types.SourceSelector",
    name: "SourceSelector",
    fields: res_id_fields![
        ("fieldPath", GoType::String),
        ("options", GoType::Ptr(&GoType::Struct(&OPTIONS))),
    ],
};
static SELECTOR: GoStruct = GoStruct {
    qualified: "types.Selector",
    name: "Selector",
    fields: res_id_fields![
        ("annotationSelector", GoType::String),
        ("labelSelector", GoType::String),
    ],
};
static TARGET: GoStruct = GoStruct {
    qualified: "types.TargetSelector",
    name: "TargetSelector",
    fields: &[
        ("select", GoType::Ptr(&GoType::Struct(&SELECTOR))),
        (
            "reject",
            GoType::Slice(&GoType::Ptr(&GoType::Struct(&SELECTOR))),
        ),
        ("fieldPaths", GoType::Slice(&GoType::String)),
        ("options", GoType::Ptr(&GoType::Struct(&OPTIONS))),
    ],
};
static REPLACEMENT: GoStruct = GoStruct {
    qualified: "types.Replacement",
    name: "Replacement",
    fields: &[
        ("source", GoType::Ptr(&GoType::Struct(&SOURCE))),
        (
            "targets",
            GoType::Slice(&GoType::Ptr(&GoType::Struct(&TARGET))),
        ),
        ("sourceValue", GoType::Ptr(&GoType::String)),
    ],
};
static ROOT: GoStruct = GoStruct {
    qualified: "replacements.Replacements",
    name: "Replacements",
    fields: &[("replacements", GoType::Slice(&GoType::Struct(&REPLACEMENT)))],
};

/// The first type error of `config` (the whole functionConfig as JSON data).
pub(crate) fn first_type_error(config: &Value) -> Option<String> {
    gojson::check(config, &ROOT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_wording_and_order() {
        assert_eq!(first_type_error(&json!({"replacements": []})), None);
        assert_eq!(
            first_type_error(&json!({"replacements": {"a": 1}})).as_deref(),
            Some(
                "json: cannot unmarshal object into Go struct field Replacements.replacements of type []types.Replacement"
            )
        );
        assert_eq!(
            first_type_error(&json!({"replacements": ["x"]})).as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field Replacements.replacements of type types.Replacement"
            )
        );
        // Keys are visited sorted: sourceValue before targets.
        assert_eq!(
            first_type_error(&json!({"replacements": [
                {"targets": "t", "sourceValue": 3}
            ]}))
            .as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field Replacement.replacements.sourceValue of type string"
            )
        );
        assert_eq!(
            first_type_error(&json!({"replacements": [
                {"targets": [{"fieldPaths": "a.b"}]}
            ]}))
            .as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field TargetSelector.replacements.targets.fieldPaths of type []string"
            )
        );
        assert_eq!(
            first_type_error(&json!({"replacements": [
                {"source": {"kind": 5, "options": {"index": 1.5}}}
            ]}))
            .as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field SourceSelector.replacements.source.kind of type string"
            )
        );
        assert_eq!(
            first_type_error(&json!({"replacements": [
                {"source": {"options": {"index": 1.5}}}
            ]}))
            .as_deref(),
            Some(
                "json: cannot unmarshal number 1.5 into Go struct field FieldOptions.replacements.source.options.index of type int"
            )
        );
        assert_eq!(
            first_type_error(&json!({"replacements": [
                {"targets": [{"select": {"name": "x"}, "reject": [{"kind": true}]}]}
            ]}))
            .as_deref(),
            Some(
                "json: cannot unmarshal bool into Go struct field Selector.replacements.targets.reject.kind of type string"
            )
        );
    }
}
