//! The issue-15 benchmark: a PackageVariantSet fanning one upstream package out to many
//! downstream packages, through the release porch-server over HTTPS with smart-HTTP remotes.
//!
//! `cargo bench -p porch-server --bench fanout -- [targets] [repositories...]`
//! (default 1,000 targets over 10 and over 100 repositories). For each spread it prints:
//! - the time from creating the set until every downstream draft exists, and until every
//!   PackageVariant is Ready (its draft rendered);
//! - the time to publish the drafts (not the controllers' work; shown for scale);
//! - the roll-out: after a new upstream revision is published and the set moved to it, the
//!   time until every downstream has its upgrade draft and every variant is Ready again;
//! - the server's RSS and the CPU it spends in 10 s with nothing to do.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::bail;
use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch};
use kube::api::{PatchParams, PostParams};
use porch_testkit::GitServer;
use serde_json::{Value, json};

use common::{cpu_time, ms, object, rss_kib, rss_split, start_server};

const NS: &str = "default";

fn config_api(
    client: &kube::Client,
    version: &str,
    kind: &str,
    plural: &str,
) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("config.porch.kpt.dev", version, kind),
        plural,
    );
    Api::namespaced_with(client.clone(), NS, &ar)
}

fn empty_remote(root: &Path, name: &str) -> anyhow::Result<()> {
    let repo = porch_testkit::repos::init_bare(&root.join(format!("{name}.git")), "main")?;
    let files = porch_testkit::repos::files(&[("README.md", "bench\n")]);
    porch_testkit::repos::commit_files(&repo, "main", &files, "init")?;
    Ok(())
}

async fn wait_until<F, Fut>(what: &str, limit: Duration, mut done: F) -> anyhow::Result<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<bool>>,
{
    let t = Instant::now();
    while !done().await? {
        if t.elapsed() > limit {
            bail!("{what}: not done after {limit:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(t.elapsed())
}

/// How many package revisions are named `*.packagevariant-<n>`.
async fn count_drafts(prs: &Api<DynamicObject>, n: u32) -> anyhow::Result<usize> {
    let suffix = format!(".packagevariant-{n}");
    Ok(prs
        .list(&ListParams::default())
        .await?
        .items
        .iter()
        .filter(|o| {
            o.metadata
                .name
                .as_deref()
                .is_some_and(|x| x.ends_with(&suffix))
        })
        .count())
}

/// How many PackageVariants are Ready=True.
async fn count_ready(pvs: &Api<DynamicObject>) -> anyhow::Result<usize> {
    Ok(pvs
        .list(&ListParams::default())
        .await?
        .items
        .iter()
        .filter(|pv| {
            pv.data["status"]["conditions"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            })
        })
        .count())
}

async fn publish(prs: &Api<DynamicObject>, name: &str) -> anyhow::Result<()> {
    let mut proposed = prs
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"lifecycle": "Proposed"}})),
        )
        .await?;
    proposed.data["spec"]["lifecycle"] = json!("Published");
    prs.replace_subresource("approval", name, &PostParams::default(), &proposed)
        .await?;
    Ok(())
}

async fn create(
    prs: &Api<DynamicObject>,
    repo: &str,
    ws: &str,
    task: Value,
) -> anyhow::Result<String> {
    let body = object(json!({
        "apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision", "metadata": {},
        "spec": {"repository": repo, "packageName": "foo", "workspaceName": ws, "tasks": [task]},
    }))?;
    Ok(prs
        .create(&PostParams::default(), &body)
        .await?
        .metadata
        .name
        .unwrap_or_default())
}

async fn scenario(targets: usize, repositories: usize) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("git");
    std::fs::create_dir_all(&root)?;
    empty_remote(&root, "blueprints")?;
    let repos: Vec<String> = (0..repositories).map(|r| format!("d{r:03}")).collect();
    for r in &repos {
        empty_remote(&root, r)?;
    }
    let git = GitServer::start(&root, None)?;
    let (server, kc) = start_server(env!("CARGO_BIN_EXE_porch-server"), dir.path())?;
    let pid = server.0.id();
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?;
    let client = kube::Client::try_from(cfg)?;
    let repo_api = config_api(&client, "v1alpha1", "Repository", "repositories");
    let pvs = config_api(&client, "v1alpha1", "PackageVariant", "packagevariants");
    let sets = config_api(
        &client,
        "v1alpha2",
        "PackageVariantSet",
        "packagevariantsets",
    );
    let prs: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        NS,
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("porch.kpt.dev", "v1alpha1", "PackageRevision"),
            "packagerevisions",
        ),
    );
    for name in std::iter::once("blueprints".to_string()).chain(repos.iter().cloned()) {
        let body = object(json!({
            "apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"type": "git", "git": {"repo": git.url_for(&format!("{name}.git")), "branch": "main"}},
        }))?;
        repo_api.create(&PostParams::default(), &body).await?;
    }
    let all = repositories + 1;
    wait_until("repositories Ready", Duration::from_secs(300), || async {
        Ok(repo_api
            .list(&ListParams::default())
            .await?
            .items
            .iter()
            .filter(|r| {
                r.data["status"]["conditions"].as_array().is_some_and(|c| {
                    c.iter()
                        .any(|c| c["type"] == "Ready" && c["status"] == "True")
                })
            })
            .count()
            == all)
    })
    .await?;
    let v1 = create(
        &prs,
        "blueprints",
        "v1",
        json!({"type": "init", "init": {"description": "bench"}}),
    )
    .await?;
    publish(&prs, &v1).await?;

    // Fan-out.
    let per_repo = targets.div_ceil(repositories);
    let packages: Vec<String> = (0..per_repo).map(|i| format!("p{i:04}")).collect();
    let targets_spec: Vec<Value> = repos
        .iter()
        .map(|r| json!({"name": r, "packageNames": packages}))
        .collect();
    let total = per_repo * repositories;
    let set = object(json!({
        "apiVersion": "config.porch.kpt.dev/v1alpha2", "kind": "PackageVariantSet",
        "metadata": {"name": "fan", "namespace": NS},
        "spec": {"upstream": {"repo": "blueprints", "package": "foo", "revision": 1},
                 "targets": [{"repositories": targets_spec}]},
    }))?;
    let t = Instant::now();
    sets.create(&PostParams::default(), &set).await?;
    let limit = Duration::from_secs(600);
    wait_until("downstream drafts", limit, || async {
        Ok(count_drafts(&prs, 1).await? >= total)
    })
    .await?;
    let drafts = t.elapsed();
    wait_until("variants Ready", limit, || async {
        Ok(count_ready(&pvs).await? >= total)
    })
    .await?;
    let ready = t.elapsed();
    let rss_fanned = rss_split(pid);

    // Publish every downstream draft (the user's step between fan-out and roll-out).
    let t = Instant::now();
    let names: Vec<String> = repos
        .iter()
        .flat_map(|r| {
            packages
                .iter()
                .map(move |p| format!("{r}.{p}.packagevariant-1"))
        })
        .collect();
    let results: Vec<anyhow::Result<()>> = futures::stream::iter(names.iter())
        .map(|n| publish(&prs, n))
        .buffer_unordered(8)
        .collect()
        .await;
    for r in results {
        r?;
    }
    let published = t.elapsed();
    wait_until("variants Ready after publishing", limit, || async {
        Ok(count_ready(&pvs).await? >= total)
    })
    .await?;

    // Roll-out of a new upstream revision.
    let v2 = create(
        &prs,
        "blueprints",
        "v2",
        json!({"type": "edit", "edit": {"sourceRef": {"name": v1}}}),
    )
    .await?;
    publish(&prs, &v2).await?;
    let t = Instant::now();
    sets.patch(
        "fan",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"upstream": {"revision": 2}}})),
    )
    .await?;
    wait_until("upgrade drafts", limit, || async {
        Ok(count_drafts(&prs, 2).await? >= total)
    })
    .await?;
    let upgraded = t.elapsed();
    wait_until("variants Ready after the roll-out", limit, || async {
        Ok(count_ready(&pvs).await? >= total)
    })
    .await?;
    let rolled = t.elapsed();

    // Nothing to do: what does the server spend?
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = cpu_time(pid);
    tokio::time::sleep(Duration::from_secs(10)).await;
    let idle = cpu_time(pid).saturating_sub(before);
    let (_, hwm) = rss_kib(pid);

    println!("PackageVariantSet fan-out: {total} targets over {repositories} repositories");
    println!(
        "  every downstream draft exists              {}",
        ms(drafts)
    );
    println!("  every PackageVariant Ready                 {}", ms(ready));
    println!(
        "  (publishing the {total} drafts, 8 at a time  {})",
        ms(published)
    );
    println!(
        "  roll-out: every upgrade draft exists       {}",
        ms(upgraded)
    );
    println!(
        "  roll-out: every PackageVariant Ready       {}",
        ms(rolled)
    );
    println!("  server CPU in 10 s with nothing to do      {}", ms(idle));
    println!("  server after the fan-out: {rss_fanned}");
    println!(
        "  server at the end:        {} (peak {} MiB)",
        rss_split(pid),
        hwm / 1024
    );
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() -> anyhow::Result<()> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let targets = args.first().copied().unwrap_or(1_000);
    let spreads: Vec<usize> = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        vec![10, 100]
    };
    for repositories in spreads {
        scenario(targets, repositories).await?;
    }
    Ok(())
}
