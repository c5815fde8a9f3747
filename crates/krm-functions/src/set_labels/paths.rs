//! Where set-labels writes, per kind, and how ("create" or "update only").

use kpt::yaml::Node;

use crate::common::meta;

/// Applies the labels to one resource and counts visits.
pub struct Setter {
    labels: Vec<(String, String)>,
    /// Every (location, label) pair reached, changed or not.
    pub count: usize,
}

/// A label location failed: the SDK's `ErrUnmatchedField` text.
pub type Step = Result<(), String>;

/// Where an SDK `SubObject` sits, for its error texts: the object's
/// group/version and kind as the SDK records them (from top-level `group`,
/// `version` and `kind` keys) and the field path from the object root.
/// Elements of lists start afresh with neither.
#[derive(Debug, Clone, Default)]
struct At {
    group_version: String,
    kind: String,
    path: String,
}

impl At {
    fn root(o: &Node) -> At {
        let (group, version) = (meta::str_at(o, &["group"]), meta::str_at(o, &["version"]));
        At {
            group_version: if group.is_empty() {
                version.to_string()
            } else {
                format!("{group}/{version}")
            },
            kind: meta::kind(o).to_string(),
            path: String::new(),
        }
    }

    fn child(&self, key: &str) -> At {
        At {
            path: format!("{}.{key}", self.path),
            ..self.clone()
        }
    }

    /// SDK `NewErrUnmatchedField(obj, fields, <value of type ty>)`.
    fn unmatched(&self, fields: &[&str], ty: &str) -> String {
        format!(
            "Resource(apiVersion={}, kind={}) has unmatched field type {:?} in fieldpath {}.{}",
            self.group_version,
            self.kind,
            ty,
            self.path,
            fields.join(".")
        )
    }
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

const META_LABELS: &[&str] = &["metadata", "labels"];
const SELECTOR: &[&str] = &["selector", "matchLabels"];
const LABEL_SELECTOR: &[&str] = &["labelSelector", "matchLabels"];
const POD_SELECTOR: &[&str] = &["podSelector", "matchLabels"];

impl Setter {
    pub fn new(labels: Vec<(String, String)>) -> Setter {
        Setter { labels, count: 0 }
    }

    /// The catalog's `Run` body for one object: the first failing location
    /// ends the object's processing (a failure inside the pod template ends
    /// it silently, as the catalog discards that error).
    pub fn apply(&mut self, o: &mut Node) -> Step {
        let root = At::root(o);
        self.update(Some(&mut *o), &root, META_LABELS, true)?;
        self.selectors(o, &root)?;
        let is_np = meta::is_gvk(o, "networking.k8s.io", "", "NetworkPolicy");
        let pod = contains_pod_spec(o);
        let job = meta::is_gvk(o, "batch", "", "CronJob");
        let volumes = meta::is_gvk(o, "apps", "", "StatefulSet");
        let Some(spec) = map_at(o, "spec") else {
            return Ok(());
        };
        let spec_at = root.child("spec");
        if pod
            && self
                .pod(map_at(spec, "template"), &spec_at.child("template"))
                .is_err()
        {
            return Ok(());
        }
        if job {
            self.job(map_at(spec, "jobTemplate"), &spec_at.child("jobTemplate"))?;
        }
        if volumes {
            match spec.get_mut("volumeClaimTemplates") {
                Some(v) if v.is_sequence() => {
                    for v in v.items_mut().into_iter().flat_map(|v| v.iter_mut()) {
                        let at = At::default();
                        self.update(Some(&mut *v), &at, META_LABELS, true)?;
                        self.update(Some(v), &at, SELECTOR, false)?;
                    }
                }
                Some(_) => return Err(spec_at.unmatched(&["volumeClaimTemplates"], "struct {}")),
                None => {}
            }
        }
        if is_np {
            for rules in ["ingress", "egress"] {
                let peers = if rules == "ingress" { "from" } else { "to" };
                for rule in seq_at(spec, rules) {
                    for peer in seq_at(rule, peers) {
                        self.update(Some(peer), &At::default(), POD_SELECTOR, false)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn selectors(&mut self, o: &mut Node, root: &At) -> Step {
        if meta::is_gvk(o, "", "v1", "Service")
            || meta::is_gvk(o, "", "v1", "ReplicationController")
        {
            self.update(Some(&mut *o), root, &["spec", "selector"], true)?;
        }
        let create = ["Deployment", "ReplicaSet", "DaemonSet"]
            .iter()
            .any(|k| meta::is_gvk(o, "", "", k))
            || meta::is_gvk(o, "apps", "", "StatefulSet");
        let update_only = meta::is_gvk(o, "batch", "", "Job")
            || meta::is_gvk(o, "policy", "", "PodDisruptionBudget");
        if create || update_only {
            self.update(
                Some(&mut *o),
                root,
                &["spec", "selector", "matchLabels"],
                create,
            )?;
        }
        if meta::is_gvk(o, "networking.k8s.io", "", "NetworkPolicy") {
            self.update(
                Some(o),
                root,
                &["spec", "podSelector", "matchLabels"],
                false,
            )?;
        }
        Ok(())
    }

    fn job(&mut self, job: Option<&mut Node>, at: &At) -> Step {
        let Some(job) = job else {
            return Ok(());
        };
        self.update(Some(&mut *job), at, META_LABELS, true)?;
        let Some(spec) = map_at(job, "spec") else {
            return Ok(());
        };
        let spec_at = at.child("spec");
        self.update(Some(&mut *spec), &spec_at, SELECTOR, false)?;
        self.pod(map_at(spec, "template"), &spec_at.child("template"))
    }

    fn pod(&mut self, pod: Option<&mut Node>, at: &At) -> Step {
        let Some(pod) = pod else {
            return Ok(());
        };
        self.update(Some(&mut *pod), at, META_LABELS, true)?;
        let Some(spec) = map_at(pod, "spec") else {
            return Ok(());
        };
        for c in seq_at(spec, "topologySpreadConstraints") {
            self.update(Some(c), &At::default(), LABEL_SELECTOR, false)?;
        }
        // The catalog looks for the term lists on `affinity` itself (not on
        // podAffinity/podAntiAffinity), once per present affinity kind.
        let Some(affinity) = map_at(spec, "affinity") else {
            return Ok(());
        };
        for kind in ["podAffinity", "podAntiAffinity"] {
            if affinity.get(kind).is_none_or(|n| !n.is_mapping()) {
                continue;
            }
            for term in seq_at(affinity, "preferredDuringSchedulingIgnoredDuringExecution") {
                let at = At::default().child("podAffinityTerm");
                self.update(map_at(term, "podAffinityTerm"), &at, LABEL_SELECTOR, false)?;
            }
            for term in seq_at(affinity, "requiredDuringSchedulingIgnoredDuringExecution") {
                self.update(Some(term), &At::default(), LABEL_SELECTOR, false)?;
            }
        }
        Ok(())
    }

    /// The catalog's `updateLabels`: set each label (sorted) at `path`, creating
    /// it when `create`, updating only existing ones otherwise; every label
    /// counts. Reading a label fails, ending the location, when something
    /// other than a mapping (`null` included) sits on the way or the label
    /// holds anything but a string.
    fn update(&mut self, o: Option<&mut Node>, at: &At, path: &[&str], create: bool) -> Step {
        let Some(o) = o else {
            return Ok(());
        };
        for (key, value) in &self.labels {
            let mut fields: Vec<&str> = path.to_vec();
            fields.push(key);
            let existing =
                read_string(o, path, key).map_err(|()| at.unmatched(&fields, "string"))?;
            let write = match &existing {
                Some(old) => old != value,
                None => create,
            };
            if write {
                meta::sdk_set_string(o.ensure_mapping(path), key, value);
            }
            self.count += 1;
        }
        Ok(())
    }
}

/// SDK `NestedString(path..., key)`: `Ok(None)` when a field on the way or
/// the label is missing, `Err` when a non-mapping is on the way or the label
/// is not a `!!str` scalar.
fn read_string(o: &Node, path: &[&str], key: &str) -> Result<Option<String>, ()> {
    let mut n = o;
    for k in path {
        match n.get(k) {
            None => return Ok(None),
            Some(c) if c.is_mapping() => n = c,
            Some(_) => return Err(()),
        }
    }
    match n.get(key) {
        None => Ok(None),
        Some(v) if v.is_scalar() && v.resolved_tag() == "!!str" => {
            Ok(Some(v.as_str().unwrap_or_default().to_string()))
        }
        Some(_) => Err(()),
    }
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
