//! A kube-rs client against the real server: typed `Api<Repository>` CRUD, optimistic
//! concurrency, discovery, and a watcher that survives a server restart.

mod common;

use std::time::Duration;

use common::{Server, fake_bare_repo};
use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use porch_api::{GitRepository, Repository, RepositorySpec};

fn repository(name: &str, url: &str) -> Repository {
    Repository::new(
        name,
        RepositorySpec {
            type_: Some("git".into()),
            description: Some("from kube-rs".into()),
            git: Some(GitRepository {
                repo: url.into(),
                directory: Some("/".into()),
                ..Default::default()
            }),
            ..Default::default()
        },
    )
}

async fn wait_ready(api: &Api<Repository>, name: &str) -> Repository {
    for _ in 0..200 {
        let r = api.get(name).await.expect("get");
        let ready = r
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
            .map(|c| (c.status.clone(), c.reason.clone()));
        if let Some((status, reason)) = ready {
            assert_eq!((status.as_str(), reason.as_str()), ("True", "Ready"));
            return r;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("repository {name} never became Ready");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn typed_repository_crud() {
    let s = Server::start();
    let url = fake_bare_repo(s.dir.path(), "r.git");
    let client = s.client().await;
    let api: Api<Repository> = Api::namespaced(client, "default");

    let created = api
        .create(&PostParams::default(), &repository("blueprints", &url))
        .await
        .expect("create");
    assert_eq!(
        created.spec.content.as_deref(),
        Some("Package"),
        "defaulted"
    );
    assert_eq!(
        created.spec.git.as_ref().and_then(|g| g.branch.as_deref()),
        Some("main")
    );
    assert_eq!(created.metadata.generation, Some(1));
    assert!(created.metadata.uid.is_some() && created.metadata.creation_timestamp.is_some());

    let ready = wait_ready(&api, "blueprints").await;
    assert_eq!(
        ready.status.as_ref().and_then(|s| s.observed_generation),
        Some(1)
    );

    let list = api.list(&ListParams::default()).await.expect("list");
    assert_eq!(list.items.len(), 1);

    // Update the spec: generation moves, status is kept (status subresource semantics).
    let mut changed = ready.clone();
    changed.spec.description = Some("changed".into());
    changed.status = None;
    let replaced = api
        .replace("blueprints", &PostParams::default(), &changed)
        .await
        .expect("replace");
    assert_eq!(replaced.metadata.generation, Some(2));
    assert!(
        replaced.status.is_some(),
        "status survives a main-resource update"
    );

    let patched = api
        .patch(
            "blueprints",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await
        .expect("patch");
    assert_eq!(
        patched
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("a"))
            .map(String::as_str),
        Some("b")
    );
    assert_eq!(
        patched.metadata.generation,
        Some(2),
        "labels do not move the generation"
    );

    // Server-side apply creates and updates.
    let applied = api
        .patch(
            "applied",
            &PatchParams::apply("test").force(),
            &Patch::Apply(repository("applied", &url)),
        )
        .await
        .expect("apply create");
    assert_eq!(applied.metadata.name.as_deref(), Some("applied"));

    api.delete("blueprints", &DeleteParams::default())
        .await
        .expect("delete");
    match api.get("blueprints").await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 404);
            assert_eq!(
                status.message,
                "repositories.config.porch.kpt.dev \"blueprints\" not found"
            );
        }
        other => panic!("expected 404, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_updates_from_one_version_conflict() {
    let s = Server::start();
    let client = s.client().await;
    let api: Api<Repository> = Api::namespaced(client, "default");
    let created = api
        .create(
            &PostParams::default(),
            &repository("r", "https://127.0.0.1:1/x.git"),
        )
        .await
        .expect("create");
    // Let the controller settle the status first so only our two writes race.
    for _ in 0..200 {
        if api.get("r").await.expect("get").status.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let base = api.get("r").await.expect("get");
    let _ = created;
    let mut a = base.clone();
    a.spec.description = Some("a".into());
    let mut b = base.clone();
    b.spec.description = Some("b".into());
    let pp = PostParams::default();
    let (ra, rb) = tokio::join!(api.replace("r", &pp, &a), api.replace("r", &pp, &b));
    let results = [ra, rb];
    let ok = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(ok, 1, "{results:?}");
    let conflict = results
        .iter()
        .find_map(|r| r.as_ref().err())
        .expect("one error");
    match conflict {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 409);
            assert_eq!(status.reason, "Conflict");
            assert!(
                status.message.contains("the object has been modified"),
                "{}",
                status.message
            );
        }
        other => panic!("expected 409, got {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn discovery_finds_every_group() {
    let s = Server::start();
    let client = s.client().await;
    let info = client.apiserver_version().await.expect("version");
    assert_eq!(info.major, "1");
    let discovery = kube::Discovery::new(client).run().await.expect("discovery");
    let group = discovery
        .get("config.porch.kpt.dev")
        .expect("porch config group");
    let versions: Vec<&str> = group.versions().collect();
    assert!(
        versions.contains(&"v1alpha1") && versions.contains(&"v1alpha2"),
        "{versions:?}"
    );
    let (ar, caps) = group
        .recommended_resources()
        .into_iter()
        .find(|(ar, _)| ar.plural == "repositories")
        .expect("repositories");
    assert_eq!(ar.kind, "Repository");
    assert_eq!(caps.scope, kube::discovery::Scope::Namespaced);
    assert!(
        caps.subresources
            .iter()
            .any(|(sub, _)| sub.plural == "status"),
        "{:?}",
        caps.subresources
    );
    let core = discovery.get("").expect("core group");
    let names: Vec<String> = core
        .recommended_resources()
        .into_iter()
        .map(|(ar, _)| ar.plural)
        .collect();
    assert!(
        names.contains(&"secrets".to_string()) && names.contains(&"namespaces".to_string()),
        "{names:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn watcher_survives_a_server_restart() {
    let mut s = Server::start();
    let client = s.client().await;
    let api: Api<Repository> = Api::namespaced(client.clone(), "default");
    let mut names = Box::pin(
        watcher(api.clone(), watcher::Config::default())
            .default_backoff()
            .applied_objects()
            .map_ok(|r: Repository| r.metadata.name.unwrap_or_default()),
    );
    api.create(
        &PostParams::default(),
        &repository("before", "https://127.0.0.1:1/x.git"),
    )
    .await
    .expect("create");
    let wait_for = |want: &'static str| {
        let fut = async move {
            loop {
                match names.next().await {
                    Some(Ok(n)) if n == want => return names,
                    Some(_) => {}
                    None => panic!("watcher ended"),
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(60), fut)
    };
    let names_back = wait_for("before").await.expect("saw 'before'");
    names = names_back;

    // Restart on the same port and data directory; the same client keeps going.
    tokio::task::block_in_place(|| s.restart());
    api.create(
        &PostParams::default(),
        &repository("after", "https://127.0.0.1:1/y.git"),
    )
    .await
    .expect("create after restart");
    let fut = async {
        loop {
            match names.next().await {
                Some(Ok(n)) if n == "after" => return,
                Some(_) => {}
                None => panic!("watcher ended"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), fut)
        .await
        .expect("saw 'after' across the restart");
    assert!(api.get("before").await.is_ok(), "data survived the restart");
}
