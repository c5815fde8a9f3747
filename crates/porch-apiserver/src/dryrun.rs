//! `dryRun`, wherever a client may put it: the query of a create, update or patch, and the
//! query or the `DeleteOptions` body of a delete (kubectl sends `delete --dry-run=server` as
//! `{"kind":"DeleteOptions","dryRun":["All"]}` in the body). Values are checked as
//! kube-apiserver checks them: `All` is the only one, anything else is 422 Invalid naming the
//! options kind (`CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: …`).

use axum::http::Method;
use serde_json::Value;

use crate::error::{ApiError, FieldError};

const META_GROUP: &str = "meta.k8s.io";
const ALL: &str = "All";

/// The options kind a write verb takes (`None` for reads).
pub fn options_kind(method: &Method) -> Option<&'static str> {
    match *method {
        Method::POST => Some("CreateOptions"),
        Method::PUT => Some("UpdateOptions"),
        Method::PATCH => Some("PatchOptions"),
        Method::DELETE => Some("DeleteOptions"),
        _ => None,
    }
}

/// Every `dryRun` value of the query (a repeated parameter counts each time).
fn query_values(query: Option<&str>) -> Vec<String> {
    query
        .map(crate::http::form_urlencoded_parse)
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| k == "dryRun")
        .map(|(_, v)| v)
        .collect()
}

/// Is this a dry run? `values` must all be `All`.
fn check(options: &str, values: &[String]) -> Result<bool, ApiError> {
    if values.iter().all(|v| v == ALL) {
        return Ok(!values.is_empty());
    }
    // Go's %#v of a []string, as kube-apiserver prints the rejected value.
    let quoted: Vec<String> = values
        .iter()
        .map(|v| Value::from(v.as_str()).to_string())
        .collect();
    let shown = format!("[]string{{{}}}", quoted.join(", "));
    Err(ApiError::invalid(
        META_GROUP,
        options,
        "",
        vec![FieldError {
            reason: "FieldValueNotSupported",
            field: "dryRun".into(),
            message: format!("Unsupported value: {shown}: supported values: \"{ALL}\""),
        }],
    ))
}

/// `dryRun` of the query string.
pub fn from_query(options: &str, query: Option<&str>) -> Result<bool, ApiError> {
    check(options, &query_values(query))
}

/// Parses a DELETE body (`DeleteOptions`, JSON or YAML); `None` when empty.
pub fn delete_options(body: &[u8], content_type: &str) -> Result<Option<Value>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let v: Value = match crate::rest::media_type(content_type).as_str() {
        "application/json" => serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?,
        "application/yaml" => serde_yaml::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?,
        _ => {
            return Err(ApiError::unsupported_media_type(
                "the body of the request was in an unknown format - accepted media types include: \
                 application/json, application/yaml",
            ));
        }
    };
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "invalid DeleteOptions: not a JSON object",
        ));
    }
    Ok(Some(v))
}

/// `dryRun` of a `DeleteOptions` body.
pub fn from_delete_options(options: Option<&Value>) -> Result<bool, ApiError> {
    let values = match options.and_then(|o| o.get("dryRun")) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str().map(str::to_owned).ok_or_else(|| {
                    ApiError::bad_request("invalid DeleteOptions: dryRun must be a list of strings")
                })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(ApiError::bad_request(
                "invalid DeleteOptions: dryRun must be a list of strings",
            ));
        }
    };
    check("DeleteOptions", &values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn query_all_is_a_dry_run_and_absence_is_not() {
        assert!(from_query("CreateOptions", Some("dryRun=All&fieldManager=x")).expect("ok"));
        assert!(!from_query("CreateOptions", Some("fieldManager=x")).expect("ok"));
        assert!(!from_query("CreateOptions", None).expect("ok"));
        assert!(from_query("PatchOptions", Some("&dryRun=All&dryRun=All")).expect("ok"));
    }

    #[test]
    fn unknown_values_are_refused_in_kube_apiserver_words() {
        let e = from_query("CreateOptions", Some("dryRun=Some")).expect_err("refused");
        let s = e.to_status();
        assert_eq!(s["code"], 422);
        assert_eq!(s["reason"], "Invalid");
        assert_eq!(
            s["message"],
            "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Some\"}: supported values: \"All\""
        );
        assert_eq!(s["details"]["causes"][0]["field"], "dryRun");
        assert_eq!(
            s["details"]["causes"][0]["reason"],
            "FieldValueNotSupported"
        );
        // One bad value among good ones is still refused.
        assert!(from_query("UpdateOptions", Some("dryRun=All&dryRun=x")).is_err());
    }

    #[test]
    fn delete_options_body() {
        let body = br#"{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"],"propagationPolicy":"Background"}"#;
        let o = delete_options(body, "application/json").expect("parses");
        assert!(from_delete_options(o.as_ref()).expect("ok"));
        let yaml = delete_options(b"dryRun: [All]\n", "application/yaml").expect("parses");
        assert!(from_delete_options(yaml.as_ref()).expect("ok"));
        assert!(!from_delete_options(None).expect("ok"));
        assert!(!from_delete_options(Some(&json!({"kind": "DeleteOptions"}))).expect("ok"));
        let bad = from_delete_options(Some(&json!({"dryRun": ["Maybe"]}))).expect_err("refused");
        assert!(
            bad.message
                .starts_with("DeleteOptions.meta.k8s.io \"\" is invalid: dryRun")
        );
        assert_eq!(
            from_delete_options(Some(&json!({"dryRun": "All"})))
                .expect_err("not a list")
                .code_and_reason()
                .0,
            400
        );
        let plain = delete_options(b"x", "text/plain").expect_err("415");
        assert_eq!(plain.code_and_reason(), (415, "UnsupportedMediaType"));
        assert!(delete_options(b"", "text/plain").expect("empty").is_none());
    }
}
