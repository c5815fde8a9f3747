//! Issue-7 benchmark: `porchctl rpkg get` end to end against 10,000 package revisions, and
//! porchctl's process start-up.
//!
//! ```sh
//! CARGO_TARGET_DIR=/work/main/target cargo build --release -p porch-server -p porchctl
//! CARGO_TARGET_DIR=/work/main/target cargo run --release -p porchctl --example rpkg_bench \
//!     -- [remotes] [packages] [revisions]
//! ```
//!
//! Generates `remotes` Porch-shaped git repositories of `packages` x `revisions` published
//! revisions (default 100 x 20 x 5 = 10,000, plus one `main` placeholder per package) with
//! porch-testkit's fast-import generator, serves them over smart HTTP, starts the release
//! porch-server, registers them with the release porchctl, and prints the p50/p90 wall
//! time of 20 runs each of `porchctl rpkg get -n default` (table), `-o name` and `-o json`,
//! the same Table request in process (the server's share), then of 100 runs of
//! `porchctl --version` and `porchctl --help`. Not a test: it prints
//! figures and asserts only that the listing is complete. With `RPKG_BENCH_HOLD=1` it
//! prints the kubeconfig and waits for Enter before timing, for profiling by hand.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use porch_testkit::GitServer;
use porch_testkit::generate::{Shape, porch_repository};

/// Kills porch-server when the benchmark ends, however it ends.
struct ServerProcess(Child);

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or_default()
}

/// The release binaries next to this example (target/release/examples/rpkg_bench).
fn release_bin(name: &str) -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .context("example has no target directory")?
        .join(name);
    if !bin.exists() {
        bail!(
            "{} not found; build it first: cargo build --release -p porch-server -p porchctl",
            bin.display()
        );
    }
    if cfg!(debug_assertions) {
        eprintln!("note: this is a debug build of the benchmark; run it with --release");
    }
    Ok(bin)
}

struct Porchctl {
    bin: PathBuf,
    kubeconfig: PathBuf,
    home: PathBuf,
}

impl Porchctl {
    fn run(&self, args: &[&str]) -> anyhow::Result<Output> {
        let out = Command::new(&self.bin)
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", &self.home)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("run porchctl {args:?}"))?;
        if !out.status.success() {
            bail!(
                "porchctl {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(out)
    }

    /// Wall times of `runs` runs of `args`, with the output size of the last one.
    fn time(&self, args: &[&str], runs: usize) -> anyhow::Result<(Vec<Duration>, usize)> {
        let mut times = Vec::with_capacity(runs);
        let mut bytes = 0;
        for _ in 0..runs {
            let t = Instant::now();
            let out = self.run(args)?;
            times.push(t.elapsed());
            bytes = out.stdout.len();
        }
        Ok((times, bytes))
    }
}

/// Wall times of `runs` GETs of the package revision Table (as `rpkg get` asks for it)
/// over one kube client, with the response size.
async fn raw_table(kubeconfig: &Path, runs: usize) -> anyhow::Result<(Vec<Duration>, usize)> {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig)?;
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?;
    let client = kube::Client::try_from(cfg)?;
    let mut times = Vec::with_capacity(runs);
    let mut bytes = 0;
    for _ in 0..runs {
        let req = http::Request::get(
            "/apis/porch.kpt.dev/v1alpha1/namespaces/default/packagerevisions?includeObject=None",
        )
        .header(
            http::header::ACCEPT,
            "application/json;as=Table;g=meta.k8s.io;v=v1,application/json",
        )
        .body(Vec::new())?;
        let t = Instant::now();
        let text = client.request_text(req).await?;
        times.push(t.elapsed());
        bytes = text.len();
    }
    Ok((times, bytes))
}

fn report(label: &str, mut times: Vec<Duration>, bytes: usize) {
    let p50 = pct(&mut times, 0.5);
    let p90 = pct(&mut times, 0.9);
    let min = times.first().copied().unwrap_or_default();
    println!(
        "{label:<44} p50 {:>9}  p90 {:>9}  min {:>9}  ({} runs, {bytes} bytes out)",
        ms(p50),
        ms(p90),
        ms(min),
        times.len()
    );
}

fn main() -> anyhow::Result<()> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (remotes, packages, revisions) = (
        args.first().copied().unwrap_or(100),
        args.get(1).copied().unwrap_or(20),
        args.get(2).copied().unwrap_or(5),
    );
    let porchctl_bin = release_bin("porchctl")?;
    let server_bin = release_bin("porch-server")?;

    let dir = tempfile::tempdir()?;
    let root = dir.path().join("git");
    std::fs::create_dir_all(&root)?;
    let t = Instant::now();
    let shape = Shape {
        packages,
        revisions,
        resources: 1,
    };
    // One generated repository copied: the remotes are identical in content, and the
    // server indexes each one on its own, so the listing is as large as distinct ones.
    porch_repository(&root.join("r000.git"), &shape)?;
    for r in 1..remotes {
        let status = Command::new("cp")
            .arg("-a")
            .arg(root.join("r000.git"))
            .arg(root.join(format!("r{r:03}.git")))
            .status()?;
        if !status.success() {
            bail!("cp failed");
        }
    }
    println!(
        "generated {remotes} remotes x {packages} packages x {revisions} revisions in {}",
        ms(t.elapsed())
    );
    let git = GitServer::start(&root, None)?;

    let data = dir.path().join("data");
    let server = ServerProcess(
        Command::new(&server_bin)
            .arg("--data-dir")
            .arg(&data)
            .args(["--listen", "127.0.0.1:0"])
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .context("start porch-server")?,
    );
    let kubeconfig = data.join("kubeconfig");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !kubeconfig.exists() {
        if Instant::now() > deadline {
            bail!("porch-server did not write its kubeconfig");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // The kubeconfig is written just before the listener accepts.
    std::thread::sleep(Duration::from_millis(100));
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home)?;
    let ctl = Porchctl {
        bin: porchctl_bin,
        kubeconfig,
        home,
    };

    let t = Instant::now();
    for r in 0..remotes {
        let name = format!("r{r:03}");
        ctl.run(&[
            "repo",
            "reg",
            &git.url_for(&format!("{name}.git")),
            "--name",
            &name,
            "-n",
            "default",
        ])?;
    }
    // Published revisions plus each package's placeholder on `main`.
    let expected = remotes * packages * (revisions + 1);
    loop {
        let out = ctl.run(&["rpkg", "get", "-n", "default", "-o", "name"])?;
        let n = out.stdout.iter().filter(|b| **b == b'\n').count();
        if n >= expected {
            println!(
                "registered {remotes} repositories, {n} package revisions listed after {}",
                ms(t.elapsed())
            );
            break;
        }
        if t.elapsed() > Duration::from_secs(600) {
            bail!("only {n} of {expected} package revisions listed after 10 minutes");
        }
        std::thread::sleep(Duration::from_millis(200));
    }

    if std::env::var_os("RPKG_BENCH_HOLD").is_some() {
        // For profiling by hand against the same data: the server stays up until Enter.
        println!(
            "holding: KUBECONFIG={} HOME={}; press Enter to continue",
            ctl.kubeconfig.display(),
            ctl.home.display()
        );
        let mut line = String::new();
        std::io::stdin().read_line(&mut line)?;
    }

    println!();
    for (label, args) in [
        (
            "porchctl rpkg get -n default",
            &["rpkg", "get", "-n", "default"][..],
        ),
        (
            "porchctl rpkg get -n default -o name",
            &["rpkg", "get", "-n", "default", "-o", "name"][..],
        ),
        (
            "porchctl rpkg get -n default -o json",
            &["rpkg", "get", "-n", "default", "-o", "json"][..],
        ),
        (
            "porchctl rpkg get -n default --revision=1",
            &["rpkg", "get", "-n", "default", "--revision=1"][..],
        ),
    ] {
        let (times, bytes) = ctl.time(args, 20)?;
        report(label, times, bytes);
    }
    // The same Table request porchctl sends, timed in process: the server's share of the
    // end-to-end figure (connection set-up excluded, the client is reused).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (times, bytes) = runtime.block_on(raw_table(&ctl.kubeconfig, 20))?;
    report("server: GET packagerevisions as Table", times, bytes);

    for (label, args) in [
        ("porchctl --version", &["--version"][..]),
        ("porchctl --help", &["--help"][..]),
    ] {
        let (times, bytes) = ctl.time(args, 100)?;
        report(label, times, bytes);
    }
    drop(server);
    drop(git);
    Ok(())
}
