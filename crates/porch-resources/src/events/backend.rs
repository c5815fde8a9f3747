//! Both Event APIs on one set of stored objects: core `v1` is the stored form; the
//! `events.k8s.io/v1` view converts every object on the way in and out, and rewrites its
//! field selectors to the stored paths (kube-apiserver keeps one internal Event the same way).

use std::sync::Arc;

use futures::StreamExt;
use porch_apiserver::{
    ApiError, Expect, GenericBackend, ListOptions, ListResult, RequestContext, ResourceBackend,
    ResourceKind, WatchItem, WatchStart, WatchStream,
};
use serde_json::Value;

use super::convert;

/// Which API a backend answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Core,
    EventsV1,
}

pub struct EventsBackend {
    pub view: View,
    /// The kind this view is served as (for its error messages).
    pub kind: Arc<ResourceKind>,
    /// The stored (core `v1`) Events.
    pub inner: GenericBackend,
}

impl EventsBackend {
    fn outgoing(&self, core: Value) -> Value {
        match self.view {
            View::Core => core,
            View::EventsV1 => convert::to_events_v1(&core),
        }
    }

    fn incoming(&self, obj: Value) -> Value {
        match self.view {
            View::Core => obj,
            View::EventsV1 => convert::to_core(&obj),
        }
    }
}

/// The bytes of a stored Event as `view` shows them.
fn outgoing_bytes(view: View, bytes: Arc<[u8]>) -> Arc<[u8]> {
    match view {
        View::Core => bytes,
        View::EventsV1 => match serde_json::from_slice::<Value>(&bytes) {
            Ok(core) => serde_json::to_vec(&convert::to_events_v1(&core))
                .map(Arc::from)
                .unwrap_or(bytes),
            Err(_) => bytes,
        },
    }
}

impl EventsBackend {
    /// Errors name the resource of this view (`events.events.k8s.io "x" not found`).
    fn error(&self, name: &str, e: ApiError) -> ApiError {
        if self.view == View::Core || e.special.is_some() {
            return e;
        }
        match e.kind {
            porch_core::ErrorKind::NotFound => self.kind.not_found(name),
            porch_core::ErrorKind::AlreadyExists => self.kind.already_exists(name),
            porch_core::ErrorKind::Conflict => self.kind.conflict(name),
            _ => e,
        }
    }

    fn stored_options(options: &ListOptions) -> ListOptions {
        ListOptions {
            selectors: convert::to_stored_selectors(options.selectors.clone()),
            ..options.clone()
        }
    }
}

#[async_trait::async_trait]
impl ResourceBackend for EventsBackend {
    async fn get(&self, ctx: &RequestContext, ns: &str, name: &str) -> Result<Value, ApiError> {
        let core = self
            .inner
            .get(ctx, ns, name)
            .await
            .map_err(|e| self.error(name, e))?;
        Ok(self.outgoing(core))
    }

    async fn list(
        &self,
        ctx: &RequestContext,
        ns: Option<&str>,
        options: &ListOptions,
    ) -> Result<ListResult, ApiError> {
        let mut page = self
            .inner
            .list(ctx, ns, &Self::stored_options(options))
            .await?;
        if self.view == View::EventsV1 {
            page.items = page
                .items
                .into_iter()
                .map(|b| outgoing_bytes(self.view, b))
                .collect();
        }
        Ok(page)
    }

    async fn create(&self, ctx: &RequestContext, ns: &str, obj: Value) -> Result<Value, ApiError> {
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let core = self
            .inner
            .create(ctx, ns, self.incoming(obj))
            .await
            .map_err(|e| self.error(&name, e))?;
        Ok(self.outgoing(core))
    }

    async fn update(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        obj: Value,
        expect: Expect,
    ) -> Result<Value, ApiError> {
        let core = self
            .inner
            .update(ctx, ns, name, self.incoming(obj), expect)
            .await
            .map_err(|e| self.error(name, e))?;
        Ok(self.outgoing(core))
    }

    async fn delete(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        expect: Expect,
    ) -> Result<Value, ApiError> {
        let core = self
            .inner
            .delete(ctx, ns, name, expect)
            .await
            .map_err(|e| self.error(name, e))?;
        Ok(self.outgoing(core))
    }

    async fn watch(
        &self,
        ctx: &RequestContext,
        ns: Option<&str>,
        start: WatchStart,
        options: &ListOptions,
    ) -> Result<WatchStream, ApiError> {
        let stream = self
            .inner
            .watch(ctx, ns, start, &Self::stored_options(options))
            .await?;
        if self.view == View::Core {
            return Ok(stream);
        }
        let view = self.view;
        Ok(Box::pin(stream.map(move |item| match item {
            WatchItem::Event { event_type, object } => WatchItem::Event {
                event_type,
                object: outgoing_bytes(view, object),
            },
            other => other,
        })))
    }
}
