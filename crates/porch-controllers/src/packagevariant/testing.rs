//! Test fixtures: revisions and variants from a few words, an in-memory `Objects` (the one
//! port the tests fake), and a world with the real engine over local git repositories.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use porch_api::PackageVariant;
use porch_core::ErrorKind;
use porch_core::lifecycle::Lifecycle;
use porch_core::names::{PackagePath, RepositoryName, Revision, WorkspaceName};
use porch_core::revision::{Author, InitTask, PackageRevisionKey, Task};
use porch_engine::{CreateRequest, Endpoint, Engine, Origin, OwnerReference, PackageRevision};
use serde_json::{Value, json};

use super::reconcile::Reconciler;
use crate::events::MemoryEvents;
use crate::objects::{Gvr, ObjectError, Objects};
use crate::revisions::EngineRevisions;

pub const NS: &str = "default";

/// A revision view with just an identity and a lifecycle.
pub fn pr(repo: &str, package: &str, ws: &str, rev: i64, lifecycle: Lifecycle) -> PackageRevision {
    PackageRevision {
        namespace: NS.into(),
        key: PackageRevisionKey {
            repository: RepositoryName::new(repo).expect("repo"),
            package: PackagePath::new(package).expect("package"),
            workspace: WorkspaceName::new(ws).expect("ws"),
            revision: Revision::from_raw(rev),
        },
        lifecycle,
        resource_version: "1".into(),
        labels: BTreeMap::new(),
        annotations: BTreeMap::new(),
        tasks: Vec::new(),
        self_lock: None,
        upstream_lock: None,
        published_by: None,
        publish_timestamp: None,
        creation_timestamp: None,
        latest: false,
        origin: Origin::Git,
        package_metadata: Default::default(),
        readiness_gates: Vec::new(),
        conditions: Vec::new(),
        deployment: false,
        finalizers: Vec::new(),
        owner_references: Vec::new(),
        deletion_timestamp: None,
    }
}

/// `pr` with one more ownerReference to a PackageVariant of UID `uid`.
pub fn owned_by(mut pr: PackageRevision, uid: &str) -> PackageRevision {
    pr.owner_references.push(OwnerReference {
        api_version: "config.porch.kpt.dev/v1alpha1".into(),
        kind: "PackageVariant".into(),
        name: "my-pv".into(),
        uid: uid.into(),
        controller: None,
        block_owner_deletion: None,
    });
    pr
}

/// Upstream's test variant (`blueprints/foo` → `deployments/bar`) plus `extra` spec lines.
pub fn pv(name: &str, extra: &str) -> PackageVariant {
    let yaml = format!(
        "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: {name}\n  uid: pv-uid\nspec:\n  upstream:\n    repo: blueprints\n    package: foo\n    revision: 1\n  downstream:\n    repo: deployments\n    package: bar\n{extra}"
    );
    serde_yaml::from_str(&yaml).expect("a PackageVariant")
}

/// Kubernetes-like objects in memory: resourceVersions, UIDs, finalizers.
#[derive(Default)]
pub struct MemObjects {
    objects: Mutex<HashMap<(String, String, String), Value>>,
    version: Mutex<u64>,
}

impl MemObjects {
    fn next_version(&self) -> String {
        let mut v = self.version.lock().expect("lock");
        *v += 1;
        v.to_string()
    }

    fn key(r: &Gvr, ns: &str, name: &str) -> (String, String, String) {
        (r.plural.clone(), ns.to_owned(), name.to_owned())
    }

    fn err(kind: ErrorKind, message: &str) -> ObjectError {
        ObjectError {
            kind,
            message: message.into(),
        }
    }

    /// The stored object (test assertions).
    pub fn peek(&self, r: &Gvr, ns: &str, name: &str) -> Option<Value> {
        self.objects
            .lock()
            .expect("lock")
            .get(&Self::key(r, ns, name))
            .cloned()
    }
}

fn name_of(obj: &Value) -> String {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

#[async_trait]
impl Objects for MemObjects {
    async fn get(&self, r: &Gvr, ns: &str, name: &str) -> Result<Option<Value>, ObjectError> {
        Ok(self.peek(r, ns, name))
    }

    async fn list(
        &self,
        r: &Gvr,
        namespace: Option<&str>,
        _label_selector: &str,
    ) -> Result<Vec<Value>, ObjectError> {
        Ok(self
            .objects
            .lock()
            .expect("lock")
            .iter()
            .filter(|((p, ns, _), _)| *p == r.plural && namespace.is_none_or(|n| n == ns))
            .map(|(_, v)| v.clone())
            .collect())
    }

    fn resolve(&self, _api_version: &str, _kind: &str) -> Option<Gvr> {
        None
    }

    async fn create(&self, r: &Gvr, ns: &str, mut obj: Value) -> Result<Value, ObjectError> {
        let name = name_of(&obj);
        let rv = self.next_version();
        obj["metadata"]["namespace"] = ns.into();
        obj["metadata"]["resourceVersion"] = rv.clone().into();
        if obj.pointer("/metadata/uid").is_none() {
            obj["metadata"]["uid"] = format!("uid-{name}-{rv}").into();
        }
        let mut all = self.objects.lock().expect("lock");
        let key = Self::key(r, ns, &name);
        if all.contains_key(&key) {
            return Err(Self::err(ErrorKind::AlreadyExists, "exists"));
        }
        all.insert(key, obj.clone());
        Ok(obj)
    }

    async fn update(&self, r: &Gvr, ns: &str, mut obj: Value) -> Result<Value, ObjectError> {
        let key = Self::key(r, ns, &name_of(&obj));
        let rv = self.next_version();
        let mut all = self.objects.lock().expect("lock");
        let old = all
            .get(&key)
            .cloned()
            .ok_or_else(|| Self::err(ErrorKind::NotFound, "not found"))?;
        if old.pointer("/metadata/resourceVersion") != obj.pointer("/metadata/resourceVersion") {
            return Err(Self::err(ErrorKind::Conflict, "stale"));
        }
        // The main resource never changes the status.
        obj["status"] = old.get("status").cloned().unwrap_or(Value::Null);
        let finalizing = obj.pointer("/metadata/deletionTimestamp").is_some()
            && obj
                .pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty);
        if finalizing {
            all.remove(&key);
            return Ok(obj);
        }
        obj["metadata"]["resourceVersion"] = rv.into();
        all.insert(key, obj.clone());
        Ok(obj)
    }

    async fn update_status(&self, r: &Gvr, ns: &str, obj: Value) -> Result<Value, ObjectError> {
        let key = Self::key(r, ns, &name_of(&obj));
        let rv = self.next_version();
        let mut all = self.objects.lock().expect("lock");
        let mut old = all
            .get(&key)
            .cloned()
            .ok_or_else(|| Self::err(ErrorKind::NotFound, "not found"))?;
        if old.pointer("/metadata/resourceVersion") != obj.pointer("/metadata/resourceVersion") {
            return Err(Self::err(ErrorKind::Conflict, "stale"));
        }
        old["status"] = obj.get("status").cloned().unwrap_or(Value::Null);
        old["metadata"]["resourceVersion"] = rv.into();
        all.insert(key, old.clone());
        Ok(old)
    }

    async fn delete(&self, r: &Gvr, ns: &str, name: &str) -> Result<(), ObjectError> {
        let key = Self::key(r, ns, name);
        let rv = self.next_version();
        let mut all = self.objects.lock().expect("lock");
        let Some(mut obj) = all.get(&key).cloned() else {
            return Err(Self::err(ErrorKind::NotFound, "not found"));
        };
        let has_finalizers = obj
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
        if has_finalizers {
            obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z".into();
            obj["metadata"]["resourceVersion"] = rv.into();
            all.insert(key, obj);
        } else {
            all.remove(&key);
        }
        Ok(())
    }
}

/// The real engine over local git remotes `blueprints` and `deployments` in [`NS`], with
/// in-memory objects and recorded events.
pub struct World {
    pub tmp: tempfile::TempDir,
    pub engine: Engine,
    pub objects: Arc<MemObjects>,
    pub events: Arc<MemoryEvents>,
    pub reconciler: Reconciler,
    pool: porch_git::MirrorPool,
}

pub fn author() -> Author {
    Author {
        name: "alice".into(),
        email: "alice@example.com".into(),
    }
}

impl World {
    pub async fn new() -> World {
        let tmp = tempfile::tempdir().expect("tmp");
        std::fs::create_dir_all(tmp.path().join("data")).expect("data");
        let store = Arc::new(
            porch_store::RedbStore::open(
                &tmp.path().join("data/store.redb"),
                porch_store::StoreOptions::default(),
            )
            .expect("store"),
        );
        let engine = Engine::new(store, Arc::new(krm_functions::Builtins));
        let pool = porch_git::MirrorPool::new(&tmp.path().join("data"));
        let objects = Arc::new(MemObjects::default());
        let events = Arc::new(MemoryEvents::default());
        let reconciler = Reconciler {
            objects: objects.clone(),
            revisions: Arc::new(EngineRevisions {
                engine: engine.clone(),
            }),
            events: events.clone(),
            access: None,
        };
        let w = World {
            tmp,
            engine,
            objects,
            events,
            reconciler,
            pool,
        };
        for repo in ["blueprints", "deployments", "other"] {
            w.add_repo(repo).await;
        }
        w
    }

    async fn add_repo(&self, name: &str) {
        let dir = self.tmp.path().join("remotes").join(name);
        let repo = porch_testkit::repos::init_bare(&dir, "main").expect("bare");
        porch_testkit::repos::commit_files(
            &repo,
            "main",
            &porch_testkit::repos::files(&[("README.md", "# test\n")]),
            "init",
        )
        .expect("commit");
        let spec = porch_git::RepoSpec::new(
            RepositoryName::new(name).expect("name"),
            format!("file://{}", dir.display()),
        );
        let repo = porch_git::GitRepository::open(
            &self.pool,
            &porch_git::GitOptions::new(self.tmp.path().join("data")),
            spec,
        )
        .expect("open");
        self.engine.register(NS, repo).await.expect("register");
    }

    /// Creates `repo/package` in workspace `ws` by init and publishes it.
    pub async fn publish_init(&self, repo: &str, package: &str, ws: &str) -> PackageRevision {
        let d = self
            .engine
            .create(CreateRequest {
                namespace: NS.into(),
                repository: repo.into(),
                package: package.into(),
                workspace: ws.into(),
                tasks: vec![Task::init(InitTask {
                    description: format!("{package} description"),
                    ..InitTask::default()
                })],
                ..CreateRequest::default()
            })
            .await
            .expect("create");
        self.publish(&d).await
    }

    /// Proposes and approves draft `d`.
    pub async fn publish(&self, d: &PackageRevision) -> PackageRevision {
        let name = d.name();
        let p = self
            .engine
            .update_lifecycle(
                NS,
                name.as_str(),
                Some(&d.resource_version),
                Lifecycle::Proposed,
                Endpoint::Update,
                author(),
            )
            .await
            .expect("propose");
        self.engine
            .update_lifecycle(
                NS,
                name.as_str(),
                Some(&p.resource_version),
                Lifecycle::Published,
                Endpoint::Approval,
                author(),
            )
            .await
            .expect("approve")
    }

    /// A new published revision of `repo/package` copied from the latest one (edit), in
    /// workspace `ws`.
    pub async fn publish_edit(&self, source: &PackageRevision, ws: &str) -> PackageRevision {
        let d = self
            .engine
            .create(CreateRequest {
                namespace: NS.into(),
                repository: source.key.repository.as_str().into(),
                package: source.key.package.as_str().into(),
                workspace: ws.into(),
                tasks: vec![Task {
                    task_type: "edit".into(),
                    edit: Some(porch_core::revision::EditTask {
                        source: porch_core::revision::RevisionRef {
                            name: source.name().as_str().into(),
                        },
                    }),
                    ..Task::default()
                }],
                ..CreateRequest::default()
            })
            .await
            .expect("edit");
        self.publish(&d).await
    }

    /// Stores a PackageVariant object (spec as YAML lines under `spec:`).
    pub async fn add_pv(&self, name: &str, spec_yaml: &str) -> Value {
        let spec: Value = serde_yaml::from_str(spec_yaml).expect("spec yaml");
        self.objects
            .create(
                &super::gvr(),
                NS,
                json!({
                    "apiVersion": "config.porch.kpt.dev/v1alpha1",
                    "kind": "PackageVariant",
                    "metadata": {"name": name},
                    "spec": spec,
                }),
            )
            .await
            .expect("create pv")
    }

    pub fn pv(&self, name: &str) -> Value {
        self.objects.peek(&super::gvr(), NS, name).expect("pv")
    }

    /// Revisions of `repo/package`, as `<workspace> <lifecycle>`.
    pub fn revisions(&self, repo: &str, package: &str) -> Vec<PackageRevision> {
        self.engine.list(&porch_engine::ListOptions {
            namespace: Some(NS.into()),
            repository: Some(RepositoryName::new(repo).expect("repo")),
            package: Some(package.into()),
            ..Default::default()
        })
    }

    pub fn summary(&self, repo: &str, package: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .revisions(repo, package)
            .iter()
            .filter(|p| p.key.revision.get() >= 0)
            .map(|p| format!("{} {}", p.key.workspace, p.lifecycle))
            .collect();
        v.sort();
        v
    }

    pub async fn reconcile(&self, name: &str) -> Result<(), super::ReconcileError> {
        self.reconciler.reconcile(NS, name).await
    }
}
