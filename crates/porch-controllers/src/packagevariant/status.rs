//! The PackageVariant status: `Stalled`/`Ready` conditions with upstream's reasons and
//! messages, and `downstreamTargets` with each target's render status. Built in memory and
//! written only when it differs from what is stored (no churn on a converged variant).

use porch_engine::RenderStatus;
use serde_json::{Map, Value, json};

pub const STALLED: &str = "Stalled";
pub const READY: &str = "Ready";

/// `metav1.Time` now, in RFC 3339 with second precision.
fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    porch_core::revision::Timestamp(secs).to_rfc3339()
}

/// The status being built for one reconcile.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    conditions: Vec<Value>,
    targets: Vec<Value>,
    /// Required config injection points of the targets left without an object (the
    /// Kptfile condition type and message); not stored, they make the variant Stalled.
    missing_injections: Vec<String>,
}

impl Status {
    /// Starts from the stored status of `obj`.
    pub fn of(obj: &Value) -> Self {
        let list = |p: &str| {
            obj.pointer(p)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        Status {
            conditions: list("/status/conditions"),
            targets: list("/status/downstreamTargets"),
            missing_injections: Vec::new(),
        }
    }

    /// The status object to store.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        if !self.conditions.is_empty() {
            m.insert("conditions".into(), Value::Array(self.conditions.clone()));
        }
        if !self.targets.is_empty() {
            m.insert(
                "downstreamTargets".into(),
                Value::Array(self.targets.clone()),
            );
        }
        Value::Object(m)
    }

    /// apimachinery's `meta.SetStatusCondition`: the transition time changes only when the
    /// status does.
    pub fn set_condition(&mut self, kind: &str, status: bool, reason: &str, message: &str) {
        let status = if status { "True" } else { "False" };
        let existing = self
            .conditions
            .iter_mut()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(kind));
        match existing {
            Some(c) => {
                if c.get("status").and_then(Value::as_str) != Some(status) {
                    c["lastTransitionTime"] = now().into();
                }
                c["status"] = status.into();
                c["reason"] = reason.into();
                c["message"] = message.into();
            }
            None => self.conditions.push(json!({
                "type": kind,
                "status": status,
                "reason": reason,
                "message": message,
                "lastTransitionTime": now(),
            })),
        }
    }

    /// The condition `kind` as `(status, reason, message)`.
    #[cfg(test)]
    pub fn condition(&self, kind: &str) -> Option<(String, String, String)> {
        let c = self
            .conditions
            .iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(kind))?;
        let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        Some((s("status"), s("reason"), s("message")))
    }

    /// Upstream `setStalledConditionsToTrue`.
    pub fn stalled(&mut self, message: &str) {
        self.set_condition(STALLED, true, "ValidationError", message);
        self.set_condition(READY, false, "Error", "invalid packagevariant object");
    }

    /// The variant's creator may not do what the variant asks: Stalled until its rights or
    /// the spec change.
    pub fn forbidden(&mut self, message: &str) {
        self.set_condition(STALLED, true, "Forbidden", message);
        self.set_condition(READY, false, "Forbidden", message);
    }

    pub fn valid(&mut self) {
        self.set_condition(STALLED, false, "Valid", "all validation checks passed");
    }

    pub fn failed(&mut self, message: &str) {
        self.set_condition(READY, false, "Error", message);
    }

    /// Upstream `setTargetStatusConditions`: the targets in order, keeping what is known of
    /// each, and Ready.
    pub fn ready(&mut self, targets: &[String]) {
        self.retain_targets(targets);
        self.set_condition(
            READY,
            true,
            "NoErrors",
            "successfully ensured downstream package variant",
        );
    }

    /// Notes the required injection points of a target's Kptfile whose condition is not
    /// True (`kpt.dev/config-injection: required` with no object to inject).
    pub fn note_injections(&mut self, kptfile: Option<&[u8]>) {
        let Some(kf) = kptfile
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|t| kpt::kptfile::Kptfile::parse(t).ok())
        else {
            return;
        };
        let gates = kf.info.map(|i| i.readiness_gates).unwrap_or_default();
        for c in kf.status.map(|s| s.conditions).unwrap_or_default() {
            if c.condition_type.starts_with("config.injection.")
                && c.status != "True"
                && gates.iter().any(|g| g.condition_type == c.condition_type)
            {
                let m = format!("{}: {}", c.condition_type, c.message);
                if !self.missing_injections.contains(&m) {
                    self.missing_injections.push(m);
                }
            }
        }
    }

    pub fn has_missing_injections(&self) -> bool {
        !self.missing_injections.is_empty()
    }

    /// A required injection point without its object: Stalled (and not Ready) with the
    /// message of its Kptfile condition, until the object appears.
    pub fn stall_on_missing_injections(&mut self) {
        if self.missing_injections.is_empty() {
            return;
        }
        let message = self.missing_injections.join("; ");
        self.set_condition(STALLED, true, "NoResourceSelected", &message);
        self.set_condition(READY, false, "NoResourceSelected", &message);
    }

    /// Keeps (in `targets` order) the entries of `targets`, adding missing ones.
    pub fn retain_targets(&mut self, targets: &[String]) {
        let mut next = Vec::with_capacity(targets.len());
        for t in targets {
            let kept = self
                .targets
                .iter()
                .find(|d| d.get("name").and_then(Value::as_str) == Some(t))
                .cloned()
                .unwrap_or_else(|| json!({"name": t}));
            next.push(kept);
        }
        self.targets = next;
    }

    /// Records the render outcome of a resources write of `target`.
    pub fn set_render(&mut self, target: &str, render: &RenderStatus) {
        let value = render_status_json(render);
        match self
            .targets
            .iter_mut()
            .find(|d| d.get("name").and_then(Value::as_str) == Some(target))
        {
            Some(d) => d["renderStatus"] = value,
            None => self
                .targets
                .push(json!({"name": target, "renderStatus": value})),
        }
    }

    /// The names of the targets recorded so far.
    pub fn target_names(&self) -> Vec<String> {
        self.targets
            .iter()
            .filter_map(|d| d.get("name").and_then(Value::as_str))
            .map(str::to_owned)
            .collect()
    }
}

/// `status.renderStatus` as PackageRevisionResources serves it.
pub fn render_status_json(r: &RenderStatus) -> Value {
    let items: Vec<Value> = r
        .results
        .iter()
        .map(|s| serde_json::to_value(s).unwrap_or(Value::Null))
        .collect();
    let exit_code = r
        .results
        .iter()
        .find_map(|s| (s.exit_code != 0).then_some(s.exit_code))
        .unwrap_or(i32::from(!r.error.is_empty()));
    json!({
        "result": {
            "apiVersion": "kpt.dev/v1",
            "kind": "FunctionResultList",
            "metadata": {"name": "fnresults"},
            "exitCode": exit_code,
            "items": items,
        },
        "error": r.error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_condition_keeps_its_transition_time_while_its_status_holds() {
        let mut s = Status::of(&json!({"status": {"conditions": [{
            "type": "Ready", "status": "True", "reason": "NoErrors", "message": "m",
            "lastTransitionTime": "2020-01-01T00:00:00Z"}]}}));
        s.ready(&[]);
        assert_eq!(
            s.to_value()["conditions"][0]["lastTransitionTime"],
            "2020-01-01T00:00:00Z"
        );
        s.failed("boom");
        assert_ne!(
            s.to_value()["conditions"][0]["lastTransitionTime"],
            "2020-01-01T00:00:00Z"
        );
        assert_eq!(
            s.condition(READY),
            Some(("False".into(), "Error".into(), "boom".into()))
        );
    }

    #[test]
    fn stalled_sets_both_conditions_with_upstreams_words() {
        let mut s = Status::of(&json!({}));
        s.stalled("missing required field spec.upstream");
        assert_eq!(
            s.condition(STALLED),
            Some((
                "True".into(),
                "ValidationError".into(),
                "missing required field spec.upstream".into()
            ))
        );
        assert_eq!(
            s.condition(READY),
            Some((
                "False".into(),
                "Error".into(),
                "invalid packagevariant object".into()
            ))
        );
    }

    #[test]
    fn targets_keep_their_render_status() {
        let mut s = Status::of(&json!({}));
        s.set_render("a", &RenderStatus::default());
        s.ready(&["b".into(), "a".into()]);
        let v = s.to_value();
        assert_eq!(v["downstreamTargets"][0], json!({"name": "b"}));
        assert_eq!(v["downstreamTargets"][1]["name"], "a");
        assert_eq!(v["downstreamTargets"][1]["renderStatus"]["error"], "");
    }

    #[test]
    fn a_required_injection_without_its_object_stalls_the_variant() {
        let kptfile = b"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\ninfo:\n  readinessGates:\n  - conditionType: config.injection.ConfigMap.settings\nstatus:\n  conditions:\n  - type: config.injection.ConfigMap.settings\n    status: \"False\"\n    reason: NoResourceSelected\n    message: no in-cluster resources of type v1.ConfigMap\n  - type: config.injection.NetworkConfig.net\n    status: \"False\"\n    reason: NoResourceSelected\n    message: optional, no gate\n";
        let mut s = Status::of(&json!({}));
        s.note_injections(Some(kptfile));
        s.note_injections(Some(kptfile));
        assert!(s.has_missing_injections());
        s.stall_on_missing_injections();
        let message =
            "config.injection.ConfigMap.settings: no in-cluster resources of type v1.ConfigMap";
        assert_eq!(
            s.condition(STALLED),
            Some(("True".into(), "NoResourceSelected".into(), message.into()))
        );
        assert_eq!(s.condition(READY).map(|c| c.0), Some("False".into()));

        // Injected (condition True): nothing noted.
        let done =
            String::from_utf8_lossy(kptfile).replacen("status: \"False\"", "status: \"True\"", 1);
        let mut s = Status::of(&json!({}));
        s.note_injections(Some(done.as_bytes()));
        assert!(!s.has_missing_injections());
    }
}
