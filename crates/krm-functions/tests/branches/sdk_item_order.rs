//! The order of the items a function hands back: the go/fn SDK's `Run`
//! writes them through `ResourceList.ToYAML`, which sorts them by
//! apiVersion, kind, namespace and name; kyaml framework programs (and the
//! early releases written on it) keep the order they were given.

use super::{call, config_map};

/// Three resources, deliberately out of the SDK's order.
const SHUFFLED: &str = "\
apiVersion: v1
kind: Service
metadata:
  name: zeta
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: b
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: b
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: a
";

fn names(items: &str) -> Vec<String> {
    items
        .lines()
        .filter_map(|l| l.strip_prefix("  name: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn go_fn_functions_sort_their_output() {
    let labels = call("set-labels", SHUFFLED, Some(&config_map("  tier: x\n")));
    assert_eq!(labels.exit_code, 0);
    // "apps/v1 Deployment a web" < "apps/v1 Deployment b api" < ... < "v1 Service  zeta"
    assert_eq!(names(&labels.items), ["web", "api", "web", "zeta"]);
    assert!(labels.items.starts_with("apiVersion: apps/v1"));
    let ns = call(
        "set-namespace",
        SHUFFLED,
        Some(&config_map("  namespace: c\n")),
    );
    // All in namespace c now: the names decide within the Deployments.
    assert_eq!(names(&ns.items), ["api", "web", "web", "zeta"]);
    let image = call(
        "set-image",
        SHUFFLED,
        Some(&config_map("  name: nginx\n  newTag: '2'\n")),
    );
    assert_eq!(names(&image.items), ["web", "api", "web", "zeta"]);
    // A script that appends lands where the sort puts it, not last.
    let star = call(
        "starlark",
        SHUFFLED,
        Some(&config_map(
            "  source: |\n    ctx.resource_list[\"items\"].append({\"apiVersion\": \"apps/v1\", \"kind\": \"Deployment\", \"metadata\": {\"name\": \"added\"}})\n",
        )),
    );
    assert_eq!(star.exit_code, 0, "{}", star.stderr);
    assert_eq!(names(&star.items), ["added", "web", "api", "web", "zeta"]);
}

#[test]
fn equal_keys_keep_their_order() {
    // Go's sort.Sort is an insertion sort up to 12 items: stable.
    let twins = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: same
data: {first: '1'}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: same
data: {second: '2'}
";
    let o = call("set-labels", twins, Some(&config_map("  tier: x\n")));
    let first = o.items.find("first").expect("first kept");
    let second = o.items.find("second").expect("second kept");
    assert!(first < second, "{}", o.items);
}

#[test]
fn framework_functions_and_early_releases_keep_the_order() {
    let annotated = call("set-annotations", SHUFFLED, Some(&config_map("  a: b\n")));
    assert_eq!(names(&annotated.items), ["zeta", "web", "api", "web"]);
    let old = super::call_image(
        "gcr.io/kpt-fn/set-labels:v0.1.5",
        SHUFFLED,
        Some(&config_map("  tier: x\n")),
    );
    assert_eq!(names(&old.items), ["zeta", "web", "api", "web"]);
}
