//! The PostgreSQL store against the `MetadataStore` contract: the shared conformance suite of
//! porch-testkit, run on a real PostgreSQL started for each test.

use std::sync::Arc;

use porch_core::store::MetadataStore;
use porch_store_postgres::{PgStore, PgStoreOptions};
use porch_testkit::PostgresServer;
use porch_testkit::store_conformance::StoreFixture;

struct Pg(PostgresServer);

impl Pg {
    fn new() -> Self {
        Pg(PostgresServer::start().expect("postgres"))
    }
}

impl StoreFixture for Pg {
    fn open(&self, retention: u64) -> Arc<dyn MetadataStore> {
        Arc::new(
            PgStore::connect(
                &self.0.url(),
                PgStoreOptions {
                    event_retention: retention,
                    ..Default::default()
                },
            )
            .expect("connect"),
        )
    }
}

porch_testkit::store_conformance_tests!(Pg::new());
