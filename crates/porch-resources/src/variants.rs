//! `packagevariants` (v1alpha1) and `packagevariantsets` (v1alpha2): stored here; their
//! controllers live in `porch-controllers`.

use std::sync::Arc;

use porch_apiserver::{
    FieldError, GenericBackend, Registry, ResourceHooks, ResourceKind, WatchHub,
};
use porch_core::store::MetadataStore;

use crate::creator::CreatorRecorded;
use serde_json::{Value, json};

/// Serves both kinds from the store, their creators recorded (`crate::creator`).
pub(super) fn register(reg: &mut Registry, store: &Arc<dyn MetadataStore>, hub: &Arc<WatchHub>) {
    for (kind, plural) in [
        (package_variant_kind(), "packagevariants"),
        (package_variant_set_kind(), "packagevariantsets"),
    ] {
        let kind = Arc::new(ResourceKind {
            garbage_collected: true,
            ..kind
        });
        let inner = Arc::new(GenericBackend::new(
            kind.clone(),
            store.clone(),
            hub.clone(),
        ));
        let backend = Arc::new(CreatorRecorded {
            inner,
            group: porch_api::CONFIG_GROUP,
            plural,
        });
        reg.add(Arc::unwrap_or_clone(kind), backend);
    }
}

pub(super) fn package_variant_kind() -> ResourceKind {
    let mut k = ResourceKind::new(
        porch_api::CONFIG_GROUP,
        "v1alpha1",
        "PackageVariant",
        "packagevariants",
    );
    k.schema = porch_api::crd_schema::<porch_api::PackageVariant>();
    k.status_subresource = true;
    k.custom_resource = true;
    k.hooks = Arc::new(PackageVariantHooks);
    k
}

pub(super) fn package_variant_set_kind() -> ResourceKind {
    let mut k = ResourceKind::new(
        porch_api::CONFIG_GROUP,
        "v1alpha2",
        "PackageVariantSet",
        "packagevariantsets",
    );
    k.schema = porch_api::crd_schema::<porch_api::PackageVariantSet>();
    k.status_subresource = true;
    k.custom_resource = true;
    k.hooks = Arc::new(PackageVariantSetHooks);
    k
}

fn policy(errs: &mut Vec<FieldError>, spec: &Value, field: &str, allowed: &[&str]) {
    if let Some(v) = spec.get(field).and_then(Value::as_str)
        && !v.is_empty()
        && !allowed.contains(&v)
    {
        errs.push(FieldError::not_supported(
            format!("spec.{field}"),
            &json!(v),
            allowed,
        ));
    }
}

/// Accepts what upstream's CRD accepts (any policy string, any package-context key): the
/// controller reports an invalid variant as Stalled with upstream's messages instead.
struct PackageVariantHooks;

impl ResourceHooks for PackageVariantHooks {}

struct PackageVariantSetHooks;

impl ResourceHooks for PackageVariantSetHooks {
    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let targets = obj
            .pointer("/spec/targets")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (i, t) in targets.iter().enumerate() {
            let set = ["repositories", "repositorySelector", "objectSelector"]
                .iter()
                .filter(|f| t.get(**f).is_some_and(|v| !v.is_null()))
                .count();
            if set != 1 {
                errs.push(FieldError::invalid(
                    format!("spec.targets[{i}]"),
                    &json!(set),
                    "exactly one of repositories, repositorySelector or objectSelector must be set",
                ));
            }
        }
        if let Some(templ) = targets.iter().find_map(|t| t.get("template")) {
            policy(
                &mut errs,
                templ,
                "adoptionPolicy",
                &["adoptExisting", "adoptNone"],
            );
            policy(&mut errs, templ, "deletionPolicy", &["delete", "orphan"]);
        }
        errs
    }
}
