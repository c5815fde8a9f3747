//! `GenericBackend`: a `ResourceBackend` on the `MetadataStore`, with watch from the hub.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use porch_core::store::{
    EventType, ListQuery, MetadataStore, ObjectKey, Precondition, StoreEvent, Write, WriteOp,
};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc};

use crate::error::ApiError;
use crate::hub::WatchHub;
use crate::meta;
use crate::resource::{
    Expect, ListOptions, ListResult, RequestContext, ResourceBackend, ResourceKind, WatchItem,
    WatchStart, WatchStream,
};
use crate::selector::Selectors;

/// How often an idle watch sends a bookmark (when the client allows bookmarks).
pub const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);
const EVENT_PAGE: usize = 2_000;
const LIST_PAGE: usize = 1_000;

/// Runs a blocking store call off the async threads.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, porch_core::store::StoreError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(format!("store task failed: {e}")))?
        .map_err(ApiError::from)
}

/// Stores a resource's objects in the metadata store.
pub struct GenericBackend {
    kind: Arc<ResourceKind>,
    store: Arc<dyn MetadataStore>,
    hub: Arc<WatchHub>,
}

impl GenericBackend {
    pub fn new(kind: Arc<ResourceKind>, store: Arc<dyn MetadataStore>, hub: Arc<WatchHub>) -> Self {
        Self { kind, store, hub }
    }

    fn key(&self, namespace: &str, name: &str) -> ObjectKey {
        let ns = if self.kind.namespaced { namespace } else { "" };
        ObjectKey::new(self.kind.store_resource(), ns, name)
    }

    fn map_store_error(&self, name: &str, e: ApiError) -> ApiError {
        match e.kind {
            porch_core::ErrorKind::NotFound if e.special.is_none() => self.kind.not_found(name),
            porch_core::ErrorKind::AlreadyExists => self.kind.already_exists(name),
            porch_core::ErrorKind::Conflict if e.special.is_none() => self.kind.conflict(name),
            _ => e,
        }
    }

    async fn put(
        &self,
        name: &str,
        key: ObjectKey,
        obj: Value,
        pre: Precondition,
    ) -> Result<Value, ApiError> {
        let mut result = obj.clone();
        let store = self.store.clone();
        let write = Write {
            key,
            precondition: pre,
            op: WriteOp::Put(Box::new(move |rv, _| meta::stamp_bytes(obj, rv))),
        };
        let events = blocking(move || store.write(vec![write]))
            .await
            .map_err(|e| self.map_store_error(name, e))?;
        let rv = events
            .first()
            .map(|e| e.object.resource_version)
            .unwrap_or(0);
        meta::set_resource_version(&mut result, rv);
        Ok(result)
    }
}

/// A continue token: where the previous page stopped and the resourceVersion of the first page.
fn encode_continue(rv: u64, ns: &str, name: &str) -> String {
    let raw = serde_json::json!({"v": "meta.k8s.io/v1", "rv": rv, "ns": ns, "name": name});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw.to_string())
}

fn decode_continue(token: &str) -> Result<(u64, String, String), ApiError> {
    let bad = || ApiError::bad_request("continue key is not valid: re-run the list without it");
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&raw).map_err(|_| bad())?;
    let rv = v.get("rv").and_then(Value::as_u64).ok_or_else(bad)?;
    let ns = v
        .get("ns")
        .and_then(Value::as_str)
        .ok_or_else(bad)?
        .to_string();
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(bad)?
        .to_string();
    Ok((rv, ns, name))
}

#[async_trait::async_trait]
impl ResourceBackend for GenericBackend {
    async fn get(
        &self,
        _ctx: &RequestContext,
        namespace: &str,
        name: &str,
    ) -> Result<Value, ApiError> {
        let key = self.key(namespace, name);
        let store = self.store.clone();
        let found = blocking(move || store.get(&key)).await?;
        let obj = found.ok_or_else(|| self.kind.not_found(name))?;
        serde_json::from_slice(&obj.data)
            .map_err(|e| ApiError::internal(format!("corrupt object: {e}")))
    }

    async fn list(
        &self,
        _ctx: &RequestContext,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<ListResult, ApiError> {
        let mut start_after = None;
        let mut first_rv = None;
        if let Some(token) = &options.continue_token {
            let (rv, ns, name) = decode_continue(token)?;
            first_rv = Some(rv);
            start_after = Some((ns, name));
        }
        let limit = options.limit.filter(|l| *l > 0);
        let mut items = Vec::new();
        let mut resource_version = 0;
        let mut continue_token = None;
        let mut remaining_item_count = None;
        loop {
            let want = if options.selectors.is_empty() {
                limit
            } else {
                Some(LIST_PAGE)
            };
            let query = ListQuery {
                resource: self.kind.store_resource(),
                namespace: namespace
                    .filter(|_| self.kind.namespaced)
                    .map(str::to_string),
                start_after: start_after.clone(),
                limit: want,
            };
            let store = self.store.clone();
            let page = blocking(move || store.list(&query)).await?;
            if resource_version == 0 {
                resource_version = first_rv.unwrap_or(page.resource_version);
            }
            let mut last_key = None;
            let mut cut = false;
            for obj in page.items {
                last_key = Some((obj.key.namespace.clone(), obj.key.name.clone()));
                let keep = options.selectors.is_empty() || {
                    let v: Value = serde_json::from_slice(&obj.data).unwrap_or(Value::Null);
                    options.selectors.matches(&v)
                };
                if keep {
                    items.push(obj.data);
                    if limit.is_some_and(|l| items.len() >= l) {
                        cut = true;
                        break;
                    }
                }
            }
            let more = page.more || cut;
            if let Some(l) = limit
                && items.len() >= l
                && more
            {
                if let Some((ns, name)) = &last_key {
                    continue_token = Some(encode_continue(resource_version, ns, name));
                }
                // As kube-apiserver: the count is known (and sent) only without selectors.
                if options.selectors.is_empty() {
                    remaining_item_count = page.remaining;
                }
                break;
            }
            if !page.more {
                break;
            }
            start_after = last_key;
        }
        Ok(ListResult {
            items,
            resource_version,
            continue_token,
            remaining_item_count,
        })
    }

    async fn create(
        &self,
        _ctx: &RequestContext,
        namespace: &str,
        obj: Value,
    ) -> Result<Value, ApiError> {
        let name = meta::name(&obj).to_string();
        let key = self.key(namespace, &name);
        self.put(&name, key, obj, Precondition::MustNotExist).await
    }

    async fn update(
        &self,
        _ctx: &RequestContext,
        namespace: &str,
        name: &str,
        obj: Value,
        expect: Expect,
    ) -> Result<Value, ApiError> {
        let pre = match expect {
            Expect::Any => Precondition::MustExist,
            Expect::ResourceVersion(rv) => Precondition::ResourceVersion(rv),
        };
        self.put(name, self.key(namespace, name), obj, pre).await
    }

    async fn delete(
        &self,
        _ctx: &RequestContext,
        namespace: &str,
        name: &str,
        expect: Expect,
    ) -> Result<Value, ApiError> {
        let pre = match expect {
            Expect::Any => Precondition::MustExist,
            Expect::ResourceVersion(rv) => Precondition::ResourceVersion(rv),
        };
        let write = Write {
            key: self.key(namespace, name),
            precondition: pre,
            op: WriteOp::Delete(Box::new(|rv, old| {
                meta::restamp(old.unwrap_or_default(), rv)
            })),
        };
        let store = self.store.clone();
        let events = blocking(move || store.write(vec![write]))
            .await
            .map_err(|e| self.map_store_error(name, e))?;
        let ev = events
            .into_iter()
            .next()
            .ok_or_else(|| ApiError::internal("delete wrote nothing"))?;
        serde_json::from_slice(&ev.object.data)
            .map_err(|e| ApiError::internal(format!("corrupt object: {e}")))
    }

    async fn watch(
        &self,
        _ctx: &RequestContext,
        namespace: Option<&str>,
        start: WatchStart,
        options: &ListOptions,
    ) -> Result<WatchStream, ApiError> {
        let filter = Filter {
            resource: self.kind.store_resource(),
            namespace: namespace
                .filter(|_| self.kind.namespaced)
                .map(str::to_string),
            selectors: options.selectors.clone(),
        };
        let sub = self.hub.subscribe();
        // Resuming from a compacted resourceVersion is answered with 410 before streaming.
        let (tx, rx) = mpsc::channel(256);
        let mut w = Watcher {
            store: self.store.clone(),
            filter,
            tx,
            last: 0,
        };
        match start {
            WatchStart::After(rv) => {
                w.last = rv;
                w.catch_up().await?;
            }
            WatchStart::Now { initial_events } => {
                let page = w.initial_list().await?;
                w.last = page;
                if initial_events {
                    w.send(WatchItem::Bookmark {
                        resource_version: page,
                        initial_events_end: true,
                    })
                    .await;
                }
            }
        }
        tokio::spawn(w.run(sub));
        Ok(Box::pin(tokio_stream_from(rx)))
    }
}

fn tokio_stream_from(mut rx: mpsc::Receiver<WatchItem>) -> impl futures::Stream<Item = WatchItem> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

struct Filter {
    resource: String,
    namespace: Option<String>,
    selectors: Selectors,
}

impl Filter {
    /// What a watcher should see of a store event, if anything.
    fn apply(&self, ev: &StoreEvent) -> Option<(EventType, Arc<[u8]>)> {
        let key = &ev.object.key;
        if key.resource != self.resource {
            return None;
        }
        if let Some(ns) = &self.namespace
            && &key.namespace != ns
        {
            return None;
        }
        if self.selectors.is_empty() {
            return Some((ev.event_type, ev.object.data.clone()));
        }
        let parse = |b: &[u8]| serde_json::from_slice::<Value>(b).unwrap_or(Value::Null);
        let now = self.selectors.matches(&parse(&ev.object.data));
        let before = ev
            .previous
            .as_deref()
            .map(|p| self.selectors.matches(&parse(p)));
        let t = match (ev.event_type, now, before) {
            (EventType::Deleted, true, _) => EventType::Deleted,
            (EventType::Deleted, false, _) => return None,
            (EventType::Added, true, _) => EventType::Added,
            (EventType::Modified, true, Some(false)) => EventType::Added,
            (EventType::Modified, true, _) => EventType::Modified,
            (EventType::Modified, false, Some(true)) => EventType::Deleted,
            _ => return None,
        };
        Some((t, ev.object.data.clone()))
    }
}

struct Watcher {
    store: Arc<dyn MetadataStore>,
    filter: Filter,
    tx: mpsc::Sender<WatchItem>,
    /// Every event up to here was processed (sent or filtered out).
    last: u64,
}

impl Watcher {
    async fn send(&self, item: WatchItem) -> bool {
        self.tx.send(item).await.is_ok()
    }

    async fn deliver(&mut self, ev: &StoreEvent) -> bool {
        if ev.object.resource_version <= self.last {
            return true;
        }
        self.last = ev.object.resource_version;
        match self.filter.apply(ev) {
            Some((event_type, object)) => self.send(WatchItem::Event { event_type, object }).await,
            None => true,
        }
    }

    /// Sends every logged event after `last`.
    async fn catch_up(&mut self) -> Result<(), ApiError> {
        loop {
            let store = self.store.clone();
            let after = self.last;
            let events = blocking(move || store.events_since(after, EVENT_PAGE)).await?;
            if events.is_empty() {
                return Ok(());
            }
            for ev in &events {
                if !self.deliver(ev).await {
                    return Ok(());
                }
            }
        }
    }

    /// Sends ADDED for every current object; returns the snapshot's resourceVersion.
    async fn initial_list(&mut self) -> Result<u64, ApiError> {
        let mut start_after = None;
        let mut rv = None;
        loop {
            let query = ListQuery {
                resource: self.filter.resource.clone(),
                namespace: self.filter.namespace.clone(),
                start_after: start_after.clone(),
                limit: Some(LIST_PAGE),
            };
            let store = self.store.clone();
            let page = blocking(move || store.list(&query)).await?;
            let snapshot = *rv.get_or_insert(page.resource_version);
            for obj in &page.items {
                start_after = Some((obj.key.namespace.clone(), obj.key.name.clone()));
                let ok = self.filter.selectors.is_empty() || {
                    let v: Value = serde_json::from_slice(&obj.data).unwrap_or(Value::Null);
                    self.filter.selectors.matches(&v)
                };
                if ok {
                    let item = WatchItem::Event {
                        event_type: EventType::Added,
                        object: obj.data.clone(),
                    };
                    if !self.send(item).await {
                        return Ok(snapshot);
                    }
                }
            }
            if !page.more {
                // Later pages were read from later snapshots: events in between are replayed
                // by the caller from `snapshot` on and skipped here by `last`.
                return Ok(snapshot);
            }
        }
    }

    async fn run(mut self, mut sub: broadcast::Receiver<crate::hub::EventBatch>) {
        let mut ticker = tokio::time::interval(BOOKMARK_INTERVAL);
        ticker.tick().await;
        loop {
            tokio::select! {
                _ = self.tx.closed() => return,
                _ = ticker.tick() => {
                    let item = WatchItem::Bookmark { resource_version: self.last, initial_events_end: false };
                    if !self.send(item).await { return; }
                }
                r = sub.recv() => match r {
                    Ok(batch) => {
                        for ev in batch.iter() {
                            if !self.deliver(ev).await { return; }
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        if let Err(e) = self.catch_up().await {
                            let _ = self.send(WatchItem::Error(e)).await;
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        }
    }
}
