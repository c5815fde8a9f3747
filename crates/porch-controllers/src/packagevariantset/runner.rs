//! The loop porch-server spawns to keep every PackageVariantSet reconciled; its contract is
//! in the [module doc](super).

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use super::{
    Outcome, PvsError, collect_orphans, packagevariants_gvr, packagevariantsets_gvr, reconcile,
};
use crate::objects::Objects;

/// Why the runner should look again.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Wake {
    /// This set changed or was deleted.
    Set { namespace: String, name: String },
    /// Something a set depends on changed in this namespace: reconcile all its sets.
    Namespace(String),
    /// Reconcile every set of every namespace.
    All,
}

/// Waits until this replica has applied every write committed in the cluster so far (a
/// no-op on one server).
pub type CaughtUp = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// Reconciles on every wake and every `resync`, until all senders are dropped. Each sweep
/// first waits at `caught_up`, so a replica decides from every write made before the wake.
pub async fn run(
    objects: Arc<dyn Objects>,
    mut wake: mpsc::UnboundedReceiver<Wake>,
    resync: Duration,
    caught_up: CaughtUp,
) {
    let mut tick = tokio::time::interval(resync);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let mut pending = BTreeSet::new();
        tokio::select! {
            w = wake.recv() => match w {
                Some(w) => { pending.insert(w); }
                None => return,
            },
            _ = tick.tick() => { pending.insert(Wake::All); }
        }
        // Merge whatever else queued up meanwhile.
        while let Ok(w) = wake.try_recv() {
            pending.insert(w);
        }
        caught_up().await;
        if let Err(e) = process(objects.as_ref(), pending).await {
            tracing::warn!(error = %e, "packagevariantset sweep failed");
        }
    }
}

/// Handles one batch of wakes: `All` covers everything, a namespace covers its sets.
pub async fn process(objects: &dyn Objects, pending: BTreeSet<Wake>) -> Result<(), PvsError> {
    let mut namespaces = BTreeSet::new();
    let mut sets = BTreeSet::new();
    for w in pending {
        match w {
            Wake::All => {
                for obj in objects.list(&packagevariantsets_gvr(), None, "").await? {
                    namespaces.insert(namespace_of(&obj));
                }
                // Namespaces left with generated PackageVariants but no set any more.
                for obj in objects
                    .list(&packagevariants_gvr(), None, super::OWNER_LABEL)
                    .await?
                {
                    namespaces.insert(namespace_of(&obj));
                }
            }
            Wake::Namespace(ns) => {
                namespaces.insert(ns);
            }
            Wake::Set { namespace, name } => {
                sets.insert((namespace, name));
            }
        }
    }
    for ns in &namespaces {
        for obj in objects
            .list(&packagevariantsets_gvr(), Some(ns), "")
            .await?
        {
            let name = obj
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            sets.insert((ns.clone(), name));
        }
    }
    for (ns, name) in &sets {
        // Tests count these lines to prove what does (not) wake a set.
        tracing::debug!(namespace = %ns, name = %name, "packagevariantset reconcile");
        match reconcile(objects, ns, name).await {
            Ok(Outcome::Stalled { reason, message }) => {
                tracing::info!(namespace = %ns, name = %name, %reason, %message, "packagevariantset stalled");
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(namespace = %ns, name = %name, error = %e, "packagevariantset reconcile failed");
            }
        }
    }
    for ns in &namespaces {
        let deleted = collect_orphans(objects, ns).await?;
        if !deleted.is_empty() {
            tracing::info!(namespace = %ns, ?deleted, "deleted package variants of deleted sets");
        }
    }
    Ok(())
}

fn namespace_of(obj: &Value) -> String {
    obj.pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;
    use tokio::sync::mpsc;

    use super::{CaughtUp, Wake, process, run};
    use crate::objects::Objects;
    use crate::packagevariantset::testobjects::MemObjects;
    use crate::packagevariantset::{
        packagerevisions_gvr, packagevariants_gvr, packagevariantsets_gvr, repositories_gvr,
    };

    fn seed_namespace(m: &MemObjects, ns: &str) {
        m.seed(
            &repositories_gvr(),
            json!({"metadata": {"name": "r", "namespace": ns}}),
        );
        m.seed(
            &packagerevisions_gvr(),
            json!({"metadata": {"name": "up-v1", "namespace": ns},
            "spec": {"repository": "up", "packageName": "pkg", "revision": 1}}),
        );
        m.seed(
            &packagevariantsets_gvr(),
            json!({"metadata": {"name": "set", "namespace": ns},
            "spec": {"upstream": {"repo": "up", "package": "pkg", "revision": 1},
                     "targets": [{"repositories": [{"name": "r"}]}]}}),
        );
    }

    #[tokio::test]
    async fn a_full_sweep_reconciles_every_namespace_and_collects_orphans() {
        let m = MemObjects::new();
        seed_namespace(&m, "a");
        seed_namespace(&m, "b");
        // A variant whose set is gone, in a namespace with no set left.
        m.seed(&packagevariants_gvr(), json!({"metadata": {"name": "stale", "namespace": "c",
            "labels": {"config.porch.kpt.dev/packagevariantset": "gone"},
            "ownerReferences": [{"kind": "PackageVariantSet", "name": "x", "uid": "gone", "controller": true}]}}));
        process(&m, BTreeSet::from([Wake::All]))
            .await
            .expect("test value");
        assert_eq!(m.all(&packagevariants_gvr(), "a").len(), 1);
        assert_eq!(m.all(&packagevariants_gvr(), "b").len(), 1);
        assert_eq!(m.all(&packagevariants_gvr(), "c").len(), 0);
    }

    #[tokio::test]
    async fn run_follows_wakes_and_stops_when_senders_are_gone() {
        let m = Arc::new(MemObjects::new());
        seed_namespace(&m, "a");
        let (tx, rx) = mpsc::unbounded_channel();
        // A long resync: only the first (immediate) tick and the wakes do work.
        let barriers = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = barriers.clone();
        let caught_up: CaughtUp = Arc::new(move || {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async {})
        });
        let task = tokio::spawn(run(m.clone(), rx, Duration::from_secs(3600), caught_up));
        seed_namespace(&m, "b");
        tx.send(Wake::Set {
            namespace: "b".into(),
            name: "set".into(),
        })
        .expect("test value");
        m.delete(&packagevariantsets_gvr(), "a", "set")
            .await
            .expect("test value");
        tx.send(Wake::Namespace("a".into())).expect("test value");
        drop(tx);
        tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .expect("runner stops")
            .expect("test value");
        assert_eq!(m.all(&packagevariants_gvr(), "b").len(), 1);
        assert_eq!(m.all(&packagevariants_gvr(), "a").len(), 0);
        assert!(
            barriers.load(std::sync::atomic::Ordering::SeqCst) >= 1,
            "every sweep waits at the barrier first"
        );
    }
}
