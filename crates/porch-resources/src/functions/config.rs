//! `config.porch.kpt.dev/v1alpha1` `functionconfigs`: the kind (Porch's printer columns and
//! validation rules) and the parsers of its durations and quantities.

use std::sync::Arc;
use std::time::Duration;

use porch_apiserver::{Column, FieldError, ResourceHooks, ResourceKind};
use serde_json::{Value, json};

pub(crate) fn kind() -> ResourceKind {
    let mut k = ResourceKind::new(
        porch_api::CONFIG_GROUP,
        "v1alpha1",
        "FunctionConfig",
        "functionconfigs",
    );
    k.schema = porch_api::crd_schema::<porch_api::FunctionConfig>();
    k.status_subresource = true;
    k.custom_resource = true;
    k.categories = vec!["porch-config".into()];
    k.columns = vec![
        Column::path(
            "Server Applied",
            "integer",
            ".status.apiServerObservedGeneration",
        ),
        Column::path(
            "FnRunner Applied",
            "integer",
            ".status.functionRunnerObservedGeneration",
        ),
        Column::path(
            "Controller Applied",
            "integer",
            ".status.controllerObservedGeneration",
        ),
    ];
    k.field_selectors = vec!["spec.image".into()];
    k.hooks = Arc::new(FunctionConfigHooks);
    k
}

struct FunctionConfigHooks;

impl ResourceHooks for FunctionConfigHooks {
    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        validate(obj)
    }
}

fn validate(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(spec) = obj.get("spec").filter(|s| s.is_object()) else {
        errs.push(FieldError::required("spec"));
        return errs;
    };
    match spec.get("image").and_then(Value::as_str) {
        None => errs.push(FieldError::required("spec.image")),
        Some("") => errs.push(FieldError::invalid(
            "spec.image",
            &json!(""),
            "spec.image in body should be at least 1 chars long",
        )),
        Some(_) => {}
    }
    let set = |f: &str| spec.get(f).is_some_and(|v| !v.is_null());
    if !set("podExecutor") && !set("binaryExecutor") && !set("goExecutor") {
        errs.push(FieldError::invalid(
            "spec",
            &Value::Null,
            "At least one configuration must be specified",
        ));
    }
    for ex in ["binaryExecutor", "goExecutor"] {
        if let Some(e) = spec.get(ex).filter(|v| v.is_object())
            && e.get("tags")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty)
        {
            errs.push(FieldError::invalid(
                format!("spec.{ex}.tags"),
                e.get("tags").unwrap_or(&Value::Null),
                format!("spec.{ex}.tags in body should have at least 1 items"),
            ));
        }
    }
    if let Some(e) = spec.get("binaryExecutor").filter(|v| v.is_object())
        && e.get("path")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    {
        errs.push(FieldError::required("spec.binaryExecutor.path"));
    }
    if let Some(ttl) = spec
        .pointer("/podExecutor/timeToLive")
        .and_then(Value::as_str)
        && parse_duration(ttl).is_none()
    {
        errs.push(FieldError::invalid(
            "spec.podExecutor.timeToLive",
            &json!(ttl),
            "must be a duration such as 30m",
        ));
    }
    if let Some(t) = spec.pointer("/limits/timeout").and_then(Value::as_str)
        && parse_duration(t).is_none_or(|d| d.is_zero())
    {
        errs.push(FieldError::invalid(
            "spec.limits.timeout",
            &json!(t),
            "must be a positive duration such as 30s or 1m30s",
        ));
    }
    if let Some(m) = spec.pointer("/limits/memory").and_then(Value::as_str)
        && parse_quantity(m).is_none()
    {
        errs.push(FieldError::invalid(
            "spec.limits.memory",
            &json!(m),
            "must be a quantity such as 256Mi",
        ));
    }
    if let Some(secrets) = spec.get("imagePullSecrets").and_then(Value::as_array) {
        for (i, s) in secrets.iter().enumerate() {
            if s.get("name")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                errs.push(FieldError::required(format!(
                    "spec.imagePullSecrets[{i}].name"
                )));
            }
        }
    }
    if let Some(p) = spec.get("imagePullPolicy").and_then(Value::as_str)
        && !super::pull::POLICIES.contains(&p)
    {
        errs.push(FieldError::invalid(
            "spec.imagePullPolicy",
            &json!(p),
            "must be one of Always, IfNotPresent, Never",
        ));
    }
    for f in ["maxOutputResources", "maxOutputBytes", "maxSteps"] {
        if let Some(n) = spec
            .pointer(&format!("/limits/{f}"))
            .and_then(Value::as_i64)
            && n <= 0
        {
            errs.push(FieldError::invalid(
                format!("spec.limits.{f}"),
                &json!(n),
                "must be greater than 0",
            ));
        }
    }
    errs
}

/// A Go duration (`300ms`, `1.5s`, `2m`, `1h30m`).
pub fn parse_duration(s: &str) -> Option<Duration> {
    let mut rest = s.trim();
    if rest.is_empty() {
        return None;
    }
    if rest == "0" {
        return Some(Duration::ZERO);
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let secs = match &rest[..unit_end] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += n * secs;
        rest = &rest[unit_end..];
    }
    Duration::try_from_secs_f64(total).ok()
}

/// A Kubernetes quantity of bytes (`512Mi`, `1G`, `1048576`).
pub fn parse_quantity(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let n: f64 = s[..split].parse().ok()?;
    let mult: f64 = match &s[split..] {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "Ti" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let v = n * mult;
    (v.is_finite() && v >= 0.0 && v < u64::MAX as f64).then_some(v as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_quantities_parse_as_go_and_kubernetes() {
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("30"), None);
        assert_eq!(parse_quantity("256Mi"), Some(256 << 20));
        assert_eq!(parse_quantity("1G"), Some(1_000_000_000));
        assert_eq!(parse_quantity("lots"), None);
    }

    #[test]
    fn a_config_needs_an_image_and_an_executor() {
        let errs = validate(&json!({"spec": {"image": ""}}));
        let fields: Vec<_> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["spec.image", "spec"]);
        let ok = json!({"spec": {"image": "x", "binaryExecutor": {"tags": ["v1"], "path": "x"},
            "limits": {"timeout": "2s", "memory": "64Mi"}}});
        assert!(validate(&ok).is_empty());
        let bad = json!({"spec": {"image": "x", "goExecutor": {"tags": []}, "limits": {"timeout": "soon"}}});
        assert_eq!(validate(&bad).len(), 2);
        let pull = json!({"spec": {"image": "x", "podExecutor": {},
            "imagePullSecrets": [{"name": "ok"}, {"name": ""}], "imagePullPolicy": "Sometimes"}});
        let fields: Vec<_> = validate(&pull).into_iter().map(|e| e.field).collect();
        assert_eq!(
            fields,
            ["spec.imagePullSecrets[1].name", "spec.imagePullPolicy"]
        );
        let good = json!({"spec": {"image": "x", "podExecutor": {},
            "imagePullSecrets": [{"name": "ok"}], "imagePullPolicy": "Never"}});
        assert!(validate(&good).is_empty());
    }
}
