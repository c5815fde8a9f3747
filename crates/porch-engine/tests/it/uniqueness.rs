//! Creation uniqueness rules of spec §9.1 on full package paths: Go Porch compares only the
//! last path segment (quirk §20.6), so its checks never fire for nested names; here they do,
//! with Porch's messages, and equal last segments under different paths do not collide.

use porch_core::ErrorKind;
use porch_core::revision::{CloneTask, RevisionRef, Task, UpstreamPackage};
use porch_engine::CreateRequest;

use crate::common::{World, init_req};
use crate::create::publish_init;

fn clone_of(repo: &str, package: &str, ws: &str, from: &str) -> CreateRequest {
    CreateRequest {
        tasks: vec![Task {
            task_type: "clone".into(),
            clone: Some(CloneTask {
                upstream: UpstreamPackage {
                    upstream_ref: Some(RevisionRef { name: from.into() }),
                    ..UpstreamPackage::default()
                },
                ..Default::default()
            }),
            ..Task::default()
        }],
        ..init_req(repo, package, ws)
    }
}

#[tokio::test]
async fn uniqueness_is_checked_on_full_package_paths() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let source = publish_init(&w.engine, "r", "a/b/app", "v1").await?;

    // Workspace unique per (repository, full package path).
    let err = w
        .engine
        .create(init_req("r", "a/b/app", "v1"))
        .await
        .expect_err("workspace taken");
    assert_eq!(err.kind(), ErrorKind::AlreadyExists);
    assert_eq!(
        err.to_string(),
        "package revision workspaceNames must be unique; package revision with name a/b/app in repo r with workspaceName v1 already exists"
    );
    // The same last segment elsewhere is another package.
    w.engine.create(init_req("r", "c/app", "v1")).await?;

    // Clone into an existing package.
    let err = w
        .engine
        .create(clone_of("r", "a/b/app", "ws2", &source))
        .await
        .expect_err("exists");
    assert_eq!(
        err.to_string(),
        "`clone` cannot create a new revision for package \"a/b/app\" that already exists in repo \"r\"; make subsequent revisions using `copy`"
    );
    // Init of an existing package.
    let err = w
        .engine
        .create(init_req("r", "a/b/app", "ws2"))
        .await
        .expect_err("exists");
    assert_eq!(
        err.to_string(),
        "package \"a/b/app\" already exists in repository \"r\""
    );
    // Nesting, below and above an existing package.
    let err = w
        .engine
        .create(init_req("r", "a/b/app/sub", "ws"))
        .await
        .expect_err("below");
    assert_eq!(err.kind(), ErrorKind::Invalid);
    assert_eq!(
        err.to_string(),
        "package path \"a/b/app/sub\" conflicts with existing package \"a/b/app\": packages cannot be nested"
    );
    let err = w
        .engine
        .create(clone_of("r", "a/b", "ws", &source))
        .await
        .expect_err("above");
    assert_eq!(
        err.to_string(),
        "package path \"a/b\" conflicts with existing package \"a/b/app\": packages cannot be nested"
    );
    // A sibling with a common prefix is not nested.
    w.engine.create(init_req("r", "a/b/apple", "ws")).await?;
    Ok(())
}
