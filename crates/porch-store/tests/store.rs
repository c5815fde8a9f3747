//! The redb store against the `MetadataStore` contract: the shared conformance suite of
//! porch-testkit (preconditions, resourceVersions, the event log, compaction, concurrency,
//! durability across reopen), plus what only a file store has.

use std::sync::Arc;

use porch_core::store::{MetadataStore, Precondition};
use porch_store::{RedbStore, StoreOptions};
use porch_testkit::store_conformance::{StoreFixture, put};

struct Redb(tempfile::TempDir);

impl Redb {
    fn new() -> Self {
        Redb(tempfile::tempdir().expect("tempdir"))
    }
}

impl StoreFixture for Redb {
    fn open(&self, retention: u64) -> Arc<dyn MetadataStore> {
        Arc::new(
            RedbStore::open(
                &self.0.path().join("s.redb"),
                StoreOptions {
                    event_retention: retention,
                    ..Default::default()
                },
            )
            .expect("open"),
        )
    }
}

porch_testkit::store_conformance_tests!(Redb::new());

#[cfg(unix)]
#[test]
fn the_store_file_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let f = Redb::new();
    f.open(10)
        .write(vec![put("k", Precondition::MustNotExist, "x")])
        .expect("write");
    let mode = std::fs::metadata(f.0.path().join("s.redb"))
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0);
}
