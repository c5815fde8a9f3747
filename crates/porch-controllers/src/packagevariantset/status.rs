//! The set's `status.conditions`, kept as `meta.SetStatusCondition` keeps them: one entry per
//! type, `lastTransitionTime` moved only when the status flips.

use serde_json::{Value, json};

/// Whether reconciliation is making progress.
pub const STALLED: &str = "Stalled";
/// Whether the last reconciliation succeeded.
pub const READY: &str = "Ready";

/// A condition to set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    pub type_: &'static str,
    pub status: &'static str,
    pub reason: String,
    pub message: String,
}

/// Sets `c` in `conditions` (appending a new type); `true` when anything changed.
pub fn set_condition(conditions: &mut Vec<Value>, c: &Condition, now: &str) -> bool {
    let existing = conditions
        .iter_mut()
        .find(|x| x.get("type").and_then(Value::as_str) == Some(c.type_));
    let Some(x) = existing else {
        conditions.push(json!({
            "type": c.type_,
            "status": c.status,
            "reason": c.reason,
            "message": c.message,
            "lastTransitionTime": now,
        }));
        return true;
    };
    let mut changed = false;
    let mut put = |x: &mut Value, k: &str, v: &str| {
        if x.get(k).and_then(Value::as_str) != Some(v) {
            x[k] = json!(v);
            changed = true;
        }
    };
    if x.get("status").and_then(Value::as_str) != Some(c.status) {
        put(x, "lastTransitionTime", now);
    }
    put(x, "status", c.status);
    put(x, "reason", &c.reason);
    put(x, "message", &c.message);
    changed
}

/// Stalled=True and Ready=False, both with `reason` and `message` (upstream
/// `setStalledConditionsToTrue`).
pub fn stalled(conditions: &mut Vec<Value>, reason: &str, message: &str, now: &str) -> bool {
    let a = set_condition(
        conditions,
        &Condition {
            type_: STALLED,
            status: "True",
            reason: reason.into(),
            message: message.into(),
        },
        now,
    );
    let b = set_condition(
        conditions,
        &Condition {
            type_: READY,
            status: "False",
            reason: reason.into(),
            message: message.into(),
        },
        now,
    );
    a || b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_time_moves_only_when_the_status_flips() {
        let mut cs = Vec::new();
        assert!(stalled(&mut cs, "ValidationError", "bad", "t1"));
        assert_eq!(cs.len(), 2);
        assert_eq!(cs[0]["type"], "Stalled");
        assert_eq!(cs[1]["type"], "Ready");
        // Same content: no change.
        assert!(!stalled(&mut cs, "ValidationError", "bad", "t2"));
        assert_eq!(cs[0]["lastTransitionTime"], "t1");
        // New message, same status: changed, time kept.
        assert!(stalled(&mut cs, "ValidationError", "worse", "t3"));
        assert_eq!(cs[0]["message"], "worse");
        assert_eq!(cs[0]["lastTransitionTime"], "t1");
        // Flip.
        let ready = Condition {
            type_: READY,
            status: "True",
            reason: "Reconciled".into(),
            message: "ok".into(),
        };
        assert!(set_condition(&mut cs, &ready, "t4"));
        assert_eq!(cs[1]["status"], "True");
        assert_eq!(cs[1]["lastTransitionTime"], "t4");
        assert_eq!(cs.len(), 2);
    }
}
