//! Where set-labels writes, per kind, and how ("create" or "update only").

use kpt::yaml::Node;

use crate::common::meta;

/// Applies the labels to one resource and counts visits.
pub struct Setter {
    labels: Vec<(String, String)>,
    /// Every (location, label) pair reached, changed or not.
    pub count: usize,
}

fn map_at<'a>(node: &'a mut Node, key: &str) -> Option<&'a mut Node> {
    node.get_mut(key).filter(|n| n.is_mapping())
}

fn seq_at<'a>(node: &'a mut Node, key: &str) -> impl Iterator<Item = &'a mut Node> {
    node.get_mut(key)
        .and_then(Node::items_mut)
        .into_iter()
        .flat_map(|v| v.iter_mut())
}

impl Setter {
    pub fn new(labels: Vec<(String, String)>) -> Setter {
        Setter { labels, count: 0 }
    }

    /// The catalog's `Run` body for one object.
    pub fn apply(&mut self, o: &mut Node) {
        self.update(Some(&mut *o), &["metadata", "labels"], true);
        self.selectors(o);
        let is_np = meta::is_gvk(o, "networking.k8s.io", "", "NetworkPolicy");
        let pod = contains_pod_spec(o);
        let job = meta::is_gvk(o, "batch", "", "CronJob");
        let volumes = meta::is_gvk(o, "apps", "", "StatefulSet");
        let Some(spec) = map_at(o, "spec") else {
            return;
        };
        if pod {
            self.pod(map_at(spec, "template"));
        }
        if job {
            self.job(map_at(spec, "jobTemplate"));
        }
        if volumes {
            for v in seq_at(spec, "volumeClaimTemplates") {
                self.update(Some(&mut *v), &["metadata", "labels"], true);
                self.update(Some(v), &["selector", "matchLabels"], false);
            }
        }
        if is_np {
            for rule in seq_at(spec, "ingress") {
                for peer in seq_at(rule, "from") {
                    self.update(Some(peer), &["podSelector", "matchLabels"], false);
                }
            }
            for rule in seq_at(spec, "egress") {
                for peer in seq_at(rule, "to") {
                    self.update(Some(peer), &["podSelector", "matchLabels"], false);
                }
            }
        }
    }

    fn selectors(&mut self, o: &mut Node) {
        if meta::is_gvk(o, "", "v1", "Service")
            || meta::is_gvk(o, "", "v1", "ReplicationController")
        {
            self.update(Some(&mut *o), &["spec", "selector"], true);
        }
        let create = ["Deployment", "ReplicaSet", "DaemonSet"]
            .iter()
            .any(|k| meta::is_gvk(o, "", "", k))
            || meta::is_gvk(o, "apps", "", "StatefulSet");
        let update_only = meta::is_gvk(o, "batch", "", "Job")
            || meta::is_gvk(o, "policy", "", "PodDisruptionBudget");
        if create || update_only {
            self.update(Some(&mut *o), &["spec", "selector", "matchLabels"], create);
        }
        if meta::is_gvk(o, "networking.k8s.io", "", "NetworkPolicy") {
            self.update(Some(o), &["spec", "podSelector", "matchLabels"], false);
        }
    }

    fn job(&mut self, job: Option<&mut Node>) {
        let Some(job) = job else {
            return;
        };
        self.update(Some(&mut *job), &["metadata", "labels"], true);
        let Some(spec) = map_at(job, "spec") else {
            return;
        };
        self.update(Some(&mut *spec), &["selector", "matchLabels"], false);
        self.pod(map_at(spec, "template"));
    }

    fn pod(&mut self, pod: Option<&mut Node>) {
        let Some(pod) = pod else {
            return;
        };
        self.update(Some(&mut *pod), &["metadata", "labels"], true);
        let Some(spec) = map_at(pod, "spec") else {
            return;
        };
        for c in seq_at(spec, "topologySpreadConstraints") {
            self.update(Some(c), &["labelSelector", "matchLabels"], false);
        }
        // The catalog looks for the term lists on `affinity` itself (not on
        // podAffinity/podAntiAffinity), once per present affinity kind.
        let Some(affinity) = map_at(spec, "affinity") else {
            return;
        };
        for kind in ["podAffinity", "podAntiAffinity"] {
            if affinity.get(kind).is_none_or(|n| !n.is_mapping()) {
                continue;
            }
            for term in seq_at(affinity, "preferredDuringSchedulingIgnoredDuringExecution") {
                self.update(
                    map_at(term, "podAffinityTerm"),
                    &["labelSelector", "matchLabels"],
                    false,
                );
            }
            for term in seq_at(affinity, "requiredDuringSchedulingIgnoredDuringExecution") {
                self.update(Some(term), &["labelSelector", "matchLabels"], false);
            }
        }
    }

    /// The catalog's `updateLabels`: set each label (sorted) at `path`, creating
    /// it when `create`, updating only existing ones otherwise; every label
    /// counts.
    fn update(&mut self, o: Option<&mut Node>, path: &[&str], create: bool) {
        let Some(o) = o else {
            return;
        };
        for (key, value) in &self.labels {
            let existing = {
                let mut full: Vec<&str> = path.to_vec();
                full.push(key);
                o.get_path(&full).map(|n| meta::str_at(n, &[]).to_string())
            };
            let write = match &existing {
                Some(old) => old != value,
                None => create,
            };
            // A non-mapping on the way cannot hold labels; leave it alone.
            let blocked = blocked(o, path);
            if write && !blocked {
                meta::sdk_set_string(o.ensure_mapping(path), key, value);
            }
            self.count += 1;
        }
    }
}

/// True when a scalar or list sits where `path` needs a mapping.
fn blocked(o: &Node, path: &[&str]) -> bool {
    let mut n = o;
    for k in path {
        match n.get(k) {
            None => return false,
            Some(c) if c.is_mapping() => n = c,
            Some(c) => return !c.is_null(),
        }
    }
    false
}

/// Kinds with a pod template at `spec.template`.
fn contains_pod_spec(o: &Node) -> bool {
    meta::is_gvk(o, "", "v1", "ReplicationController")
        || ["Deployment", "ReplicaSet", "DaemonSet"]
            .iter()
            .any(|k| meta::is_gvk(o, "", "", k))
        || meta::is_gvk(o, "apps", "", "StatefulSet")
        || meta::is_gvk(o, "batch", "", "Job")
}
