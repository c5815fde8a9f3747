//! The few pieces of the go/fn SDK's `internal` map variants that
//! delete-annotations goes through (`GetNestedValue`, `GetNestedString`,
//! `RemoveNestedField`, `GetNestedStringMap`), with their rules:
//!
//! - a key matches only when its node is a scalar tagged `!!str` (yaml.v3
//!   resolves a plain `123:` to `!!int`, which no string field name finds);
//!   lookups take the first matching pair, removal drops every one;
//! - every value met on the way becomes a variant (`toVariant`): scalar, map
//!   or slice; an alias is none of them and the SDK panics
//!   (`unhandled yaml node kind`);
//! - a step that is not a map on the way fails with the variant's Go type.

use kpt::yaml::{Node, NodeKind};

/// `toVariant`'s panic for a node that is no scalar, map or sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Unhandled;

/// The variant a value node becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Scalar,
    Map,
    Slice,
}

impl Kind {
    /// The variant's Go type as `%T` prints it.
    pub(super) fn go_type(self) -> &'static str {
        match self {
            Kind::Scalar => "*internal.scalarVariant",
            Kind::Map => "*internal.MapVariant",
            Kind::Slice => "*internal.sliceVariant",
        }
    }
}

/// Why a walk along nested fields stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WalkError {
    /// A step before the last was this kind of variant, not a map.
    NotMap(Kind),
    /// A value on the way was an alias.
    Unhandled,
}

impl From<Unhandled> for WalkError {
    fn from(_: Unhandled) -> WalkError {
        WalkError::Unhandled
    }
}

/// `toVariant`.
pub(super) fn kind(node: &Node) -> Result<Kind, Unhandled> {
    match node.kind {
        NodeKind::Scalar(_) => Ok(Kind::Scalar),
        NodeKind::Mapping(_) => Ok(Kind::Map),
        NodeKind::Sequence(_) => Ok(Kind::Slice),
        NodeKind::Alias(_) => Err(Unhandled),
    }
}

/// `asString` on a key node compared with `key`.
fn key_is(k: &Node, key: &str) -> bool {
    k.is_scalar() && k.resolved_tag() == "!!str" && k.as_str() == Some(key)
}

/// `getValueNode`: the first pair whose key is `key`.
fn value<'a>(map: &'a Node, key: &str) -> Option<&'a Node> {
    map.entries()
        .iter()
        .find(|(k, _)| key_is(k, key))
        .map(|(_, v)| v)
}

/// `GetNestedValue`: `Ok(None)` when a field is missing.
pub(super) fn nested<'a>(root: &'a Node, fields: &[&str]) -> Result<Option<&'a Node>, WalkError> {
    let mut current = root;
    for (i, field) in fields.iter().enumerate() {
        let Some(entry) = value(current, field) else {
            return Ok(None);
        };
        let k = kind(entry)?;
        if i + 1 == fields.len() {
            return Ok(Some(entry));
        }
        if k != Kind::Map {
            return Err(WalkError::NotMap(k));
        }
        current = entry;
    }
    Ok(None)
}

/// `GetNestedString` as `GetKind`/`GetName`/`GetAPIVersion` use it: its error
/// ignored (`""` for a missing field, a non-string or a step that is not a
/// map); only the alias panic gets through.
pub(super) fn string_or_empty(root: &Node, fields: &[&str]) -> Result<String, Unhandled> {
    match nested(root, fields) {
        Ok(Some(n)) if n.is_scalar() && n.resolved_tag() == "!!str" => {
            Ok(n.as_str().unwrap_or_default().to_string())
        }
        Ok(_) | Err(WalkError::NotMap(_)) => Ok(String::new()),
        Err(WalkError::Unhandled) => Err(Unhandled),
    }
}

/// `RemoveNestedField(fields..., key)`: whether a pair was removed.
pub(super) fn remove(root: &mut Node, fields: &[&str], key: &str) -> Result<bool, WalkError> {
    // The walk is checked first (it only reads), then the map is edited.
    let Some(map) = nested(root, fields)? else {
        return Ok(false);
    };
    match kind(map)? {
        Kind::Map => {}
        k => return Err(WalkError::NotMap(k)),
    }
    let Some(v) = value(map, key) else {
        return Ok(false);
    };
    kind(v)?;
    let mut current = root;
    for field in fields {
        let Some(next) = current
            .entries_mut()
            .and_then(|e| e.iter_mut().find(|(k, _)| key_is(k, field)))
        else {
            return Ok(false);
        };
        current = &mut next.1;
    }
    let Some(entries) = current.entries_mut() else {
        return Ok(false);
    };
    entries.retain(|(k, _)| !key_is(k, key));
    Ok(true)
}

/// `GetNestedStringMap(fields...)[key]`: every pair's key and value text as
/// the node's `Value` (the last pair of a key wins, as in a Go map); `""`
/// when the map cannot be read.
pub(super) fn string_map_value(
    root: &Node,
    fields: &[&str],
    key: &str,
) -> Result<String, Unhandled> {
    let map = match nested(root, fields) {
        Ok(Some(m)) => m,
        Ok(None) | Err(WalkError::NotMap(_)) => return Ok(String::new()),
        Err(WalkError::Unhandled) => return Err(Unhandled),
    };
    Ok(map
        .entries()
        .iter()
        .rev()
        .find(|(k, _)| k.as_str() == Some(key))
        .and_then(|(_, v)| v.as_str())
        .unwrap_or_default()
        .to_string())
}
