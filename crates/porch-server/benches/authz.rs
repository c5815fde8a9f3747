//! The issue-17 benchmark: what authorization costs on the hot paths. The same release server
//! runs twice over the same remotes, as a non-admin user (`bench-author`, from a token file,
//! in group `porch-authors` bound to `porch-author`) — once with `--authorization-mode
//! AlwaysAllow` and once with `RBAC` and 1,000 RoleBindings of other users in the namespace —
//! and prints the list of all package revisions and the resources update with render side by
//! side (p50, ratio RBAC / AlwaysAllow).
//!
//! `cargo bench -p porch-server --bench authz -- [repositories] [packages] [revisions]`
//! (default 100 x 20 x 5: 12,000 revisions).

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::bail;
use kube::api::{ListParams, PostParams};
use porch_testkit::GitServer;
use porch_testkit::generate::{Shape, maintain, porch_repository};
use serde_json::json;

mod common;

use common::{api, fifty_resources, ms, object, pct, start_server_with};

const NS: &str = "default";
const TOKEN: &str = "bench-author-token-0123456789";
const BINDINGS: usize = 1_000;

struct Figures {
    list: Duration,
    raw: Duration,
    update: Duration,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() -> anyhow::Result<()> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (repos, packages, revisions) = (
        args.first().copied().unwrap_or(100),
        args.get(1).copied().unwrap_or(20),
        args.get(2).copied().unwrap_or(5),
    );
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("git");
    std::fs::create_dir_all(&root)?;
    let shape = Shape {
        packages,
        revisions,
        resources: 1,
    };
    porch_repository(&root.join("r000.git"), &shape)?;
    maintain(&root.join("r000.git"))?;
    for r in 1..repos {
        let ok = Command::new("cp")
            .arg("-a")
            .arg(root.join("r000.git"))
            .arg(root.join(format!("r{r:03}.git")))
            .status()?
            .success();
        if !ok {
            bail!("cp failed");
        }
    }
    porch_repository(
        &root.join("bench.git"),
        &Shape {
            packages: 1,
            revisions: 1,
            resources: 1,
        },
    )?;
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        format!("{TOKEN},bench-author,u-1,\"porch-authors\"\n"),
    )?;
    let expected = repos * packages * (revisions + 1) + 2;
    println!(
        "authorization cost: {expected} revisions, requests as bench-author (group porch-authors)"
    );
    let mut figures = Vec::new();
    for (i, mode) in ["AlwaysAllow", "RBAC"].into_iter().enumerate() {
        let run = dir.path().join(format!("run{i}"));
        std::fs::create_dir_all(&run)?;
        let ok = Command::new("cp")
            .arg("-a")
            .arg(&root)
            .arg(run.join("git"))
            .status()?
            .success();
        if !ok {
            bail!("cp failed");
        }
        let f = scenario(&run, mode, &tokens, repos, expected).await?;
        println!(
            "  [{mode}] list (kube-rs) p50 {}, raw list p50 {}, resources update with render p50 {}",
            ms(f.list),
            ms(f.raw),
            ms(f.update)
        );
        figures.push(f);
    }
    if let [base, rbac] = &figures[..] {
        println!("side by side (p50; ratio RBAC with {BINDINGS} RoleBindings / AlwaysAllow):");
        let row = |what: &str, b: Duration, t: Duration| {
            println!(
                "  {what:<40} {:>10} {:>10}  {:.3}",
                ms(b),
                ms(t),
                t.as_secs_f64() / b.as_secs_f64().max(1e-9)
            );
        };
        row("list all package revisions (kube-rs)", base.list, rbac.list);
        row("the same list as raw JSON", base.raw, rbac.raw);
        row("resources update with render", base.update, rbac.update);
    }
    Ok(())
}

async fn scenario(
    run: &std::path::Path,
    mode: &str,
    tokens: &std::path::Path,
    repos: usize,
    expected: usize,
) -> anyhow::Result<Figures> {
    let git = GitServer::start(run.join("git"), None)?;
    let tokens = tokens.to_string_lossy();
    let (_server, kc) = start_server_with(
        env!("CARGO_BIN_EXE_porch-server"),
        run,
        &["--authorization-mode", mode, "--token-auth-file", &tokens],
    )?;
    let admin = kube::Client::try_from(
        kube::Config::from_custom_kubeconfig(kc.clone(), &Default::default()).await?,
    )?;
    // The author: the same kubeconfig with the token file's token.
    let mut author_kc = kc;
    for user in &mut author_kc.auth_infos {
        if let Some(info) = user.auth_info.as_mut() {
            info.token = Some(TOKEN.to_string().into());
        }
    }
    let author = kube::Client::try_from(
        kube::Config::from_custom_kubeconfig(author_kc, &Default::default()).await?,
    )?;

    // 1,000 bindings of other users, and the one that lets the authors in (in both modes, so
    // the stores hold the same objects).
    let bindings: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
        admin.clone(),
        NS,
        &kube::api::ApiResource::from_gvk_with_plural(
            &kube::api::GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", "RoleBinding"),
            "rolebindings",
        ),
    );
    let bind = |name: String, kind: &str, subject: String, role: &str| {
        object(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": name, "namespace": NS},
            "subjects": [{"kind": kind, "name": subject, "apiGroup": "rbac.authorization.k8s.io"}],
            "roleRef": {"kind": "ClusterRole", "name": role, "apiGroup": "rbac.authorization.k8s.io"},
        }))
    };
    for i in 0..BINDINGS {
        let role = if i % 2 == 0 {
            "porch-reader"
        } else {
            "porch-author"
        };
        let body = bind(format!("user-{i}"), "User", format!("user-{i}"), role)?;
        bindings.create(&PostParams::default(), &body).await?;
    }
    let body = bind(
        "authors".into(),
        "Group",
        "porch-authors".into(),
        "porch-author",
    )?;
    bindings.create(&PostParams::default(), &body).await?;

    let repos_api = api(&admin, "config.porch.kpt.dev", "Repository", "repositories");
    let mut names: Vec<String> = (0..repos).map(|r| format!("r{r:03}")).collect();
    names.push("bench".into());
    for name in &names {
        let body = object(json!({
            "apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"type": "git", "git": {"repo": git.url_for(&format!("{name}.git")), "branch": "main"}},
        }))?;
        repos_api.create(&PostParams::default(), &body).await?;
    }
    let prs = api(
        &author,
        "porch.kpt.dev",
        "PackageRevision",
        "packagerevisions",
    );
    let prr = api(
        &author,
        "porch.kpt.dev",
        "PackageRevisionResources",
        "packagerevisionresources",
    );
    let t = Instant::now();
    loop {
        let n = prs.list(&ListParams::default()).await?.items.len();
        if n >= expected {
            break;
        }
        if t.elapsed() > Duration::from_secs(600) {
            bail!("only {n} of {expected} revisions listed after 10 minutes");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let mut list = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let n = prs.list(&ListParams::default()).await?.items.len();
        list.push(t.elapsed());
        assert!(n >= expected);
    }
    let mut raw = Vec::new();
    for _ in 0..20 {
        let req = http::Request::get(format!(
            "/apis/porch.kpt.dev/v1alpha1/namespaces/{NS}/packagerevisions"
        ))
        .body(Vec::new())?;
        let t = Instant::now();
        author.request_text(req).await?;
        raw.push(t.elapsed());
    }
    let mut update = Vec::new();
    for i in 0..20 {
        let body = object(json!({
            "apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision", "metadata": {},
            "spec": {"repository": "bench", "packageName": format!("edited-{i}"), "workspaceName": "ws",
                     "tasks": [{"type": "init", "init": {"description": "bench"}}]},
        }))?;
        let name = prs
            .create(&PostParams::default(), &body)
            .await?
            .metadata
            .name
            .unwrap_or_default();
        let mut res = prr.get(&name).await?;
        res.data["spec"]["resources"] = json!(fifty_resources(&format!("edited-{i}"), i));
        let t = Instant::now();
        let res = prr.replace(&name, &PostParams::default(), &res).await?;
        update.push(t.elapsed());
        if res.data["status"]["renderStatus"]["error"] != "" {
            bail!("render failed: {}", res.data["status"]["renderStatus"]);
        }
    }
    Ok(Figures {
        list: pct(&mut list, 0.5),
        raw: pct(&mut raw, 0.5),
        update: pct(&mut update, 0.5),
    })
}
