//! Render benchmark: `cargo build --release -p porchctl && cargo run --release -p porchctl
//! --example fn_bench`.
//!
//! Generates packages of 10, 100, 1,000 and 10,000 resources (Deployments, Services and
//! ConfigMaps over several files and directories) with a native pipeline of
//! set-namespace, set-labels and apply-replacements, and prints the median wall time of
//! `kpt::render::render` in process and of the release `porchctl fn render` binary end to
//! end, with resources/second (both with porchctl's allocator, mimalloc). Then it runs an
//! identical `exec:` pipeline (`cat` three times) on 1,000 resources with `kpt fn render
//! --allow-exec` and `porchctl fn render --allow-exec` and prints the ratio. Not a test:
//! it prints figures and asserts nothing.
//! Set `FN_BENCH_SIZES=10,100` to choose sizes and `KPT_BIN` for another kpt.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use kpt::package::fs;
use kpt::render::{RenderOptions, render};
use kpt::runtime::{RunOptions, Runtimes};

/// The allocator porchctl (and porch-server) run render with, so the in-process column
/// measures what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const NATIVE_PIPELINE: &str = r#"pipeline:
  mutators:
    - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1
      configMap:
        namespace: bench
    - image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0
      configMap:
        app.kubernetes.io/part-of: bench
        tier: backend
    - image: ghcr.io/kptdev/krm-functions-catalog/apply-replacements:v0.1.1
      configPath: replacements.yaml
"#;

const EXEC_PIPELINE: &str =
    "pipeline:\n  mutators:\n    - exec: cat\n    - exec: cat\n    - exec: cat\n";

const REPLACEMENTS: &str = r#"apiVersion: fn.kpt.dev/v1alpha1
kind: ApplyReplacements
metadata:
  name: replacements
  annotations:
    config.kubernetes.io/local-config: "true"
replacements:
  - source:
      kind: ConfigMap
      name: settings
      fieldPath: data.image
    targets:
      - select:
          kind: Deployment
        fieldPaths:
          - spec.template.spec.containers.[name=app].image
"#;

const SETTINGS: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  image: nginx:1.27\n";

fn resource(i: usize) -> String {
    match i % 3 {
        0 => format!(
            "# deployment {i}\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-{i}\n  labels:\n    app: web-{i}\nspec:\n  replicas: 2 # scaled by HPA\n  selector:\n    matchLabels:\n      app: web-{i}\n  template:\n    metadata:\n      labels:\n        app: web-{i}\n    spec:\n      containers:\n        - name: app\n          image: nginx:1.25\n          ports:\n            - containerPort: 8080\n          env:\n            - name: INDEX\n              value: \"{i}\"\n"
        ),
        1 => format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: web-{i}\nspec:\n  selector:\n    app: web-{i}\n  ports:\n    - port: 80\n      targetPort: 8080\n"
        ),
        _ => format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-{i}\ndata:\n  key: value-{i}\n  other: \"{i}\"\n"
        ),
    }
}

/// Write a package of `n` resources (10 per file, 10 files per directory) to `dir`.
fn generate(dir: &Path, n: usize, pipeline: &str, native: bool) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(
        dir.join("Kptfile"),
        format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: bench\n{pipeline}"),
    )?;
    if native {
        std::fs::write(dir.join("replacements.yaml"), REPLACEMENTS)?;
        std::fs::write(dir.join("settings.yaml"), SETTINGS)?;
    }
    let per_file = 10;
    for f in 0..n.div_ceil(per_file) {
        let sub = dir.join(format!("part-{:03}", f / 10));
        std::fs::create_dir_all(&sub)?;
        let docs: Vec<String> = (f * per_file..((f + 1) * per_file).min(n))
            .map(resource)
            .collect();
        std::fs::write(sub.join(format!("res-{f:05}.yaml")), docs.join("---\n"))?;
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let target = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &target)?;
        } else {
            std::fs::copy(e.path(), &target)?;
        }
    }
    Ok(())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn runs_for(n: usize) -> usize {
    match n {
        0..=100 => 15,
        101..=1000 => 7,
        _ => 3,
    }
}

/// Median wall time of `bin fn render [--allow-exec] DIR` on fresh copies of `pkg`.
fn time_binary(
    bin: &Path,
    pkg: &Path,
    scratch: &Path,
    runs: usize,
    exec: bool,
) -> anyhow::Result<Duration> {
    let mut times = Vec::new();
    for r in 0..runs {
        let dir = scratch.join(format!("run-{r}")).join("bench");
        copy_tree(pkg, &dir)?;
        let mut cmd = Command::new(bin);
        cmd.args(["fn", "render"]);
        if exec {
            cmd.arg("--allow-exec");
        }
        cmd.arg(&dir);
        let start = Instant::now();
        let out = cmd.output()?;
        let took = start.elapsed();
        if !out.status.success() {
            anyhow::bail!(
                "{} failed: {}",
                bin.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        times.push(took);
        std::fs::remove_dir_all(scratch.join(format!("run-{r}")))?;
    }
    Ok(median(times))
}

fn porchctl_bin() -> Option<PathBuf> {
    // target/release/examples/fn_bench -> target/release/porchctl
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("porchctl");
    bin.is_file().then_some(bin)
}

fn main() -> anyhow::Result<()> {
    if cfg!(debug_assertions) {
        eprintln!("note: this is a debug build; run with --release for meaningful figures");
    }
    let sizes: Vec<usize> = match std::env::var("FN_BENCH_SIZES") {
        Ok(s) => s
            .split(',')
            .map(|x| x.trim().parse())
            .collect::<Result<_, _>>()?,
        Err(_) => vec![10, 100, 1_000, 10_000],
    };
    let tmp = tempfile::tempdir()?;
    let porchctl = porchctl_bin();
    if porchctl.is_none() {
        eprintln!(
            "porchctl release binary not found next to this example; build it with \
             `cargo build --release -p porchctl` to time it end to end"
        );
    }
    let runtime = Runtimes::new().with(krm_functions::Builtins);
    let opts = RenderOptions {
        runtime: &runtime,
        run: RunOptions::default(),
        root_name: "bench".into(),
        write_status: true,
    };

    // What porch-server gives every render (porch-engine's RenderLimits defaults): the
    // budgeted column must stay within noise of the unbudgeted one.
    let budgeted = RenderOptions {
        runtime: &runtime,
        run: RunOptions {
            budget: kpt::runtime::Budget {
                max_output_items: Some(250_000),
                max_output_bytes: Some(512 << 20),
                max_memory_bytes: Some(1 << 30),
                ..kpt::runtime::Budget::default()
            }
            .with_time_limit(Duration::from_secs(3600)),
            ..RunOptions::default()
        },
        root_name: "bench".into(),
        write_status: true,
    };

    println!("native pipeline: set-namespace, set-labels, apply-replacements (median of N runs)");
    println!(
        "{:>9} {:>4} {:>14} {:>14} {:>14} {:>14} {:>14} {:>8}",
        "resources", "N", "in-process ms", "res/s", "porchctl ms", "res/s", "budgeted ms", "ratio"
    );
    for &n in &sizes {
        let pkg = tmp.path().join(format!("native-{n}")).join("bench");
        generate(&pkg, n, NATIVE_PIPELINE, true)?;
        let (files, _) = fs::read_dir(&pkg)?;
        let runs = runs_for(n);
        let mut times = Vec::new();
        let mut budget_times = Vec::new();
        // Interleaved, so both columns see the same machine.
        for _ in 0..runs {
            for (o, t) in [(&opts, &mut times), (&budgeted, &mut budget_times)] {
                let start = Instant::now();
                let out = render(&files, o);
                t.push(start.elapsed());
                if let Some(e) = out.error {
                    anyhow::bail!("render of {n} resources failed: {e}");
                }
            }
        }
        let inproc = median(times);
        let with_budget = median(budget_times);
        let rate = |d: Duration| n as f64 / d.as_secs_f64();
        let bin_col = match &porchctl {
            Some(bin) => {
                let d = time_binary(bin, &pkg, &tmp.path().join("scratch"), runs, false)?;
                format!("{:>14.1} {:>14.0}", ms(d), rate(d))
            }
            None => format!("{:>14} {:>14}", "-", "-"),
        };
        println!(
            "{n:>9} {runs:>4} {:>14.1} {:>14.0} {bin_col} {:>14.1} {:>8.3}",
            ms(inproc),
            rate(inproc),
            ms(with_budget),
            with_budget.as_secs_f64() / inproc.as_secs_f64()
        );
    }

    let kpt = std::env::var_os("KPT_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/kpt"));
    let n = 1_000;
    println!();
    println!("exec pipeline (cat x3), {n} resources, median of 5 runs");
    match (&porchctl, kpt.is_file()) {
        (Some(bin), true) => {
            let pkg = tmp.path().join("exec").join("bench");
            generate(&pkg, n, EXEC_PIPELINE, false)?;
            let scratch = tmp.path().join("scratch-exec");
            let theirs = time_binary(&kpt, &pkg, &scratch, 5, true)?;
            let ours = time_binary(bin, &pkg, &scratch, 5, true)?;
            println!("  kpt fn render --allow-exec      {:>8.1} ms", ms(theirs));
            println!("  porchctl fn render --allow-exec {:>8.1} ms", ms(ours));
            println!(
                "  ratio porchctl/kpt              {:>8.2}",
                ours.as_secs_f64() / theirs.as_secs_f64()
            );
        }
        (None, _) => println!("  skipped: no porchctl release binary"),
        (_, false) => println!(
            "  skipped: no kpt at {} (Debian package google-cloud-cli-kpt, or set KPT_BIN)",
            kpt.display()
        ),
    }
    Ok(())
}
