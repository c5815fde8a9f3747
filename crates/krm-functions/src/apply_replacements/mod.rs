//! `apply-replacements`: copy field values from a source resource (or a
//! literal) into fields of target resources, with kustomize's replacement
//! semantics.
//!
//! Mirrors the catalog function (kustomize `api/filters/replacement` plus the
//! catalog's string-typing fix-up): replacements run in order, each seeing
//! the previous ones' results; exactly one resource must match a source;
//! targets are selected by resource id, label and annotation selectors, minus
//! rejects; scalar targets keep their own style and tag and only take the new
//! text, other targets are replaced by the source node. Any error is reported
//! as one error result with kustomize's message (exit code 1); success
//! reports nothing.

mod config;
mod fieldpath;
mod gojson;
mod labelsel;
mod select;

use kpt::resource_list::ResourceList;
use kpt::yaml::{Node, NodeKind, Style};

use crate::FnError;
use crate::common::lookup;
use config::{
    Config, DEFAULT_FIELD_PATH, FieldOptions, Replacement, SourceSelector, TargetSelector,
};
use fieldpath::{Create, Patterns};

const CONFIG_KIND: &str = "ApplyReplacements";
const CONFIG_API_VERSION: &str = "fn.kpt.dev/v1alpha1";

/// Run the function.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    let config = parse_config(list.function_config.as_ref()).map_err(FnError::Config)?;
    // In place: on an error the function fails and its items are discarded.
    for r in &config.replacements {
        apply_one(&mut list.items, r).map_err(FnError::Failed)?;
    }
    preserve_string_typing(&mut list.items, &config.replacements);
    Ok(())
}

fn parse_config(fc: Option<&Node>) -> Result<Config, String> {
    let fc = match fc {
        Some(fc) if !fc.entries().is_empty() => fc,
        _ => return Err("FunctionConfig is missing. Expect `ApplyReplacements`".into()),
    };
    let text = |k: &str| {
        fc.get(k)
            .and_then(Node::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (kind, api_version) = (text("kind"), text("apiVersion"));
    if kind != CONFIG_KIND || api_version != CONFIG_API_VERSION {
        return Err(format!(
            "received functionConfig of kind {kind} and apiVersion {api_version}, \
             only functionConfig of kind {CONFIG_KIND} and apiVersion {CONFIG_API_VERSION} is supported"
        ));
    }
    let value = fc.to_value();
    let wrap = |e: String| {
        format!(
            "unable to convert functionConfig to replacements:\n\
             unable to convert object to *replacements.Replacements with error: {e}"
        )
    };
    if let Some(e) = gojson::first_type_error(&value) {
        return Err(wrap(e));
    }
    serde_json::from_value(drop_null_fields(value)).map_err(|e| wrap(e.to_string()))
}

/// Go's JSON decoding leaves a field it reads `null` for at its zero value
/// (`kind:` left empty is no kind), which is what a missing field gives here.
fn drop_null_fields(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, drop_null_fields(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(drop_null_fields).collect()),
        other => other,
    }
}

fn apply_one(items: &mut [Node], r: &Replacement) -> Result<(), String> {
    let targets = match (&r.source, &r.source_value, &r.targets) {
        (None, None, _) | (_, _, None) => {
            return Err("replacements must specify a source and at least one target".into());
        }
        (Some(_), Some(_), _) => {
            return Err("value and resource selectors are mutually exclusive".into());
        }
        (_, _, Some(t)) => t,
    };
    let value = match (&r.source, &r.source_value) {
        // kyaml `NewScalarRNode`: always one untagged scalar, never parsed.
        (_, Some(v)) => Node::plain(v.clone()),
        (Some(source), None) => source_value(items, source)?,
        (None, None) => return Err("replacements must specify a source".into()),
    };
    for t in targets {
        apply_target(items, &value, t)?;
    }
    Ok(())
}

/// The (refined) value a source selects.
fn source_value(items: &[Node], source: &SourceSelector) -> Result<Node, String> {
    let mut found: Option<&Node> = None;
    for n in items {
        let ids = select::res_ids(n).map_err(|e| format!("error getting node IDs: {e}"))?;
        if ids.iter().any(|id| select::is_selected_by(id, &source.id)) {
            if found.is_some() {
                return Err(format!(
                    "multiple matches for selector {}",
                    selector_text(source)
                ));
            }
            found = Some(n);
        }
    }
    let node = found.ok_or_else(|| format!("nothing selected by {}", selector_text(source)))?;
    let fp = if source.field_path.is_empty() {
        DEFAULT_FIELD_PATH
    } else {
        &source.field_path
    };
    let value = lookup::lookup(node, &fieldpath::split(fp))
        .map_err(|e| format!("error looking up replacement source: {e}"))?
        .filter(|v| !is_nil_or_empty(v))
        .ok_or_else(|| {
            format!(
                "fieldPath `{fp}` is missing for replacement source {}",
                source.id
            )
        })?;
    refine(source.options.as_ref(), value)
}

/// kustomize's `SourceSelector.String()`: the id, then `:fieldPath` as
/// written and `:delimiter(index), create=bool` when options are set.
fn selector_text(source: &SourceSelector) -> String {
    let mut parts = vec![source.id.to_string()];
    if !source.field_path.is_empty() {
        parts.push(source.field_path.clone());
    }
    if let Some(o) = source
        .options
        .as_ref()
        .filter(|o| !o.delimiter.is_empty() || o.create)
    {
        parts.push(format!("{}({}), create={}", o.delimiter, o.index, o.create));
    }
    parts.join(":")
}

/// kyaml `IsNilOrEmpty`: tagged null, or an empty mapping/sequence. A
/// quoted empty string is a value (only yaml.v3's zero node, which no parse
/// gives, would count as empty).
fn is_nil_or_empty(n: &Node) -> bool {
    n.is_null()
        || match &n.kind {
            NodeKind::Mapping(e) => e.is_empty(),
            NodeKind::Sequence(e) => e.is_empty(),
            NodeKind::Scalar(_) | NodeKind::Alias(_) => false,
        }
}

/// Source `options.delimiter`/`index`: one segment of a scalar.
fn refine(options: Option<&FieldOptions>, value: &Node) -> Result<Node, String> {
    let Some(o) = options.filter(|o| !o.delimiter.is_empty()) else {
        return Ok(value.clone());
    };
    let Some(text) = value.as_str() else {
        return Err("delimiter option can only be used with scalar nodes".into());
    };
    let parts: Vec<&str> = text.split(o.delimiter.as_str()).collect();
    let part = usize::try_from(o.index)
        .ok()
        .and_then(|i| parts.get(i))
        .ok_or_else(|| {
            format!(
                "options.index {} is out of bounds for value {text}",
                o.index
            )
        })?;
    // Go copies the node and changes only its text, so the tag the source was
    // read with stays (`a-80` split on `-` gives a string `80`).
    let mut n = value.clone();
    pin_parsed_tag(&mut n);
    n.kind = NodeKind::Scalar(part.to_string());
    Ok(n)
}

/// yaml.v3 gives a plain scalar it parses the tag its text resolves to and the
/// zero style, and the encoder re-decides quoting from that tag when the text
/// changes (`PORT` given `8080` stays a string: `"8080"`). Our parser keeps the
/// tag implicit and the style plain, which would write any new text plain, so
/// before a scalar's text is changed its tag is made explicit the way Go holds it.
fn pin_parsed_tag(n: &mut Node) {
    if n.is_scalar() && n.tag.is_none() && n.style == Style::Plain {
        n.tag = Some(n.resolved_tag().to_string());
        n.style = Style::Any;
    }
}

/// A target's field paths; kustomize fills in `metadata.name` for none, in
/// the config itself, so the catalog's typing pass sees it too.
fn field_paths_or_default(t: &TargetSelector) -> &[String] {
    static DEFAULT_PATHS: std::sync::LazyLock<[String; 1]> =
        std::sync::LazyLock::new(|| [DEFAULT_FIELD_PATH.to_string()]);
    if t.field_paths.is_empty() {
        DEFAULT_PATHS.as_slice()
    } else {
        &t.field_paths
    }
}

fn apply_target(items: &mut [Node], value: &Node, t: &TargetSelector) -> Result<(), String> {
    let select = t
        .select
        .as_ref()
        .ok_or_else(|| "target must specify resources to select".to_string())?;
    let field_paths = field_paths_or_default(t);
    let mut patterns = Patterns::default();
    let parsed_select = select::ParsedSelector::new(select);
    let parsed_rejects: Vec<_> = t.reject.iter().map(select::ParsedSelector::new).collect();
    for n in items.iter_mut() {
        let ids = select::res_ids(n)?;
        if !select::select_by_anno_and_label(n, &parsed_select, &parsed_rejects)? {
            continue;
        }
        let rejected = t
            .reject
            .iter()
            .any(|r| !r.id.is_empty() && ids.iter().any(|id| select::is_selected_by(id, &r.id)));
        let selected = ids.iter().any(|id| select::is_selected_by(id, &select.id)) && !rejected;
        if selected {
            copy_value_to_target(n, value, t, field_paths, &mut patterns)?;
        }
    }
    Ok(())
}

fn copy_value_to_target(
    target: &mut Node,
    value: &Node,
    t: &TargetSelector,
    field_paths: &[String],
    patterns: &mut Patterns,
) -> Result<(), String> {
    let create = t
        .options
        .as_ref()
        .is_some_and(|o| o.create)
        .then(|| Create::like(value));
    for fp in field_paths {
        let what = if create.is_some() {
            format!("unable to find or create field \"{fp}\" in replacement target")
        } else {
            format!("unable to find field \"{fp}\" in replacement target")
        };
        let mut set = |field: &mut Node, created: bool| {
            set_field_value(t.options.as_ref(), field, value, created)
        };
        let count =
            fieldpath::path_match(target, &fieldpath::split(fp), create, patterns, &mut set)
                .map_err(|e| format!("{what}: {e}"))?;
        if count == 0 {
            return Err(what);
        }
    }
    Ok(())
}

/// Writes the value into one target field: scalars only take the text (so
/// the target's own type and style stay), anything else is replaced.
fn set_field_value(
    options: Option<&FieldOptions>,
    target: &mut Node,
    value: &Node,
    created: bool,
) -> Result<(), String> {
    let mut value = value.clone();
    if let Some(o) = options.filter(|o| !o.delimiter.is_empty()) {
        let Some(current) = target.as_str() else {
            return Err("delimiter option can only be used with scalar nodes".into());
        };
        let mut parts: Vec<String> = current
            .split(o.delimiter.as_str())
            .map(String::from)
            .collect();
        let v = value.as_str().unwrap_or_default().to_string();
        match usize::try_from(o.index) {
            Err(_) => parts.insert(0, v),
            Ok(i) if i >= parts.len() => parts.push(v),
            Ok(i) => parts[i] = v,
        }
        value.kind = NodeKind::Scalar(parts.join(&o.delimiter));
    }
    if target.is_scalar() {
        // A scalar the path just created has no tag in Go: its new text is
        // written plain, whatever it reads as.
        if !created {
            pin_parsed_tag(target);
        }
        target.kind = match &mut value.kind {
            NodeKind::Scalar(s) => NodeKind::Scalar(std::mem::take(s)),
            // yaml.v3 `Value` of a non-scalar is empty.
            _ => NodeKind::Scalar(String::new()),
        };
    } else {
        if value.line_comment.is_empty() {
            value.line_comment = std::mem::take(&mut target.line_comment);
        }
        if value.head_comment.is_empty() {
            value.head_comment = std::mem::take(&mut target.head_comment);
        }
        *target = value;
    }
    Ok(())
}

/// The catalog's fix-up after kustomize: when a source is a string scalar,
/// targets (selected by id only) get its tag and quoting, so `"18"` stays a
/// string.
fn preserve_string_typing(items: &mut [Node], replacements: &[Replacement]) {
    for r in replacements {
        let (Some(source), Some(targets)) = (&r.source, &r.targets) else {
            continue;
        };
        let Some(src) = find_source_node(items, source) else {
            continue;
        };
        if !src.is_scalar()
            || !(src.resolved_tag() == "!!str"
                || matches!(src.style, Style::DoubleQuoted | Style::SingleQuoted))
        {
            continue;
        }
        // A plain string from the parser is what yaml.v3 calls tag !!str,
        // style 0: quoted by the emitter only when it would read as another type.
        let (tag, style) = match (&src.tag, src.style) {
            (None, Style::Plain | Style::Any) => (Some("!!str".to_string()), Style::Any),
            (t, s) => (t.clone(), s),
        };
        for t in targets {
            let Some(select) = &t.select else {
                continue;
            };
            for n in items.iter_mut() {
                let Ok(ids) = select::res_ids(n) else {
                    continue;
                };
                if !ids
                    .first()
                    .is_some_and(|id| select::is_selected_by(id, &select.id))
                {
                    continue;
                }
                for fp in field_paths_or_default(t) {
                    if let Some(field) = lookup::lookup_mut(n, &fieldpath::split(fp))
                        && field.is_scalar()
                    {
                        field.tag = tag.clone();
                        field.style = style;
                    }
                }
            }
        }
    }
}

/// The first item matching the source id, and its field.
fn find_source_node(items: &[Node], source: &SourceSelector) -> Option<Node> {
    let fp = if source.field_path.is_empty() {
        DEFAULT_FIELD_PATH
    } else {
        &source.field_path
    };
    let n = items.iter().find(|n| {
        select::res_ids(n)
            .ok()
            .and_then(|ids| ids.into_iter().next())
            .is_some_and(|id| select::is_selected_by(&id, &source.id))
    })?;
    lookup::lookup(n, &fieldpath::split(fp))
        .ok()
        .flatten()
        .filter(|v| !is_nil_or_empty(v))
        .cloned()
}

#[cfg(test)]
mod tests;
