//! Times the built-in functions on generated resource lists, in process, as a render
//! step calls them (the ResourceList is built once per run; parsing and writing the
//! package are not counted).
//!
//! ```sh
//! cargo run --release -p krm-functions --example builtin_bench            # 1,000 and 10,000 Deployments
//! cargo run --release -p krm-functions --example builtin_bench -- 500 5000
//! ```
//!
//! Prints, per function and size, the best and the median of 7 runs in milliseconds.
//! Only public `Builtins` API is used, so the same file builds against older commits
//! for a before/after comparison.

use std::time::{Duration, Instant};

use kpt::resource_list::ResourceList;
use kpt::runtime::{FunctionRef, FunctionRuntime, RunOptions};
use kpt::yaml::{self, Node};
use krm_functions::Builtins;

const RUNS: usize = 7;

/// One Deployment and one Service per index, with setter comments and an annotation
/// the replacements read.
fn resources(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{i} # kpt-set: ${{prefix}}-{i}\n  namespace: team-{ns}\n  labels:\n    app: app-{i}\n  annotations:\n    owner: team-{ns}\nspec:\n  replicas: 3 # kpt-set: ${{replicas}}\n  selector:\n    matchLabels:\n      app: app-{i}\n  template:\n    metadata:\n      labels:\n        app: app-{i}\n    spec:\n      containers:\n      - name: main\n        image: registry.example/app:v1 # kpt-set: registry.example/app:${{tag}}\n        env:\n        - name: OWNER\n          value: nobody\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc-{i}\n  namespace: team-{ns}\nspec:\n  ports:\n  - port: 80\n---\n",
            ns = i % 10
        ));
    }
    s.trim_end_matches("---\n").to_string()
}

/// (label, image, functionConfig) per function timed.
fn cases() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        (
            "apply-setters",
            "apply-setters:v0.2",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: setters\ndata:\n  prefix: web\n  replicas: '5'\n  tag: v2\n",
        ),
        (
            "apply-replacements",
            "apply-replacements:v0.1",
            "apiVersion: fn.kpt.dev/v1alpha1\nkind: ApplyReplacements\nmetadata:\n  name: r\nreplacements:\n- source:\n    kind: Deployment\n    name: app-0\n    fieldPath: metadata.annotations.owner\n  targets:\n  - select:\n      kind: Deployment\n      labelSelector: app notin (none)\n    fieldPaths:\n    - spec.template.spec.containers.[name=main].env.[name=OWNER].value\n",
        ),
        (
            "ensure-name-substring",
            "ensure-name-substring:v0.2",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: e\ndata:\n  prepend: prod-\n",
        ),
        (
            // Additional name fields: each is read (kyaml `Lookup`) before it is edited.
            "ensure-name-sub fields",
            "ensure-name-substring:v0.2",
            "apiVersion: fn.kpt.dev/v1alpha1\nkind: EnsureNameSubstring\nmetadata:\n  name: e\nsubstring: prod-\neditMode: prepend\nadditionalNameFields:\n- group: apps\n  version: v1\n  kind: Deployment\n  path: spec/selector/matchLabels/app\n",
        ),
        (
            "set-namespace",
            "set-namespace:v0.4",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\ndata:\n  namespace: prod\n",
        ),
        (
            "starlark",
            "starlark:v0.5",
            "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: s\nsource: |\n  def label(items):\n    for r in items:\n      r[\"metadata\"][\"labels\"] = {\"tier\": \"web\"}\n  label(ctx.resource_list[\"items\"])\n",
        ),
    ]
}

fn run_once(image: &str, items: &[Node], config: &Node) -> Duration {
    let mut list = ResourceList::new(items.to_vec());
    list.function_config = Some(config.clone());
    let image = format!("ghcr.io/kptdev/krm-functions-catalog/{image}");
    let start = Instant::now();
    let out = Builtins.run(
        &FunctionRef::Image(image.clone()),
        list,
        &RunOptions::default(),
    );
    let took = start.elapsed();
    match out {
        Ok(o) if o.exit_code == 0 => took,
        Ok(o) => panic!("{image} failed: {} {:?}", o.stderr, o.list.results),
        Err(e) => panic!("{image} did not run: {e}"),
    }
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000, 10_000]
    } else {
        sizes
    };
    println!(
        "{:<24} {:>9} {:>10} {:>10}",
        "function", "resources", "best ms", "median ms"
    );
    for n in sizes {
        let items: Vec<Node> = yaml::parse_stream(&resources(n / 2))
            .expect("generated resources parse")
            .into_iter()
            .map(|d| d.root)
            .collect();
        for (label, image, config) in cases() {
            let config = yaml::parse_one(config).expect("config parses");
            let mut times: Vec<Duration> = (0..RUNS)
                .map(|_| run_once(image, &items, &config))
                .collect();
            times.sort();
            let ms = |d: Duration| d.as_secs_f64() * 1000.0;
            println!(
                "{label:<24} {:>9} {:>10.1} {:>10.1}",
                items.len(),
                ms(times[0]),
                ms(times[RUNS / 2])
            );
        }
    }
}
