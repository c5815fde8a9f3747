//! The controllers' [`Objects`] port over this server's own registry, in process: every
//! write goes through the same REST rules as a client's (validation hooks, resourceVersion
//! checks, the status subresource, finalizers), without HTTP.

use async_trait::async_trait;
use porch_apiserver::{
    ApiError, FieldValidation, ListOptions, Part, Registry, RequestContext, Resource, Rest,
    Selectors,
};
use porch_controllers::objects::{Gvr, ObjectError, Objects};
use serde_json::Value;

/// [`Objects`] over a [`Registry`], acting as `user`.
#[derive(Clone)]
pub struct RegistryObjects {
    registry: Registry,
    ctx: RequestContext,
}

impl RegistryObjects {
    pub fn new(registry: Registry, user: &str) -> Self {
        RegistryObjects {
            registry,
            ctx: RequestContext {
                user: user.into(),
                ..Default::default()
            },
        }
    }

    fn resource(&self, r: &Gvr) -> Result<&Resource, ObjectError> {
        self.registry
            .find(&r.group, &r.version, &r.plural)
            .ok_or_else(|| ObjectError {
                kind: porch_core::ErrorKind::NotFound,
                message: format!(
                    "the server does not serve {}/{} {}",
                    r.group, r.version, r.plural
                ),
            })
    }

    fn rest<'a>(&'a self, resource: &'a Resource) -> Rest<'a> {
        Rest {
            resource,
            ctx: &self.ctx,
            namespaces: None,
        }
    }
}

fn err(e: ApiError) -> ObjectError {
    ObjectError {
        kind: e.kind,
        message: e.message,
    }
}

fn name_of(obj: &Value) -> String {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

#[async_trait]
impl Objects for RegistryObjects {
    async fn get(
        &self,
        r: &Gvr,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ObjectError> {
        let resource = self.resource(r)?;
        match resource.backend.get(&self.ctx, namespace, name).await {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.kind == porch_core::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(err(e)),
        }
    }

    async fn list(
        &self,
        r: &Gvr,
        namespace: Option<&str>,
        label_selector: &str,
    ) -> Result<Vec<Value>, ObjectError> {
        let resource = self.resource(r)?;
        let selectors = Selectors::parse(Some(label_selector), None, &[]).map_err(err)?;
        let listed = resource
            .backend
            .list(
                &self.ctx,
                namespace,
                &ListOptions {
                    selectors,
                    ..ListOptions::default()
                },
            )
            .await
            .map_err(err)?;
        Ok(listed
            .items
            .iter()
            .filter_map(|b| serde_json::from_slice(b).ok())
            .collect())
    }

    fn resolve(&self, api_version: &str, kind: &str) -> Option<Gvr> {
        self.registry
            .resources()
            .iter()
            .find(|r| r.kind.api_version() == api_version && r.kind.kind == kind)
            .map(|r| Gvr::new(&r.kind.group, &r.kind.version, &r.kind.plural))
    }

    async fn create(&self, r: &Gvr, namespace: &str, obj: Value) -> Result<Value, ObjectError> {
        let resource = self.resource(r)?;
        self.rest(resource)
            .create(namespace, obj, FieldValidation::Ignore)
            .await
            .map(|w| w.object)
            .map_err(err)
    }

    async fn update(&self, r: &Gvr, namespace: &str, obj: Value) -> Result<Value, ObjectError> {
        let resource = self.resource(r)?;
        let name = name_of(&obj);
        self.rest(resource)
            .update(namespace, &name, obj, FieldValidation::Ignore, Part::Main)
            .await
            .map(|w| w.object)
            .map_err(err)
    }

    async fn update_status(
        &self,
        r: &Gvr,
        namespace: &str,
        obj: Value,
    ) -> Result<Value, ObjectError> {
        let resource = self.resource(r)?;
        let name = name_of(&obj);
        self.rest(resource)
            .update(namespace, &name, obj, FieldValidation::Ignore, Part::Status)
            .await
            .map(|w| w.object)
            .map_err(err)
    }

    async fn delete(&self, r: &Gvr, namespace: &str, name: &str) -> Result<(), ObjectError> {
        let resource = self.resource(r)?;
        self.rest(resource)
            .delete(namespace, name, None)
            .await
            .map(|_| ())
            .map_err(err)
    }
}
