//! `packagerevisions` served from the engine: get/list from its index, create with one task,
//! updates split into metadata and lifecycle changes, the `approval` subresource, delete, and
//! watch from the event log.

use std::collections::HashSet;
use std::sync::Arc;

use futures::StreamExt;
use porch_apiserver::{
    ApiError, Expect, ListOptions, ListResult, RequestContext, ResourceBackend, WatchItem,
    WatchStart, WatchStream,
};
use porch_core::lifecycle::{Endpoint, Lifecycle};
use porch_core::revision::Author;
use porch_core::store::EventType;
use porch_engine::{CreateRequest, Engine, MetadataUpdate, PackageRevision};
use serde_json::Value;

use super::convert::{self, api_error, revision_json, str_at, string_map, wire_rv};
use super::events::{EventLog, LogItem, LoggedEvent, Resume};
use super::{record, select};
use crate::events::EventSink;

const PLURAL: &str = "packagerevisions";

pub struct RevisionBackend {
    pub engine: Engine,
    pub log: Arc<EventLog>,
    pub cache: super::cache::JsonCache,
    /// Where lifecycle changes and render failures are reported.
    pub events: Arc<dyn EventSink>,
    /// Field ownership, computed by the REST layer (see `managed`).
    pub managed: super::managed::ManagedFields,
}

fn err(name: &str) -> impl Fn(porch_engine::EngineError) -> ApiError + '_ {
    move |e| api_error(e, PLURAL, name)
}

fn author(ctx: &RequestContext) -> Author {
    if ctx.user.is_empty() {
        Author::porch()
    } else {
        Author {
            name: ctx.user.clone(),
            email: ctx.user.clone(),
        }
    }
}

fn lifecycle_of(obj: &Value) -> Result<Lifecycle, ApiError> {
    str_at(obj, "/spec/lifecycle").parse().map_err(|e| {
        ApiError::new(porch_core::ErrorKind::Invalid, format!("{e}")).with_details(
            convert::str_at(obj, "/metadata/name"),
            convert::GROUP,
            "PackageRevision",
        )
    })
}

/// The engine's version of `current` if the request's expectation holds.
fn expected_version(
    current: &PackageRevision,
    expect: Expect,
    name: &str,
) -> Result<String, ApiError> {
    match expect {
        Expect::Any => Ok(current.resource_version.clone()),
        Expect::ResourceVersion(rv) if rv == wire_rv(&current.resource_version) => {
            Ok(current.resource_version.clone())
        }
        Expect::ResourceVersion(_) => Err(convert::conflict(PLURAL, name)),
    }
}

/// The name engine errors of a create are reported under.
const NEW: &str = "(new creation)";

impl RevisionBackend {
    /// The engine's create request for `obj` (with a legacy `update` task translated).
    fn create_request(&self, namespace: &str, obj: &Value) -> Result<CreateRequest, ApiError> {
        let mut tasks = convert::tasks(obj)?;
        super::legacy::translate(&self.engine, namespace, obj, &mut tasks)?;
        Ok(CreateRequest {
            namespace: namespace.to_owned(),
            repository: str_at(obj, "/spec/repository").to_owned(),
            package: str_at(obj, "/spec/packageName").to_owned(),
            workspace: str_at(obj, "/spec/workspaceName").to_owned(),
            tasks,
            labels: string_map(obj, "/metadata/labels"),
            annotations: string_map(obj, "/metadata/annotations"),
            finalizers: convert::typed_at(obj, "/metadata/finalizers")?.unwrap_or_default(),
            owner_references: convert::typed_at(obj, "/metadata/ownerReferences")?
                .unwrap_or_default(),
            package_metadata: convert::typed_at(obj, "/spec/packageMetadata")?,
            readiness_gates: convert::readiness_gates(obj).unwrap_or_default(),
        })
    }

    fn list_objects(&self, namespace: Option<&str>, options: &ListOptions) -> Vec<Value> {
        self.engine
            .list(&select::prefilter(namespace, &options.selectors))
            .iter()
            .map(revision_json)
            .filter(|o| select::matches(&options.selectors, o))
            .collect()
    }

    /// The serialized objects a list answers with (from the cache where unchanged).
    /// [`Self::list_bytes`] with each object's namespace and name, for paging.
    fn list_named(
        &self,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Vec<(String, String, Arc<[u8]>)> {
        let revisions = self
            .engine
            .list(&select::prefilter(namespace, &options.selectors));
        revisions
            .iter()
            .filter_map(|pr| {
                let managed = self.managed_of(pr);
                let bytes = if options.selectors.is_empty() {
                    self.cache.bytes(pr, None, managed)
                } else {
                    let obj = revision_json(pr);
                    if !select::matches(&options.selectors, &obj) {
                        return None;
                    }
                    self.cache.bytes(pr, Some(&obj), managed)
                };
                Some((pr.namespace.clone(), pr.name().as_str().to_owned(), bytes))
            })
            .collect()
    }

    fn list_bytes(&self, namespace: Option<&str>, options: &ListOptions) -> Vec<Arc<[u8]>> {
        let revisions = self
            .engine
            .list(&select::prefilter(namespace, &options.selectors));
        if options.selectors.is_empty() {
            return revisions
                .iter()
                .map(|pr| self.cache.bytes(pr, None, self.managed_of(pr)))
                .collect();
        }
        revisions
            .iter()
            .filter_map(|pr| {
                let obj = revision_json(pr);
                select::matches(&options.selectors, &obj)
                    .then(|| self.cache.bytes(pr, Some(&obj), self.managed_of(pr)))
            })
            .collect()
    }

    fn managed_of(&self, pr: &PackageRevision) -> super::cache::Managed {
        self.managed.peek(&pr.namespace, pr.name().as_str())
    }

    /// Applies metadata and lifecycle changes of `new` to the revision `name`.
    async fn apply_update(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
        new: &Value,
        mut rv: String,
        endpoint: Endpoint,
    ) -> Result<PackageRevision, ApiError> {
        let current = self.engine.get(namespace, name).map_err(err(name))?;
        let to = lifecycle_of(new)?;
        let mut result = current.clone();
        // Both steps may render (conditions of a Draft, a proposal): a failure is reported.
        let failed = |e: porch_engine::EngineError| {
            record::render_failed(self.events.as_ref(), namespace, name, &e);
            err(name)(e)
        };
        // Tasks changed on a Draft: moved to another upstream (older clients' `rpkg update`)
        // or a subpackage cloned or upgraded. Most updates (lifecycle, metadata) resend the
        // tasks unchanged and skip this.
        if endpoint == Endpoint::Update && new.pointer("/spec/tasks").is_some() {
            let tasks = convert::tasks(new)?;
            if tasks != current.tasks {
                let old = serde_json::json!({"spec": {"tasks": current.tasks}});
                super::access::check_update(ctx, namespace, &old, new).await?;
                if let Some(moved) = self
                    .engine
                    .update_tasks(namespace, name, &rv, tasks)
                    .await
                    .map_err(failed)?
                {
                    rv = moved.resource_version.clone();
                    result = moved;
                }
            }
        }
        if endpoint == Endpoint::Update
            && let Some(update) = metadata_update(new, &result)?
        {
            result = self
                .engine
                .update_metadata(namespace, name, &rv, update)
                .await
                .map_err(failed)?;
            rv = result.resource_version.clone();
        }
        if to != current.lifecycle {
            result = self
                .engine
                .update_lifecycle(namespace, name, Some(&rv), to, endpoint, author(ctx))
                .await
                .map_err(failed)?;
            record::changed(self.events.as_ref(), current.lifecycle, &result, &ctx.user);
        }
        Ok(result)
    }
}

/// The metadata change `new` asks for, if any. Spec parts absent from `new` are kept.
fn metadata_update(
    new: &Value,
    current: &PackageRevision,
) -> Result<Option<MetadataUpdate>, ApiError> {
    let mut labels = string_map(new, "/metadata/labels");
    labels.remove(porch_engine::LATEST_REVISION_LABEL);
    let mut stored_labels = current.labels.clone();
    stored_labels.remove(porch_engine::LATEST_REVISION_LABEL);
    let update = MetadataUpdate {
        labels,
        annotations: string_map(new, "/metadata/annotations"),
        finalizers: convert::typed_at(new, "/metadata/finalizers")?.unwrap_or_default(),
        owner_references: convert::typed_at(new, "/metadata/ownerReferences")?.unwrap_or_default(),
        package_metadata: convert::typed_at(new, "/spec/packageMetadata")?
            .filter(|p| *p != current.package_metadata),
        readiness_gates: convert::readiness_gates(new).filter(|g| *g != current.readiness_gates),
        conditions: convert::typed_at(new, "/status/conditions")?
            .filter(|c: &Vec<porch_engine::Condition>| *c != current.conditions),
    };
    let changed = update.labels != stored_labels
        || update.annotations != current.annotations
        || update.finalizers != current.finalizers
        || update.owner_references != current.owner_references
        || update.package_metadata.is_some()
        || update.readiness_gates.is_some()
        || update.conditions.is_some();
    Ok(changed.then_some(update))
}

#[async_trait::async_trait]
impl ResourceBackend for RevisionBackend {
    async fn get(
        &self,
        _: &RequestContext,
        namespace: &str,
        name: &str,
    ) -> Result<Value, ApiError> {
        let mut obj = self
            .engine
            .get(namespace, name)
            .map(|pr| revision_json(&pr))
            .map_err(err(name))?;
        self.managed.attach(namespace, name, &mut obj).await;
        Ok(obj)
    }

    async fn list(
        &self,
        _: &RequestContext,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<ListResult, ApiError> {
        select::validate(&options.selectors)?;
        self.managed.load_all().await?;
        let after = options
            .continue_token
            .as_deref()
            .map(super::paging::Token::decode)
            .transpose()?;
        let resource_version = after.as_ref().map_or_else(|| self.log.latest(), |t| t.rv);
        if after.is_none() && options.limit.is_none_or(|l| l == 0) {
            let items = self.list_bytes(namespace, options);
            return Ok(ListResult {
                items,
                resource_version,
                continue_token: None,
                remaining_item_count: None,
            });
        }
        let (items, next) = super::paging::page(
            self.list_named(namespace, options),
            after.as_ref(),
            options.limit,
            resource_version,
        );
        Ok(ListResult {
            items,
            resource_version,
            continue_token: next.map(|t| t.encode()),
            remaining_item_count: None,
        })
    }

    async fn create(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        obj: Value,
    ) -> Result<Value, ApiError> {
        super::access::check_create(ctx, namespace, &obj).await?;
        let req = self.create_request(namespace, &obj)?;
        let pr = match self.engine.create(req).await {
            Ok(pr) => pr,
            Err(e) => {
                let name = str_at(&obj, "/metadata/name");
                record::render_failed(self.events.as_ref(), namespace, name, &e);
                return Err(err(NEW)(e));
            }
        };
        record::created(self.events.as_ref(), &pr, &ctx.user);
        let name = pr.name();
        self.managed.record(namespace, name.as_str(), &obj).await;
        let mut created = revision_json(&pr);
        self.managed
            .attach(namespace, name.as_str(), &mut created)
            .await;
        Ok(created)
    }

    async fn check_create(
        &self,
        _: &RequestContext,
        namespace: &str,
        obj: &Value,
    ) -> Result<(), ApiError> {
        let req = self.create_request(namespace, obj)?;
        self.engine.check_create(&req).map_err(err(NEW))
    }

    async fn update(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
        obj: Value,
        expect: Expect,
    ) -> Result<Value, ApiError> {
        let current = self.engine.get(namespace, name).map_err(err(name))?;
        let rv = expected_version(&current, expect, name)?;
        // The REST layer marks an object with finalizers for deletion through an update.
        if current.deletion_timestamp.is_none()
            && obj.pointer("/metadata/deletionTimestamp").is_some()
        {
            let pr = self
                .engine
                .delete(namespace, name, Some(&rv))
                .await
                .map_err(err(name))?;
            return Ok(revision_json(&pr));
        }
        let pr = self
            .apply_update(ctx, namespace, name, &obj, rv, Endpoint::Update)
            .await?;
        self.managed.record(namespace, name, &obj).await;
        let mut updated = revision_json(&pr);
        self.managed.attach(namespace, name, &mut updated).await;
        Ok(updated)
    }

    async fn delete(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
        expect: Expect,
    ) -> Result<Value, ApiError> {
        let current = self.engine.get(namespace, name).map_err(err(name))?;
        let rv = expected_version(&current, expect, name)?;
        // The REST layer asks for the real deletion when an update empties the finalizers of
        // a terminating revision; the engine deletes when its finalizers are emptied.
        if current.deletion_timestamp.is_some() && !current.finalizers.is_empty() {
            let update = MetadataUpdate {
                labels: current.labels.clone(),
                annotations: current.annotations.clone(),
                owner_references: current.owner_references.clone(),
                ..MetadataUpdate::default()
            };
            self.engine
                .update_metadata(namespace, name, &rv, update)
                .await
                .map_err(err(name))?;
            return Ok(revision_json(&current));
        }
        // Deleting a revision proposed for deletion is approving that proposal: it takes the
        // approver's right as well as `delete` (RBAC alone cannot tell it from deleting a
        // draft), so that an author cannot both propose and carry out a deletion.
        if current.lifecycle == Lifecycle::DeletionProposed {
            ctx.require(
                "update",
                ("porch.kpt.dev", "packagerevisions/approval"),
                namespace,
                name,
                "deleting a revision proposed for deletion approves the proposal",
            )
            .await?;
        }
        let pr = self
            .engine
            .delete(namespace, name, Some(&rv))
            .await
            .map_err(err(name))?;
        if pr.deletion_timestamp.is_none() || pr.finalizers.is_empty() {
            record::deleted(self.events.as_ref(), &pr, &ctx.user);
        }
        self.managed.forget(namespace, name).await;
        Ok(revision_json(&pr))
    }

    async fn watch(
        &self,
        _: &RequestContext,
        namespace: Option<&str>,
        start: WatchStart,
        options: &ListOptions,
    ) -> Result<WatchStream, ApiError> {
        select::validate(&options.selectors)?;
        // Subscribe first, then list or replay, so nothing falls in between.
        let rx = self.log.subscribe();
        let mut initial: Vec<WatchItem> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        let after = match start {
            WatchStart::Now { initial_events } => {
                let at = self.log.latest();
                for obj in self.list_objects(namespace, options) {
                    seen.insert(str_at(&obj, "/metadata/name").to_owned());
                    initial.push(WatchItem::Event {
                        event_type: EventType::Added,
                        object: Arc::from(serde_json::to_vec(&obj).unwrap_or_default()),
                    });
                }
                if initial_events {
                    initial.push(WatchItem::Bookmark {
                        resource_version: at,
                        initial_events_end: true,
                    });
                }
                at
            }
            WatchStart::After(rv) => match self.log.resume(rv) {
                Resume::Gone => {
                    return Err(ApiError::gone(format!("too old resource version: {rv}")));
                }
                Resume::From { replay, after } => {
                    // Objects the client already has (from its list) count as seen.
                    for obj in self.list_objects(namespace, options) {
                        seen.insert(str_at(&obj, "/metadata/name").to_owned());
                    }
                    let mut filter = Filter {
                        namespace: namespace.map(str::to_owned),
                        selectors: options.selectors.clone(),
                        seen: std::mem::take(&mut seen),
                    };
                    for ev in &replay {
                        if let Some(item) = filter.apply(ev) {
                            initial.push(item);
                        }
                    }
                    seen = filter.seen;
                    replay.last().map_or(after, |e| e.seq)
                }
            },
        };
        let filter = Filter {
            namespace: namespace.map(str::to_owned),
            selectors: options.selectors.clone(),
            seen,
        };
        let live = tokio_stream_from(rx, after, filter);
        Ok(Box::pin(futures::stream::iter(initial).chain(live)))
    }

    async fn subresource(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
        subresource: &str,
        body: Option<Value>,
    ) -> Result<Value, ApiError> {
        if subresource != "approval" {
            return Err(ApiError::not_found(convert::GROUP, subresource, name));
        }
        let current = self.engine.get(namespace, name).map_err(err(name))?;
        let Some(new) = body else {
            return Ok(revision_json(&current));
        };
        let expect = match porch_apiserver_rv(&new)? {
            Some(rv) => Expect::ResourceVersion(rv),
            None => Expect::Any,
        };
        let rv = expected_version(&current, expect, name)?;
        if ctx.dry_run {
            return approval_dry_run(current, &new);
        }
        let pr = self
            .apply_update(ctx, namespace, name, &new, rv, Endpoint::Approval)
            .await?;
        Ok(revision_json(&pr))
    }

    /// The lifecycle refusals of a dry-run update (metadata changes have none).
    async fn check_update(
        &self,
        _: &RequestContext,
        namespace: &str,
        name: &str,
        new: &Value,
    ) -> Result<(), ApiError> {
        let current = self.engine.get(namespace, name).map_err(err(name))?;
        // Emptying the finalizers of a terminating revision deletes it.
        let finalizing = new.pointer("/metadata/deletionTimestamp").is_some()
            && new
                .pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty);
        if finalizing {
            return self.engine.check_delete(namespace, name).map_err(err(name));
        }
        Engine::check_lifecycle(&current, lifecycle_of(new)?, Endpoint::Update)
            .map(|_| ())
            .map_err(err(name))
    }

    async fn check_delete(
        &self,
        _: &RequestContext,
        namespace: &str,
        name: &str,
        _: &Value,
    ) -> Result<(), ApiError> {
        self.engine.check_delete(namespace, name).map_err(err(name))
    }
}

/// An approval with `dryRun`: the engine's refusals of the transition, or the revision in its
/// new lifecycle; nothing is written, pushed or announced. (A real approval also assigns the
/// revision number, which only the publish decides.)
fn approval_dry_run(mut current: PackageRevision, new: &Value) -> Result<Value, ApiError> {
    let name = current.name();
    let to = lifecycle_of(new)?;
    Engine::check_lifecycle(&current, to, Endpoint::Approval).map_err(err(name.as_str()))?;
    current.lifecycle = to;
    Ok(revision_json(&current))
}

fn porch_apiserver_rv(obj: &Value) -> Result<Option<u64>, ApiError> {
    match obj.pointer("/metadata/resourceVersion") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => s
            .parse()
            .map(Some)
            .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {s:?}"))),
        Some(_) => Err(ApiError::bad_request(
            "metadata.resourceVersion must be a string",
        )),
    }
}

/// Turns log events into what one watcher should see: namespace and selectors applied, with
/// ADDED/DELETED when an object enters or leaves the selection.
struct Filter {
    namespace: Option<String>,
    selectors: porch_apiserver::Selectors,
    seen: HashSet<String>,
}

impl Filter {
    fn apply(&mut self, ev: &LoggedEvent) -> Option<WatchItem> {
        if self
            .namespace
            .as_ref()
            .is_some_and(|ns| *ns != ev.revision.namespace)
        {
            return None;
        }
        let obj = revision_json(&ev.revision);
        let name = str_at(&obj, "/metadata/name").to_owned();
        let now = ev.event_type != EventType::Deleted && select::matches(&self.selectors, &obj);
        let was = self.seen.contains(&name);
        let event_type = match (was, now) {
            (false, false) => return None,
            (false, true) => {
                self.seen.insert(name);
                EventType::Added
            }
            (true, true) => EventType::Modified,
            (true, false) => {
                self.seen.remove(&name);
                EventType::Deleted
            }
        };
        Some(WatchItem::Event {
            event_type,
            object: Arc::from(serde_json::to_vec(&obj).unwrap_or_default()),
        })
    }
}

fn tokio_stream_from(
    rx: tokio::sync::broadcast::Receiver<LogItem>,
    after: u64,
    filter: Filter,
) -> impl futures::Stream<Item = WatchItem> + Send {
    futures::stream::unfold(
        (rx, after, filter, false),
        |(mut rx, after, mut filter, done)| async move {
            if done {
                return None;
            }
            loop {
                match rx.recv().await {
                    Ok(LogItem::Event(ev)) if ev.seq <= after => continue,
                    Ok(LogItem::Event(ev)) => {
                        let seq = ev.seq;
                        if let Some(item) = filter.apply(&ev) {
                            return Some((item, (rx, seq, filter, false)));
                        }
                    }
                    Ok(LogItem::Reset)
                    | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        let gone =
                            WatchItem::Error(ApiError::gone("the watch fell behind; list again"));
                        return Some((gone, (rx, after, filter, true)));
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
                }
            }
        },
    )
}
