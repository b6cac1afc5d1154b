//! The redb backend: one file, open in one process at a time.

use super::{Decide, Entry, KvBackend, KvError, KvTransaction, KvWrites, backend};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition, WriteTransaction};
use std::path::Path;

const DATA: TableDefinition<(&str, &str, &str), &[u8]> = TableDefinition::new("data");
const COUNTS: TableDefinition<&str, u64> = TableDefinition::new("key_counts");

/// Keys the namespace holds.
fn count(counts: &impl ReadableTable<&'static str, u64>, namespace: &str) -> Result<u64, KvError> {
    Ok(counts
        .get(namespace)
        .map_err(backend)?
        .map_or(0, |c| c.value()))
}

/// A store in one redb file, which one process at a time may open. Each write is its own transaction, committed with
/// redb's default durability (fsync before the commit returns).
pub struct RedbBackend {
    db: Database,
}

impl RedbBackend {
    /// Open (or create) the store at `path`. A file can be open in one process at a time.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, KvError> {
        let path = path.as_ref();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(backend)?;
        }
        let db = Database::create(path)
            .map_err(|e| KvError::Backend(format!("cannot open {}: {e}", path.display())))?;
        let txn = db.begin_write().map_err(backend)?;
        txn.open_table(DATA).map_err(backend)?;
        txn.open_table(COUNTS).map_err(backend)?;
        txn.commit().map_err(backend)?;
        Ok(Self { db })
    }

    /// Every entry, as (namespace, bucket, key, value): for copying the store elsewhere.
    pub fn entries(&self) -> Result<Vec<Entry>, KvError> {
        let txn = self.db.begin_read().map_err(backend)?;
        let table = txn.open_table(DATA).map_err(backend)?;
        let mut out = Vec::new();
        for entry in table.iter().map_err(backend)? {
            let (k, v) = entry.map_err(backend)?;
            let (namespace, bucket, key) = k.value();
            out.push((
                namespace.to_owned(),
                bucket.to_owned(),
                key.to_owned(),
                v.value().to_vec(),
            ));
        }
        Ok(out)
    }
}

impl RedbBackend {
    /// Run `f` in one write transaction, committed when it returns `Ok` (dropped, so aborted,
    /// otherwise).
    fn write<T>(
        &self,
        f: impl FnOnce(&mut InTransaction<'_>) -> Result<T, KvError>,
    ) -> Result<T, KvError> {
        let txn = self.db.begin_write().map_err(backend)?;
        let out = f(&mut InTransaction(&txn))?;
        txn.commit().map_err(backend)?;
        Ok(out)
    }
}

/// The writes of one redb transaction.
struct InTransaction<'a>(&'a WriteTransaction);

impl KvTransaction for InTransaction<'_> {
    fn update(
        &mut self,
        namespace: &str,
        bucket: &str,
        key: &str,
        max_keys: u64,
        decide: &mut Decide<'_>,
    ) -> Result<(), KvError> {
        let txn = self.0;
        let mut data = txn.open_table(DATA).map_err(backend)?;
        let current = data
            .get((namespace, bucket, key))
            .map_err(backend)?
            .map(|v| v.value().to_vec());
        let Some(next) = decide(current.as_deref())? else {
            return Ok(());
        };
        if current.is_none() {
            let mut counts = txn.open_table(COUNTS).map_err(backend)?;
            let count = count(&counts, namespace)?;
            if count >= max_keys {
                return Err(KvError::TooManyKeys { limit: max_keys });
            }
            counts.insert(namespace, count + 1).map_err(backend)?;
        }
        data.insert((namespace, bucket, key), next.as_slice())
            .map_err(backend)?;
        Ok(())
    }

    fn delete(&mut self, namespace: &str, bucket: &str, key: &str) -> Result<(), KvError> {
        let txn = self.0;
        let mut data = txn.open_table(DATA).map_err(backend)?;
        let removed = data
            .remove((namespace, bucket, key))
            .map_err(backend)?
            .is_some();
        if removed {
            let mut counts = txn.open_table(COUNTS).map_err(backend)?;
            let count = count(&counts, namespace)?;
            counts
                .insert(namespace, count.saturating_sub(1))
                .map_err(backend)?;
        }
        Ok(())
    }
}

impl KvBackend for RedbBackend {
    fn update(
        &self,
        namespace: &str,
        bucket: &str,
        key: &str,
        max_keys: u64,
        decide: &mut Decide<'_>,
    ) -> Result<(), KvError> {
        self.write(|txn| txn.update(namespace, bucket, key, max_keys, decide))
    }

    fn apply(&self, writes: &KvWrites) -> Result<(), KvError> {
        self.write(|txn| writes.apply_in(txn))
    }

    fn key_count(&self, namespace: &str) -> Result<u64, KvError> {
        let txn = self.db.begin_read().map_err(backend)?;
        count(&txn.open_table(COUNTS).map_err(backend)?, namespace)
    }

    fn get(&self, namespace: &str, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, KvError> {
        let txn = self.db.begin_read().map_err(backend)?;
        let table = txn.open_table(DATA).map_err(backend)?;
        let value = table.get((namespace, bucket, key)).map_err(backend)?;
        Ok(value.map(|v| v.value().to_vec()))
    }

    fn delete(&self, namespace: &str, bucket: &str, key: &str) -> Result<(), KvError> {
        self.write(|txn| txn.delete(namespace, bucket, key))
    }

    fn list(
        &self,
        namespace: &str,
        bucket: &str,
        offset: u64,
        limit: usize,
    ) -> Result<Vec<String>, KvError> {
        let txn = self.db.begin_read().map_err(backend)?;
        let table = txn.open_table(DATA).map_err(backend)?;
        let mut keys = Vec::new();
        // Every key of the bucket sorts before (namespace, bucket + "\0", ""): the range never
        // reaches another bucket or namespace, whatever the offset.
        let end = format!("{bucket}\0");
        let range = table
            .range((namespace, bucket, "")..(namespace, end.as_str(), ""))
            .map_err(backend)?;
        for entry in range.skip(usize::try_from(offset).unwrap_or(usize::MAX)) {
            let (k, _) = entry.map_err(backend)?;
            let (_, _, key) = k.value();
            if keys.len() >= limit {
                break;
            }
            keys.push(key.to_owned());
        }
        Ok(keys)
    }
}
