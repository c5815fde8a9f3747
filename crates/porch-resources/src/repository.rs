//! `config.porch.kpt.dev/v1alpha1` `repositories`: columns, defaults and the validation and
//! immutability rules of Porch's CRD (spec §5.1).

use std::sync::Arc;

use porch_apiserver::{Column, FieldError, ResourceHooks, ResourceKind, eval_path};
use serde_json::{Value, json};

use super::git_spec;

pub(super) fn kind() -> ResourceKind {
    let mut k = ResourceKind::new(
        porch_api::CONFIG_GROUP,
        "v1alpha1",
        "Repository",
        "repositories",
    );
    k.short_names = vec!["repo".into()];
    k.schema = porch_api::crd_schema::<porch_api::Repository>();
    k.status_subresource = true;
    k.custom_resource = true;
    k.columns = vec![
        Column::path("Type", "string", ".spec.type"),
        Column::path("Content", "string", ".spec.content"),
        Column::path("Sync Schedule", "string", ".spec.sync.schedule"),
        Column::path("Deployment", "boolean", ".spec.deployment"),
        Column::path(
            "Ready",
            "string",
            ".status.conditions[?(@.type==\"Ready\")].status",
        ),
        Column::computed("Address", "string", |o| {
            eval_path(o, ".spec.git.repo")
                .or_else(|| eval_path(o, ".spec.oci.registry"))
                .unwrap_or(Value::Null)
        }),
        Column::path("Branch", "string", ".spec.git.branch").priority(1),
    ];
    k.field_selectors = vec![
        "spec.type".into(),
        "spec.git.repo".into(),
        "spec.git.branch".into(),
    ];
    k.hooks = Arc::new(RepositoryHooks);
    k
}

struct RepositoryHooks;

fn str_at<'a>(o: &'a Value, path: &str) -> Option<&'a str> {
    o.pointer(path).and_then(Value::as_str)
}

/// A five-field cron expression of numbers, ranges, lists, steps and `*` (or an @-macro).
fn valid_cron(s: &str) -> bool {
    let s = s.trim();
    if s.starts_with('@') {
        return [
            "@yearly",
            "@annually",
            "@monthly",
            "@weekly",
            "@daily",
            "@midnight",
            "@hourly",
        ]
        .contains(&s);
    }
    let fields: Vec<&str> = s.split_whitespace().collect();
    fields.len() == 5
        && fields.iter().all(|f| {
            f.chars()
                .all(|c| c.is_ascii_alphanumeric() || "*/,-?".contains(c))
        })
}

/// `spec.mutators` / `spec.validators`: each names exactly one of `image` or `functionRef`.
fn guardrail_problems(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for list in ["mutators", "validators"] {
        let items = spec.get(list).and_then(Value::as_array);
        for (i, f) in items.into_iter().flatten().enumerate() {
            let image = f
                .get("image")
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty());
            let by_ref = f.get("functionRef").is_some_and(|r| !r.is_null());
            if image == by_ref {
                errs.push(FieldError::invalid(
                    format!("spec.{list}[{i}]"),
                    f,
                    "exactly one of image or functionRef must be set",
                ));
            }
        }
    }
    errs
}

impl ResourceHooks for RepositoryHooks {
    fn default(&self, obj: &mut Value) {
        let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        if spec.get("content").is_none_or(|c| c.as_str() == Some("")) {
            spec.insert("content".into(), "Package".into());
        }
        if let Some(git) = spec.get_mut("git").and_then(Value::as_object_mut)
            && git.get("branch").is_none_or(Value::is_null)
        {
            git.insert("branch".into(), "main".into());
        }
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let Some(spec) = obj.get("spec").filter(|s| s.is_object()) else {
            errs.push(FieldError::required("spec"));
            return errs;
        };
        match spec.get("type").and_then(Value::as_str) {
            None | Some("") => errs.push(FieldError::required("spec.type")),
            Some("git") => match spec.get("git") {
                Some(g) if g.is_object() => {
                    match g.get("repo").and_then(Value::as_str) {
                        None | Some("") => errs.push(FieldError::required("spec.git.repo")),
                        Some(url) => {
                            if let Some(problem) = git_spec::url_problem(url) {
                                errs.push(FieldError::invalid(
                                    "spec.git.repo",
                                    &json!(url),
                                    problem,
                                ));
                            } else if let Some(problem) = crate::local_repos::problem(url) {
                                errs.push(FieldError::invalid(
                                    "spec.git.repo",
                                    &json!(url),
                                    &problem,
                                ));
                            }
                        }
                    }
                    match g.get("branch").and_then(Value::as_str) {
                        Some("") => errs.push(FieldError::invalid(
                            "spec.git.branch",
                            &json!(""),
                            "spec.git.branch in body should be at least 1 chars long",
                        )),
                        Some(b) => {
                            if let Some(problem) = git_spec::branch_problem(b) {
                                errs.push(FieldError::invalid(
                                    "spec.git.branch",
                                    &json!(b),
                                    problem,
                                ));
                            }
                        }
                        None => {}
                    }
                    if let Some(d) = g.get("directory").and_then(Value::as_str)
                        && let Some(problem) = git_spec::directory_problem(d)
                    {
                        errs.push(FieldError::invalid(
                            "spec.git.directory",
                            &json!(d),
                            problem,
                        ));
                    }
                }
                _ => errs.push(FieldError::required("spec.git")),
            },
            Some("oci") => match spec.get("oci") {
                Some(o) if o.is_object() => match o.get("registry").and_then(Value::as_str) {
                    None | Some("") => errs.push(FieldError::required("spec.oci.registry")),
                    Some(r) => {
                        if let Some(problem) = git_spec::oci_registry_problem(r) {
                            errs.push(FieldError::invalid("spec.oci.registry", &json!(r), problem));
                        }
                    }
                },
                _ => errs.push(FieldError::required("spec.oci")),
            },
            Some(other) => errs.push(FieldError::not_supported(
                "spec.type",
                &json!(other),
                &["git", "oci"],
            )),
        }
        match spec.get("content").and_then(Value::as_str) {
            None | Some("" | "Package") => {}
            // Function repositories are OCI registries of function images (listed as
            // `functions`); Porch never implemented them on git.
            Some("Function") if spec.get("type").and_then(Value::as_str) != Some("oci") => errs
                .push(FieldError::invalid(
                    "spec.content",
                    &json!("Function"),
                    "Function repositories must be of type oci",
                )),
            Some("Function") => {}
            Some(c) => errs.push(FieldError::not_supported(
                "spec.content",
                &json!(c),
                &["Package", "Function"],
            )),
        }
        errs.extend(guardrail_problems(spec));
        if let Some(s) = str_at(obj, "/spec/sync/schedule")
            && !s.is_empty()
            && !valid_cron(s)
        {
            errs.push(FieldError::invalid(
                "spec.sync.schedule",
                &json!(s),
                "not a valid cron expression",
            ));
        }
        if let Some(t) = str_at(obj, "/spec/sync/runOnceAt")
            && t.parse::<k8s_openapi::jiff::Timestamp>().is_err()
        {
            errs.push(FieldError::invalid(
                "spec.sync.runOnceAt",
                &json!(t),
                "must be an RFC 3339 time",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate_create(new);
        for (path, field) in [
            ("/spec/type", "spec.type"),
            ("/spec/git/repo", "spec.git.repo"),
            ("/spec/git/branch", "spec.git.branch"),
            ("/spec/git/directory", "spec.git.directory"),
            ("/spec/oci/registry", "spec.oci.registry"),
        ] {
            let (a, b) = (old.pointer(path), new.pointer(path));
            if a.is_some() && a != b {
                errs.push(FieldError::immutable(field));
            }
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> Value {
        json!({"metadata": {"name": "r"}, "spec": {"type": "git", "git": {"repo": "https://h/r.git"}}})
    }

    #[test]
    fn defaults_and_validates() {
        let mut r = repo();
        RepositoryHooks.default(&mut r);
        assert_eq!(r["spec"]["content"], "Package");
        assert_eq!(r["spec"]["git"]["branch"], "main");
        assert!(RepositoryHooks.validate_create(&r).is_empty());
        let bad = json!({"spec": {"type": "svn"}});
        assert_eq!(
            RepositoryHooks.validate_create(&bad)[0].reason,
            "FieldValueNotSupported"
        );
    }

    #[test]
    fn git_fields_reaching_git_are_checked() {
        let with = |field: &str, value: &str| {
            let mut r = repo();
            r["spec"]["git"][field] = json!(value);
            RepositoryHooks.validate_create(&r)
        };
        let errs = with("repo", "not a url");
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "spec.git.repo");
        assert!(
            errs[0]
                .message
                .starts_with("Invalid value: \"not a url\": ")
        );
        assert_eq!(
            with("repo", "--upload-pack=touch /tmp/x")[0].field,
            "spec.git.repo"
        );
        assert_eq!(with("directory", "../..")[0].field, "spec.git.directory");
        assert_eq!(with("branch", "--orphan")[0].field, "spec.git.branch");
        assert!(with("directory", "/").is_empty());
        assert!(with("repo", "git@github.com:o/r.git").is_empty());
        let oci = json!({"spec": {"type": "oci", "oci": {"registry": "-r"}}});
        assert_eq!(
            RepositoryHooks.validate_create(&oci)[0].field,
            "spec.oci.registry"
        );
    }

    #[test]
    fn repo_and_branch_are_immutable() {
        let mut old = repo();
        RepositoryHooks.default(&mut old);
        let mut new = old.clone();
        new["spec"]["git"]["repo"] = json!("https://other/x.git");
        let errs = RepositoryHooks.validate_update(&new, &old);
        assert_eq!(errs.len(), 1);
        assert!(errs[0].message.ends_with("spec.git.repo is immutable"));
        let mut desc = old.clone();
        desc["spec"]["description"] = json!("changed");
        assert!(RepositoryHooks.validate_update(&desc, &old).is_empty());
    }
}
