//! The field-level 3-way merge of one resource: kyaml's `walk.Walker` driven by the
//! `merge3.Visitor` (as vendored by kpt 1.0.0-beta), over `dest` (local), `origin` and
//! `updated`.
//!
//! Rules in short: upstream changes win, local-only edits survive, an explicit `null`
//! in local or updated clears the field, maps merge key by key (sorted union, new keys
//! appended), lists merge by key only when the schema says so, otherwise a list changed
//! upstream replaces the local one wholesale. A value taken from upstream keeps the
//! local node's style.
//!
//! Three rule sets, as kpt has three visitors: kyaml's (kpt 1.0.0-beta), kpt HEAD's
//! `Visitor` (`null_needs_origin`: a `null` only clears what origin had, values and
//! lists compare by content alone) and its `NullPreservingVisitor` (`preserve_null`:
//! what would be cleared by a `null` keeps that `null`, see [`super::nulls`]).

use super::MergeError;
use super::compare::{content_eq, same_tree, scalar_str_eq};
use super::nulls::persisted;
use super::schema::{Schema, SchemaRegistry};
use crate::yaml::limits::guard;
use crate::yaml::{Node, NodeKind, Style};
use crate::yaml::{resolve_plain, string_needs_quotes};

/// Walks one tuple of nodes. `infer` turns on kyaml's associative-list inference
/// (used for the Kptfile merge only).
pub(crate) struct Walker<'s> {
    /// Where resource types found in the data get their schema.
    pub schemas: &'s SchemaRegistry,
    pub infer: bool,
    /// kpt HEAD's "keep tagged null" rule: a `null` only clears a field when origin
    /// had a non-null value there. Off = kyaml / kpt 1.0.0-beta behaviour.
    pub null_needs_origin: bool,
    /// kpt HEAD's `NullPreservingVisitor` (implies `null_needs_origin`): a `null`
    /// that clears, or that is kept from one side, stays in the output; the walk
    /// returns it as `Some(null)`, which [`set_field`] then writes instead of
    /// removing the field.
    pub preserve_null: bool,
}

/// What the scalar rule picked.
enum Pick<'n> {
    /// Remove the field.
    Clear,
    /// The `null` of this source (or an empty one), kept (`preserve_null` only).
    Null(Option<&'n Node>),
    /// This source's node (`None`: missing).
    Take(Option<&'n Node>),
}

impl<'n> Pick<'n> {
    /// The node whose key comments a merged key gets.
    fn node(&self) -> Option<&'n Node> {
        match *self {
            Pick::Clear => None,
            Pick::Null(n) | Pick::Take(n) => n,
        }
    }
}

/// The sources of one walk step, `None` = field missing.
#[derive(Clone, Copy)]
struct Src<'a> {
    d: Option<&'a Node>,
    o: Option<&'a Node>,
    u: Option<&'a Node>,
}

fn missing_or_null(n: Option<&Node>) -> bool {
    n.is_none_or(is_null_node)
}

fn is_null_node(n: &Node) -> bool {
    n.is_null()
}

fn tagged_null(n: Option<&Node>) -> bool {
    n.is_some_and(is_null_node)
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Kind {
    Map,
    Seq,
    Scalar,
    None,
}

fn kind_of(n: &Node) -> Kind {
    match n.kind {
        NodeKind::Mapping(_) => Kind::Map,
        NodeKind::Sequence(_) => Kind::Seq,
        NodeKind::Scalar(_) | NodeKind::Alias(_) => Kind::Scalar,
    }
}

impl<'s> Walker<'s> {
    fn cleared(&self, origin: Option<&Node>, x: Option<&Node>) -> bool {
        if self.head_rules() {
            !tagged_null(origin) && tagged_null(x)
        } else {
            tagged_null(x)
        }
    }

    /// kpt HEAD's rules (both of its visitors) rather than kyaml's.
    fn head_rules(&self) -> bool {
        self.null_needs_origin || self.preserve_null
    }

    /// The first of updated and local whose `null` clears the field: `Clear`, or
    /// with `preserve_null` that `null` kept (kpt `PersistedNull`).
    fn clearing(&self, src: Src<'_>) -> Option<Option<Node>> {
        for x in [src.u, src.d] {
            if self.cleared(src.o, x) {
                return Some(self.preserve_null.then(|| persisted(x)));
            }
        }
        None
    }

    /// kpt `KeepNull`: with `preserve_null` a `null` taken from a side stays.
    fn keep_null(&self, n: Option<&Node>) -> Option<Node> {
        match n {
            Some(n) if self.preserve_null && n.is_null() => Some(persisted(Some(n))),
            _ => n.cloned(),
        }
    }

    /// Merge one value; `None` means "remove the field / element".
    ///
    /// `d` is owned so the merge works on local's tree in place (no copies of it at
    /// every level).
    pub(crate) fn walk(
        &self,
        d: Option<Node>,
        o: Option<&Node>,
        u: Option<&Node>,
        schema: &Schema<'s>,
    ) -> Result<Option<Node>, MergeError> {
        // One level of recursion per level of the resources: under the stack
        // guard, as deep as any tree.
        guard(|| self.walk_at(d, o, u, schema))
    }

    fn walk_at(
        &self,
        d: Option<Node>,
        o: Option<&Node>,
        u: Option<&Node>,
        schema: &Schema<'s>,
    ) -> Result<Option<Node>, MergeError> {
        let src = Src {
            d: d.as_ref(),
            o,
            u,
        };
        let kind = [src.d, o, u]
            .into_iter()
            .flatten()
            .find(|n| !n.is_null())
            .map(kind_of)
            .unwrap_or(Kind::None);
        for n in [src.d, o, u].into_iter().flatten() {
            if !n.is_null() && kind_of(n) != kind {
                return Err(MergeError::KindMismatch {
                    field: String::new(),
                });
            }
        }
        let derived;
        let schema = if schema.is_none() && kind == Kind::Map {
            // kyaml `GetSchema`: without an inherited schema, a map naming its
            // apiVersion and kind (a resource, or one embedded in an unknown type)
            // gets that type's schema.
            derived = self.schemas.of_sources([src.d, o, u]);
            &derived
        } else {
            schema
        };
        match kind {
            Kind::Map | Kind::None => self.walk_map(d, o, u, schema),
            Kind::Seq => {
                if let Some(keys) = schema.list_keys(src_nodes(src), self.infer) {
                    self.walk_assoc(d, o, u, schema, &keys)
                } else {
                    Ok(self.visit_na_list(src))
                }
            }
            Kind::Scalar => Ok(self.visit_scalar(src)),
        }
    }

    fn walk_map(
        &self,
        d: Option<Node>,
        o: Option<&Node>,
        u: Option<&Node>,
        schema: &Schema<'s>,
    ) -> Result<Option<Node>, MergeError> {
        // VisitMap
        if let Some(kept) = self.clearing(Src {
            d: d.as_ref(),
            o,
            u,
        }) {
            return Ok(kept);
        }
        if d.is_none() && u.is_none() {
            return Ok(None);
        }
        let mut dest = match d {
            Some(d) if d.is_mapping() => d,
            // kpt HEAD keeps a local `null` origin also had as the map to merge
            // into; kyaml's FieldSetter then drops it, whatever updated has. The
            // null-preserving visitor keeps it unless updated has a value.
            Some(d) if d.is_null() && self.head_rules() => {
                if !self.preserve_null {
                    return Ok(None);
                }
                if missing_or_null(u) {
                    return Ok(Some(persisted(Some(&d))));
                }
                Node::mapping()
            }
            _ => Node::mapping(),
        };
        let keys = field_names(&[Some(&dest), o, u]);
        for key in keys {
            // One lookup per side: the key node (its comments merge as a scalar)
            // and the value.
            let (ok, ov) = entry(o, &key);
            let (uk, uv) = entry(u, &key);
            let pos = dest
                .entries()
                .iter()
                .position(|(k, _)| k.as_str() == Some(key.as_str()));
            let key_comments = self
                .pick_scalar(Src {
                    d: pos.map(|i| &dest.entries()[i].0),
                    o: ok,
                    u: uk,
                })
                .node()
                .filter(|n| !n.is_null())
                .map(KeyComments::of);
            let (child, old_style) = match (pos, dest.entries_mut()) {
                (Some(i), Some(entries)) => {
                    let v = &mut entries[i].1;
                    let style = v.style;
                    (Some(std::mem::replace(v, Node::mapping())), Some(style))
                }
                _ => (None, None),
            };
            let val = self
                .walk(child, ov, uv, &schema.field(&key))
                .map_err(|e| e.within(&key))?;
            set_field(
                &mut dest,
                pos,
                &key,
                val,
                key_comments,
                old_style,
                self.preserve_null,
            );
        }
        Ok(Some(dest))
    }

    fn visit_scalar(&self, src: Src<'_>) -> Option<Node> {
        match self.pick_scalar(src) {
            Pick::Clear => None,
            Pick::Null(n) => Some(persisted(n)),
            Pick::Take(n) => self.keep_null(n),
        }
    }

    /// The scalar rule: which source's node wins.
    fn pick_scalar<'n>(&self, src: Src<'n>) -> Pick<'n> {
        for x in [src.u, src.d] {
            if self.cleared(src.o, x) {
                return if self.preserve_null {
                    Pick::Null(x)
                } else {
                    Pick::Clear
                };
            }
        }
        let (um, om) = (missing_or_null(src.u), missing_or_null(src.o));
        if um != om {
            return Pick::Take(src.u);
        }
        let (Some(u), Some(o)) = (src.u, src.o) else {
            return Pick::Take(src.d);
        };
        if um {
            return Pick::Take(src.d);
        }
        if self.head_rules() {
            // kpt HEAD compares values only: a comment or quoting change upstream
            // leaves local as it is.
            return Pick::Take(if u.as_str() != o.as_str() {
                Some(u)
            } else {
                src.d
            });
        }
        // kyaml compares the serialized nodes (value and comments; quoting is
        // normalised): an upstream change applies when local is missing or unchanged;
        // a changed value upstream also wins over a local change.
        let d_unchanged = src.d.is_none_or(|d| scalar_str_eq(d, o));
        if d_unchanged && !scalar_str_eq(o, u) {
            return Pick::Take(Some(u));
        }
        if u.as_str() != o.as_str() {
            return Pick::Take(Some(u));
        }
        Pick::Take(src.d)
    }

    fn visit_na_list(&self, src: Src<'_>) -> Option<Node> {
        if let Some(kept) = self.clearing(src) {
            return kept;
        }
        let (um, om) = (missing_or_null(src.u), missing_or_null(src.o));
        if um != om {
            return self.keep_null(src.u);
        }
        let (Some(u), Some(o)) = (src.u, src.o) else {
            return self.keep_null(src.d);
        };
        if um {
            return self.keep_null(src.d);
        }
        // kyaml compares the serialized lists (quoting and comments count); kpt
        // HEAD compares kinds, tags and values only.
        let changed = if self.head_rules() {
            !content_eq(u, o)
        } else {
            !same_tree(u, o, true)
        };
        if changed {
            return Some(u.clone());
        }
        self.keep_null(src.d)
    }

    fn walk_assoc(
        &self,
        d: Option<Node>,
        o: Option<&Node>,
        u: Option<&Node>,
        schema: &Schema<'s>,
        keys: &[String],
    ) -> Result<Option<Node>, MergeError> {
        // visitAList. kpt HEAD's visitors also clear on a `null` (the preserving
        // one returns the `null`, but the list walk then finds no list and drops
        // the field: kpt keeps a local `null` list only through
        // `nulls::drop_at_dest_nulls`).
        if self.head_rules() && (self.cleared(o, u) || self.cleared(o, d.as_ref())) {
            return Ok(None);
        }
        if missing_or_null(u) && !missing_or_null(o) {
            return Ok(None);
        }
        let mut dest = match d {
            Some(d) if d.is_sequence() => d,
            _ => Node::sequence(),
        };
        let elem_schema = schema.elements();
        if keys.is_empty() {
            return Ok(self.primitive_set(&mut dest, Src { d: None, o, u }));
        }
        // Key tuples in first-seen order over dest, origin, updated.
        let mut tuples: Vec<Vec<String>> = Vec::new();
        for s in [Some(&dest), o, u].into_iter().flatten() {
            for e in s.items() {
                let t: Vec<String> = keys
                    .iter()
                    .map(|k| e.get(k).and_then(Node::as_str).unwrap_or("").to_string())
                    .collect();
                if !tuples.contains(&t) {
                    tuples.push(t);
                }
            }
        }
        let selectors: Vec<(Vec<String>, Vec<String>)> =
            tuples.iter().map(|t| valid_keys(t, keys)).collect();
        let mut to_add: Vec<(Vec<String>, Vec<String>, Node)> = Vec::new();
        for (vk, vv) in selectors.clone() {
            let ed = take_elem(&mut dest, &selectors, keys, &vk, &vv);
            let (eo, eu) = (find_elem(o, &vk, &vv), find_elem(u, &vk, &vv));
            let val = self
                .walk(ed, eo, eu, &elem_schema)
                .map_err(|e| e.within(&format!("[{}]", vv.join(","))))?;
            let Some(mut val) = val.filter(|v| !v.is_null() && !is_empty_map(v)) else {
                element_set(&mut dest, &vk, &vv, None);
                continue;
            };
            for (k, v) in vk.iter().zip(&vv) {
                if val.get(k).is_none() {
                    val.set(k, Node::plain(v.clone()));
                }
            }
            match to_add.iter_mut().find(|(k, v, _)| *k == vk && *v == vv) {
                Some(slot) => slot.2 = val,
                None => to_add.push((vk, vv, val)),
            }
        }
        for (vk, vv, val) in to_add {
            element_set(&mut dest, &vk, &vv, Some(val));
        }
        Ok(Some(dest))
    }

    /// Associative list of scalars (e.g. `finalizers`): a set merge by value.
    fn primitive_set(&self, dest: &mut Node, src: Src<'_>) -> Option<Node> {
        let dest_src = dest.clone();
        let mut values: Vec<String> = Vec::new();
        for s in [Some(&dest_src), src.o, src.u].into_iter().flatten() {
            for e in s.items() {
                if let Some(v) = e.as_str()
                    && !values.iter().any(|x| x == v)
                {
                    values.push(v.to_string());
                }
            }
        }
        for v in values {
            let find = |s: Option<&Node>| -> Option<Node> {
                s.and_then(|s| s.items().iter().find(|e| e.as_str() == Some(&v)).cloned())
            };
            let (ed, eo, eu) = (find(Some(&dest_src)), find(src.o), find(src.u));
            let res = self.visit_scalar(Src {
                d: ed.as_ref(),
                o: eo.as_ref(),
                u: eu.as_ref(),
            });
            let items = dest.items_mut().expect("dest is a sequence");
            match res {
                None => items.retain(|e| e.as_str() != Some(&v)),
                Some(n) => {
                    if !items.iter().any(|e| e.as_str() == Some(&v)) {
                        items.push(n);
                    }
                }
            }
        }
        if dest.items().is_empty() {
            return None;
        }
        Some(dest.clone())
    }
}

fn src_nodes(src: Src<'_>) -> [Option<&Node>; 3] {
    [src.d, src.o, src.u]
}

fn is_empty_map(n: &Node) -> bool {
    n.is_mapping() && n.entries().is_empty()
}

fn valid_keys(values: &[String], keys: &[String]) -> (Vec<String>, Vec<String>) {
    let mut vk = Vec::new();
    let mut vv = Vec::new();
    for (k, v) in keys.iter().zip(values) {
        if !v.is_empty() {
            vk.push(k.clone());
            vv.push(v.clone());
        }
    }
    if vk.is_empty() {
        return (keys.to_vec(), values.to_vec());
    }
    (vk, vv)
}

/// The first element of `dest` matching the selector, for the walk to edit. An
/// element no other selector of the list matches is moved out, leaving a
/// stand-in with just its list-key fields: every selector matches the stand-in
/// exactly as it matched the element (selectors test only list-key fields), so
/// no other selector's lookup can reach it, and [`element_set`] replaces or
/// removes it as it would the element. Otherwise the element is copied.
fn take_elem(
    dest: &mut Node,
    selectors: &[(Vec<String>, Vec<String>)],
    keys: &[String],
    vk: &[String],
    vv: &[String],
) -> Option<Node> {
    let items = dest.items_mut()?;
    let i = items.iter().position(|e| matches(e, vk, vv))?;
    let seen_by = selectors
        .iter()
        .filter(|(k, v)| matches(&items[i], k, v))
        .count();
    if seen_by != 1 {
        return Some(items[i].clone());
    }
    let mut stand_in = Node::mapping();
    if let Some(entries) = stand_in.entries_mut() {
        for (k, v) in items[i].entries() {
            if k.as_str().is_some_and(|k| keys.iter().any(|x| x == k)) {
                entries.push((k.clone(), v.clone()));
            }
        }
    }
    Some(std::mem::replace(&mut items[i], stand_in))
}

fn find_elem<'a>(s: Option<&'a Node>, keys: &[String], values: &[String]) -> Option<&'a Node> {
    s?.items().iter().find(|e| matches(e, keys, values))
}

fn matches(e: &Node, keys: &[String], values: &[String]) -> bool {
    e.is_mapping()
        && keys
            .iter()
            .zip(values)
            .all(|(k, v)| e.get(k).and_then(Node::as_str) == Some(v.as_str()))
}

/// kyaml `ElementSetter`: drop null/empty elements, replace matching elements by
/// `element` (or delete them when `None`), append when nothing matched.
fn element_set(dest: &mut Node, keys: &[String], values: &[String], element: Option<Node>) {
    let Some(items) = dest.items_mut() else {
        return;
    };
    let mut out = Vec::with_capacity(items.len() + 1);
    let mut found = false;
    // The replacement is moved into the last matching slot, cloned for any before it.
    let mut left = items
        .iter()
        .filter(|e| !e.is_null() && !is_empty_map(e) && e.is_mapping() && matches(e, keys, values))
        .count();
    let mut element = element;
    for e in items.drain(..) {
        if e.is_null() || is_empty_map(&e) {
            continue;
        }
        if !e.is_mapping() {
            out.push(e);
            continue;
        }
        if !matches(&e, keys, values) {
            out.push(e);
            continue;
        }
        found = true;
        left -= 1;
        if left == 0 {
            if let Some(el) = element.take() {
                out.push(el);
            }
        } else if let Some(el) = &element {
            out.push(el.clone());
        }
    }
    if let Some(el) = element
        && !found
    {
        out.push(el);
    }
    *items = out;
}

fn field_names(sources: &[Option<&Node>]) -> Vec<String> {
    let mut keys: Vec<String> = sources
        .iter()
        .flatten()
        .flat_map(|n| n.entries().iter().filter_map(|(k, _)| k.as_str()))
        .map(str::to_string)
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The key node and value of `key` in a map.
fn entry<'a>(n: Option<&'a Node>, key: &str) -> (Option<&'a Node>, Option<&'a Node>) {
    n.and_then(|n| n.entries().iter().find(|(k, _)| k.as_str() == Some(key)))
        .map_or((None, None), |(k, v)| (Some(k), Some(v)))
}

/// The comments of the key node the key merge chose.
struct KeyComments {
    head: String,
    line: String,
    foot: String,
}

impl KeyComments {
    fn of(n: &Node) -> KeyComments {
        KeyComments {
            head: n.head_comment.clone(),
            line: n.line_comment.clone(),
            foot: n.foot_comment.clone(),
        }
    }

    fn apply(self, k: &mut Node) {
        k.head_comment = self.head;
        k.line_comment = self.line;
        k.foot_comment = self.foot;
    }
}

/// kyaml `FieldSetter` as the walker uses it, at `pos` (the key's index in `dest`,
/// whose value was moved out for the walk): a missing or null value clears the
/// field (a null is written when `keep_null`: the walk kept it on purpose); an
/// existing field gets the new value with the old node's style; a new field is
/// appended with the comments the key merge produced.
fn set_field(
    dest: &mut Node,
    pos: Option<usize>,
    key: &str,
    val: Option<Node>,
    key_comments: Option<KeyComments>,
    old_style: Option<Style>,
    keep_null: bool,
) {
    let Some(entries) = dest.entries_mut() else {
        return;
    };
    let Some(mut val) = val.filter(|v| keep_null || !v.is_null()) else {
        if let Some(i) = pos {
            entries.remove(i);
        }
        return;
    };
    match pos {
        Some(i) => {
            let (k, v) = &mut entries[i];
            if let Some(c) = key_comments {
                c.apply(k);
            }
            // A kept null is written as it was spelled on its side.
            if !val.is_null() {
                if let Some(st) = old_style {
                    apply_style(&mut val, st);
                }
                quote_yaml11(&mut val);
            }
            *v = val;
        }
        None => {
            let mut k = Node::tagged_scalar(key, "!!str");
            if let Some(c) = key_comments {
                c.apply(&mut k);
            }
            entries.push((k, val));
        }
    }
}

/// kyaml's `FieldSetter` double-quotes a plain string that YAML 1.1 would read
/// as another type (`y`, `on`, `1:20`) whenever it sets an existing field.
fn quote_yaml11(val: &mut Node) {
    if let NodeKind::Scalar(s) = &val.kind
        && matches!(val.style, Style::Plain | Style::Any)
        && val.resolved_tag() == "!!str"
        && resolve_plain(s) == "!!str"
        && string_needs_quotes(s)
    {
        val.style = Style::DoubleQuoted;
        val.tag = None;
    }
}

/// Give `val` the style of the node it replaces (Go copies the style bits; a plain
/// local style becomes "let the emitter choose" with the value's own tag).
fn apply_style(val: &mut Node, style: Style) {
    if val.style == style {
        return;
    }
    match (&val.kind, style) {
        (NodeKind::Scalar(_), Style::Plain | Style::Any) => {
            if val.tag.is_none() {
                val.tag = Some(val.resolved_tag().to_string());
            }
            val.style = Style::Any;
        }
        (NodeKind::Scalar(_), s) => {
            if val.tag.is_none() || val.resolved_tag() == "!!str" {
                val.tag = None;
                val.style = s;
            }
        }
        (_, Style::Flow) => val.style = Style::Flow,
        (_, _) => {
            if val.style == Style::Flow {
                val.style = Style::Any;
            }
        }
    }
}
