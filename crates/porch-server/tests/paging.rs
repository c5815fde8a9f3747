//! `limit`/`continue` on packagerevisions, as kubectl's `--chunk-size` uses them.

mod common;

use common::porch::*;
use kube::api::ListParams;
use serde_json::json;

const NS: &str = "default";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn packagerevisions_are_paged_in_the_unpaged_order() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    for p in ["a", "b", "c", "d", "e"] {
        init(&prs, "git", p, "ws").await;
    }
    let all: Vec<String> = prs
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .iter()
        .map(name)
        .collect();
    assert!(all.len() >= 5, "{all:?}");

    let mut paged = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut lp = ListParams::default().limit(2);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = prs.list(&lp).await.expect("page");
        assert!(page.items.len() <= 2);
        paged.extend(page.items.iter().map(name));
        pages += 1;
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(c) => token = Some(c),
            None => break,
        }
    }
    assert_eq!(paged, all, "pages cover the list once, in order");
    assert_eq!(pages, all.len().div_ceil(2));

    // kubectl's chunked get shows what an unchunked one does.
    let chunked =
        env.server
            .kubectl_ok(&["get", "packagerevisions", "-o", "name", "--chunk-size=2"]);
    let whole = env
        .server
        .kubectl_ok(&["get", "packagerevisions", "-o", "name", "--chunk-size=0"]);
    assert_eq!(chunked, whole);
    assert_eq!(chunked.lines().count(), all.len());

    // A token that is not one is a 400.
    let (code, _) = api_err(
        prs.list(&ListParams::default().limit(2).continue_token("garbage!"))
            .await,
    );
    assert_eq!(code, 400);
}
