//! The issue-17 benchmark: what authorization costs on the hot paths. Two release servers run
//! at once over copies of the same remotes, requests made as a non-admin user
//! (`bench-author`, from a token file, in group `porch-authors` bound to `porch-author`) —
//! one with `--authorization-mode AlwaysAllow`, one with `RBAC` and 1,000 RoleBindings of other
//! users in the namespace. Once both have loaded every revision and gone quiet (no CPU spent
//! for a second), the requests alternate between them, so that whatever else the machine
//! does weighs on both alike; it prints the list of all package revisions and the resources
//! update with render side by side (p50, ratio RBAC / AlwaysAllow).
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

#[derive(Default)]
struct Figures {
    list: Vec<Duration>,
    raw: Vec<Duration>,
    update: Vec<Duration>,
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
    let mut servers = Vec::new();
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
        servers.push(setup(&run, mode, &tokens, repos, expected).await?);
    }
    for s in &servers {
        s.quiet().await;
    }
    let mut figures = [Figures::default(), Figures::default()];
    for round in 0..20 {
        for (s, f) in servers.iter().zip(figures.iter_mut()) {
            s.measure(round, expected, f).await?;
        }
    }
    for (s, f) in servers.iter().zip(figures.iter_mut()) {
        println!(
            "  [{}] list (kube-rs) p50 {}, raw list p50 {}, resources update with render p50 {}",
            s.mode,
            ms(pct(&mut f.list, 0.5)),
            ms(pct(&mut f.raw, 0.5)),
            ms(pct(&mut f.update, 0.5))
        );
    }
    let [base, rbac] = &mut figures;
    println!("side by side (p50; ratio RBAC with {BINDINGS} RoleBindings / AlwaysAllow):");
    let row = |what: &str, b: Duration, t: Duration| {
        println!(
            "  {what:<40} {:>10} {:>10}  {:.3}",
            ms(b),
            ms(t),
            t.as_secs_f64() / b.as_secs_f64().max(1e-9)
        );
    };
    row(
        "list all package revisions (kube-rs)",
        pct(&mut base.list, 0.5),
        pct(&mut rbac.list, 0.5),
    );
    row(
        "the same list as raw JSON",
        pct(&mut base.raw, 0.5),
        pct(&mut rbac.raw, 0.5),
    );
    row(
        "resources update with render",
        pct(&mut base.update, 0.5),
        pct(&mut rbac.update, 0.5),
    );
    Ok(())
}

/// One server under test, ready for requests as the author.
struct Server {
    mode: &'static str,
    process: common::ServerProcess,
    _git: GitServer,
    author: kube::Client,
    prs: kube::Api<kube::api::DynamicObject>,
    prr: kube::Api<kube::api::DynamicObject>,
}

impl Server {
    /// Waits until the server has spent no CPU for a second (its start-up work done).
    async fn quiet(&self) {
        let pid = self.process.0.id();
        let cpu = || common::cpu_time(pid);
        let t = Instant::now();
        let mut last = cpu();
        while t.elapsed() < Duration::from_secs(120) {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let now = cpu();
            if now == last {
                return;
            }
            last = now;
        }
    }

    /// One round: a kube-rs list, a raw list, and a resources update with render of a new
    /// draft.
    async fn measure(&self, i: usize, expected: usize, f: &mut Figures) -> anyhow::Result<()> {
        let t = Instant::now();
        let n = self.prs.list(&ListParams::default()).await?.items.len();
        f.list.push(t.elapsed());
        assert!(n >= expected);
        let req = http::Request::get(format!(
            "/apis/porch.kpt.dev/v1alpha1/namespaces/{NS}/packagerevisions"
        ))
        .body(Vec::new())?;
        let t = Instant::now();
        self.author.request_text(req).await?;
        f.raw.push(t.elapsed());
        let body = object(json!({
            "apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision", "metadata": {},
            "spec": {"repository": "bench", "packageName": format!("edited-{i}"), "workspaceName": "ws",
                     "tasks": [{"type": "init", "init": {"description": "bench"}}]},
        }))?;
        let name = self
            .prs
            .create(&PostParams::default(), &body)
            .await?
            .metadata
            .name
            .unwrap_or_default();
        let mut res = self.prr.get(&name).await?;
        res.data["spec"]["resources"] = json!(fifty_resources(&format!("edited-{i}"), i));
        let t = Instant::now();
        let res = self
            .prr
            .replace(&name, &PostParams::default(), &res)
            .await?;
        f.update.push(t.elapsed());
        if res.data["status"]["renderStatus"]["error"] != "" {
            bail!("render failed: {}", res.data["status"]["renderStatus"]);
        }
        Ok(())
    }
}

async fn setup(
    run: &std::path::Path,
    mode: &'static str,
    tokens: &std::path::Path,
    repos: usize,
    expected: usize,
) -> anyhow::Result<Server> {
    let git = GitServer::start(run.join("git"), None)?;
    let tokens = tokens.to_string_lossy();
    let (process, kc) = start_server_with(
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

    Ok(Server {
        mode,
        process,
        _git: git,
        author,
        prs,
        prr,
    })
}
