//! `porch.kpt.dev/v1alpha1` `functions` (read-only): the functions pipelines can use — the
//! built-ins, the images FunctionConfigs configure, and the images of function
//! repositories (`Repository` with `content: Function` on an OCI registry, listed from the
//! registry's catalog on every read). Named `<repository>:<function>:<version>` as Porch
//! named them; built-ins and FunctionConfig images use the repository names `builtin` and
//! `functionconfig`.

use std::sync::Arc;

use porch_apiserver::{
    ApiError, Column, Expect, FieldReq, ListOptions, ListResult, LiveRegistry, RequestContext,
    ResourceBackend, ResourceKind, WatchStart, WatchStream, now_rfc3339,
};
use serde_json::{Value, json};

use super::routing::FunctionConfigs;

/// The images of an OCI registry: `(repository path, tags)` under `registry`
/// (`host[:port][/path]`). The binary implements it with the OCI client.
#[async_trait::async_trait]
pub trait ImageCatalog: Send + Sync {
    async fn images(&self, registry: &str) -> Result<Vec<(String, Vec<String>)>, String>;
}

/// Repository name of the built-in functions.
pub const BUILTIN: &str = "builtin";
/// Repository name of the FunctionConfig images.
pub const CONFIGURED: &str = "functionconfig";
const CATALOG: &str = "ghcr.io/kptdev/krm-functions-catalog";

pub(crate) fn kind() -> ResourceKind {
    let mut k = ResourceKind::new(porch_api::PORCH_GROUP, "v1alpha1", "Function", "functions");
    k.schema = porch_api::aggregated_schema::<porch_api::Function>();
    k.age_column = false;
    k.columns = vec![
        Column::path("Created At", "date", ".metadata.creationTimestamp"),
        Column::path("Image", "string", ".spec.image").priority(1),
        Column::computed("Function Types", "string", |o| {
            let types: Vec<&str> = o
                .pointer("/spec/functionTypes")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            json!(types.join(","))
        })
        .priority(1),
        Column::path("Description", "string", ".spec.description").priority(1),
    ];
    k.field_selectors = [
        "spec.image",
        "spec.functionTypes",
        "spec.keywords",
        "spec.repositoryRef.name",
    ]
    .map(String::from)
    .to_vec();
    k.verbs = ["get", "list"].map(String::from).to_vec();
    k
}

/// Serves `functions`.
pub struct FunctionsBackend {
    pub live: LiveRegistry,
    pub configs: FunctionConfigs,
    pub catalog: Option<Arc<dyn ImageCatalog>>,
    /// When the server started (the built-ins' creation time).
    pub started: String,
}

impl FunctionsBackend {
    pub fn new(
        live: LiveRegistry,
        configs: FunctionConfigs,
        catalog: Option<Arc<dyn ImageCatalog>>,
    ) -> Self {
        FunctionsBackend {
            live,
            configs,
            catalog,
            started: now_rfc3339(),
        }
    }
}

fn function(
    namespace: &str,
    repository: &str,
    name: &str,
    version: &str,
    image: String,
    created: &str,
) -> Value {
    json!({
        "apiVersion": "porch.kpt.dev/v1alpha1",
        "kind": "Function",
        "metadata": {
            "name": format!("{repository}:{name}:{version}"),
            "namespace": namespace,
            "creationTimestamp": created,
        },
        "spec": {"image": image, "repositoryRef": {"name": repository}, "description": ""},
        "status": {},
    })
}

fn describe(obj: &mut Value, info: &krm_functions::catalog::Info) {
    let configs: Vec<Value> = info
        .configs
        .iter()
        .map(|(v, k)| json!({"apiVersion": v, "kind": k}))
        .collect();
    let spec = &mut obj["spec"];
    spec["description"] = json!(info.description);
    spec["functionTypes"] = json!(info.types);
    spec["keywords"] = json!(info.keywords);
    if !configs.is_empty() {
        spec["functionConfigs"] = json!(configs);
    }
    spec["documentationUrl"] = json!(format!(
        "https://catalog.kpt.dev/function-catalog/{}/{}/",
        info.name, info.version
    ));
}

impl FunctionsBackend {
    fn builtins(&self, namespace: &str) -> Vec<Value> {
        krm_functions::catalog::BUILTINS
            .iter()
            .map(|info| {
                let image = format!("{CATALOG}/{}:{}", info.name, info.version);
                let mut f = function(
                    namespace,
                    BUILTIN,
                    info.name,
                    info.version,
                    image,
                    &self.started,
                );
                describe(&mut f, info);
                f
            })
            .collect()
    }

    fn configured(&self, namespace: &str) -> Vec<Value> {
        let mut out = Vec::new();
        for configured in self.configs.get().iter() {
            let spec = &configured.spec;
            let prefix = spec
                .prefixes
                .first()
                .map(|p| p.trim_end_matches('/'))
                .filter(|p| !p.is_empty())
                .unwrap_or(CATALOG);
            let mut tags: Vec<&String> = [
                spec.go_executor.as_ref().map(|e| &e.tags),
                spec.binary_executor.as_ref().map(|e| &e.tags),
                spec.pod_executor.as_ref().map(|e| &e.tags),
            ]
            .into_iter()
            .flatten()
            .flatten()
            .collect();
            tags.sort();
            tags.dedup();
            for tag in tags {
                let image = format!("{prefix}/{}:{tag}", spec.image);
                let mut f = function(
                    namespace,
                    CONFIGURED,
                    &spec.image,
                    tag,
                    image,
                    &self.started,
                );
                match krm_functions::catalog::info(&spec.image) {
                    Some(info) => describe(&mut f, info),
                    None => {
                        f["spec"]["description"] =
                            json!(format!("{} (configured by a FunctionConfig)", spec.image))
                    }
                }
                out.push(f);
            }
        }
        out
    }

    /// The images of the namespace's function repositories.
    async fn in_repositories(&self, namespace: Option<&str>) -> Vec<Value> {
        let Some(catalog) = &self.catalog else {
            return Vec::new();
        };
        let Some(repos) = self
            .live
            .load()
            .find(porch_api::CONFIG_GROUP, "v1alpha1", "repositories")
            .cloned()
        else {
            return Vec::new();
        };
        let ctx = RequestContext {
            user: "system:porch-functions".into(),
            ..Default::default()
        };
        let Ok(listed) = repos
            .backend
            .list(&ctx, namespace, &ListOptions::default())
            .await
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for raw in listed.items {
            let Ok(repo) = serde_json::from_slice::<porch_api::Repository>(&raw) else {
                continue;
            };
            let oci = match &repo.spec.oci {
                Some(oci) if repo.spec.content.as_deref() == Some("Function") => oci,
                _ => continue,
            };
            let ns = repo.metadata.namespace.clone().unwrap_or_default();
            let name = repo.metadata.name.clone().unwrap_or_default();
            let created = repo
                .metadata
                .creation_timestamp
                .as_ref()
                .map(|t| t.0.to_string())
                .unwrap_or_else(|| self.started.clone());
            let registry = oci.registry.trim_end_matches('/');
            let images = match catalog.images(registry).await {
                Ok(images) => images,
                Err(e) => {
                    tracing::warn!(repository = %name, error = %e, "cannot list function images");
                    continue;
                }
            };
            let host = registry.split('/').next().unwrap_or(registry);
            for (path, tags) in images {
                let short = path.rsplit('/').next().unwrap_or(&path).to_owned();
                for tag in tags {
                    let image = format!("{host}/{path}:{tag}");
                    let mut f = function(&ns, &name, &short, &tag, image, &created);
                    if let Some(info) = krm_functions::catalog::info(&short) {
                        describe(&mut f, info);
                    }
                    out.push(f);
                }
            }
        }
        out
    }

    async fn all(&self, namespace: Option<&str>) -> Vec<Value> {
        // Built-ins and FunctionConfigs serve every namespace; an all-namespaces list shows
        // them once, in `default`.
        let ns = namespace.unwrap_or("default");
        let mut out = self.builtins(ns);
        out.extend(self.configured(ns));
        out.extend(self.in_repositories(namespace).await);
        out
    }
}

/// A field requirement; list fields (`functionTypes`, `keywords`) match when they contain
/// the value.
fn field_matches(obj: &Value, req: &FieldReq) -> bool {
    let pointer = format!("/{}", req.path.replace('.', "/"));
    let found = match obj.pointer(&pointer) {
        Some(Value::Array(a)) => a.iter().any(|v| v.as_str() == Some(req.value.as_str())),
        Some(Value::String(s)) => *s == req.value,
        Some(Value::Null) | None => req.value.is_empty(),
        Some(other) => serde_json::from_str::<Value>(&req.value).is_ok_and(|v| v == *other),
    };
    found != req.negated
}

fn matches(obj: &Value, options: &ListOptions) -> bool {
    let labels_only = porch_apiserver::Selectors {
        labels: options.selectors.labels.clone(),
        fields: Vec::new(),
    };
    labels_only.matches(obj)
        && options
            .selectors
            .fields
            .iter()
            .all(|f| field_matches(obj, f))
}

fn read_only() -> ApiError {
    ApiError::method_not_allowed("functions are read-only: they are discovered, not created")
}

#[async_trait::async_trait]
impl ResourceBackend for FunctionsBackend {
    async fn get(
        &self,
        _: &RequestContext,
        namespace: &str,
        name: &str,
    ) -> Result<Value, ApiError> {
        self.all(Some(namespace))
            .await
            .into_iter()
            .find(|o| o.pointer("/metadata/name").and_then(Value::as_str) == Some(name))
            .ok_or_else(|| ApiError::not_found(porch_api::PORCH_GROUP, "functions", name))
    }

    async fn list(
        &self,
        _: &RequestContext,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<ListResult, ApiError> {
        let items = self
            .all(namespace)
            .await
            .into_iter()
            .filter(|o| matches(o, options))
            .map(|o| Arc::from(serde_json::to_vec(&o).unwrap_or_default()))
            .collect();
        Ok(ListResult {
            items,
            resource_version: 0,
            continue_token: None,
            remaining_item_count: None,
        })
    }

    async fn create(&self, _: &RequestContext, _: &str, _: Value) -> Result<Value, ApiError> {
        Err(read_only())
    }

    async fn update(
        &self,
        _: &RequestContext,
        _: &str,
        _: &str,
        _: Value,
        _: Expect,
    ) -> Result<Value, ApiError> {
        Err(read_only())
    }

    async fn delete(
        &self,
        _: &RequestContext,
        _: &str,
        _: &str,
        _: Expect,
    ) -> Result<Value, ApiError> {
        Err(read_only())
    }

    async fn watch(
        &self,
        _: &RequestContext,
        _: Option<&str>,
        _: WatchStart,
        _: &ListOptions,
    ) -> Result<WatchStream, ApiError> {
        Err(ApiError::method_not_allowed(
            "watch is not supported on functions",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_fields_match_by_containment() {
        let f = json!({"spec": {"functionTypes": ["mutator", "validator"], "image": "x"}});
        let req = |path: &str, value: &str, negated| FieldReq {
            path: path.into(),
            value: value.into(),
            negated,
        };
        assert!(field_matches(
            &f,
            &req("spec.functionTypes", "validator", false)
        ));
        assert!(!field_matches(&f, &req("spec.functionTypes", "foo", false)));
        assert!(field_matches(&f, &req("spec.functionTypes", "foo", true)));
        assert!(field_matches(&f, &req("spec.image", "x", false)));
    }

    #[test]
    fn builtins_are_described() {
        let b = FunctionsBackend::new(LiveRegistry::default(), FunctionConfigs::default(), None);
        let all = b.builtins("ns");
        let labels = all
            .iter()
            .find(|f| f["metadata"]["name"] == "builtin:set-labels:v0.2.0")
            .expect("set-labels");
        assert_eq!(labels["spec"]["functionTypes"], json!(["mutator"]));
        assert_eq!(labels["metadata"]["namespace"], "ns");
        assert!(
            labels["spec"]["functionConfigs"]
                .as_array()
                .is_some_and(|c| !c.is_empty())
        );
    }
}
