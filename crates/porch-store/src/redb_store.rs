//! `RedbStore`: the `MetadataStore` implementation on one redb file.

use std::ops::Bound;
use std::path::Path;
use std::sync::{Arc, RwLock};

use porch_core::store::{
    EventListener, ListPage, ListQuery, MetadataStore, ObjectKey, ResourceVersion, StoreError,
    StoreEvent, StoredObject, Write,
};
use redb::{Database, ReadableDatabase};

use crate::codec::{
    EVENTS, META, META_COMPACTED, META_RV, OBJECTS, decode_event, decode_object, object_key,
    parse_object_key, prefix_range,
};
use crate::error::dbr;
use crate::writer::{Writer, WriterConfig};

/// Tuning of the store.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// How many events the log keeps for watch resumption; older resourceVersions get 410 Gone.
    pub event_retention: u64,
    /// How many queued write requests one commit may carry.
    pub max_batch: usize,
    /// Bytes of redb page cache (memory stays flat beyond this, reads go to the OS cache).
    pub cache_size_bytes: usize,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            event_retention: 50_000,
            max_batch: 512,
            cache_size_bytes: 64 * 1024 * 1024,
        }
    }
}

/// The embedded store. Cheap to share behind an `Arc`.
pub struct RedbStore {
    db: Arc<Database>,
    writer: Writer,
    listener: Arc<RwLock<Option<EventListener>>>,
}

impl RedbStore {
    /// Opens (or creates) the store file. The file is made readable by its owner only, since it
    /// holds Secrets.
    pub fn open(path: &Path, options: StoreOptions) -> Result<Self, StoreError> {
        create_private(path)?;
        let db = Database::builder().set_cache_size(options.cache_size_bytes).create(path).map_err(|e| {
            StoreError::Unavailable(format!(
                "cannot open the store {}: {e} (is another porch-server using this data directory?)",
                path.display()
            ))
        })?;
        {
            let txn = dbr(db.begin_write())?;
            dbr(txn.open_table(OBJECTS))?;
            dbr(txn.open_table(EVENTS))?;
            dbr(txn.open_table(META))?;
            dbr(txn.commit())?;
        }
        let db = Arc::new(db);
        let listener = Arc::new(RwLock::new(None));
        let writer = Writer::spawn(
            db.clone(),
            listener.clone(),
            WriterConfig {
                max_batch: options.max_batch.max(1),
                event_retention: options.event_retention,
            },
        )?;
        let store = Self {
            db,
            writer,
            listener,
        };
        tracing::info!(
            path = %path.display(),
            resource_version = store.current_resource_version()?,
            "opened the metadata store"
        );
        Ok(store)
    }

    fn read(&self) -> Result<redb::ReadTransaction, StoreError> {
        dbr(self.db.begin_read())
    }
}

#[cfg(unix)]
fn create_private(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let io = |e: std::io::Error| {
        StoreError::Unavailable(format!("cannot create the store {}: {e}", path.display()))
    };
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(io)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(io)
}

#[cfg(not(unix))]
fn create_private(_path: &Path) -> Result<(), StoreError> {
    Ok(())
}

impl MetadataStore for RedbStore {
    fn get(&self, key: &ObjectKey) -> Result<Option<StoredObject>, StoreError> {
        let txn = self.read()?;
        let table = dbr(txn.open_table(OBJECTS))?;
        let k = object_key(key);
        match dbr(table.get(k.as_str()))? {
            Some(g) => Ok(Some(decode_object(key.clone(), g.value())?)),
            None => Ok(None),
        }
    }

    fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
        let txn = self.read()?;
        let meta = dbr(txn.open_table(META))?;
        let resource_version = dbr(meta.get(META_RV))?.map(|g| g.value()).unwrap_or(0);
        let table = dbr(txn.open_table(OBJECTS))?;
        let (start, end) = prefix_range(&query.resource, query.namespace.as_deref());
        let after = query.start_after.as_ref().map(|(ns, name)| {
            object_key(&ObjectKey::new(
                query.resource.as_str(),
                ns.as_str(),
                name.as_str(),
            ))
        });
        let lower = match &after {
            Some(a) if a.as_str() >= start.as_str() => Bound::Excluded(a.as_str()),
            _ => Bound::Included(start.as_str()),
        };
        let range = dbr(table.range::<&str>((lower, Bound::Excluded(end.as_str()))))?;
        let limit = query.limit.unwrap_or(usize::MAX);
        let mut items = Vec::new();
        let mut remaining = None;
        let mut range = range;
        for entry in range.by_ref() {
            let (k, v) = dbr(entry)?;
            if items.len() >= limit {
                remaining = Some(1);
                break;
            }
            items.push(decode_object(parse_object_key(k.value())?, v.value())?);
        }
        if let Some(n) = remaining.as_mut() {
            // Counting the rest reads keys only (values are never decoded).
            for entry in range {
                dbr(entry)?;
                *n += 1;
            }
        }
        Ok(ListPage {
            items,
            resource_version,
            more: remaining.is_some(),
            remaining,
        })
    }

    fn write(&self, writes: Vec<Write>) -> Result<Vec<StoreEvent>, StoreError> {
        if writes.is_empty() {
            return Ok(Vec::new());
        }
        self.writer.write(writes)
    }

    fn events_since(
        &self,
        after: ResourceVersion,
        limit: usize,
    ) -> Result<Vec<StoreEvent>, StoreError> {
        let txn = self.read()?;
        let meta = dbr(txn.open_table(META))?;
        let compacted = dbr(meta.get(META_COMPACTED))?
            .map(|g| g.value())
            .unwrap_or(0);
        if after < compacted {
            return Err(StoreError::Gone {
                requested: after,
                compacted,
            });
        }
        let table = dbr(txn.open_table(EVENTS))?;
        let mut out = Vec::new();
        for entry in dbr(table.range(after + 1..))? {
            if out.len() >= limit {
                break;
            }
            let (k, v) = dbr(entry)?;
            out.push(decode_event(k.value(), v.value())?);
        }
        Ok(out)
    }

    fn current_resource_version(&self) -> Result<ResourceVersion, StoreError> {
        let txn = self.read()?;
        let meta = dbr(txn.open_table(META))?;
        Ok(dbr(meta.get(META_RV))?.map(|g| g.value()).unwrap_or(0))
    }

    fn set_listener(&self, listener: EventListener) {
        if let Ok(mut g) = self.listener.write() {
            *g = Some(listener);
        }
    }
}
