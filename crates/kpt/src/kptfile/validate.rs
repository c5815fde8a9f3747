//! The pipeline checks kpt makes when it loads a package (`Kptfile.Validate`): each
//! function's executor and image, its config sources, the `configPath` syntax and file,
//! and its selectors' patterns, in kpt's order, reported as kpt's `ValidateError` blocks.

use super::{CONFIG_PATH_MISSING, Kptfile, KptfileError};
use crate::goquote::go_quote;

impl Kptfile {
    /// Validate the pipeline rules kpt checks before rendering, without looking at files.
    pub fn validate_pipeline(&self) -> Result<(), KptfileError> {
        self.validate_pipeline_in(&|_| true)
    }

    /// Validate the pipeline as kpt does when it loads a package: function by function,
    /// the executor, the config sources, then the `configPath` syntax and whether
    /// `exists(clean_path)` (a path relative to the package) names a file.
    pub fn validate_pipeline_in(&self, exists: &dyn Fn(&str) -> bool) -> Result<(), KptfileError> {
        let Some(p) = &self.pipeline else {
            return Ok(());
        };
        for (list, fns) in [("mutators", &p.mutators), ("validators", &p.validators)] {
            for (i, f) in fns.iter().enumerate() {
                let field = |name: &str| format!("pipeline.{list}[{i}].{name}");
                let whole = format!("pipeline.{list}[{i}]");
                if f.image.is_empty() && f.exec.is_empty() {
                    return Err(KptfileError::Invalid {
                        field: whole,
                        value: String::new(),
                        reason: "must specify a functon (`image` or `exec`) to execute".into(),
                    });
                }
                if !f.image.is_empty() && !f.exec.is_empty() {
                    return Err(KptfileError::Invalid {
                        field: whole,
                        value: String::new(),
                        reason: "must not specify both `image` and `exec` at the same time".into(),
                    });
                }
                if let Some(e) = (!f.image.is_empty())
                    .then(|| crate::image_ref::parse(&f.image).err())
                    .flatten()
                {
                    return Err(KptfileError::Invalid {
                        field: field("image"),
                        value: f.image.clone(),
                        reason: format!(
                            "function image reference {} is invalid: {e}",
                            go_quote(&f.image)
                        ),
                    });
                }
                let sources = usize::from(!f.config_map.is_empty())
                    + usize::from(!f.config_path.is_empty())
                    + usize::from(f.config_ref.is_some());
                if sources > 1 {
                    // `configRef` exists only in kpt HEAD, whose `validateConfigSources`
                    // words any clash this way; without it the older text is kept, as
                    // kpt's recorded cases use it.
                    let reason = if f.config_ref.is_some() {
                        "functionConfig must specify at most one of `configMap`, `configPath`, or `configRef`"
                    } else {
                        "functionConfig must not specify both `configMap` and `configPath` at the same time"
                    };
                    return Err(KptfileError::Invalid {
                        field: whole,
                        value: String::new(),
                        reason: reason.into(),
                    });
                }
                if let Some(r) = &f.config_ref {
                    // kpt HEAD's `ResourceReference.validate`: kind first, then name.
                    for (name, value) in [("kind", &r.kind), ("name", &r.name)] {
                        if value.is_empty() {
                            return Err(KptfileError::Invalid {
                                field: field(&format!("configRef.{name}")),
                                value: String::new(),
                                reason: format!("configRef must specify `{name}`"),
                            });
                        }
                    }
                }
                if !f.config_path.is_empty() {
                    let cp = &f.config_path;
                    // kpt cleans the path (Go's filepath.Clean) and refuses any ".."
                    // left in it, even inside a name.
                    let cleaned = go_clean(cp);
                    let reason = if cp.trim().is_empty() {
                        Some("path must not be empty")
                    } else if cleaned.starts_with('/') {
                        Some("path must be relative")
                    } else if cleaned.contains("..") {
                        Some("path must not be outside the package")
                    } else {
                        None
                    };
                    let reason = reason.or_else(|| {
                        let clean = crate::package::resources::clean_path(cp).unwrap_or_default();
                        (!exists(&clean)).then_some(CONFIG_PATH_MISSING)
                    });
                    if let Some(reason) = reason {
                        return Err(KptfileError::Invalid {
                            field: field("configPath"),
                            value: cp.clone(),
                            reason: reason.into(),
                        });
                    }
                }
                for (kind, selectors) in [("selectors", &f.selectors), ("exclude", &f.exclusions)] {
                    for (j, sel) in selectors.iter().enumerate() {
                        if let Some(reason) = regexp_error(&sel.resource_file_regexp) {
                            return Err(KptfileError::Invalid {
                                field: field(&format!("{kind}[{j}].resourceFileRegexp")),
                                value: sel.resource_file_regexp.clone(),
                                reason: format!("invalid regular expression: {reason}"),
                            });
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Why a selector's `resourceFileRegexp` does not compile, in Go's words where they are
/// known (kpt HEAD refuses such a Kptfile before anything renders).
fn regexp_error(pattern: &str) -> Option<String> {
    if pattern.is_empty() {
        return None;
    }
    crate::goregex::compile(pattern).err()
}

/// Go's `filepath.Clean` on a slash-separated path: `.` and `..` resolved lexically,
/// `..` kept at the start of a relative path, `.` for nothing.
fn go_clean(p: &str) -> String {
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if rooted => {}
                _ => parts.push(".."),
            },
            s => parts.push(s),
        }
    }
    let body = parts.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".to_string(),
        (false, false) => body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kptfile::tests::head;

    #[test]
    fn validates_config_path() {
        let text = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: x\npipeline:\n  mutators:\n    - image: set-labels\n      configPath: /abs/x.yaml\n";
        let kf = Kptfile::parse(text).expect("valid yaml");
        let err = kf.validate_pipeline().expect_err("absolute");
        assert!(
            err.to_string().contains("Reason: path must be relative"),
            "{err}"
        );
    }

    #[test]
    fn config_paths_are_checked_after_go_cleaning() {
        assert_eq!(
            go_clean("some/../../home/.kube/config"),
            "../home/.kube/config"
        );
        assert_eq!(go_clean("./a/./b/../c.yaml"), "a/c.yaml");
        assert_eq!(go_clean("/x/../../y"), "/y");
        assert_eq!(go_clean("a/.."), ".");
        let reason = |cp: &str| {
            let kf = Kptfile::parse(&head(&format!(
                "pipeline:\n  mutators:\n    - image: a\n      configPath: {cp:?}\n"
            )))
            .expect("decodes");
            match kf.validate_pipeline() {
                Ok(()) => String::new(),
                Err(KptfileError::Invalid { reason, .. }) => reason,
                Err(other) => other.to_string(),
            }
        };
        assert_eq!(
            reason("some/../../home/.kube/config"),
            "path must not be outside the package"
        );
        assert_eq!(reason("a..b.yaml"), "path must not be outside the package");
        assert_eq!(reason("./x/../cfg.yaml"), "");
        assert_eq!(reason("/etc/cfg.yaml"), "path must be relative");
        assert_eq!(reason(" "), "path must not be empty");
    }

    #[test]
    fn invalid_blocks_are_kpts() {
        let both = head("pipeline:\n  mutators:\n    - image: a\n      exec: b\n");
        let err = Kptfile::parse(&both)
            .expect("decodes")
            .validate_pipeline()
            .expect_err("both");
        assert_eq!(
            err.to_string(),
            "Kptfile is invalid:\nField: `pipeline.mutators[0]`\nReason: must not specify both `image` and `exec` at the same time\n"
        );
        let none = head("pipeline:\n  validators:\n    - name: x\n");
        let err = Kptfile::parse(&none)
            .expect("decodes")
            .validate_pipeline()
            .expect_err("none");
        assert_eq!(
            err.to_string(),
            "Kptfile is invalid:\nField: `pipeline.validators[0]`\nReason: must specify a functon (`image` or `exec`) to execute\n"
        );
        let two = head(
            "pipeline:\n  mutators:\n    - image: a\n      configPath: c.yaml\n      configMap:\n        k: v\n",
        );
        let err = Kptfile::parse(&two)
            .expect("decodes")
            .validate_pipeline()
            .expect_err("two sources");
        assert_eq!(
            err.to_string(),
            "Kptfile is invalid:\nField: `pipeline.mutators[0]`\nReason: functionConfig must not specify both `configMap` and `configPath` at the same time\n"
        );
    }

    #[test]
    fn an_invalid_image_is_reported_after_the_executor_checks() {
        let kf = |fns: &str| {
            Kptfile::parse(&format!(
                "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n    - image: ok-fn\n  validators:\n{fns}"
            ))
            .expect("parses")
        };
        let err = kf("    - image: Bad_Fn\n      configMap: {a: b}\n      configPath: c.yaml\n")
            .validate_pipeline()
            .expect_err("invalid");
        assert_eq!(
            err.to_string(),
            "Kptfile is invalid:\nField: `pipeline.validators[0].image`\nValue: \"Bad_Fn\"\nReason: function image reference \"Bad_Fn\" is invalid: repository name must be lowercase\n"
        );
        // Both an image and an exec is reported first, as kpt checks it first.
        let err = kf("    - image: Bad_Fn\n      exec: ./x\n")
            .validate_pipeline()
            .expect_err("invalid");
        assert!(
            err.to_string()
                .contains("must not specify both `image` and `exec`")
        );
    }

    #[test]
    fn a_selector_pattern_that_does_not_compile_is_refused() {
        let text = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n    - image: fn-a\n      selectors:\n        - resourceFileRegexp: ok/.*\n      exclude:\n        - kind: Secret\n        - resourceFileRegexp: 'apps/(web'\n";
        let err = Kptfile::parse(text)
            .expect("parses")
            .validate_pipeline()
            .expect_err("invalid");
        assert_eq!(
            err.to_string(),
            "Kptfile is invalid:\nField: `pipeline.mutators[0].exclude[1].resourceFileRegexp`\nValue: \"apps/(web\"\nReason: invalid regular expression: error parsing regexp: missing closing ): `apps/(web`\n"
        );
    }

    #[test]
    fn a_config_path_must_name_a_file() {
        let kf = Kptfile::parse(&head(
            "pipeline:\n  mutators:\n    - image: a\n      configPath: ./cfg/a.yaml\n    - image: b\n      configPath: b.yaml\n",
        ))
        .expect("decodes");
        let seen = std::cell::RefCell::new(Vec::new());
        let err = kf
            .validate_pipeline_in(&|p| {
                seen.borrow_mut().push(p.to_string());
                p == "cfg/a.yaml"
            })
            .expect_err("b.yaml is missing");
        assert_eq!(
            err.to_string(),
            "Kptfile is invalid:\nField: `pipeline.mutators[1].configPath`\nValue: \"b.yaml\"\nReason: functionConfig must exist in the current package\n"
        );
        assert_eq!(*seen.borrow(), ["cfg/a.yaml", "b.yaml"]);
        kf.validate_pipeline_in(&|_| true).expect("all present");
    }
}
