//! `ApiError` and the one mapping from error kinds to Kubernetes `Status` replies.

use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use porch_core::ErrorKind;
use porch_core::store::StoreError;
use serde_json::{Value, json};

/// One invalid field of a 422 reply (`details.causes[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// `FieldValueRequired`, `FieldValueInvalid`, `FieldValueNotSupported`, `FieldValueForbidden`,
    /// `FieldValueDuplicate`, `FieldValueTooLong`.
    pub reason: &'static str,
    /// JSON path of the field, e.g. `spec.git.repo`.
    pub field: String,
    /// Human text, already prefixed the Kubernetes way (`Required value`, `Invalid value: …`).
    pub message: String,
}

impl FieldError {
    pub fn required(field: impl Into<String>) -> Self {
        Self {
            reason: "FieldValueRequired",
            field: field.into(),
            message: "Required value".into(),
        }
    }
    pub fn invalid(
        field: impl Into<String>,
        value: &Value,
        detail: impl std::fmt::Display,
    ) -> Self {
        Self {
            reason: "FieldValueInvalid",
            field: field.into(),
            message: format!("Invalid value: {value}: {detail}"),
        }
    }
    pub fn not_supported(field: impl Into<String>, value: &Value, supported: &[&str]) -> Self {
        let list: Vec<String> = supported.iter().map(|s| format!("\"{s}\"")).collect();
        Self {
            reason: "FieldValueNotSupported",
            field: field.into(),
            message: format!(
                "Unsupported value: {value}: supported values: {}",
                list.join(", ")
            ),
        }
    }
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            reason: "FieldValueForbidden",
            field: field.into(),
            message: format!("Forbidden: {}", detail.into()),
        }
    }
    /// A field that may not change (`… is immutable`, as Porch's CEL rules word it).
    pub fn immutable(field: impl Into<String>) -> Self {
        let field = field.into();
        Self {
            reason: "FieldValueInvalid",
            message: format!("Invalid value: \"object\": {field} is immutable"),
            field,
        }
    }
}

/// An error of the REST layer: what `Status` to send.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub kind: ErrorKind,
    /// Overrides the reason/code chosen from the kind (e.g. `Gone`, `RequestEntityTooLarge`).
    pub special: Option<Special>,
    pub message: String,
    pub details: Option<Box<Details>>,
}

/// Status codes that no error kind maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    BadRequest,
    Unauthorized,
    MethodNotAllowed,
    NotAcceptable,
    Gone,
    TooLarge,
    UnsupportedMediaType,
    /// The metadata store cannot be reached (PostgreSQL down): nothing was written, retry.
    ServiceUnavailable,
}

/// `Status.details`.
#[derive(Debug, Clone, Default)]
pub struct Details {
    pub name: String,
    pub group: String,
    pub kind: String,
    pub causes: Vec<FieldError>,
}

impl ApiError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            special: None,
            message: message.into(),
            details: None,
        }
    }
    fn special(s: Special, kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            special: Some(s),
            message: message.into(),
            details: None,
        }
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::special(Special::BadRequest, ErrorKind::Invalid, message)
    }
    pub fn unauthorized() -> Self {
        Self::special(Special::Unauthorized, ErrorKind::Forbidden, "Unauthorized")
    }
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::special(Special::MethodNotAllowed, ErrorKind::Invalid, message)
    }
    pub fn not_acceptable(message: impl Into<String>) -> Self {
        Self::special(Special::NotAcceptable, ErrorKind::Invalid, message)
    }
    pub fn gone(message: impl Into<String>) -> Self {
        Self::special(Special::Gone, ErrorKind::Conflict, message)
    }
    pub fn too_large(message: impl Into<String>) -> Self {
        Self::special(Special::TooLarge, ErrorKind::Invalid, message)
    }
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::special(Special::UnsupportedMediaType, ErrorKind::Invalid, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }
    /// `404 <plural>.<group> "<name>" not found`.
    pub fn not_found(group: &str, plural: &str, name: &str) -> Self {
        Self::new(
            ErrorKind::NotFound,
            format!("{} \"{name}\" not found", qualified(plural, group)),
        )
        .with_details(name, group, plural)
    }
    pub fn already_exists(group: &str, plural: &str, name: &str) -> Self {
        Self::new(
            ErrorKind::AlreadyExists,
            format!("{} \"{name}\" already exists", qualified(plural, group)),
        )
        .with_details(name, group, plural)
    }
    pub fn conflict(group: &str, plural: &str, name: &str) -> Self {
        Self::new(
            ErrorKind::Conflict,
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; \
                 please apply your changes to the latest version and try again",
                qualified(plural, group)
            ),
        )
        .with_details(name, group, plural)
    }
    /// `422 <Kind>.<group> "<name>" is invalid: <field>: <msg>, …`.
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<FieldError>) -> Self {
        let list: Vec<String> = causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        let what = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let mut e = Self::new(
            ErrorKind::Invalid,
            format!("{what} \"{name}\" is invalid: {}", list.join(", ")),
        )
        .with_details(name, group, kind);
        if let Some(d) = e.details.as_mut() {
            d.causes = causes;
        }
        e
    }
    pub fn with_details(mut self, name: &str, group: &str, kind: &str) -> Self {
        self.details = Some(Box::new(Details {
            name: name.into(),
            group: group.into(),
            kind: kind.into(),
            causes: self.details.map(|d| d.causes).unwrap_or_default(),
        }));
        self
    }

    /// The single mapping from an error to an HTTP code and a Kubernetes reason.
    pub fn code_and_reason(&self) -> (u16, &'static str) {
        if let Some(s) = self.special {
            return match s {
                Special::BadRequest => (400, "BadRequest"),
                Special::Unauthorized => (401, "Unauthorized"),
                Special::MethodNotAllowed => (405, "MethodNotAllowed"),
                Special::NotAcceptable => (406, "NotAcceptable"),
                Special::Gone => (410, "Expired"),
                Special::TooLarge => (413, "RequestEntityTooLarge"),
                Special::UnsupportedMediaType => (415, "UnsupportedMediaType"),
                Special::ServiceUnavailable => (503, "ServiceUnavailable"),
            };
        }
        match self.kind {
            ErrorKind::NotFound => (404, "NotFound"),
            ErrorKind::AlreadyExists => (409, "AlreadyExists"),
            ErrorKind::Conflict => (409, "Conflict"),
            ErrorKind::Invalid => (422, "Invalid"),
            ErrorKind::Forbidden => (403, "Forbidden"),
            // An unreachable git remote or upstream is reported as Porch reports task
            // errors: 500 InternalError. Not 503: clients (kube-rs, client-go) retry 503
            // with backoff for minutes, which turns a clear error into a hang.
            _ => (500, "InternalError"),
        }
    }

    /// The `Status` object for this error.
    pub fn to_status(&self) -> Value {
        let (code, reason) = self.code_and_reason();
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": reason,
            "code": code,
        });
        // kubectl prints the reasons of a 422 only from `details.causes`: a 422 built without
        // causes gets one read from its message, so no Invalid reply is just "is invalid".
        let derived;
        let details = match &self.details {
            Some(d) if code != 422 || !d.causes.is_empty() => Some(&**d),
            Some(d) => {
                derived = Details {
                    causes: vec![cause_from_message(&self.message)],
                    ..(**d).clone()
                };
                Some(&derived)
            }
            None if code == 422 => {
                derived = Details {
                    causes: vec![cause_from_message(&self.message)],
                    ..Details::default()
                };
                Some(&derived)
            }
            None => None,
        };
        if let Some(d) = details {
            let mut details = serde_json::Map::new();
            if !d.name.is_empty() {
                details.insert("name".into(), d.name.clone().into());
            }
            if !d.group.is_empty() {
                details.insert("group".into(), d.group.clone().into());
            }
            if !d.kind.is_empty() {
                details.insert("kind".into(), d.kind.clone().into());
            }
            if !d.causes.is_empty() {
                let causes: Vec<Value> = d
                    .causes
                    .iter()
                    .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
                    .collect();
                details.insert("causes".into(), causes.into());
            }
            status["details"] = Value::Object(details);
        }
        status
    }
}

/// The cause a 422 message states: after a `<Kind> "<name>" is invalid: ` prefix (and
/// Porch's `Internal error occurred: `), a leading `<field.path>: ` names the field.
fn cause_from_message(message: &str) -> FieldError {
    let mut text = message;
    if let Some(i) = text.find("\" is invalid: ") {
        text = &text[i + "\" is invalid: ".len()..];
    }
    text = text.trim_start_matches("Internal error occurred: ");
    let field = text.split_once(": ").map(|(f, _)| f).filter(|f| {
        !f.is_empty()
            && f.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-[]/".contains(c))
    });
    match field {
        Some(f) => FieldError {
            reason: "FieldValueInvalid",
            field: f.to_owned(),
            message: text[f.len() + 2..].to_owned(),
        },
        None => FieldError {
            reason: "FieldValueInvalid",
            field: String::new(),
            message: text.to_owned(),
        },
    }
}

fn qualified(plural: &str, group: &str) -> String {
    if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match &e {
            StoreError::Gone { .. } => ApiError::gone(e.to_string()),
            // Unlike an unreachable git remote (500, see `code_and_reason`), a store outage
            // is the server's own state: 503, and readiness is false meanwhile.
            StoreError::Unavailable(_) => ApiError::special(
                Special::ServiceUnavailable,
                ErrorKind::Unavailable,
                e.to_string(),
            ),
            _ => ApiError::new(e.kind(), e.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (code, _) = self.code_and_reason();
        if code >= 500 {
            tracing::error!(code, message = %self.message, "request failed");
        } else {
            tracing::debug!(code, message = %self.message, "request rejected");
        }
        let body = serde_json::to_vec(&self.to_status()).unwrap_or_default();
        let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, [(CONTENT_TYPE, "application/json")], body).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_reads_like_kubernetes() {
        let s = ApiError::not_found("config.porch.kpt.dev", "repositories", "x").to_status();
        assert_eq!(s["code"], 404);
        assert_eq!(s["reason"], "NotFound");
        assert_eq!(
            s["message"],
            "repositories.config.porch.kpt.dev \"x\" not found"
        );
        assert_eq!(s["kind"], "Status");
    }

    #[test]
    fn unreachable_remote_is_an_internal_error_not_a_retryable_503() {
        let e = ApiError::new(ErrorKind::Unavailable, "remote x unavailable");
        let s = e.to_status();
        assert_eq!(s["code"], 500);
        assert_eq!(s["reason"], "InternalError");
    }

    #[test]
    fn every_422_carries_a_cause() {
        let porch = ApiError::new(
            ErrorKind::Invalid,
            "PackageRevision.porch.kpt.dev \"r.p.ws\" is invalid: spec.lifecycle: Invalid value: \"Published\": value can be only updated to Draft,Proposed",
        )
        .with_details("r.p.ws", "porch.kpt.dev", "PackageRevision");
        let s = porch.to_status();
        assert_eq!(s["details"]["name"], "r.p.ws");
        assert_eq!(
            s["details"]["causes"],
            json!([{"reason": "FieldValueInvalid", "field": "spec.lifecycle",
                    "message": "Invalid value: \"Published\": value can be only updated to Draft,Proposed"}])
        );
        let bare = ApiError::new(
            ErrorKind::Invalid,
            "Internal error occurred: readiness conditions not met",
        );
        let s = bare.to_status();
        assert_eq!(
            s["details"]["causes"][0]["message"],
            "readiness conditions not met"
        );
        assert_eq!(s["details"]["causes"][0]["field"], "");
        // Other codes keep their details as they are.
        let nf = ApiError::not_found("", "secrets", "x").to_status();
        assert!(nf["details"].get("causes").is_none());
        assert!(
            ApiError::bad_request("x")
                .to_status()
                .get("details")
                .is_none()
        );
    }

    #[test]
    fn invalid_lists_causes() {
        let e = ApiError::invalid(
            "config.porch.kpt.dev",
            "Repository",
            "r",
            vec![FieldError::required("spec.git.repo")],
        );
        let s = e.to_status();
        assert_eq!(s["code"], 422);
        assert_eq!(s["details"]["causes"][0]["field"], "spec.git.repo");
        assert!(
            s["message"]
                .as_str()
                .is_some_and(|m| m.ends_with("spec.git.repo: Required value"))
        );
    }
}
