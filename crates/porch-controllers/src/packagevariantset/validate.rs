//! Validation of a PackageVariantSet spec (upstream `validate.go`): every problem is reported,
//! in upstream's wording, and the set is Stalled with reason `ValidationError` until fixed.

use porch_api::packagevariantset::{PackageVariantSetSpec, Target};

use super::template::{FunctionTemplate, MapExpr, PackageVariantTemplate, parse_template};

const ADOPT_NONE: &str = "adoptNone";
const ADOPT_EXISTING: &str = "adoptExisting";
const DELETION_ORPHAN: &str = "orphan";
const DELETION_DELETE: &str = "delete";

/// Every validation error of `spec`, empty when it is valid.
pub fn validate(spec: &PackageVariantSetSpec) -> Vec<String> {
    let mut errs = Vec::new();
    match &spec.upstream {
        None => errs.push("spec.upstream is a required field".to_string()),
        Some(up) => {
            if up.package.as_deref().unwrap_or("").is_empty() {
                errs.push("spec.upstream.package is a required field".into());
            }
            if up.repo.as_deref().unwrap_or("").is_empty() {
                errs.push("spec.upstream.repo is a required field".into());
            }
            // Revision 0 is every unpublished draft, so it names nothing; a workspace name
            // names one revision on its own.
            let has_revision = up.revision.is_some_and(|r| r != 0);
            let has_workspace = !up.workspace_name.as_deref().unwrap_or("").is_empty();
            if !has_revision && !has_workspace {
                errs.push("spec.upstream.revision is a required field".into());
            }
        }
    }
    let targets = spec.targets.as_deref().unwrap_or_default();
    if targets.is_empty() {
        errs.push("must specify at least one item in spec.targets".into());
    }
    for (i, target) in targets.iter().enumerate() {
        validate_target(&mut errs, i, target);
    }
    errs
}

/// The `; `-joined message of the Stalled condition.
pub fn combine(errs: &[String]) -> String {
    errs.iter()
        .filter(|e| !e.is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join("; ")
}

fn validate_target(errs: &mut Vec<String>, i: usize, target: &Target) {
    let mut count = 0;
    if let Some(repos) = &target.repositories {
        count += 1;
        if repos.is_empty() {
            errs.push(format!(
                "spec.targets[{i}].repositories must not be an empty list if specified"
            ));
        }
        for (j, rt) in repos.iter().enumerate() {
            if rt.name.is_empty() {
                errs.push(format!(
                    "spec.targets[{i}].repositories[{j}].name cannot be empty"
                ));
            }
            for (k, pn) in rt.package_names.iter().flatten().enumerate() {
                if pn.is_empty() {
                    errs.push(format!(
                        "spec.targets[{i}].repositories[{j}].packageNames[{k}] cannot be empty"
                    ));
                }
            }
        }
    }
    if target.repository_selector.is_some() {
        count += 1;
    }
    if let Some(sel) = &target.object_selector {
        count += 1;
        if sel.api_version.is_empty() {
            errs.push(format!(
                "spec.targets[{i}].objectselector.apiVersion cannot be empty"
            ));
        }
        if sel.kind.is_empty() {
            errs.push(format!(
                "spec.targets[{i}].objectselector.kind cannot be empty"
            ));
        }
    }
    if count != 1 {
        errs.push(format!(
            "spec.targets[{i}] must specify one of `repositories`, `repositorySelector`, or `objectSelector`"
        ));
    }
    let field = format!("spec.targets[{i}].template");
    match parse_template(target.template.as_ref()) {
        Ok(Some(t)) => validate_template(errs, &t, &field),
        Ok(None) => {}
        Err(e) => errs.push(format!("{field}: {e}")),
    }
}

fn validate_template(errs: &mut Vec<String>, t: &PackageVariantTemplate, field: &str) {
    if let Some(p) = &t.adoption_policy
        && p != ADOPT_NONE
        && p != ADOPT_EXISTING
    {
        errs.push(format!(
            "{field}.adoptionPolicy can only be {ADOPT_NONE:?} or {ADOPT_EXISTING:?}"
        ));
    }
    if let Some(p) = &t.deletion_policy
        && p != DELETION_ORPHAN
        && p != DELETION_DELETE
    {
        errs.push(format!(
            "{field}.deletionPolicy can only be {DELETION_ORPHAN:?} or {DELETION_DELETE:?}"
        ));
    }
    if let Some(d) = &t.downstream {
        if d.repo.is_some() && d.repo_expr.is_some() {
            errs.push(format!(
                "{field} may specify only one of `downstream.repo` and `downstream.repoExpr`"
            ));
        }
        if d.package.is_some() && d.package_expr.is_some() {
            errs.push(format!(
                "{field} may specify only one of `downstream.package` and `downstream.packageExpr`"
            ));
        }
    }
    if let Some(m) = &t.label_exprs {
        validate_map_expr(errs, m, &format!("{field}.labelExprs"));
    }
    if let Some(m) = &t.annotation_exprs {
        validate_map_expr(errs, m, &format!("{field}.annotationExprs"));
    }
    if let Some(m) = t
        .package_context
        .as_ref()
        .and_then(|c| c.data_exprs.as_ref())
    {
        validate_map_expr(errs, m, &format!("{field}.packageContext.dataExprs"));
    }
    for (i, inj) in t.injectors.iter().flatten().enumerate() {
        if inj.name.is_some() && inj.name_expr.is_some() {
            errs.push(format!(
                "{field}.injectors[{i}] may specify only one of `name` and `nameExpr`"
            ));
        }
        if inj.name.is_none() && inj.name_expr.is_none() {
            errs.push(format!(
                "{field}.injectors[{i}] must specify either `name` or `nameExpr`"
            ));
        }
    }
    if let Some(p) = &t.pipeline {
        for (i, f) in p.validators.iter().flatten().enumerate() {
            validate_function(errs, f, &format!("{field}.pipeline.validators[{i}]"));
        }
        for (i, f) in p.mutators.iter().flatten().enumerate() {
            validate_function(errs, f, &format!("{field}.pipeline.mutators[{i}]"));
        }
    }
}

fn validate_map_expr(errs: &mut Vec<String>, m: &[MapExpr], field: &str) {
    for (j, me) in m.iter().enumerate() {
        if me.key.is_some() && me.key_expr.is_some() {
            errs.push(format!(
                "{field}[{j}] may specify only one of `key` and `keyExpr`"
            ));
        }
        if me.value.is_some() && me.value_expr.is_some() {
            errs.push(format!(
                "{field}[{j}] may specify only one of `value` and `valueExpr`"
            ));
        }
    }
}

/// The PackageVariant controller names the functions it adds `PackageVariant.<pv>.<fn>.<n>`
/// and finds its own by splitting on `.`, so a `.` in a function name would break that.
fn validate_function(errs: &mut Vec<String>, f: &FunctionTemplate, field: &str) {
    if f.function.image.as_deref().unwrap_or("").is_empty() {
        errs.push(format!("{field}.image must not be empty"));
    }
    if f.function.name.as_deref().unwrap_or("").contains('.') {
        errs.push(format!("{field}.name must not contain '.'"));
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
