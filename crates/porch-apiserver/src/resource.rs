//! The resource descriptor (`ResourceKind`), its hooks and the storage backend port.
//!
//! A new resource plugs in by describing itself with a `ResourceKind` (names, scope, Table
//! columns, OpenAPI schema, field selectors, hooks) and choosing a backend: the generic store
//! backend (`GenericBackend`) or its own implementation of `ResourceBackend`.

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use porch_core::store::EventType;
use serde_json::Value;

use crate::error::{ApiError, FieldError};
use crate::selector::Selectors;
use crate::table::Column;

/// Everything the REST layer needs to know about one resource of one group-version.
#[derive(Clone)]
pub struct ResourceKind {
    /// API group; empty for the core group (`v1`).
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub singular: String,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub namespaced: bool,
    /// Table columns after `Name` (an `Age` column is appended when `age_column` is true).
    pub columns: Vec<Column>,
    pub age_column: bool,
    /// OpenAPI v3 schema of the whole object (structural; `properties` drive strict decoding).
    pub schema: Value,
    /// Field selector paths accepted besides `metadata.name` and `metadata.namespace`.
    pub field_selectors: Vec<String>,
    /// Serve `<plural>/status` with the Kubernetes status-subresource semantics.
    pub status_subresource: bool,
    /// Further subresources, answered by the backend (`ResourceBackend::subresource`).
    pub subresources: Vec<String>,
    /// Verbs served; discovery advertises exactly these.
    pub verbs: Vec<String>,
    pub hooks: Arc<dyn ResourceHooks>,
    /// Decodes a Kubernetes protobuf body (kubectl sends built-in kinds that way); `None`
    /// answers protobuf with 415.
    pub protobuf: Option<ProtobufDecoder>,
    /// Put in front of the optimistic-concurrency message (Porch's kinds answer it as
    /// `Internal error occurred: Operation cannot be fulfilled …`, and clients match the text).
    pub conflict_prefix: &'static str,
    /// Served as kube-apiserver serves a CustomResourceDefinition's kind (in Porch:
    /// Repository, PackageVariant, PackageVariantSet): strategic merge patch answers 415.
    pub custom_resource: bool,
    /// Objects live in the metadata store, where the garbage collector (porch-resources) sees
    /// them: a delete with `propagationPolicy: Orphan` then parks the object behind the
    /// `orphan` finalizer until the collector has orphaned its dependents, as
    /// kube-controller-manager does. Set by `Registry::add_generic`.
    pub garbage_collected: bool,
}

/// Turns a protobuf request body into the object's JSON form.
pub type ProtobufDecoder = fn(&[u8]) -> Result<Value, String>;

impl ResourceKind {
    /// A namespaced resource with every verb, no columns, an open schema and no hooks.
    pub fn new(group: &str, version: &str, kind: &str, plural: &str) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
            singular: kind.to_lowercase(),
            short_names: Vec::new(),
            categories: Vec::new(),
            namespaced: true,
            columns: Vec::new(),
            age_column: true,
            schema: serde_json::json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
            field_selectors: Vec::new(),
            status_subresource: false,
            subresources: Vec::new(),
            verbs: [
                "create", "delete", "get", "list", "patch", "update", "watch",
            ]
            .map(String::from)
            .to_vec(),
            hooks: Arc::new(NoHooks),
            protobuf: None,
            conflict_prefix: "",
            custom_resource: false,
            garbage_collected: false,
        }
    }

    /// `group/version`, or just `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The store's resource key: `<group>/<plural>`.
    pub fn store_resource(&self) -> String {
        format!("{}/{}", self.group, self.plural)
    }

    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    pub fn has_verb(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    pub fn not_found(&self, name: &str) -> ApiError {
        ApiError::not_found(&self.group, &self.plural, name)
    }

    pub fn already_exists(&self, name: &str) -> ApiError {
        ApiError::already_exists(&self.group, &self.plural, name)
    }

    pub fn conflict(&self, name: &str) -> ApiError {
        let mut e = ApiError::conflict(&self.group, &self.plural, name);
        e.message.insert_str(0, self.conflict_prefix);
        e
    }

    pub fn invalid(&self, name: &str, causes: Vec<FieldError>) -> ApiError {
        ApiError::invalid(&self.group, &self.kind, name, causes)
    }
}

/// Per-resource defaulting and validation, run by the REST layer before the backend.
pub trait ResourceHooks: Send + Sync {
    /// Fills defaults in place (runs on create and on every update).
    fn default(&self, _obj: &mut Value) {}
    /// Rules for a new object.
    fn validate_create(&self, _obj: &Value) -> Vec<FieldError> {
        Vec::new()
    }
    /// Rules for a change; defaults to the create rules on the new object.
    fn validate_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        self.validate_create(new)
    }
}

/// Hooks that accept everything.
pub struct NoHooks;
impl ResourceHooks for NoHooks {}

/// Who is asking and how (from the request).
#[derive(Debug, Clone, Default)]
pub struct RequestContext {
    /// The authenticated user's name (recorded as author, publisher, Event reporter).
    pub user: String,
    /// The authenticated user's groups.
    pub groups: Vec<String>,
    /// The authenticated user's uid (empty when the authenticator gives none).
    pub uid: String,
    /// The manager of a write: `fieldManager`, else derived from the user agent.
    pub field_manager: Option<String>,
    pub dry_run: bool,
    /// `force` of a server-side apply: take the ownership of conflicting fields.
    pub force: bool,
    /// The authorizer of the request's server, for checks a resource makes beyond the
    /// request itself (a clone reads its upstream); `None`: everything is allowed.
    pub access: Option<std::sync::Arc<crate::authz::Authorizer>>,
}

impl RequestContext {
    /// Checks that the requester may `verb` the `resource` of `group` named `name` in
    /// `namespace`, as RBAC would for a request of its own (always allowed without an
    /// authorizer); a refusal is kube-apiserver's 403 ending in `: <why>`. A refusal is
    /// checked again against the store as it is now, so a binding created just before the
    /// request counts, as it does for the request itself.
    pub async fn require(
        &self,
        verb: &str,
        (group, resource): (&str, &str),
        namespace: &str,
        name: &str,
        why: &str,
    ) -> Result<(), crate::ApiError> {
        let Some(authorizer) = &self.access else {
            return Ok(());
        };
        let user = crate::auth::UserInfo {
            name: self.user.clone(),
            uid: self.uid.clone(),
            groups: self.groups.clone(),
            ..Default::default()
        };
        // `resource/subresource`, as rules name them.
        let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
        let attrs = crate::authz::Attributes {
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: namespace.into(),
            name: name.into(),
            ..Default::default()
        };
        if authorizer.authorize_fresh(&user, &attrs).await.allowed {
            Ok(())
        } else {
            Err(crate::authz::forbidden(&self.user, &attrs, why))
        }
    }

    /// An in-process component (a controller) acting under its own name, with the
    /// administrator's groups (it is part of the server).
    pub fn system(user: &str) -> Self {
        let info = crate::auth::UserInfo::system(user);
        Self {
            user: info.name,
            groups: info.groups,
            ..Self::default()
        }
    }
}

/// What a write must find in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Whatever is there (the object must exist for updates and deletes).
    Any,
    /// Exactly this resourceVersion (optimistic concurrency).
    ResourceVersion(u64),
}

/// Options of a list or watch.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    pub selectors: Selectors,
    pub limit: Option<usize>,
    pub continue_token: Option<String>,
}

/// A page of a list; items are complete JSON objects.
pub struct ListResult {
    pub items: Vec<Arc<[u8]>>,
    pub resource_version: u64,
    pub continue_token: Option<String>,
    pub remaining_item_count: Option<u64>,
}

/// Where a watch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchStart {
    /// Synthetic ADDED events for every current object, then changes (rv unset or "0").
    Now { initial_events: bool },
    /// Every change after this resourceVersion.
    After(u64),
}

/// One item of a watch stream.
#[derive(Debug, Clone)]
pub enum WatchItem {
    Event {
        event_type: EventType,
        object: Arc<[u8]>,
    },
    /// Progress: everything up to `resource_version` was delivered. `initial_events_end` marks
    /// the end of the initial events of a `sendInitialEvents` watch.
    Bookmark {
        resource_version: u64,
        initial_events_end: bool,
    },
    /// The watch cannot go on (e.g. 410 Gone after falling behind a compaction).
    Error(ApiError),
}

pub type WatchStream = Pin<Box<dyn Stream<Item = WatchItem> + Send>>;

/// Storage of one resource. The generic store backend serves most resources; a resource whose
/// objects come from elsewhere (package revisions from the engine) implements its own.
///
/// Objects cross this boundary as complete JSON (`apiVersion`, `kind`, `metadata` set). The REST
/// layer has already decoded, defaulted and validated them; the backend stamps
/// `metadata.resourceVersion` (and, on create, `uid` and `creationTimestamp` when missing).
#[async_trait::async_trait]
pub trait ResourceBackend: Send + Sync {
    async fn get(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
    ) -> Result<Value, ApiError>;

    async fn list(
        &self,
        ctx: &RequestContext,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<ListResult, ApiError>;

    async fn create(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        obj: Value,
    ) -> Result<Value, ApiError>;

    /// Replaces the object; `expect` is checked atomically with the write.
    async fn update(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
        obj: Value,
        expect: Expect,
    ) -> Result<Value, ApiError>;

    /// Deletes the object; returns its last state.
    async fn delete(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
        expect: Expect,
    ) -> Result<Value, ApiError>;

    async fn watch(
        &self,
        ctx: &RequestContext,
        namespace: Option<&str>,
        start: WatchStart,
        options: &ListOptions,
    ) -> Result<WatchStream, ApiError>;

    /// A dry-run create: the refusals `create` would answer for `obj` (already defaulted and
    /// validated by the REST layer), without writing anything.
    async fn check_create(
        &self,
        _ctx: &RequestContext,
        _namespace: &str,
        _obj: &Value,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// A dry-run update: the refusals `update` would answer for `new` (already defaulted and
    /// validated by the REST layer), without writing anything.
    async fn check_update(
        &self,
        _ctx: &RequestContext,
        _namespace: &str,
        _name: &str,
        _new: &Value,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// A dry-run delete: the refusals `delete` would answer for `current`, without deleting
    /// anything (no store write, no cascade, no event).
    async fn check_delete(
        &self,
        _ctx: &RequestContext,
        _namespace: &str,
        _name: &str,
        _current: &Value,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// A custom subresource (not `status`): `body` is `None` for GET. With `ctx.dry_run` a
    /// write must answer what it would do and change nothing.
    async fn subresource(
        &self,
        _ctx: &RequestContext,
        _namespace: &str,
        name: &str,
        subresource: &str,
        _body: Option<Value>,
    ) -> Result<Value, ApiError> {
        Err(ApiError::not_found("", subresource, name))
    }
}

/// A resource as served: its descriptor and its backend.
#[derive(Clone)]
pub struct Resource {
    pub kind: Arc<ResourceKind>,
    pub backend: Arc<dyn ResourceBackend>,
    /// Table rows of its listed objects (see `table_rows`).
    pub rows: Arc<crate::table_rows::RowCache>,
}
