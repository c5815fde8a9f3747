//! CustomResourceDefinitions and ownerReference garbage collection, with kubectl 1.32 against
//! the real server.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{KUBECTL, Server};

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: workloadclusters.infra.nephio.org
spec:
  group: infra.nephio.org
  scope: Namespaced
  names:
    plural: workloadclusters
    singular: workloadcluster
    kind: WorkloadCluster
    shortNames: [wc]
    categories: [nephio]
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - name: Cluster
      type: string
      jsonPath: .spec.clusterName
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [clusterName]
            properties:
              clusterName:
                type: string
                description: Name of the workload cluster.
              replicas:
                type: integer
                minimum: 1
                maximum: 5
                default: 1
              cnis:
                type: array
                items:
                  type: string
          status:
            type: object
            properties:
              ready:
                type: boolean
"#;

fn cluster(name: &str, extra_spec: &str) -> String {
    format!(
        "apiVersion: infra.nephio.org/v1alpha1\nkind: WorkloadCluster\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  clusterName: {name}-cluster\n{extra_spec}"
    )
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn apply(s: &Server, file: &str, text: &str) -> std::process::Output {
    let p = s.write_file(file, text);
    s.kubectl(&["apply", "-f", p.to_str().expect("utf8 path")])
}

fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn install_crd(s: &Server) {
    let out = apply(s, "crd.yaml", CRD);
    assert!(out.status.success(), "{}", stderr(&out));
    s.kubectl_ok(&[
        "wait",
        "--for=condition=Established",
        "--timeout=20s",
        "crd/workloadclusters.infra.nephio.org",
    ]);
}

#[test]
fn a_crd_serves_its_kind_to_kubectl() {
    let mut s = Server::start();
    install_crd(&s);
    let crd = s.kubectl_ok(&[
        "get",
        "crd",
        "workloadclusters.infra.nephio.org",
        "-o",
        "json",
    ]);
    let crd: serde_json::Value = serde_json::from_str(&crd).expect("json");
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "WorkloadCluster");
    assert_eq!(crd["status"]["storedVersions"][0], "v1alpha1");

    // Discovery and OpenAPI.
    let resources = s.kubectl_ok(&["api-resources", "--api-group=infra.nephio.org"]);
    assert!(
        resources.contains("workloadclusters")
            && resources.contains("wc")
            && resources.contains("infra.nephio.org/v1alpha1")
            && resources.contains("WorkloadCluster"),
        "{resources}"
    );
    let explain = s.kubectl_ok(&["explain", "workloadclusters.spec"]);
    assert!(
        explain.contains("clusterName") && explain.contains("Name of the workload cluster"),
        "{explain}"
    );

    // Create, with the schema's default filled in; the printer column.
    let out = apply(&s, "a.yaml", &cluster("edge-1", "  cnis: [macvlan]\n"));
    assert!(out.status.success(), "{}", stderr(&out));
    let got = s.kubectl_ok(&["get", "wc", "edge-1", "-o", "json"]);
    let got: serde_json::Value = serde_json::from_str(&got).expect("json");
    assert_eq!(got["spec"]["replicas"], 1, "default applied: {got}");
    let table = s.kubectl_ok(&["get", "workloadclusters"]);
    let header = table.lines().next().unwrap_or_default();
    assert!(
        header.contains("CLUSTER") && header.contains("AGE"),
        "{table}"
    );
    assert!(table.contains("edge-1-cluster"), "{table}");
    let all = s.kubectl_ok(&["get", "nephio", "-A", "-o", "name"]);
    assert!(
        all.contains("workloadcluster.infra.nephio.org/edge-1"),
        "{all}"
    );

    // Schema violations are 422 Invalid.
    let out = apply(&s, "bad.yaml", &cluster("bad", "  replicas: 9\n"));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("spec.replicas in body should be less than or equal to 5"),
        "{}",
        stderr(&out)
    );
    let out = apply(&s, "bad2.yaml", &cluster("bad", "  replicas: three\n"));
    assert!(
        !out.status.success() && stderr(&out).contains("Invalid value"),
        "{}",
        stderr(&out)
    );
    let missing = "apiVersion: infra.nephio.org/v1alpha1\nkind: WorkloadCluster\nmetadata:\n  name: bad\n  namespace: default\nspec: {}\n";
    let out = apply(&s, "bad3.yaml", missing);
    assert!(
        stderr(&out).contains("spec.clusterName: Required value"),
        "{}",
        stderr(&out)
    );

    // Unknown fields: refused under fieldValidation=Strict (kubectl's default), pruned otherwise.
    let unknown = cluster("loose", "  bogus: 1\n");
    let out = apply(&s, "u.yaml", &unknown);
    assert!(
        !out.status.success() && stderr(&out).contains("unknown field \"spec.bogus\""),
        "{}",
        stderr(&out)
    );
    let p = s.write_file("u2.yaml", &unknown);
    s.kubectl_ok(&[
        "create",
        "--validate=false",
        "-f",
        p.to_str().expect("utf8"),
    ]);
    let loose = s.kubectl_ok(&["get", "wc", "loose", "-o", "jsonpath={.spec}"]);
    assert!(!loose.contains("bogus"), "{loose}");

    // Patches: merge and JSON patch; strategic merge patch is 415 as for any custom resource.
    s.kubectl_ok(&[
        "patch",
        "wc",
        "edge-1",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":3}}"#,
    ]);
    let out = s.kubectl(&["patch", "wc", "edge-1", "-p", r#"{"spec":{"replicas":4}}"#]);
    assert!(!out.status.success(), "strategic merge patch accepted");
    assert!(
        stderr(&out).contains("unknown format") || stderr(&out).contains("UnsupportedMediaType"),
        "{}",
        stderr(&out)
    );
    // The status subresource: the main resource ignores status, the subresource takes it.
    s.kubectl_ok(&[
        "patch",
        "wc",
        "edge-1",
        "--type=merge",
        "-p",
        r#"{"status":{"ready":true}}"#,
    ]);
    assert_eq!(
        s.kubectl_ok(&["get", "wc", "edge-1", "-o", "jsonpath={.status.ready}"]),
        ""
    );
    s.kubectl_ok(&[
        "patch",
        "wc",
        "edge-1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"ready":true}}"#,
    ]);
    assert_eq!(
        s.kubectl_ok(&[
            "get",
            "wc",
            "edge-1",
            "-o",
            "jsonpath={.status.ready}/{.spec.replicas}"
        ]),
        "true/3"
    );

    // Restart: the kind is served again, with its objects.
    s.restart();
    let after = s.kubectl_ok(&["get", "workloadclusters", "edge-1", "-o", "name"]);
    assert_eq!(after.trim(), "workloadcluster.infra.nephio.org/edge-1");

    // Deleting the CRD removes the kind and its objects.
    s.kubectl_ok(&["delete", "crd", "workloadclusters.infra.nephio.org"]);
    let out = s.kubectl(&["get", "workloadclusters"]);
    assert!(!out.status.success(), "kind still served");
    install_crd(&s);
    let out = s.kubectl_ok(&["get", "workloadclusters", "-A", "-o", "name"]);
    assert!(out.trim().is_empty(), "objects survived their CRD: {out}");
}

#[test]
fn custom_resources_are_watched() {
    let s = Server::start();
    install_crd(&s);
    let out = apply(&s, "a.yaml", &cluster("first", ""));
    assert!(out.status.success(), "{}", stderr(&out));
    let mut child = Command::new(KUBECTL)
        .args(["get", "wc", "-w", "-o", "name"])
        .env("KUBECONFIG", s.kubeconfig())
        .env("HOME", s.home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl -w");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen: Vec<String> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut created = false;
    while !seen.iter().any(|l| l.ends_with("/second")) {
        assert!(Instant::now() < deadline, "watch saw {seen:?}");
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            seen.push(line);
        }
        if !created && seen.iter().any(|l| l.ends_with("/first")) {
            let out = apply(&s, "b.yaml", &cluster("second", ""));
            assert!(out.status.success(), "{}", stderr(&out));
            created = true;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn uid(s: &Server, args: &[&str]) -> String {
    let mut a = vec!["get"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["-o", "jsonpath={.metadata.uid}"]);
    let uid = s.kubectl_ok(&a);
    assert!(!uid.is_empty());
    uid
}

fn config_map_owned_by(name: &str, owners: &[(&str, &str, &str, &str)]) -> String {
    let refs: String = owners
        .iter()
        .map(|(api, kind, owner, uid)| {
            format!("  - apiVersion: {api}\n    kind: {kind}\n    name: {owner}\n    uid: {uid}\n    blockOwnerDeletion: true\n")
        })
        .collect();
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\n  ownerReferences:\n{refs}data:\n  k: v\n"
    )
}

fn exists(s: &Server, args: &[&str]) -> bool {
    let mut a = vec!["get"];
    a.extend_from_slice(args);
    s.kubectl(&a).status.success()
}

#[test]
fn owners_take_their_dependents_along_unless_orphaned() {
    let s = Server::start();
    install_crd(&s);
    let out = apply(&s, "wc.yaml", &cluster("owner", ""));
    assert!(out.status.success(), "{}", stderr(&out));
    let wc_uid = uid(&s, &["wc", "owner"]);
    let pv = "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: pv\n  namespace: default\nspec:\n  upstream: {repo: up, package: p}\n  downstream: {repo: down, package: p}\n";
    let out = apply(&s, "pv.yaml", pv);
    assert!(out.status.success(), "{}", stderr(&out));
    let pv_uid = uid(&s, &["packagevariant", "pv"]);

    // Across kinds: a custom resource and a PackageVariant own ConfigMaps; a ConfigMap owns a
    // ConfigMap (a chain); one ConfigMap has two owners.
    let cm = |name: &str, owners: &[(&str, &str, &str, &str)]| {
        let out = apply(
            &s,
            &format!("{name}.yaml"),
            &config_map_owned_by(name, owners),
        );
        assert!(out.status.success(), "{}", stderr(&out));
    };
    let wc = (
        "infra.nephio.org/v1alpha1",
        "WorkloadCluster",
        "owner",
        wc_uid.as_str(),
    );
    let pvr = (
        "config.porch.kpt.dev/v1alpha1",
        "PackageVariant",
        "pv",
        pv_uid.as_str(),
    );
    cm("injected", &[wc]);
    let injected_uid = uid(&s, &["cm", "injected"]);
    cm(
        "chained",
        &[("v1", "ConfigMap", "injected", injected_uid.as_str())],
    );
    cm("shared", &[wc, pvr]);
    cm("variant-config", &[pvr]);

    // Background (the default): dependents go, a shared one loses only the gone owner.
    s.kubectl_ok(&["delete", "wc", "owner"]);
    wait_until("the dependents of the WorkloadCluster to go", || {
        !exists(&s, &["cm", "injected"]) && !exists(&s, &["cm", "chained"])
    });
    let shared = s.kubectl_ok(&["get", "cm", "shared", "-o", "json"]);
    let shared: serde_json::Value = serde_json::from_str(&shared).expect("json");
    let refs = shared["metadata"]["ownerReferences"]
        .as_array()
        .expect("refs");
    assert_eq!(refs.len(), 1, "{shared}");
    assert_eq!(refs[0]["kind"], "PackageVariant");

    // A PackageVariant owned by a PackageVariantSet.
    let pvs = "apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: set\n  namespace: default\nspec:\n  upstream: {repo: up, package: p}\n";
    let out = apply(&s, "pvs.yaml", pvs);
    assert!(out.status.success(), "{}", stderr(&out));
    let set_uid = uid(&s, &["packagevariantset", "set"]);
    let child = format!(
        "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: child\n  namespace: default\n  ownerReferences:\n  - apiVersion: config.porch.kpt.dev/v1alpha2\n    kind: PackageVariantSet\n    name: set\n    uid: {set_uid}\nspec:\n  upstream: {{repo: up, package: p}}\n  downstream: {{repo: down, package: c}}\n"
    );
    let out = apply(&s, "child.yaml", &child);
    assert!(out.status.success(), "{}", stderr(&out));
    s.kubectl_ok(&["delete", "packagevariantset", "set"]);
    wait_until("the PackageVariant of the set to go", || {
        !exists(&s, &["packagevariant", "child"])
    });

    // Orphan: the dependents stay, without the reference.
    let out = s.kubectl(&["delete", "packagevariant", "pv", "--cascade=orphan"]);
    assert!(out.status.success(), "{}\n{}", stderr(&out), s.log());
    wait_until("the PackageVariant to go", || {
        !exists(&s, &["packagevariant", "pv"])
    });
    for name in ["shared", "variant-config"] {
        let cm = s.kubectl_ok(&["get", "cm", name, "-o", "json"]);
        let cm: serde_json::Value = serde_json::from_str(&cm).expect("json");
        assert!(
            cm["metadata"].get("ownerReferences").is_none(),
            "{name} kept a reference: {cm}"
        );
    }
}

#[test]
fn dependents_are_collected_across_a_crash() {
    let mut s = Server::start();
    // A reference to an owner that does not exist is collected when it appears.
    let out = apply(
        &s,
        "dangling.yaml",
        &config_map_owned_by("dangling", &[("v1", "ConfigMap", "gone", "0000-gone")]),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    wait_until("the dangling dependent to go", || {
        !exists(&s, &["cm", "dangling"])
    });

    // The owner is deleted and the server killed at once: whatever the collector did not
    // finish, the sweep at the next start does.
    let out = apply(
        &s,
        "owner.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owner\n  namespace: default\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let owner_uid = uid(&s, &["cm", "owner"]);
    let deps: String = (0..20)
        .map(|i| {
            config_map_owned_by(
                &format!("dep-{i}"),
                &[("v1", "ConfigMap", "owner", &owner_uid)],
            )
        })
        .collect::<Vec<_>>()
        .join("---\n");
    let out = apply(&s, "deps.yaml", &deps);
    assert!(out.status.success(), "{}", stderr(&out));
    let kept = apply(
        &s,
        "kept.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n  namespace: default\n",
    );
    assert!(kept.status.success());
    s.kubectl_ok(&["delete", "cm", "owner", "--wait=false"]);
    s.kill9_and_restart();
    wait_until("every dependent to go after the restart", || {
        let names = s.kubectl_ok(&["get", "cm", "-o", "name"]);
        !names.contains("configmap/dep-")
    });
    assert!(
        exists(&s, &["cm", "kept"]),
        "an object without owners stays"
    );
}

#[test]
fn every_served_version_reads_the_same_objects() {
    let s = Server::start();
    let two_versions = CRD.replace(
        "  versions:\n  - name: v1alpha1\n",
        "  versions:\n  - name: v1beta1\n    served: true\n    storage: false\n    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n  - name: v1alpha1\n",
    );
    let out = apply(&s, "crd.yaml", &two_versions);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = apply(&s, "a.yaml", &cluster("edge", ""));
    assert!(out.status.success(), "{}", stderr(&out));
    // kubectl prefers v1beta1 (beta before alpha); the object was written through v1alpha1.
    let preferred = s.kubectl_ok(&["get", "wc", "edge", "-o", "jsonpath={.apiVersion}"]);
    assert_eq!(preferred, "infra.nephio.org/v1beta1");
    let raw = s.kubectl_ok(&[
        "get",
        "--raw",
        "/apis/infra.nephio.org/v1alpha1/namespaces/default/workloadclusters",
    ]);
    let list: serde_json::Value = serde_json::from_str(&raw).expect("json");
    assert_eq!(list["items"][0]["apiVersion"], "infra.nephio.org/v1alpha1");
    assert_eq!(list["items"][0]["spec"]["clusterName"], "edge-cluster");
    // A write through the other version lands on the same object.
    s.kubectl_ok(&[
        "patch",
        "workloadclusters.v1beta1.infra.nephio.org",
        "edge",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":2}}"#,
    ]);
    let raw = s.kubectl_ok(&[
        "get",
        "--raw",
        "/apis/infra.nephio.org/v1alpha1/namespaces/default/workloadclusters/edge",
    ]);
    let obj: serde_json::Value = serde_json::from_str(&raw).expect("json");
    assert_eq!(obj["spec"]["replicas"], 2, "{obj}");
    assert_eq!(obj["apiVersion"], "infra.nephio.org/v1alpha1");
}

#[test]
fn deleting_a_namespace_deletes_its_custom_resources_and_config_maps() {
    let s = Server::start();
    install_crd(&s);
    s.kubectl_ok(&["create", "namespace", "team"]);
    let wc = cluster("edge", "").replace("namespace: default", "namespace: team");
    let out = apply(&s, "wc.yaml", &wc);
    assert!(out.status.success(), "{}", stderr(&out));
    s.kubectl_ok(&[
        "create",
        "configmap",
        "cfg",
        "-n",
        "team",
        "--from-literal=k=v",
    ]);
    s.kubectl_ok(&["delete", "namespace", "team"]);
    s.kubectl_ok(&["create", "namespace", "team"]);
    let left = s.kubectl_ok(&["get", "wc,cm", "-n", "team", "-o", "name"]);
    assert!(left.trim().is_empty(), "survived their namespace: {left}");
}

const FLEET_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: fleets.example.org
spec:
  group: example.org
  scope: Cluster
  names: {plural: fleets, kind: Fleet}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"#;

#[test]
fn cluster_scoped_kinds_own_namespaced_objects() {
    let s = Server::start();
    let out = apply(&s, "fleet-crd.yaml", FLEET_CRD);
    assert!(out.status.success(), "{}", stderr(&out));
    let resources = s.kubectl_ok(&[
        "api-resources",
        "--api-group=example.org",
        "--namespaced=false",
    ]);
    assert!(resources.contains("fleets"), "{resources}");
    let out = apply(
        &s,
        "fleet.yaml",
        "apiVersion: example.org/v1\nkind: Fleet\nmetadata:\n  name: prod\nspec:\n  anything: [1, 2]\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let spec = s.kubectl_ok(&["get", "fleet", "prod", "-o", "jsonpath={.spec.anything}"]);
    assert_eq!(spec, "[1,2]", "preserved unknown fields");
    let fleet_uid = uid(&s, &["fleet", "prod"]);
    let out = apply(
        &s,
        "cm.yaml",
        &config_map_owned_by(
            "fleet-config",
            &[("example.org/v1", "Fleet", "prod", &fleet_uid)],
        ),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // Foreground is served as background: the owner goes first, the dependent right after.
    s.kubectl_ok(&["delete", "fleet", "prod", "--cascade=foreground"]);
    wait_until("the ConfigMap of the Fleet to go", || {
        !exists(&s, &["cm", "fleet-config"])
    });
}
