//! Container functions against their baselines, in one run (issue 18's figures):
//!
//! - warm: per-call latency of a function image already unpacked in the cache, on a
//!   100-resource package, beside the same work as an `exec` function on the host;
//! - cold: the first call of a 20 MB image (pull from a local registry, verify, unpack, run),
//!   beside a warm call of the same image;
//! - pipeline: 5 container functions over 1,000 resources, beside the same 5 as exec
//!   functions.
//!
//! Needs `docker-registry`, `skopeo`, `bwrap` and `busybox-static` (`.ci/setup.sh`).
//! `cargo bench -p fn-container --bench container [-- <warm calls>]`

use std::time::{Duration, Instant};

use fn_container::{ContainerOptions, ContainerRuntime};
use kpt::resource_list::ResourceList;
use kpt::runtime::exec::ExecRuntime;
use kpt::runtime::{FunctionRef, FunctionRuntime, RunOptions};
use porch_testkit::registry::{Registry, function_image, function_image_with_payload};

fn resources(n: usize) -> ResourceList {
    let mut yaml =
        String::from("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n");
    for i in 0..n {
        yaml.push_str(&format!(
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-{i}\n  data:\n    key: value-{i}\n"
        ));
    }
    ResourceList::from_yaml(&yaml).expect("resource list")
}

fn run(rt: &dyn FunctionRuntime, f: &FunctionRef, input: ResourceList) -> (Duration, ResourceList) {
    let start = Instant::now();
    let out = rt
        .run(f, input, &RunOptions::default())
        .expect("function ran");
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    (start.elapsed(), out.list)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn calls(
    rt: &dyn FunctionRuntime,
    f: &FunctionRef,
    input: &ResourceList,
    n: usize,
) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..n).map(|_| run(rt, f, input.clone()).0).collect();
    times.sort();
    times
}

fn row(label: &str, times: &[Duration]) {
    println!(
        "  {label:<44} p50 {:>8.2} ms   p90 {:>8.2} ms   p99 {:>8.2} ms",
        ms(pct(times, 0.5)),
        ms(pct(times, 0.9)),
        ms(pct(times, 0.99))
    );
}

/// Prefixes every resource's `data.key` with `f<i>-` (sed, both in the image and on the
/// host), so that five in a row leave `f4-f3-f2-f1-f0-value-N`.
fn label_script(i: usize) -> String {
    format!("sed 's/^    key: /    key: f{i}-/'")
}

fn main() {
    let warm_calls: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(50);
    let registry = Registry::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let rt = ContainerRuntime::new(ContainerOptions::new(cache.path())).expect("runtime");
    let exec = ExecRuntime::allowed();

    println!("container functions ({warm_calls} warm calls each)");
    let cat = FunctionRef::Image(registry.push(&function_image("cat"), "bench/cat:v1", false));
    let hundred = resources(100);
    run(&rt, &cat, hundred.clone());
    row(
        "warm image, 100 resources (cat)",
        &calls(&rt, &cat, &hundred, warm_calls),
    );
    let host_cat = FunctionRef::Exec("cat".into());
    row(
        "  baseline: exec on the host (cat)",
        &calls(&exec, &host_cat, &hundred, warm_calls),
    );

    let big = function_image_with_payload("cat", 20 << 20);
    let big = FunctionRef::Image(registry.push(&big, "bench/big:v1", false));
    let cold_cache = tempfile::tempdir().expect("tempdir");
    let cold_rt = ContainerRuntime::new(ContainerOptions::new(cold_cache.path())).expect("runtime");
    let (cold, _) = run(&cold_rt, &big, hundred.clone());
    println!(
        "  {:<44} {:>8.2} ms",
        "cold: first call of a 20 MB image (pull+unpack)",
        ms(cold)
    );
    row(
        "  baseline: warm calls of that image",
        &calls(&cold_rt, &big, &hundred, 10),
    );

    let thousand = resources(1000);
    let images: Vec<FunctionRef> = (0..5)
        .map(|i| {
            let name = format!("bench/label-{i}:v1");
            FunctionRef::Image(registry.push(&function_image(&label_script(i)), &name, false))
        })
        .collect();
    let host: Vec<FunctionRef> = (0..5).map(|i| FunctionRef::Exec(label_script(i))).collect();
    let pipeline = |rt: &dyn FunctionRuntime, fns: &[FunctionRef]| {
        let start = Instant::now();
        let mut list = thousand.clone();
        for f in fns {
            list = run(rt, f, list).1;
        }
        let yaml = list.to_yaml();
        assert!(
            yaml.contains("key: f4-f3-f2-f1-f0-value-999"),
            "every function applied: {}",
            &yaml[..yaml.len().min(400)]
        );
        start.elapsed()
    };
    pipeline(&rt, &images);
    let mut c: Vec<Duration> = (0..5).map(|_| pipeline(&rt, &images)).collect();
    let mut e: Vec<Duration> = (0..5).map(|_| pipeline(&exec, &host)).collect();
    c.sort();
    e.sort();
    row("pipeline: 5 container functions, 1,000 res.", &c);
    row("  baseline: the same 5 as exec functions", &e);
    println!(
        "  ratio container/exec (p50)                  {:.2}",
        ms(pct(&c, 0.5)) / ms(pct(&e, 0.5))
    );
}
