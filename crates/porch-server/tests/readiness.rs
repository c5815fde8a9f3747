//! `/readyz` answers 200 only once every Repository there at start-up is loaded: the first
//! list after the first 200 shows every published revision, and every Repository's status
//! was written by this process.

mod common;

use std::time::Duration;

use common::porch::{Env, init, name, repositories, revisions, spec};
use kube::api::{DynamicObject, ListParams};
use porch_testkit::generate::{Shape, porch_repository};

const NS: &str = "default";
const REPOS: usize = 3;

fn last_sync(r: &kube::api::DynamicObject) -> String {
    r.data["status"]["lastFullSyncTime"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn published(items: &[DynamicObject]) -> Vec<String> {
    let mut names: Vec<String> = items
        .iter()
        .filter(|p| spec(p)["lifecycle"] == "Published")
        .map(name)
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_list_after_ready_shows_every_published_revision() {
    let mut env = Env::start().await;
    let prs = env.prs(NS);
    // Repositories large enough that loading them takes a while after the server listens.
    let shape = Shape {
        packages: 200,
        revisions: 2,
        resources: 1,
    };
    for r in 0..REPOS {
        let repo = format!("r{r}");
        porch_repository(&env.bare(&repo), &shape).expect("generated repository");
        env.register(NS, &repo, &env.url(&repo), serde_json::json!({}))
            .await;
        // A draft too: drafts come from the store at once, published revisions from git.
        init(&prs, &repo, "draft", "ws").await;
    }
    let published_before = published(
        &prs.list(&ListParams::default())
            .await
            .expect("list before the restart")
            .items,
    );
    assert_eq!(
        published_before.len(),
        REPOS * (shape.packages * (shape.revisions + 1)),
        "every revision and each package's placeholder"
    );
    let before: Vec<String> = repositories(&env.client, NS)
        .list(&ListParams::default())
        .await
        .expect("repositories")
        .items
        .iter()
        .map(last_sync)
        .collect();
    // Status times have a one-second resolution.
    tokio::time::sleep(Duration::from_millis(1100)).await;

    env.server.terminate();
    env.server.start_again();
    let client = env.server.wait_readyz().await;
    let items = revisions(&client, NS)
        .list(&ListParams::default())
        .await
        .expect("first list after ready")
        .items;
    let after = published(&items);
    // Compared without printing 1,800 names.
    assert!(
        after == published_before,
        "the first list after ready shows {} of the {} published revisions",
        after.len(),
        published_before.len()
    );
    assert_eq!(
        items
            .iter()
            .filter(|p| spec(p)["lifecycle"] == "Draft")
            .count(),
        REPOS
    );
    let repos = repositories(&client, NS)
        .list(&ListParams::default())
        .await
        .expect("repositories")
        .items;
    assert_eq!(repos.len(), REPOS);
    for (r, old) in repos.iter().zip(&before) {
        assert!(
            last_sync(r) > *old,
            "{} shows the status of before the restart: {:?}",
            name(r),
            r.data["status"]
        );
    }
}
