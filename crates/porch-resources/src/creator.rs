//! The creator of a PackageVariant or PackageVariantSet, recorded by the server in the
//! `porch.kpt.dev/creator` annotation: the controller acts with that identity's rights
//! (`porch_controllers::access`), so no client may write someone else's identity there.
//!
//! On create the annotation is the requester's identity, whatever the object says, except
//! that a `system:masters` requester (the controllers, the administrator) may name another
//! identity (a set's generated variants carry the set's creator). On update a missing
//! annotation is the stored one again; a different one must be the requester's own identity
//! or the requester must be allowed `escalate` on the resource, else 403.

use std::sync::Arc;

use porch_apiserver::auth::MASTERS_GROUP;
use porch_apiserver::{
    ApiError, Expect, ListOptions, ListResult, RequestContext, ResourceBackend, WatchStart,
    WatchStream,
};
use porch_controllers::access::{CREATOR_ANNOTATION, Creator};
use serde_json::{Value, json};

/// A backend recording and guarding the creator of its objects.
pub struct CreatorRecorded {
    pub inner: Arc<dyn ResourceBackend>,
    pub group: &'static str,
    pub plural: &'static str,
}

fn requester(ctx: &RequestContext) -> Creator {
    Creator {
        username: ctx.user.clone(),
        uid: ctx.uid.clone(),
        groups: ctx.groups.clone(),
    }
}

fn annotation(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(CREATOR_ANNOTATION))
        .and_then(Value::as_str)
}

fn set_annotation(obj: &mut Value, value: &str) {
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    if !obj["metadata"]["annotations"].is_object() {
        obj["metadata"]["annotations"] = json!({});
    }
    obj["metadata"]["annotations"][CREATOR_ANNOTATION] = json!(value);
}

/// The object to create: its creator is the requester, unless a master names one.
fn on_create(ctx: &RequestContext, mut obj: Value) -> Value {
    let trusted = ctx.groups.iter().any(|g| g == MASTERS_GROUP)
        && annotation(&obj).is_some_and(|a| Creator::of(&obj).is_some() && !a.is_empty());
    if !trusted && !ctx.user.is_empty() {
        let value = requester(ctx).to_annotation();
        set_annotation(&mut obj, &value);
    }
    obj
}

impl CreatorRecorded {
    /// The object to store on update: the stored creator kept unless changed by right.
    async fn on_update(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
        mut obj: Value,
    ) -> Result<Value, ApiError> {
        let current = match self.inner.get(ctx, namespace, name).await {
            Ok(c) => c,
            // Not found: the update answers that itself.
            Err(_) => return Ok(obj),
        };
        let stored = annotation(&current).map(str::to_owned);
        match (annotation(&obj).map(str::to_owned), stored) {
            (None, Some(stored)) => set_annotation(&mut obj, &stored),
            (Some(new), stored) if Some(&new) != stored.as_ref() => {
                let own = Creator::of(&obj).is_some_and(|c| c == requester(ctx));
                if !own {
                    ctx.require(
                        "escalate",
                        (self.group, self.plural),
                        namespace,
                        name,
                        &format!(
                            "only the identity it names, or a user allowed to escalate, may change {CREATOR_ANNOTATION}"
                        ),
                    )
                    .await?;
                }
            }
            _ => {}
        }
        Ok(obj)
    }
}

#[async_trait::async_trait]
impl ResourceBackend for CreatorRecorded {
    async fn get(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
    ) -> Result<Value, ApiError> {
        self.inner.get(ctx, namespace, name).await
    }

    async fn list(
        &self,
        ctx: &RequestContext,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<ListResult, ApiError> {
        self.inner.list(ctx, namespace, options).await
    }

    async fn create(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        obj: Value,
    ) -> Result<Value, ApiError> {
        self.inner.create(ctx, namespace, on_create(ctx, obj)).await
    }

    async fn update(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
        obj: Value,
        expect: Expect,
    ) -> Result<Value, ApiError> {
        let obj = self.on_update(ctx, namespace, name, obj).await?;
        self.inner.update(ctx, namespace, name, obj, expect).await
    }

    async fn delete(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
        expect: Expect,
    ) -> Result<Value, ApiError> {
        self.inner.delete(ctx, namespace, name, expect).await
    }

    async fn watch(
        &self,
        ctx: &RequestContext,
        namespace: Option<&str>,
        start: WatchStart,
        options: &ListOptions,
    ) -> Result<WatchStream, ApiError> {
        self.inner.watch(ctx, namespace, start, options).await
    }

    async fn check_create(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        obj: &Value,
    ) -> Result<(), ApiError> {
        self.inner
            .check_create(ctx, namespace, &on_create(ctx, obj.clone()))
            .await
    }

    async fn check_update(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
        new: &Value,
    ) -> Result<(), ApiError> {
        let new = self.on_update(ctx, namespace, name, new.clone()).await?;
        self.inner.check_update(ctx, namespace, name, &new).await
    }

    async fn check_delete(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
        current: &Value,
    ) -> Result<(), ApiError> {
        self.inner.check_delete(ctx, namespace, name, current).await
    }

    async fn subresource(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
        subresource: &str,
        body: Option<Value>,
    ) -> Result<Value, ApiError> {
        self.inner
            .subresource(ctx, namespace, name, subresource, body)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(user: &str, groups: &[&str]) -> RequestContext {
        RequestContext {
            user: user.into(),
            uid: "u-1".into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_create_records_the_requester_whatever_the_object_says() {
        let forged = Creator {
            username: "admin".into(),
            groups: vec![MASTERS_GROUP.into()],
            ..Default::default()
        };
        let mut obj = json!({"metadata": {"name": "pv"}});
        set_annotation(&mut obj, &forged.to_annotation());
        let stored = on_create(&ctx("bob", &["dev"]), obj.clone());
        let c = Creator::of(&stored).expect("recorded");
        assert_eq!(
            (c.username.as_str(), c.uid.as_str(), c.groups.as_slice()),
            ("bob", "u-1", &["dev".to_string()][..])
        );
        // A master (a set's controller) may name the creator.
        let by_master = on_create(&ctx("system:pvs", &[MASTERS_GROUP]), obj);
        assert_eq!(Creator::of(&by_master), Some(forged));
        let plain = on_create(
            &ctx("system:pvs", &[MASTERS_GROUP]),
            json!({"metadata": {}}),
        );
        assert_eq!(
            Creator::of(&plain).map(|c| c.username),
            Some("system:pvs".to_string())
        );
    }
}
