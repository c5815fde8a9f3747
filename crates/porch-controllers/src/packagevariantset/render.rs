//! Rendering one PackageVariant spec from the set's upstream, a target and its template
//! (upstream `renderPackageVariantSpec`). Literal fields are copied; `*Expr` fields are CEL
//! and win over literals of the same key.

use std::collections::{BTreeMap, BTreeSet};

use porch_api::packagevariant::{
    Downstream, Function, InjectionSelector, PackageContext, PackageVariantSpec, Pipeline, Upstream,
};
use serde_json::{Value, json};

use super::expr::{self, Evaluator};
use super::targets::PvContext;
use super::template::{FunctionTemplate, MapExpr};

/// The spec of the PackageVariant for `downstream`. `repositories` are the Repository objects
/// of the namespace (a template needs the downstream one: `repository` in expressions);
/// `upstream_pr` is the upstream PackageRevision object.
pub fn render_spec(
    upstream: &Upstream,
    repositories: &[Value],
    upstream_pr: &Value,
    downstream: &PvContext,
) -> Result<PackageVariantSpec, String> {
    let mut spec = PackageVariantSpec {
        upstream: Some(upstream.clone()),
        downstream: Some(Downstream {
            repo: Some(downstream.repo_default.clone()),
            package: Some(downstream.package_default.clone()),
        }),
        ..Default::default()
    };
    let Some(pvt) = &downstream.template else {
        return Ok(spec);
    };

    let mut ev = base_inputs(upstream_pr, downstream)?;

    let mut repo = downstream.repo_default.clone();
    let mut package = downstream.package_default.clone();
    if let Some(d) = &pvt.downstream {
        if let Some(r) = non_empty(&d.repo) {
            repo = r.to_string();
        }
        if let Some(e) = non_empty(&d.repo_expr) {
            repo = ev
                .eval(e)
                .map_err(|e| format!("template.downstream.repoExpr: {e}"))?;
        }
    }

    let Some(repo_obj) = repositories.iter().find(|r| name_of(r) == repo) else {
        return Err(format!("repository {repo:?} could not be loaded"));
    };
    ev.set(expr::REPOSITORY, expr::object_input(repo_obj))?;

    if let Some(d) = &pvt.downstream {
        if let Some(p) = non_empty(&d.package) {
            package = p.to_string();
        }
        if let Some(e) = non_empty(&d.package_expr) {
            package = ev
                .eval(e)
                .map_err(|e| format!("template.downstream.packageExpr: {e}"))?;
        }
    }
    spec.downstream = Some(Downstream {
        repo: Some(repo),
        package: Some(package),
    });

    spec.adoption_policy = pvt.adoption_policy.clone();
    spec.deletion_policy = pvt.deletion_policy.clone();
    spec.labels = overlay_map(
        "template.labelExprs",
        pvt.labels.as_ref(),
        pvt.label_exprs.as_deref(),
        &ev,
    )?;
    spec.annotations = overlay_map(
        "template.annotationExprs",
        pvt.annotations.as_ref(),
        pvt.annotation_exprs.as_deref(),
        &ev,
    )?;

    if let Some(pc) = &pvt.package_context {
        let data = overlay_map(
            "template.packageContext.dataExprs",
            pc.data.as_ref(),
            pc.data_exprs.as_deref(),
            &ev,
        )?;
        let remove_keys = overlay_set(
            "template.packageContext.removeKeyExprs",
            pc.remove_keys.as_deref(),
            pc.remove_key_exprs.as_deref(),
            &ev,
        )?;
        spec.package_context = Some(PackageContext { data, remove_keys });
    }

    if let Some(injectors) = &pvt.injectors {
        let mut out = Vec::with_capacity(injectors.len());
        for (i, t) in injectors.iter().enumerate() {
            let mut name = non_empty(&t.name).unwrap_or("").to_string();
            if let Some(e) = non_empty(&t.name_expr) {
                name = ev
                    .eval(e)
                    .map_err(|e| format!("template.injectors[{i}].nameExpr: {e}"))?;
            }
            out.push(InjectionSelector {
                group: t.group.clone(),
                version: t.version.clone(),
                kind: t.kind.clone(),
                name,
            });
        }
        if !out.is_empty() {
            spec.injectors = Some(out);
        }
    }

    if let Some(p) = &pvt.pipeline {
        let validators =
            render_functions("template.pipeline.validators", p.validators.as_deref(), &ev)?;
        let mutators = render_functions("template.pipeline.mutators", p.mutators.as_deref(), &ev)?;
        if validators.is_some() || mutators.is_some() {
            spec.pipeline = Some(Pipeline {
                mutators,
                validators,
            });
        }
    }
    Ok(spec)
}

/// `repoDefault`, `packageDefault`, `upstream` and `target` (the selected object, or
/// `{repo, package}` for an explicitly listed repository).
fn base_inputs(upstream_pr: &Value, d: &PvContext) -> Result<Evaluator, String> {
    let mut ev = Evaluator::new();
    ev.set(expr::REPO_DEFAULT, json!(d.repo_default))?;
    ev.set(expr::PACKAGE_DEFAULT, json!(d.package_default))?;
    ev.set(expr::UPSTREAM, expr::object_input(upstream_pr))?;
    let target = match &d.object {
        Some(obj) => expr::object_input(obj),
        None => json!({"repo": d.repo_default, "package": d.package_default}),
    };
    ev.set(expr::TARGET, target)?;
    Ok(ev)
}

fn render_functions(
    field: &str,
    templates: Option<&[FunctionTemplate]>,
    ev: &Evaluator,
) -> Result<Option<Vec<Function>>, String> {
    let mut out = Vec::new();
    for (i, ft) in templates.unwrap_or_default().iter().enumerate() {
        let mut f = ft.function.clone();
        f.config_map = overlay_map(
            &format!("{field}[{i}].configMapExprs"),
            ft.function.config_map.as_ref(),
            ft.config_map_exprs.as_deref(),
            ev,
        )?;
        out.push(f);
    }
    Ok((!out.is_empty()).then_some(out))
}

/// `base` with each entry of `exprs` set over it, in order; `None` when nothing is left
/// (upstream `copyAndOverlayMapExpr`). An entry with neither key nor keyExpr sets key `""`,
/// as upstream does.
pub fn overlay_map(
    field: &str,
    base: Option<&BTreeMap<String, String>>,
    exprs: Option<&[MapExpr]>,
    ev: &Evaluator,
) -> Result<Option<BTreeMap<String, String>>, String> {
    let mut out = base.cloned().unwrap_or_default();
    for (i, me) in exprs.unwrap_or_default().iter().enumerate() {
        let mut k = me.key.clone().unwrap_or_default();
        if let Some(e) = &me.key_expr {
            k = ev
                .eval(e)
                .map_err(|e| format!("{field}[{i}].keyExpr: {e}"))?;
        }
        let mut v = me.value.clone().unwrap_or_default();
        if let Some(e) = &me.value_expr {
            v = ev
                .eval(e)
                .map_err(|e| format!("{field}[{i}].valueExpr: {e}"))?;
        }
        out.insert(k, v);
    }
    Ok((!out.is_empty()).then_some(out))
}

/// The union of `base` and the values of `exprs`, sorted and without duplicates; `None` when
/// empty (upstream `copyAndOverlayStringSlice`).
fn overlay_set(
    field: &str,
    base: Option<&[String]>,
    exprs: Option<&[String]>,
    ev: &Evaluator,
) -> Result<Option<Vec<String>>, String> {
    let mut out: BTreeSet<String> = base.unwrap_or_default().iter().cloned().collect();
    for (i, e) in exprs.unwrap_or_default().iter().enumerate() {
        out.insert(ev.eval(e).map_err(|e| format!("{field}[{i}]: {e}"))?);
    }
    Ok((!out.is_empty()).then(|| out.into_iter().collect()))
}

fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

fn name_of(obj: &Value) -> &str {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
