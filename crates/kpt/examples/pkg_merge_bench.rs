//! Benchmark of the 3-way package merge: packages of 100, 1,000 and 10,000
//! resources with 10% changed upstream and a different 10% changed locally.
//!
//! Prints the in-memory `update_package` time (median of several runs) and, when
//! `/usr/bin/kpt` exists, the end-to-end `kpt pkg update` time against our
//! `update_dir` on the same file:// repository, with their ratio.
//!
//! Run: `cargo run --release -p kpt --example pkg_merge_bench [sizes...]`
//! (`KPT_BENCH_SKIP_KPT=1` measures the in-memory merge only;
//! `KPT_BENCH_KPT_TIMEOUT=SECS`, default 900, stops a `kpt pkg update` that runs
//! longer and reports the ratio as a lower bound).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use kpt::package::PackageFiles;
use kpt::pkg::Strategy;
use kpt::pkg::get::{GetOptions, get};
use kpt::pkg::update::driver::update_dir;
use kpt::pkg::update::{UpdateOptions, update_package};

const PER_FILE: usize = 10;

fn resource(i: usize, version: &str) -> String {
    if i.is_multiple_of(2) {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  namespace: ns-{}\ndata:\n  key: value-{version}\n  other: \"{i}\"\n",
            i % 7
        )
    } else {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: dep-{i}\n  namespace: ns-{}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n      - name: main\n        image: app:{version}\n        env:\n        - name: A\n          value: \"1\"\n        ports:\n        - containerPort: 8080\n",
            i % 7
        )
    }
}

/// A package of `n` resources; resources for which `changed(i)` get `version`.
fn package(n: usize, version: &str, changed: impl Fn(usize) -> bool) -> PackageFiles {
    let mut files = PackageFiles::new();
    files.insert(
        "Kptfile",
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: bench\ninfo:\n  description: bench\n",
    );
    for f in 0..n.div_ceil(PER_FILE) {
        let docs: Vec<String> = (f * PER_FILE..((f + 1) * PER_FILE).min(n))
            .map(|i| resource(i, if changed(i) { version } else { "v1" }))
            .collect();
        files.insert(format!("r{f:05}.yaml"), docs.join("---\n"));
    }
    files
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.email=b@b", "-c", "user.name=b"])
        .args(args)
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(ok, "git {args:?} failed");
}

/// Time of `kpt pkg update`: `Ok` when it finished, `Err` when it was stopped
/// after the timeout (the time is then a lower bound).
type KptTime = Result<Duration, Duration>;

fn kpt_timeout() -> Duration {
    let secs = std::env::var("KPT_BENCH_KPT_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(900);
    Duration::from_secs(secs)
}

fn end_to_end(n: usize, o: &PackageFiles, u: &PackageFiles) -> Option<(KptTime, Duration)> {
    if !Path::new("/usr/bin/kpt").exists() || std::env::var_os("KPT_BENCH_SKIP_KPT").is_some() {
        return None;
    }
    let tmp = std::env::temp_dir().join(format!("kpt-bench-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let up = tmp.join("up");
    std::fs::create_dir_all(up.join("pkg")).ok()?;
    git(&up, &["init", "-q", "-b", "main"]);
    kpt::package::fs::write_changes(&up.join("pkg"), &PackageFiles::new(), o).ok()?;
    git(&up, &["add", "-A"]);
    git(&up, &["commit", "-qm", "v1"]);
    git(&up, &["tag", "v1"]);
    kpt::package::fs::write_changes(&up.join("pkg"), o, u).ok()?;
    git(&up, &["add", "-A"]);
    git(&up, &["commit", "-qm", "v2"]);
    git(&up, &["tag", "v2"]);
    let url = format!("file://{}", up.display());
    let local = |name: &str| -> std::path::PathBuf {
        let dir = tmp.join(name).join("local");
        let opts = GetOptions {
            repo: url.clone(),
            directory: "/pkg".into(),
            git_ref: "v1".into(),
            name: "local".into(),
            strategy: Strategy::ResourceMerge,
        };
        get(&dir, &opts).expect("get");
        // local edits: a different 10% of the resources
        let (before, _) = kpt::package::fs::read_dir(&dir).expect("read");
        let mut after = before.clone();
        for p in before.paths() {
            if let Some(t) = before.get_text(p)
                && p.ends_with(".yaml")
                && p[1..6].parse::<usize>().is_ok_and(|f| f % 10 == 5)
            {
                after.insert(p, t.replace("replicas: 1", "replicas: 3").into_bytes());
            }
        }
        kpt::package::fs::write_changes(&dir, &before, &after).expect("edit");
        dir
    };
    let kdir = local("k");
    let start = Instant::now();
    let kpt_tmp = tmp.join("kpt-tmp");
    std::fs::create_dir_all(&kpt_tmp).ok()?;
    let mut child = Command::new("/usr/bin/kpt")
        .args(["pkg", "update", "local@v2"])
        // kpt leaves a `kpt-get-*` directory per fetch in TMPDIR; keep them in ours.
        .env("TMPDIR", &kpt_tmp)
        .current_dir(kdir.parent()?)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let limit = kpt_timeout();
    let kt = loop {
        if let Some(status) = child.try_wait().ok()? {
            if !status.success() {
                eprintln!("kpt pkg update failed at {n} resources: {status}");
                return None;
            }
            break Ok(start.elapsed());
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break Err(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let rdir = local("r");
    let start = Instant::now();
    update_dir(&rdir, Some("v2"), None).expect("update");
    let rt = start.elapsed();
    let _ = std::fs::remove_dir_all(&tmp);
    Some((kt, rt))
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![100, 1_000, 10_000]
    } else {
        sizes
    };
    println!("resources | in-memory merge (median) | kpt pkg update | our update_dir | kpt/ours");
    for n in sizes {
        let o = package(n, "v1", |_| false);
        let u = package(n, "v2", |i| i.is_multiple_of(10));
        // local: a different 10% (whole files r*5) edited
        let l = package(n, "local", |i| (i / PER_FILE) % 10 == 5);
        let runs = if n >= 10_000 { 3 } else { 7 };
        let times: Vec<Duration> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                let out = update_package(
                    &o,
                    &u,
                    &l,
                    Strategy::ResourceMerge,
                    &UpdateOptions::default(),
                )
                .expect("merge");
                std::hint::black_box(out);
                start.elapsed()
            })
            .collect();
        let m = median(times);
        match end_to_end(n, &o, &u) {
            Some((kt, rt)) => {
                let (k, more) = match kt {
                    Ok(k) => (k, " "),
                    Err(k) => (k, ">"),
                };
                println!(
                    "{n:>9} | {:>21.1} ms | {more}{:>10.1} ms | {:>11.1} ms | {more}{:>6.1}x",
                    m.as_secs_f64() * 1e3,
                    k.as_secs_f64() * 1e3,
                    rt.as_secs_f64() * 1e3,
                    k.as_secs_f64() / rt.as_secs_f64()
                )
            }
            None => println!(
                "{n:>9} | {:>21.1} ms | (kpt not available)",
                m.as_secs_f64() * 1e3
            ),
        }
    }
}
