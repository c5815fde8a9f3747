//! Porch's field selectors on package revisions (spec §7.5): `spec.revision` with a leading
//! `v` stripped and `0` meaning no filter, `spec.lifecycle` validated and OR-ed,
//! `spec.packageMetadata.labels[<key>]`, plus the plain paths; label selectors as usual.
//! Unlike Porch, the same selectors also filter watch events.

use porch_apiserver::{ApiError, Selectors};
use porch_core::lifecycle::Lifecycle;
use porch_engine::ListOptions;
use serde_json::Value;

use super::convert::str_at;

/// The field selector paths package revisions accept (besides metadata.name/namespace).
pub fn field_paths() -> Vec<String> {
    [
        "spec.revision",
        "spec.packageName",
        "spec.repository",
        "spec.workspaceName",
        "spec.lifecycle",
        "spec.packageMetadata.labels[]",
    ]
    .map(String::from)
    .to_vec()
}

const LABEL_PREFIX: &str = "spec.packageMetadata.labels[";

/// Checks what the generic parser cannot: lifecycle values and empty values.
pub fn validate(sel: &Selectors) -> Result<(), ApiError> {
    for f in &sel.fields {
        if f.negated {
            return Err(ApiError::bad_request(format!(
                "unsupported fieldSelector operator \"!=\" for field {}",
                f.path
            )));
        }
        if f.value.is_empty() {
            return Err(ApiError::bad_request(format!(
                "fieldSelector {} must have a value",
                f.path
            )));
        }
        if f.path == "spec.lifecycle" && f.value.parse::<Lifecycle>().is_err() {
            return Err(ApiError::bad_request(format!(
                "unsupported fieldSelector value {:?} for field {}",
                f.value, f.path
            )));
        }
        if f.path.starts_with(LABEL_PREFIX) && f.path.len() <= LABEL_PREFIX.len() + 1 {
            return Err(ApiError::bad_request(
                "fieldSelector spec.packageMetadata.labels[] needs a label key",
            ));
        }
    }
    Ok(())
}

/// The part of the selectors the engine's index can answer directly (a pre-filter: it
/// keeps everything [`matches`] accepts), so a list with `--revision=1` builds the JSON of
/// the few revisions that can match instead of all 12,000.
pub fn prefilter(namespace: Option<&str>, sel: &Selectors) -> ListOptions {
    let mut o = ListOptions {
        namespace: namespace.map(str::to_owned),
        ..ListOptions::default()
    };
    for f in &sel.fields {
        match f.path.as_str() {
            "spec.repository" => {
                o.repository = porch_core::names::RepositoryName::discovered(&f.value).ok();
            }
            "spec.workspaceName" => o.workspace = Some(f.value.clone()),
            // Several revisions can only match nothing; keeping one is still a pre-filter.
            "spec.revision" => o.revision = wanted_revision(&f.value).or(o.revision),
            // OR-ed, as `matches` does; values were validated.
            "spec.lifecycle" => o.lifecycles.extend(f.value.parse::<Lifecycle>().ok()),
            "spec.packageName" => o.package = Some(f.value.clone()),
            "metadata.namespace" if namespace.is_none() => o.namespace = Some(f.value.clone()),
            _ => {}
        }
    }
    o
}

fn revision_matches(obj: &Value, wanted: &str) -> bool {
    let revision = obj
        .pointer("/spec/revision")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    wanted_revision(wanted).is_none_or(|n| revision == n)
}

/// The revision a `spec.revision` value asks for: a leading `v` stripped, `None` for `0`
/// (Porch's "no filter"), and -1 for what is not a number (as Porch, which then finds only
/// placeholders).
fn wanted_revision(value: &str) -> Option<i64> {
    let value = value.strip_prefix('v').unwrap_or(value);
    Some(value.parse().unwrap_or(-1)).filter(|n| *n != 0)
}

/// Whether a `PackageRevision` object matches.
pub fn matches(sel: &Selectors, obj: &Value) -> bool {
    let mut plain = Selectors {
        labels: sel.labels.clone(),
        fields: Vec::new(),
    };
    let mut lifecycles: Vec<&str> = Vec::new();
    for f in &sel.fields {
        let ok = match f.path.as_str() {
            "spec.revision" => revision_matches(obj, &f.value),
            "spec.lifecycle" => {
                lifecycles.push(&f.value);
                true
            }
            p if p.starts_with(LABEL_PREFIX) => {
                let key = &p[LABEL_PREFIX.len()..p.len() - 1];
                obj.pointer("/spec/packageMetadata/labels")
                    .and_then(|l| l.get(key))
                    .and_then(Value::as_str)
                    == Some(f.value.as_str())
            }
            _ => {
                plain.fields.push(f.clone());
                true
            }
        };
        if !ok {
            return false;
        }
    }
    (lifecycles.is_empty() || lifecycles.contains(&str_at(obj, "/spec/lifecycle")))
        && plain.matches(obj)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sel(fields: &str) -> Selectors {
        Selectors::parse(None, Some(fields), &field_paths()).expect("valid selector")
    }

    #[test]
    fn revision_zero_means_all_and_v_is_stripped() {
        let obj = json!({"spec": {"revision": 2, "lifecycle": "Published"}});
        assert!(matches(&sel("spec.revision=0"), &obj));
        assert!(matches(&sel("spec.revision=v2"), &obj));
        assert!(!matches(&sel("spec.revision=1"), &obj));
    }

    #[test]
    fn lifecycles_are_ored_and_validated() {
        let obj = json!({"spec": {"lifecycle": "Draft"}});
        assert!(matches(
            &sel("spec.lifecycle=Published,spec.lifecycle=Draft"),
            &obj
        ));
        assert!(!matches(&sel("spec.lifecycle=Published"), &obj));
        assert!(validate(&sel("spec.lifecycle=Final")).is_err());
    }

    #[test]
    fn the_model_check_agrees_with_the_object_match() {
        for (revision, lifecycle) in [(0, Lifecycle::Draft), (2, Lifecycle::Published)] {
            let pr = super::super::testing::revision(lifecycle, revision);
            let obj = super::super::convert::revision_json(&pr);
            for s in [
                "spec.revision=0",
                "spec.revision=2",
                "spec.revision=v2",
                "spec.revision=1",
                "spec.lifecycle=Draft",
                "spec.lifecycle=Published,spec.lifecycle=Draft",
                "spec.lifecycle=Proposed",
                "spec.revision=2,spec.lifecycle=Published",
            ] {
                // These selectors read only revision and lifecycle, so the pre-filter is
                // exact for them: it drops what the object match rejects, nothing more.
                let sel = sel(s);
                assert_eq!(
                    prefilter(None, &sel).matches(&pr),
                    matches(&sel, &obj),
                    "{s} on {revision}/{lifecycle}"
                );
            }
        }
    }

    #[test]
    fn package_metadata_labels() {
        let obj = json!({"spec": {"packageMetadata": {"labels": {"team": "core"}}}});
        assert!(matches(
            &sel("spec.packageMetadata.labels[team]=core"),
            &obj
        ));
        assert!(!matches(
            &sel("spec.packageMetadata.labels[team]=edge"),
            &obj
        ));
    }
}
