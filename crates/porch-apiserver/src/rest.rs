//! The REST verbs, identical for every resource: decoding, strict field validation, defaulting,
//! validation hooks, metadata rules, optimistic concurrency, the status subresource, patches.
//! Backends only store.

use serde_json::Value;

use crate::apply::{self, Applied, FieldManager};
use crate::error::{ApiError, FieldError};
use crate::meta;
use crate::patch::{self, PatchType};
use crate::resource::{Expect, RequestContext, Resource, ResourceKind};
use crate::validation;

/// How to treat unknown fields (`fieldValidation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

impl FieldValidation {
    pub fn parse(s: Option<&str>) -> Result<Self, ApiError> {
        match s {
            None | Some("") | Some("Warn") => Ok(FieldValidation::Warn),
            Some("Ignore") => Ok(FieldValidation::Ignore),
            Some("Strict") => Ok(FieldValidation::Strict),
            Some(other) => Err(ApiError::bad_request(format!(
                "fieldValidation must be one of Ignore, Warn, Strict; got {other:?}"
            ))),
        }
    }
}

/// A write's result plus the warnings to send back (`Warning` headers).
pub struct Written {
    pub object: Value,
    pub created: bool,
    pub warnings: Vec<String>,
}

/// Which part of the object a write may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The main resource: with a status subresource, status changes are ignored.
    Main,
    /// The `status` subresource: only status changes are kept.
    Status,
}

/// The media type of a Content-Type header, without parameters, lower-cased; a missing or
/// empty header counts as JSON (what every client sends when it sends nothing).
pub fn media_type(content_type: &str) -> String {
    let base = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if base.is_empty() {
        "application/json".into()
    } else {
        base
    }
}

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// Parses a request body (JSON, YAML, or protobuf for kinds that decode it) into a JSON
/// object. Any other media type is 415 UnsupportedMediaType in kube-apiserver's words (a 415
/// also makes client-go fall back from protobuf to JSON).
pub fn parse_object(
    kind: &ResourceKind,
    body: &[u8],
    content_type: &str,
) -> Result<Value, ApiError> {
    let v: Value = match (media_type(content_type).as_str(), kind.protobuf) {
        (PROTOBUF, Some(decode)) => return decode(body).map_err(ApiError::bad_request),
        ("application/json", _) => serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): {e}",
                kind.kind
            ))
        })?,
        ("application/yaml", _) => serde_yaml::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!("error decoding YAML into {}: {e}", kind.kind))
        })?,
        _ => {
            let accepted = if kind.protobuf.is_some() {
                "application/json, application/yaml, application/vnd.kubernetes.protobuf"
            } else {
                "application/json, application/yaml"
            };
            return Err(ApiError::unsupported_media_type(format!(
                "the body of the request was in an unknown format - accepted media types include: {accepted}"
            )));
        }
    };
    if !v.is_object() {
        return Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): not a JSON object",
            kind.kind
        )));
    }
    Ok(v)
}

/// [`decode`] of a create or update body: kube-apiserver names the kind in front of a strict
/// decoding error there (a patch's error has no prefix).
fn decode_body(
    kind: &ResourceKind,
    obj: &mut Value,
    fv: FieldValidation,
) -> Result<Vec<String>, ApiError> {
    decode(kind, obj, fv).map_err(|mut e| {
        if e.message.starts_with("strict decoding error") {
            e.message = format!(
                "{k} in version \"{v}\" cannot be handled as a {k}: {m}",
                k = kind.kind,
                v = kind.version,
                m = e.message
            );
        }
        e
    })
}

/// Checks apiVersion/kind (filling them when absent), prunes unknown fields and checks the
/// schema. Returns the warnings for unknown fields when they are tolerated.
fn decode(
    kind: &ResourceKind,
    obj: &mut Value,
    fv: FieldValidation,
) -> Result<Vec<String>, ApiError> {
    let api_version = kind.api_version();
    let map = obj
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request("not a JSON object"))?;
    match map.get("apiVersion").and_then(Value::as_str) {
        Some(av) if av != api_version => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({av}) does not match the expected API version ({api_version})"
            )));
        }
        Some(_) => {}
        None => {
            map.insert("apiVersion".into(), api_version.clone().into());
        }
    }
    match map.get("kind").and_then(Value::as_str) {
        Some(k) if k != kind.kind => {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                kind.kind
            )));
        }
        Some(_) => {}
        None => {
            map.insert("kind".into(), kind.kind.clone().into());
        }
    }
    if !map.get("metadata").is_none_or(Value::is_object) {
        return Err(ApiError::bad_request("metadata must be an object"));
    }
    let decoded = validation::decode_against_schema(obj, &kind.schema);
    let name = meta::name(obj).to_string();
    if !decoded.errors.is_empty() {
        return Err(kind.invalid(&name, decoded.errors));
    }
    let unknown: Vec<String> = decoded
        .unknown
        .iter()
        .map(|f| format!("unknown field \"{f}\""))
        .collect();
    match fv {
        FieldValidation::Strict if !unknown.is_empty() => Err(ApiError::bad_request(format!(
            "strict decoding error: {}",
            unknown.join(", ")
        ))),
        FieldValidation::Warn => Ok(unknown),
        _ => Ok(Vec::new()),
    }
}

fn name_is_label(kind: &ResourceKind) -> bool {
    // Namespaces and (per Porch's CEL rule) Repositories take DNS-1123 labels.
    kind.plural == "namespaces" || kind.plural == "repositories"
}

fn run_validation(kind: &ResourceKind, obj: &Value, old: Option<&Value>) -> Result<(), ApiError> {
    let name = meta::name(obj).to_string();
    let mut errs = Vec::new();
    if kind.group == crate::authz::RBAC_GROUP {
        // RBAC names are path segments (`system:discovery`), as kube's `ValidateRBACName`.
        if let Some(problem) = validation::path_segment_problem(&name) {
            errs.push(FieldError::invalid(
                "metadata.name",
                &name.clone().into(),
                problem,
            ));
        } else if name.is_empty() {
            errs.push(FieldError::required("metadata.name"));
        }
    } else if let Some(e) = validation::validate_name(&name, name_is_label(kind)) {
        errs.push(e);
    }
    errs.extend(validation::validate_metadata(obj));
    errs.extend(match old {
        None => kind.hooks.validate_create(obj),
        Some(old) => kind.hooks.validate_update(obj, old),
    });
    if errs.is_empty() {
        Ok(())
    } else {
        Err(kind.invalid(&name, errs))
    }
}

fn random_suffix() -> String {
    const CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let u = uuid::Uuid::new_v4();
    u.as_bytes()
        .iter()
        .take(5)
        .map(|b| char::from(CHARS[usize::from(*b) % CHARS.len()]))
        .collect()
}

/// Fills server-set metadata of a new object.
fn prepare_create(kind: &ResourceKind, obj: &mut Value, namespace: &str) -> Result<(), ApiError> {
    let m = meta::metadata_mut(obj);
    if kind.namespaced {
        match m.get("namespace").and_then(Value::as_str) {
            Some(ns) if !ns.is_empty() && ns != namespace => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => {
                m.insert("namespace".into(), namespace.into());
            }
        }
    } else {
        m.remove("namespace");
    }
    let has_name = m
        .get("name")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    if !has_name
        && let Some(prefix) = m
            .get("generateName")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
    {
        let generated = format!("{prefix}{}", random_suffix());
        m.insert("name".into(), generated.into());
    }
    for server_field in [
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
        "managedFields",
    ] {
        m.remove(server_field);
    }
    m.insert("uid".into(), uuid::Uuid::new_v4().to_string().into());
    m.insert("creationTimestamp".into(), meta::now_rfc3339().into());
    m.insert("generation".into(), 1.into());
    if kind.status_subresource
        && let Some(map) = obj.as_object_mut()
    {
        map.remove("status");
    }
    Ok(())
}

/// Makes `new` a valid successor of `old`: server-owned metadata is kept, the generation moves
/// when the spec changes, and the part not addressed by this request is taken from `old`.
fn prepare_update(kind: &ResourceKind, mut new: Value, old: &Value, part: Part) -> Value {
    if part == Part::Status {
        let mut merged = old.clone();
        if let Some(m) = merged.as_object_mut() {
            match new.get("status") {
                Some(s) => {
                    m.insert("status".into(), s.clone());
                }
                None => {
                    m.remove("status");
                }
            }
        }
        if let Some(rv) = new.pointer("/metadata/resourceVersion").cloned() {
            meta::metadata_mut(&mut merged).insert("resourceVersion".into(), rv);
        }
        return merged;
    }
    if kind.status_subresource
        && let Some(m) = new.as_object_mut()
    {
        match old.get("status") {
            Some(s) => {
                m.insert("status".into(), s.clone());
            }
            None => {
                m.remove("status");
            }
        }
    }
    let old_meta = old
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let spec_changed = meta::spec_part(&new) != meta::spec_part(old);
    let m = meta::metadata_mut(&mut new);
    for keep in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "namespace",
        "name",
    ] {
        match old_meta.get(keep) {
            Some(v) => {
                m.insert(keep.into(), v.clone());
            }
            None => {
                m.remove(keep);
            }
        }
    }
    m.remove("managedFields");
    m.remove("selfLink");
    let generation = old_meta
        .get("generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    m.insert(
        "generation".into(),
        (if spec_changed {
            generation + 1
        } else {
            generation
        })
        .into(),
    );
    new
}

fn expect_for(
    new: &Value,
    old: &Value,
    kind: &ResourceKind,
    name: &str,
) -> Result<(Expect, bool), ApiError> {
    let old_rv = meta::resource_version(old)
        .map_err(ApiError::internal)?
        .unwrap_or(0);
    match meta::resource_version(new).map_err(ApiError::bad_request)? {
        Some(rv) if rv != old_rv => Err(kind.conflict(name)),
        Some(rv) => Ok((Expect::ResourceVersion(rv), true)),
        None => Ok((Expect::ResourceVersion(old_rv), false)),
    }
}

fn check_namespace_name(kind: &ResourceKind, obj: &Value, name: &str) -> Result<(), ApiError> {
    let body_name = meta::name(obj);
    if !body_name.is_empty() && body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let _ = kind;
    Ok(())
}

/// How a write records field ownership (`metadata.managedFields`).
pub enum Ownership {
    /// Create, update or a non-apply patch: an `Update` entry of the request's manager.
    Update,
    /// Server-side apply: the fields `applied`, over the managers the merge started from.
    Apply {
        applied: Applied,
        managers: apply::Managers,
    },
}

/// The REST operations over one resource.
pub struct Rest<'a> {
    pub resource: &'a Resource,
    pub ctx: &'a RequestContext,
    /// Checks that a namespace exists (None when namespaces are not enforced).
    pub namespaces: Option<&'a Resource>,
}

const MAX_RETRIES: usize = 8;

impl Rest<'_> {
    fn kind(&self) -> &ResourceKind {
        &self.resource.kind
    }

    fn field_manager(&self, part: Part) -> FieldManager<'_> {
        let kind = self.kind();
        FieldManager::new(
            &kind.schema,
            kind.api_version(),
            part,
            kind.status_subresource,
        )
    }

    /// The manager named by the request (`fieldManager`, else from the user agent).
    fn manager(&self) -> &str {
        self.ctx.field_manager.as_deref().unwrap_or("")
    }

    /// Sets `new`'s `managedFields` for this write (`client`: the ones the request sent).
    fn own(
        &self,
        old: &Value,
        new: &mut Value,
        client: Option<&Value>,
        ownership: Ownership,
        part: Part,
    ) -> Result<(), ApiError> {
        let fm = self.field_manager(part);
        match ownership {
            Ownership::Update => {
                let managers = fm.managers(old, client);
                fm.record_update(old, new, managers, self.manager());
                Ok(())
            }
            Ownership::Apply { applied, managers } => {
                fm.record_apply(old, new, managers, self.manager(), applied, self.ctx.force)
            }
        }
    }

    async fn ensure_namespace(&self, namespace: &str) -> Result<(), ApiError> {
        if !self.kind().namespaced {
            return Ok(());
        }
        if let Some(ns) = self.namespaces {
            ns.backend.get(self.ctx, "", namespace).await.map_err(|e| {
                if e.kind == porch_core::ErrorKind::NotFound {
                    ApiError::not_found("", "namespaces", namespace)
                } else {
                    e
                }
            })?;
        }
        Ok(())
    }

    /// POST: create.
    pub async fn create(
        &self,
        namespace: &str,
        obj: Value,
        fv: FieldValidation,
    ) -> Result<Written, ApiError> {
        self.create_owned(namespace, obj, fv, Ownership::Update)
            .await
    }

    async fn create_owned(
        &self,
        namespace: &str,
        mut obj: Value,
        fv: FieldValidation,
        ownership: Ownership,
    ) -> Result<Written, ApiError> {
        let kind = self.kind();
        let warnings = decode_body(kind, &mut obj, fv)?;
        let client = obj.pointer("/metadata/managedFields").cloned();
        prepare_create(kind, &mut obj, namespace)?;
        kind.hooks.default(&mut obj);
        let empty = Value::Object(serde_json::Map::new());
        self.own(&empty, &mut obj, client.as_ref(), ownership, Part::Main)?;
        run_validation(kind, &obj, None)?;
        self.ensure_namespace(namespace).await?;
        let object = if self.ctx.dry_run {
            self.resource
                .backend
                .check_create(self.ctx, namespace, &obj)
                .await?;
            obj
        } else {
            self.resource
                .backend
                .create(self.ctx, namespace, obj)
                .await?
        };
        Ok(Written {
            object,
            created: true,
            warnings,
        })
    }

    /// PUT: replace (main resource or status).
    pub async fn update(
        &self,
        namespace: &str,
        name: &str,
        mut obj: Value,
        fv: FieldValidation,
        part: Part,
    ) -> Result<Written, ApiError> {
        let kind = self.kind();
        let warnings = decode_body(kind, &mut obj, fv)?;
        check_namespace_name(kind, &obj, name)?;
        for _ in 0..MAX_RETRIES {
            let old = self.resource.backend.get(self.ctx, namespace, name).await?;
            let (expect, pinned) = expect_for(&obj, &old, kind, name)?;
            match self
                .commit_update(
                    namespace,
                    name,
                    obj.clone(),
                    &old,
                    expect,
                    part,
                    Ownership::Update,
                )
                .await
            {
                Err(e) if !pinned && is_conflict(&e) => continue,
                Err(e) => return Err(e),
                Ok(object) => {
                    return Ok(Written {
                        object,
                        created: false,
                        warnings,
                    });
                }
            }
        }
        Err(kind.conflict(name))
    }

    #[allow(clippy::too_many_arguments, reason = "one write, spelled out")]
    async fn commit_update(
        &self,
        namespace: &str,
        name: &str,
        new: Value,
        old: &Value,
        expect: Expect,
        part: Part,
        ownership: Ownership,
    ) -> Result<Value, ApiError> {
        let kind = self.kind();
        let client = new.pointer("/metadata/managedFields").cloned();
        let mut new = prepare_update(kind, new, old, part);
        kind.hooks.default(&mut new);
        self.own(old, &mut new, client.as_ref(), ownership, part)?;
        run_validation(kind, &new, Some(old))?;
        if self.ctx.dry_run {
            self.resource
                .backend
                .check_update(self.ctx, namespace, name, &new)
                .await?;
            return Ok(new);
        }
        let finalizing = new.pointer("/metadata/deletionTimestamp").is_some()
            && new
                .pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty);
        if finalizing {
            return self
                .resource
                .backend
                .delete(self.ctx, namespace, name, expect)
                .await;
        }
        self.resource
            .backend
            .update(self.ctx, namespace, name, new, expect)
            .await
    }

    /// PATCH (any flavour); server-side apply creates a missing object.
    pub async fn patch(
        &self,
        namespace: &str,
        name: &str,
        kind_of_patch: PatchType,
        body: &[u8],
        fv: FieldValidation,
        part: Part,
    ) -> Result<Written, ApiError> {
        let kind = self.kind();
        let patch_body = patch::parse_body(kind_of_patch, body)?;
        if kind_of_patch == PatchType::Apply {
            return self
                .apply(namespace, name, patch_body.into(), fv, part)
                .await;
        }
        let patch_names_version = match kind_of_patch {
            PatchType::Json => patch_body.as_array().is_some_and(|ops| {
                ops.iter().any(|op| {
                    op.get("path").and_then(Value::as_str) == Some("/metadata/resourceVersion")
                })
            }),
            _ => patch_body
                .pointer("/metadata/resourceVersion")
                .is_some_and(|v| !v.is_null()),
        };
        for _ in 0..MAX_RETRIES {
            let old = self.resource.backend.get(self.ctx, namespace, name).await?;
            let mut new = old.clone();
            patch::apply(kind_of_patch, &mut new, &patch_body)?;
            let warnings = decode(kind, &mut new, fv)?;
            check_namespace_name(kind, &new, name)?;
            let (expect, mut pinned) = expect_for(&new, &old, kind, name)?;
            // A patch pins a version only when it names one itself.
            pinned &= patch_names_version;
            match self
                .commit_update(namespace, name, new, &old, expect, part, Ownership::Update)
                .await
            {
                Err(e) if !pinned && is_conflict(&e) => continue,
                Err(e) => return Err(e),
                Ok(object) => {
                    return Ok(Written {
                        object,
                        created: false,
                        warnings,
                    });
                }
            }
        }
        Err(kind.conflict(name))
    }

    /// Server-side apply of `config`; creates a missing object.
    async fn apply(
        &self,
        namespace: &str,
        name: &str,
        config: Value,
        fv: FieldValidation,
        part: Part,
    ) -> Result<Written, ApiError> {
        let kind = self.kind();
        if !config.is_object() {
            return Err(ApiError::bad_request("an apply patch must be an object"));
        }
        if config
            .pointer("/metadata/managedFields")
            .is_some_and(|m| !m.is_null())
        {
            return Err(ApiError::bad_request("metadata.managedFields must be nil"));
        }
        let pinned = config
            .pointer("/metadata/resourceVersion")
            .is_some_and(|v| !v.is_null());
        let fm = self.field_manager(part);
        for _ in 0..MAX_RETRIES {
            let old = match self.resource.backend.get(self.ctx, namespace, name).await {
                Ok(o) => o,
                Err(e) if part == Part::Main && e.kind == porch_core::ErrorKind::NotFound => {
                    let empty = Value::Object(serde_json::Map::new());
                    let managers = apply::Managers::default();
                    let (mut obj, applied) =
                        fm.merge_apply(&empty, &config, &managers, self.manager());
                    if meta::name(&obj).is_empty() {
                        meta::metadata_mut(&mut obj).insert("name".into(), name.into());
                    }
                    check_namespace_name(kind, &obj, name)?;
                    let ownership = Ownership::Apply { applied, managers };
                    return self.create_owned(namespace, obj, fv, ownership).await;
                }
                Err(e) => return Err(e),
            };
            let managers = fm.apply_managers(&old);
            let (mut new, applied) = fm.merge_apply(&old, &config, &managers, self.manager());
            let warnings = decode(kind, &mut new, fv)?;
            check_namespace_name(kind, &new, name)?;
            let (expect, _) = expect_for(&new, &old, kind, name)?;
            let ownership = Ownership::Apply { applied, managers };
            match self
                .commit_update(namespace, name, new, &old, expect, part, ownership)
                .await
            {
                Err(e) if !pinned && is_conflict(&e) => continue,
                Err(e) => return Err(e),
                Ok(object) => {
                    return Ok(Written {
                        object,
                        created: false,
                        warnings,
                    });
                }
            }
        }
        Err(kind.conflict(name))
    }

    /// DELETE: removes the object, or marks it for deletion while finalizers remain.
    pub async fn delete(
        &self,
        namespace: &str,
        name: &str,
        options: Option<&Value>,
    ) -> Result<Value, ApiError> {
        let pre_rv = options
            .and_then(|o| o.pointer("/preconditions/resourceVersion"))
            .and_then(Value::as_str)
            .map(|s| {
                s.parse::<u64>()
                    .map_err(|_| ApiError::bad_request("invalid precondition resourceVersion"))
            })
            .transpose()?;
        let pre_uid = options
            .and_then(|o| o.pointer("/preconditions/uid"))
            .and_then(Value::as_str);
        let orphan = orphans_dependents(options)? && self.kind().garbage_collected;
        for _ in 0..MAX_RETRIES {
            match self
                .delete_once(namespace, name, pre_rv, pre_uid, orphan)
                .await
            {
                // Without a resourceVersion precondition a concurrent change is no reason to fail.
                Err(e) if pre_rv.is_none() && is_conflict(&e) => continue,
                other => return other,
            }
        }
        Err(self.kind().conflict(name))
    }

    async fn delete_once(
        &self,
        namespace: &str,
        name: &str,
        pre_rv: Option<u64>,
        pre_uid: Option<&str>,
        orphan: bool,
    ) -> Result<Value, ApiError> {
        let kind = self.kind();
        let mut old = self.resource.backend.get(self.ctx, namespace, name).await?;
        let uid = old
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or("");
        if let Some(want) = pre_uid
            && want != uid
        {
            return Err(ApiError::new(
                porch_core::ErrorKind::Conflict,
                format!(
                    "Precondition failed: UID in precondition: {want}, UID in object meta: {uid}"
                ),
            )
            .with_details(name, &kind.group, &kind.plural));
        }
        let old_rv = meta::resource_version(&old)
            .map_err(ApiError::internal)?
            .unwrap_or(0);
        if let Some(rv) = pre_rv
            && rv != old_rv
        {
            return Err(kind.conflict(name));
        }
        let expect = Expect::ResourceVersion(old_rv);
        // Orphaning waits behind the `orphan` finalizer for the garbage collector.
        let added_orphan = orphan && add_finalizer(&mut old, ORPHAN_FINALIZER);
        let has_finalizers = old
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
        if has_finalizers && old.pointer("/metadata/deletionTimestamp").is_some() {
            if added_orphan && !self.ctx.dry_run {
                return self
                    .resource
                    .backend
                    .update(self.ctx, namespace, name, old, expect)
                    .await;
            }
            return Ok(old);
        }
        if self.ctx.dry_run {
            // What the real call would answer: its refusals, or the object it would return.
            self.resource
                .backend
                .check_delete(self.ctx, namespace, name, &old)
                .await?;
            return Ok(if has_finalizers {
                mark_deleted(old)
            } else {
                old
            });
        }
        if has_finalizers {
            let marked = mark_deleted(old);
            return self
                .resource
                .backend
                .update(self.ctx, namespace, name, marked, expect)
                .await;
        }
        self.resource
            .backend
            .delete(self.ctx, namespace, name, expect)
            .await
    }
}

/// The finalizer kube-apiserver sets for `propagationPolicy: Orphan`.
pub const ORPHAN_FINALIZER: &str = "orphan";

/// Whether a delete asks to orphan the dependents (`propagationPolicy: Orphan`, or the
/// deprecated `orphanDependents: true`). `Foreground` is served as `Background`: dependents
/// are collected after the owner is gone rather than before.
fn orphans_dependents(options: Option<&Value>) -> Result<bool, ApiError> {
    const POLICIES: [&str; 3] = ["Foreground", "Background", "Orphan"];
    match options.and_then(|o| o.get("propagationPolicy")) {
        None | Some(Value::Null) => Ok(options
            .and_then(|o| o.get("orphanDependents"))
            .and_then(Value::as_bool)
            == Some(true)),
        Some(Value::String(p)) if POLICIES.contains(&p.as_str()) => Ok(p == "Orphan"),
        Some(other) => Err(ApiError::invalid(
            "meta.k8s.io",
            "DeleteOptions",
            "",
            vec![FieldError::not_supported(
                "propagationPolicy",
                other,
                &POLICIES,
            )],
        )),
    }
}

/// Adds `finalizer` to the object's finalizers; false when it was there already.
fn add_finalizer(obj: &mut Value, finalizer: &str) -> bool {
    let m = meta::metadata_mut(obj);
    let list = m
        .entry("finalizers")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    match list.as_array_mut() {
        Some(items) if !items.iter().any(|f| f.as_str() == Some(finalizer)) => {
            items.push(finalizer.into());
            true
        }
        _ => false,
    }
}

/// Deletes an object with the semantics of a DELETE request (preconditions and
/// `propagationPolicy` from `options`, finalizers honoured): what a controller deleting on a
/// user's behalf (the garbage collector) needs.
pub async fn delete_object(
    resource: &Resource,
    ctx: &RequestContext,
    namespace: &str,
    name: &str,
    options: Option<&Value>,
) -> Result<Value, ApiError> {
    Rest {
        resource,
        ctx,
        namespaces: None,
    }
    .delete(namespace, name, options)
    .await
}

/// `obj` with the deletion marks a delete sets while finalizers remain.
fn mark_deleted(mut obj: Value) -> Value {
    let m = meta::metadata_mut(&mut obj);
    m.insert("deletionTimestamp".into(), meta::now_rfc3339().into());
    m.insert("deletionGracePeriodSeconds".into(), 0.into());
    obj
}

fn is_conflict(e: &ApiError) -> bool {
    e.kind == porch_core::ErrorKind::Conflict && e.special.is_none() && !apply::is_apply_conflict(e)
}

#[cfg(test)]
mod gc_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn propagation_policy_is_read_and_checked() {
        assert!(!orphans_dependents(None).expect("none"));
        let o = json!({"propagationPolicy": "Orphan"});
        assert!(orphans_dependents(Some(&o)).expect("orphan"));
        let f = json!({"propagationPolicy": "Foreground"});
        assert!(!orphans_dependents(Some(&f)).expect("foreground"));
        let legacy = json!({"orphanDependents": true});
        assert!(orphans_dependents(Some(&legacy)).expect("legacy"));
        let bad = json!({"propagationPolicy": "Sometimes"});
        let e = orphans_dependents(Some(&bad)).expect_err("bad policy");
        assert_eq!(e.kind, porch_core::ErrorKind::Invalid, "{}", e.message);
    }

    #[test]
    fn orphan_finalizer_is_added_once() {
        let mut o = json!({"metadata": {"finalizers": ["x"]}});
        assert!(add_finalizer(&mut o, ORPHAN_FINALIZER));
        assert!(!add_finalizer(&mut o, ORPHAN_FINALIZER));
        assert_eq!(o["metadata"]["finalizers"], json!(["x", "orphan"]));
    }
}
