//! Unrolling `spec.targets` into one context per PackageVariant to generate (upstream
//! `unrollDownstreamTargets`): explicit repositories × package names, Repositories chosen by
//! a label selector, or arbitrary objects of the namespace chosen by kind, labels and name.

use porch_api::packagevariantset::{PackageVariantSetSpec, Target};
use serde_json::Value;

use super::selector::{Requirement, to_selector_string};
use super::template::{PackageVariantTemplate, parse_template};
use super::{PvsError, repositories_gvr};
use crate::objects::Objects;

/// What one PackageVariant is rendered from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PvContext {
    pub template: Option<PackageVariantTemplate>,
    /// The downstream repository unless the template says otherwise: the listed repository,
    /// or the name of the selected object.
    pub repo_default: String,
    /// The downstream package unless the template says otherwise: a listed package name, or
    /// the upstream package.
    pub package_default: String,
    /// The selected object (`target` in expressions); none for listed repositories.
    pub object: Option<Value>,
}

/// Every context, target by target, in the order the targets and the listed objects come.
/// An unserved `apiVersion`/`kind` is [`PvsError::NoMatch`].
pub async fn unroll(
    objects: &dyn Objects,
    namespace: &str,
    spec: &PackageVariantSetSpec,
) -> Result<Vec<PvContext>, PvsError> {
    let upstream_package = spec
        .upstream
        .as_ref()
        .and_then(|u| u.package.clone())
        .unwrap_or_default();
    let mut out = Vec::new();
    for (i, target) in spec.targets.iter().flatten().enumerate() {
        let template = parse_template(target.template.as_ref())
            .map_err(|e| PvsError::Malformed(format!("spec.targets[{i}].template: {e}")))?;
        if let Some(repos) = target.repositories.as_ref().filter(|r| !r.is_empty()) {
            for rt in repos {
                let names = match rt.package_names.as_deref() {
                    Some(n) if !n.is_empty() => n.to_vec(),
                    _ => vec![upstream_package.clone()],
                };
                for pn in names {
                    out.push(PvContext {
                        template: template.clone(),
                        repo_default: rt.name.clone(),
                        package_default: pn,
                        object: None,
                    });
                }
            }
            continue;
        }
        let selected = select(objects, namespace, target).await?;
        if selected.is_empty() {
            tracing::warn!(
                namespace,
                target = i,
                "no objects selected by spec.targets[{i}]"
            );
        }
        for obj in selected {
            let name = obj
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            out.push(PvContext {
                template: template.clone(),
                repo_default: name,
                package_default: upstream_package.clone(),
                object: Some(obj),
            });
        }
    }
    Ok(out)
}

/// The objects a `repositorySelector` or `objectSelector` target selects.
async fn select(
    objects: &dyn Objects,
    namespace: &str,
    target: &Target,
) -> Result<Vec<Value>, PvsError> {
    let (gvr, selector, name) = if let Some(sel) = &target.repository_selector {
        let exprs = requirements(&sel.match_expressions)?;
        let s =
            to_selector_string(sel.match_labels.as_ref(), &exprs).map_err(PvsError::Selector)?;
        let gvr = objects
            .resolve("config.porch.kpt.dev/v1alpha1", "Repository")
            .unwrap_or_else(repositories_gvr);
        (gvr, s, None)
    } else if let Some(sel) = &target.object_selector {
        let exprs = requirements(&sel.match_expressions)?;
        let s =
            to_selector_string(sel.match_labels.as_ref(), &exprs).map_err(PvsError::Selector)?;
        let gvr = objects
            .resolve(&sel.api_version, &sel.kind)
            .ok_or_else(|| PvsError::NoMatch {
                api_version: sel.api_version.clone(),
                kind: sel.kind.clone(),
            })?;
        (gvr, s, sel.name.clone().filter(|n| !n.is_empty()))
    } else {
        // Validation refuses a target with none of the three.
        return Ok(Vec::new());
    };
    let mut listed = objects.list(&gvr, Some(namespace), &selector).await?;
    if let Some(name) = name {
        listed.retain(|o| o.pointer("/metadata/name").and_then(Value::as_str) == Some(&name));
    }
    Ok(listed)
}

/// `matchExpressions` of either selector type, read through JSON so both shapes agree.
fn requirements<T: serde::Serialize>(exprs: &Option<Vec<T>>) -> Result<Vec<Requirement>, PvsError> {
    let Some(exprs) = exprs else {
        return Ok(Vec::new());
    };
    let v = serde_json::to_value(exprs).map_err(|e| PvsError::Selector(e.to_string()))?;
    serde_json::from_value(v).map_err(|e| PvsError::Selector(format!("matchExpressions: {e}")))
}

#[cfg(test)]
#[path = "targets_tests.rs"]
mod tests;
