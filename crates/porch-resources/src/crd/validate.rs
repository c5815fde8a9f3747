//! What kube-apiserver refuses in a CustomResourceDefinition (the subset porch-server serves):
//! names, group, scope, versions (exactly one storage version, a structural root schema) and
//! conversion (`None` only: there are no conversion webhooks here).

use porch_apiserver::{FieldError, is_dns1123_label};
use serde_json::{Value, json};

use super::kind::{flag, group_plural, str_at, versions};

/// The refusals of `crd`, one cause per field.
pub(super) fn validate(crd: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (group, plural) = group_plural(crd);
    if group.is_empty() {
        errs.push(FieldError::required("spec.group"));
    } else if !porch_apiserver::is_dns1123_subdomain(&group) || !group.contains('.') {
        errs.push(FieldError::invalid(
            "spec.group",
            &json!(group),
            "should be a domain with at least one dot",
        ));
    }
    if plural.is_empty() {
        errs.push(FieldError::required("spec.names.plural"));
    } else if !is_dns1123_label(&plural) {
        errs.push(FieldError::invalid(
            "spec.names.plural",
            &json!(plural),
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'",
        ));
    }
    let singular = str_at(crd, "/spec/names/singular");
    if !singular.is_empty() && !is_dns1123_label(singular) {
        errs.push(FieldError::invalid(
            "spec.names.singular",
            &json!(singular),
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'",
        ));
    }
    let kind = str_at(crd, "/spec/names/kind");
    if kind.is_empty() {
        errs.push(FieldError::required("spec.names.kind"));
    } else if !kind.starts_with(|c: char| c.is_ascii_alphabetic())
        || !kind.chars().all(|c| c.is_ascii_alphanumeric())
    {
        errs.push(FieldError::invalid(
            "spec.names.kind",
            &json!(kind),
            "may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?",
        ));
    }
    let name = str_at(crd, "/metadata/name");
    if !group.is_empty() && !plural.is_empty() && name != format!("{plural}.{group}") {
        errs.push(FieldError::invalid(
            "metadata.name",
            &json!(name),
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    let scope = str_at(crd, "/spec/scope");
    if scope != "Namespaced" && scope != "Cluster" {
        errs.push(FieldError::not_supported(
            "spec.scope",
            &json!(scope),
            &["Cluster", "Namespaced"],
        ));
    }
    let vs = versions(crd);
    if vs.is_empty() {
        errs.push(FieldError::required("spec.versions"));
    }
    let storage = vs.iter().filter(|v| flag(v, "storage")).count();
    if !vs.is_empty() && storage != 1 {
        errs.push(FieldError::invalid(
            "spec.versions",
            &json!(vs.len()),
            "must have exactly one version marked as storage version",
        ));
    }
    for (i, v) in vs.iter().enumerate() {
        let vname = str_at(v, "/name");
        if !is_dns1123_label(vname) {
            errs.push(FieldError::invalid(
                format!("spec.versions[{i}].name"),
                &json!(vname),
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-'",
            ));
        }
        if vs[..i].iter().any(|o| str_at(o, "/name") == vname) {
            errs.push(FieldError {
                reason: "FieldValueDuplicate",
                field: format!("spec.versions[{i}].name"),
                message: format!("Duplicate value: {}", json!(vname)),
            });
        }
        match v.pointer("/schema/openAPIV3Schema") {
            None => errs.push(FieldError::required(format!(
                "spec.versions[{i}].schema.openAPIV3Schema"
            ))),
            Some(s) if s.get("type").and_then(Value::as_str) != Some("object") => {
                errs.push(FieldError::invalid(
                    format!("spec.versions[{i}].schema.openAPIV3Schema.type"),
                    s.get("type").unwrap_or(&Value::Null),
                    "must be object at the root",
                ));
            }
            Some(_) => {}
        }
    }
    let strategy = str_at(crd, "/spec/conversion/strategy");
    if !strategy.is_empty() && strategy != "None" {
        errs.push(FieldError::not_supported(
            "spec.conversion.strategy",
            &json!(strategy),
            &["None"],
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::kind::tests::widget_crd;

    #[test]
    fn invalid_crds_name_their_fields() {
        let mut crd = widget_crd();
        crd["metadata"]["name"] = json!("wrong");
        crd["spec"]["scope"] = json!("Global");
        crd["spec"]["versions"][0]["storage"] = json!(true);
        crd["spec"]["conversion"] = json!({"strategy": "Webhook"});
        let fields: Vec<String> = validate(&crd).into_iter().map(|e| e.field).collect();
        for f in [
            "metadata.name",
            "spec.scope",
            "spec.versions",
            "spec.conversion.strategy",
        ] {
            assert!(fields.iter().any(|x| x == f), "{f} missing from {fields:?}");
        }
    }
}
