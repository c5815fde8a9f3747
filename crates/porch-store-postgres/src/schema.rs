//! Versioned schema migrations, applied at start-up.
//!
//! Every replica runs `migrate` when it opens the store. The migrations run under a session
//! advisory lock, so replicas starting at once apply each one once: the first takes the lock
//! and migrates, the others wait and then find nothing left to do. Each migration commits in
//! one transaction with its row in `porch_schema_migrations`. A database migrated by a newer
//! binary (a version this one does not know) is refused rather than half understood.
//!
//! Text key columns use the "C" collation so that lists come back in byte order, as the
//! embedded store returns them.

use porch_core::store::StoreError;
use tokio_postgres::Client;

use crate::error::pg;

/// The advisory lock key of the migration step ("porch" + 1).
const MIGRATION_LOCK: i64 = 0x706f_7263_6800_0001;

/// `(version, SQL)`, in order; a released migration is never edited, only followed.
const MIGRATIONS: &[(i32, &str)] = &[(
    1,
    r#"
CREATE TABLE porch_meta (
    id integer PRIMARY KEY CHECK (id = 1),
    rv bigint NOT NULL,
    compacted bigint NOT NULL
);
INSERT INTO porch_meta (id, rv, compacted) VALUES (1, 0, 0);
CREATE TABLE porch_objects (
    resource text COLLATE "C" NOT NULL,
    namespace text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    rv bigint NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (resource, namespace, name)
);
CREATE TABLE porch_events (
    rv bigint PRIMARY KEY,
    type smallint NOT NULL,
    resource text NOT NULL,
    namespace text NOT NULL,
    name text NOT NULL,
    data bytea NOT NULL,
    previous bytea
);
"#,
)];

/// The schema version this binary writes.
pub const SCHEMA_VERSION: i32 = 1;

/// Applies the missing migrations; returns the schema version.
pub(crate) async fn migrate(client: &mut Client) -> Result<i32, StoreError> {
    pg(client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .await)?;
    let result = apply(client).await;
    // Closing the connection would release the lock too; unlocking keeps it reusable.
    let _ = client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
        .await;
    result
}

async fn apply(client: &mut Client) -> Result<i32, StoreError> {
    pg(client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS porch_schema_migrations (
                version integer PRIMARY KEY,
                applied_at timestamptz NOT NULL DEFAULT now())",
        )
        .await)?;
    let row = pg(client
        .query_one(
            "SELECT COALESCE(max(version), 0) FROM porch_schema_migrations",
            &[],
        )
        .await)?;
    let current: i32 = row.get(0);
    let mut version_now = current;
    if current > SCHEMA_VERSION {
        return Err(StoreError::Internal(format!(
            "the database schema is at version {current}, newer than this porch-server knows \
             ({SCHEMA_VERSION}); upgrade porch-server"
        )));
    }
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > current) {
        let txn = pg(client.transaction().await)?;
        pg(txn.batch_execute(sql).await)?;
        pg(txn
            .execute(
                "INSERT INTO porch_schema_migrations (version) VALUES ($1)",
                &[version],
            )
            .await)?;
        pg(txn.commit().await)?;
        tracing::info!(version, "applied a schema migration");
        version_now = *version;
    }
    Ok(version_now)
}
