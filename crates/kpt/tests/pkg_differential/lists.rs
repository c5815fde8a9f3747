//! Scenario parts over lists whose merge kpt takes from its built-in Kubernetes
//! 1.21 schema: container ports keyed by `containerPort` + `protocol`, Service ports
//! by `port` + `protocol`, env, volumes, volume mounts, init containers, image pull
//! secrets and finalizers by key; tolerations, args and `resizePolicy` (newer than
//! the schema) replaced wholesale; `apps/v1beta1` (gone from 1.21) with no schema at
//! all; a Deployment embedded in an unknown custom resource (kyaml finds its type
//! from its own apiVersion and kind); a CRD whose custom resource kpt 1.0.0-beta.56
//! merges without the CRD's keys.

use kpt::package::PackageFiles;

use super::Rng;

/// The file these resources live in.
pub const FILE: &str = "lists.yaml";

struct Multi {
    init_image: &'static str,
    main_image: &'static str,
    ports: Vec<(u32, &'static str)>,
    env: Vec<(&'static str, &'static str)>,
    side: Option<&'static str>,
    side2: bool,
    tolerations: Vec<&'static str>,
    cfg: &'static str,
    extra_volume: bool,
    resize: &'static str,
    finalizers: Vec<&'static str>,
    args: Vec<&'static str>,
}

impl Multi {
    fn v1() -> Self {
        Multi {
            init_image: "busybox:1",
            main_image: "app:1",
            ports: vec![(8080, "TCP"), (8080, "UDP")],
            env: vec![("A", "1"), ("B", "2")],
            side: Some("side:1"),
            side2: false,
            tolerations: vec!["a"],
            cfg: "c1",
            extra_volume: false,
            resize: "NotRequired",
            finalizers: vec!["example.com/f1"],
            args: vec!["--x"],
        }
    }

    fn yaml(&self) -> String {
        let mut s =
            String::from("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: multi\n");
        if !self.finalizers.is_empty() {
            s.push_str("  finalizers:\n");
            for f in &self.finalizers {
                s.push_str(&format!("  - {f}\n"));
            }
        }
        s.push_str("spec:\n  template:\n    spec:\n      initContainers:\n      - name: init\n");
        s.push_str(&format!("        image: {}\n", self.init_image));
        s.push_str("        volumeMounts:\n        - name: data\n          mountPath: /init\n");
        s.push_str(&format!(
            "      containers:\n      - name: main\n        image: {}\n",
            self.main_image
        ));
        s.push_str("        args:\n");
        for a in &self.args {
            s.push_str(&format!("        - {a}\n"));
        }
        s.push_str("        ports:\n");
        for (p, proto) in &self.ports {
            s.push_str(&format!(
                "        - containerPort: {p}\n          protocol: {proto}\n"
            ));
        }
        s.push_str("        env:\n");
        for (k, v) in &self.env {
            s.push_str(&format!("        - name: {k}\n          value: \"{v}\"\n"));
        }
        s.push_str("        volumeMounts:\n        - name: data\n          mountPath: /data\n");
        s.push_str(&format!(
            "        resizePolicy:\n        - resourceName: cpu\n          restartPolicy: {}\n",
            self.resize
        ));
        if let Some(img) = self.side {
            s.push_str(&format!("      - name: side\n        image: {img}\n"));
        }
        if self.side2 {
            s.push_str("      - name: side2\n        image: side2:1\n");
        }
        s.push_str("      tolerations:\n");
        for t in &self.tolerations {
            s.push_str(&format!("      - key: {t}\n        operator: Exists\n"));
        }
        s.push_str(&format!(
            "      volumes:\n      - name: data\n        emptyDir: {{}}\n      - name: cfg\n        configMap:\n          name: {}\n",
            self.cfg
        ));
        if self.extra_volume {
            s.push_str("      - name: extra\n        emptyDir: {}\n");
        }
        s.push_str("      imagePullSecrets:\n      - name: s1\n");
        s
    }
}

fn service(udp_target: u32, metrics: bool) -> String {
    let mut s = String::from(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: dns\nspec:\n  ports:\n  - name: dns-tcp\n    port: 53\n    protocol: TCP\n    targetPort: 5353\n",
    );
    s.push_str(&format!(
        "  - name: dns-udp\n    port: 53\n    protocol: UDP\n    targetPort: {udp_target}\n"
    ));
    if metrics {
        s.push_str("  - name: metrics\n    port: 9153\n    protocol: TCP\n");
    }
    s
}

fn legacy(image: &str) -> String {
    format!(
        "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata:\n  name: legacy\nspec:\n  template:\n    spec:\n      containers:\n      - name: main\n        image: {image}\n        env:\n        - name: A\n          value: \"1\"\n"
    )
}

fn cronjob(env: &[(&str, &str)]) -> String {
    let mut s = String::from(
        "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: nightly\nspec:\n  schedule: \"0 1 * * *\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n          - name: job\n            image: job:1\n            env:\n",
    );
    for (k, v) in env {
        s.push_str(&format!(
            "            - name: {k}\n              value: \"{v}\"\n"
        ));
    }
    s
}

fn wrapper(a_image: &str) -> String {
    format!(
        "apiVersion: example.com/v1\nkind: Wrapper\nmetadata:\n  name: wrap\nspec:\n  manifest:\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: inner\n    spec:\n      template:\n        spec:\n          containers:\n          - name: a\n            image: {a_image}\n          - name: b\n            image: b:1\n"
    )
}

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  names:\n    kind: Widget\n    plural: widgets\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              items:\n                type: array\n                x-kubernetes-patch-strategy: merge\n                x-kubernetes-patch-merge-key: id\n                items:\n                  type: object\n";

fn widget(a: &str, c: bool) -> String {
    let mut s = format!(
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  items:\n  - id: a\n    v: \"{a}\"\n  - id: b\n    v: \"1\"\n"
    );
    if c {
        s.push_str("  - id: c\n    v: \"1\"\n");
    }
    s
}

fn stream(docs: &[String]) -> String {
    docs.join("---\n")
}

/// Add the v1 resources.
pub fn add(v1: &mut PackageFiles) {
    v1.insert(
        FILE,
        stream(&[
            Multi::v1().yaml(),
            service(5353, false),
            legacy("legacy:1"),
            cronjob(&[("A", "1")]),
            wrapper("a:1"),
        ]),
    );
    v1.insert("crd.yaml", CRD);
    v1.insert("widget.yaml", widget("1", false));
}

/// Upstream changes for v2.
pub fn change(rng: &mut Rng, v2: &mut PackageFiles) {
    let mut m = Multi::v1();
    if rng.chance(40) {
        m.init_image = "busybox:2";
    }
    if rng.chance(40) {
        m.main_image = "app:2";
    }
    match rng.pick(4) {
        0 => m.ports = vec![(8080, "TCP")],
        1 => m.ports.push((9090, "TCP")),
        2 => m.ports = vec![(8080, "UDP"), (8080, "TCP")],
        _ => {}
    }
    match rng.pick(4) {
        0 => m.env = vec![("A", "1"), ("B", "3")],
        1 => m.env.push(("C", "new")),
        2 => m.env = vec![("B", "2")],
        _ => {}
    }
    if rng.chance(30) {
        m.side = None;
    } else if rng.chance(30) {
        m.side = Some("side:2");
    }
    m.side2 = rng.chance(30);
    if rng.chance(40) {
        m.tolerations.push("b");
    }
    if rng.chance(30) {
        m.cfg = "c2";
    }
    m.extra_volume = rng.chance(30);
    if rng.chance(30) {
        m.resize = "RestartContainer";
    }
    if rng.chance(30) {
        m.finalizers.push("example.com/f2");
    }
    if rng.chance(30) {
        m.args = vec!["--x", "--y"];
    }
    let svc = service(if rng.chance(50) { 5354 } else { 5353 }, rng.chance(40));
    let old = legacy(if rng.chance(50) {
        "legacy:2"
    } else {
        "legacy:1"
    });
    let cron = if rng.chance(50) {
        cronjob(&[("A", "1"), ("B", "up")])
    } else {
        cronjob(&[("A", "2")])
    };
    let wrap = wrapper(if rng.chance(60) { "a:2" } else { "a:1" });
    v2.insert(FILE, stream(&[m.yaml(), svc, old, cron, wrap]));
    if rng.chance(60) {
        v2.insert("widget.yaml", widget("2", rng.chance(50)));
    }
}

/// Insert `add` after the first line equal to `anchor` (no-op when absent).
fn insert_after(text: &str, anchor: &str, add: &str) -> String {
    match text.find(anchor) {
        Some(i) => {
            let at = i + anchor.len();
            format!("{}{add}{}", &text[..at], &text[at..])
        }
        None => text.to_string(),
    }
}

/// Local edits of the list resources, as text edits of the fetched files.
pub fn edit(files: &mut PackageFiles, rng: &mut Rng) {
    if let Some(t) = files.get_text(FILE) {
        let mut t = t.to_string();
        let edits: [(&str, &str); 9] = [
            (
                "        env:\n",
                "        - name: LOCAL\n          value: x\n",
            ),
            (
                "        ports:\n",
                "        - containerPort: 7070\n          protocol: TCP\n",
            ),
            (
                "      tolerations:\n",
                "      - key: local\n        operator: Exists\n",
            ),
            (
                "      volumes:\n",
                "      - name: localvol\n        emptyDir: {}\n",
            ),
            (
                "        resizePolicy:\n",
                "        - resourceName: memory\n          restartPolicy: NotRequired\n",
            ),
            ("  finalizers:\n", "  - example.com/local\n"),
            ("      imagePullSecrets:\n", "      - name: local\n"),
            (
                "    targetPort: 5353\n",
                "  - name: local\n    port: 8053\n    protocol: TCP\n",
            ),
            (
                "            env:\n",
                "            - name: LOCAL\n              value: x\n",
            ),
        ];
        for (anchor, add) in edits {
            if rng.chance(35) {
                t = insert_after(&t, anchor, add);
            }
        }
        if rng.chance(30) {
            t = t.replace("image: side:1", "image: side:local");
        }
        if rng.chance(25) {
            t = t.replace("      - name: side\n        image: side:1\n", "");
        }
        if rng.chance(35) {
            t = t.replace("image: b:1", "image: b:local");
        }
        if rng.chance(30) {
            t = t.replace(
                "image: legacy:1\n",
                "image: legacy:1\n        args:\n        - --local\n",
            );
        }
        if rng.chance(30) {
            t = t.replace("        - --x\n", "        - --x\n        - --local\n");
        }
        files.insert(FILE, t.into_bytes());
    }
    if rng.chance(50)
        && let Some(t) = files.get_text("widget.yaml")
    {
        let t = format!("{t}  - id: d\n    v: local\n");
        files.insert("widget.yaml", t.into_bytes());
    }
}
