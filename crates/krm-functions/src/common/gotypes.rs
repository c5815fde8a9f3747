//! Go types that catalog functions decode functionConfigs into, as
//! [`super::gojson`] shapes: Kubernetes' `ConfigMap` (with apimachinery's
//! `ObjectMeta`) and kyaml's `ResourceMeta`-embedding configs (with kyaml's
//! smaller `ObjectMeta`). Fields whose types carry their own JSON decoders
//! (timestamps), `int64` ones (which [`GoType`] cannot name) and ones no
//! config plausibly sets are `Any`.

use super::gojson::{GoStruct, GoType};

/// apimachinery `metav1.ObjectMeta`.
pub static K8S_OBJECT_META: GoStruct = GoStruct {
    qualified: "v1.ObjectMeta",
    name: "ObjectMeta",
    fields: &[
        ("name", GoType::String),
        ("generateName", GoType::String),
        ("namespace", GoType::String),
        ("selfLink", GoType::String),
        ("uid", GoType::String),
        ("resourceVersion", GoType::String),
        ("generation", GoType::Any),
        ("creationTimestamp", GoType::Any),
        ("deletionTimestamp", GoType::Any),
        ("deletionGracePeriodSeconds", GoType::Any),
        ("labels", GoType::Map(&GoType::String)),
        ("annotations", GoType::Map(&GoType::String)),
        ("ownerReferences", GoType::Any),
        ("finalizers", GoType::Slice(&GoType::String)),
        ("managedFields", GoType::Any),
    ],
};

/// `corev1.ConfigMap`.
pub static CONFIG_MAP: GoStruct = GoStruct {
    qualified: "v1.ConfigMap",
    name: "ConfigMap",
    fields: &[
        ("apiVersion", GoType::String),
        ("kind", GoType::String),
        ("metadata", GoType::Struct(&K8S_OBJECT_META)),
        ("immutable", GoType::Ptr(&GoType::Bool)),
        ("data", GoType::Map(&GoType::String)),
        ("binaryData", GoType::Map(&GoType::Any)),
    ],
};

/// kyaml `yaml.ObjectMeta` (its `NameMeta` inline).
pub static KYAML_OBJECT_META: GoStruct = GoStruct {
    qualified: "yaml.ObjectMeta",
    name: "ObjectMeta",
    fields: &[
        ("name", GoType::String),
        ("namespace", GoType::String),
        ("labels", GoType::Map(&GoType::String)),
        ("annotations", GoType::Map(&GoType::String)),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::gojson::check;
    use crate::common::testing::node;

    #[test]
    fn config_map_errors_name_the_innermost_struct() {
        assert_eq!(
            check(
                &node("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 1\n"),
                &CONFIG_MAP
            )
            .as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of \
                 type string"
            )
        );
        assert_eq!(
            check(
                &node(
                    "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: [x]\nmetadata:\n  labels: [a]\n"
                ),
                &CONFIG_MAP
            )
            .as_deref(),
            Some("json: cannot unmarshal array into Go struct field ConfigMap.data of type string"),
            "data sorts before metadata"
        );
    }
}
