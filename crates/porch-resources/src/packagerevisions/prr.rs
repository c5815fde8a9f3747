//! `packagerevisionresources`: a revision's files, replaced wholesale by an update that the
//! engine renders (spec §3, §10). Only get, list, update and patch.

use std::sync::Arc;

use porch_apiserver::{
    ApiError, Expect, FieldError, ListOptions, ListResult, RequestContext, ResourceBackend,
    WatchStart, WatchStream,
};
use porch_core::paths;
use porch_core::repository::PackageFiles;
use porch_engine::{Engine, EngineError};
use serde_json::Value;

use super::convert::{self, PORCH_PREFIX, api_error, resources_json, str_at, wire_rv};
use super::select;

const PLURAL: &str = "packagerevisionresources";

pub struct ResourcesBackend {
    pub engine: Engine,
    pub log: Arc<super::events::EventLog>,
    /// Where render failures are reported.
    pub events: Arc<dyn crate::events::EventSink>,
}

fn err(name: &str) -> impl Fn(EngineError) -> ApiError + '_ {
    move |e| api_error(e, PLURAL, name)
}

fn files_of(obj: &Value, name: &str) -> Result<PackageFiles, ApiError> {
    let Some(map) = obj.pointer("/spec/resources") else {
        return Ok(PackageFiles::new());
    };
    let map = map.as_object().ok_or_else(|| {
        ApiError::bad_request("spec.resources must be a map of file path to text")
    })?;
    // Names a git client must never receive are refused before anything else happens,
    // all of them in one reply.
    let causes: Vec<FieldError> = map
        .keys()
        .filter_map(|k| {
            paths::validate_file_path(k).err().map(|e| {
                FieldError::invalid(format!("spec.resources[{k}]"), &Value::from(k.as_str()), e)
            })
        })
        .collect();
    if !causes.is_empty() {
        return Err(ApiError::invalid(
            convert::GROUP,
            "PackageRevisionResources",
            name,
            causes,
        ));
    }
    map.iter()
        .map(|(k, v)| match v.as_str() {
            Some(s) => Ok((k.clone(), s.as_bytes().to_vec())),
            None => Err(ApiError::bad_request(format!(
                "spec.resources[{k:?}] must be a string"
            ))),
        })
        .collect()
}

#[async_trait::async_trait]
impl ResourceBackend for ResourcesBackend {
    async fn get(
        &self,
        _: &RequestContext,
        namespace: &str,
        name: &str,
    ) -> Result<Value, ApiError> {
        let (pr, files) = self
            .engine
            .read_resources(namespace, name)
            .await
            .map_err(err(name))?;
        Ok(resources_json(&pr, &files, None))
    }

    async fn list(
        &self,
        _: &RequestContext,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<ListResult, ApiError> {
        select::validate(&options.selectors)?;
        let resource_version = self.log.latest();
        let mut items = Vec::new();
        for pr in self
            .engine
            .list(&select::prefilter(namespace, &options.selectors))
        {
            if !select::matches(&options.selectors, &convert::revision_json(&pr)) {
                continue;
            }
            let name = pr.name();
            match self
                .engine
                .read_resources(&pr.namespace, name.as_str())
                .await
            {
                Ok((pr, files)) => items.push(Arc::from(
                    serde_json::to_vec(&resources_json(&pr, &files, None)).unwrap_or_default(),
                )),
                // Gone since the listing, or its repository is unreachable: skip it, as
                // Porch skips items it cannot convert.
                Err(e) => tracing::debug!(revision = %name, "skipped in list: {e}"),
            }
        }
        Ok(ListResult {
            items,
            resource_version,
            continue_token: None,
            remaining_item_count: None,
        })
    }

    async fn create(&self, _: &RequestContext, _: &str, _: Value) -> Result<Value, ApiError> {
        Err(ApiError::method_not_allowed(
            "packagerevisionresources cannot be created; create a PackageRevision",
        ))
    }

    async fn update(
        &self,
        _: &RequestContext,
        namespace: &str,
        name: &str,
        obj: Value,
        expect: Expect,
    ) -> Result<Value, ApiError> {
        // Porch refuses an update that does not say which version it replaces.
        if str_at(&obj, "/metadata/resourceVersion").is_empty() {
            return Err(ApiError::bad_request(format!(
                "{PORCH_PREFIX}resourceVersion must be specified for an update"
            )));
        }
        let files = files_of(&obj, name)?;
        // The index answers which engine version the wire's resourceVersion names; the files
        // are read once, by the update itself, which returns what it saved.
        let current = self.engine.get(namespace, name).map_err(err(name))?;
        if let Expect::ResourceVersion(rv) = expect
            && rv != wire_rv(&current.resource_version)
        {
            return Err(convert::conflict(PLURAL, name));
        }
        match self
            .engine
            .update_resources(namespace, name, &current.resource_version, files)
            .await
        {
            Ok(update) if update.render_status.error.is_empty() => Ok(resources_json(
                &update.revision,
                &update.files,
                Some(&update.render_status),
            )),
            // Saved because of push-on-render-failure; Porch still answers with an error.
            Ok(update) => {
                let e = EngineError::Render {
                    message: update.render_status.error.clone(),
                    pushed: true,
                    status: Box::new(update.render_status),
                };
                super::record::render_failed(self.events.as_ref(), namespace, name, &e);
                Err(err(name)(e))
            }
            Err(e) => {
                super::record::render_failed(self.events.as_ref(), namespace, name, &e);
                Err(err(name)(e))
            }
        }
    }

    async fn delete(
        &self,
        _: &RequestContext,
        _: &str,
        name: &str,
        _: Expect,
    ) -> Result<Value, ApiError> {
        Err(ApiError::method_not_allowed(format!(
            "packagerevisionresources cannot be deleted; delete packagerevisions {name:?}"
        )))
    }

    async fn watch(
        &self,
        _: &RequestContext,
        _: Option<&str>,
        _: WatchStart,
        _: &ListOptions,
    ) -> Result<WatchStream, ApiError> {
        Err(ApiError::method_not_allowed(
            "watch is not supported on packagerevisionresources; watch packagerevisions",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn forbidden_names_are_refused_with_one_cause_each() {
        let obj = json!({"spec": {"resources": {
            "Kptfile": "k",
            ".git/config": "x",
            "a//b": "y",
        }}});
        let e = files_of(&obj, "r.p.ws").expect_err("refused");
        assert_eq!(e.code_and_reason().0, 422);
        let status = e.to_status();
        let fields: Vec<&str> = status["details"]["causes"]
            .as_array()
            .expect("causes")
            .iter()
            .filter_map(|c| c["field"].as_str())
            .collect();
        assert_eq!(
            fields,
            ["spec.resources[.git/config]", "spec.resources[a//b]"]
        );
    }
}
