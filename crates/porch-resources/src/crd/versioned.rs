//! One served version of a custom resource over the generic store. Objects are stored once,
//! under `<group>/<plural>`, with the storage version's apiVersion; every served version reads
//! and writes them with its own apiVersion, which is all conversion strategy `None` does.

use std::sync::Arc;

use futures::StreamExt;
use porch_apiserver::{
    ApiError, Expect, GenericBackend, ListOptions, ListResult, RequestContext, ResourceBackend,
    WatchItem, WatchStart, WatchStream,
};
use serde_json::Value;

pub struct VersionedBackend {
    inner: GenericBackend,
    /// The apiVersion this version serves.
    served: String,
    /// The apiVersion objects are stored with.
    storage: String,
}

impl VersionedBackend {
    pub fn new(inner: GenericBackend, served: String, storage: String) -> Self {
        Self {
            inner,
            served,
            storage,
        }
    }
}

fn set_api_version(obj: &mut Value, api_version: &str) {
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), api_version.into());
    }
}

/// The stored bytes as `api_version` serves them; untouched (no copy) when they already match.
fn rewrite_bytes(bytes: Arc<[u8]>, api_version: &str) -> Arc<[u8]> {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(rename = "apiVersion", borrow)]
        api_version: Option<std::borrow::Cow<'a, str>>,
    }
    let matches = serde_json::from_slice::<Head>(&bytes)
        .is_ok_and(|h| h.api_version.as_deref() == Some(api_version));
    if matches {
        return bytes;
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(mut v) => {
            set_api_version(&mut v, api_version);
            serde_json::to_vec(&v).map(Arc::from).unwrap_or(bytes)
        }
        Err(_) => bytes,
    }
}

#[async_trait::async_trait]
impl ResourceBackend for VersionedBackend {
    async fn get(&self, ctx: &RequestContext, ns: &str, name: &str) -> Result<Value, ApiError> {
        let mut obj = self.inner.get(ctx, ns, name).await?;
        set_api_version(&mut obj, &self.served);
        Ok(obj)
    }

    async fn list(
        &self,
        ctx: &RequestContext,
        ns: Option<&str>,
        options: &ListOptions,
    ) -> Result<ListResult, ApiError> {
        let mut list = self.inner.list(ctx, ns, options).await?;
        list.items = list
            .items
            .into_iter()
            .map(|b| rewrite_bytes(b, &self.served))
            .collect();
        Ok(list)
    }

    async fn create(
        &self,
        ctx: &RequestContext,
        ns: &str,
        mut obj: Value,
    ) -> Result<Value, ApiError> {
        set_api_version(&mut obj, &self.storage);
        let mut out = self.inner.create(ctx, ns, obj).await?;
        set_api_version(&mut out, &self.served);
        Ok(out)
    }

    async fn update(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        mut obj: Value,
        expect: Expect,
    ) -> Result<Value, ApiError> {
        set_api_version(&mut obj, &self.storage);
        let mut out = self.inner.update(ctx, ns, name, obj, expect).await?;
        set_api_version(&mut out, &self.served);
        Ok(out)
    }

    async fn delete(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        expect: Expect,
    ) -> Result<Value, ApiError> {
        let mut out = self.inner.delete(ctx, ns, name, expect).await?;
        set_api_version(&mut out, &self.served);
        Ok(out)
    }

    async fn watch(
        &self,
        ctx: &RequestContext,
        ns: Option<&str>,
        start: WatchStart,
        options: &ListOptions,
    ) -> Result<WatchStream, ApiError> {
        let stream = self.inner.watch(ctx, ns, start, options).await?;
        let served = self.served.clone();
        Ok(Box::pin(stream.map(move |item| match item {
            WatchItem::Event { event_type, object } => WatchItem::Event {
                event_type,
                object: rewrite_bytes(object, &served),
            },
            other => other,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_rewritten_only_when_the_version_differs() {
        let stored: Arc<[u8]> = Arc::from(
            br#"{"apiVersion":"example.com/v1","kind":"W","metadata":{"ownerReferences":[{"apiVersion":"example.com/v0"}]}}"#.as_slice(),
        );
        let same = rewrite_bytes(stored.clone(), "example.com/v1");
        assert!(Arc::ptr_eq(&same, &stored));
        let other = rewrite_bytes(stored, "example.com/v2");
        let v: Value = serde_json::from_slice(&other).expect("json");
        assert_eq!(v["apiVersion"], "example.com/v2");
        assert_eq!(
            v["metadata"]["ownerReferences"][0]["apiVersion"],
            "example.com/v0"
        );
    }
}
