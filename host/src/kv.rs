//! Key-value storage behind the `wasi:keyvalue` capability: the [`KvBackend`] trait, and the
//! embedded, durable default on [redb](https://www.redb.org).
//!
//! Every key lives under a namespace (from the policy; the script cannot name it) and a bucket.
//! Backends see the three parts separately, never a joined string, so no key — `../x`, `a/b`,
//! one with NUL bytes — can reach another namespace or bucket.

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use std::path::Path;

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KvError {
    /// The namespace already holds its maximum number of keys.
    #[error("the namespace holds {limit} keys, its maximum")]
    TooManyKeys {
        /// The namespace's key limit.
        limit: u64,
    },
    /// The storage itself failed.
    #[error("the key-value store failed: {0}")]
    Backend(String),
}

/// A key-value store. Implementations must be durable when `set` or `delete` returns `Ok`:
/// an acknowledged write survives a crash of the process.
pub trait KvBackend: Send + Sync + 'static {
    /// The value of `key`, if set.
    fn get(&self, namespace: &str, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, KvError>;
    /// Set `key`. A new key is refused when the namespace already holds `max_keys` keys.
    fn set(
        &self,
        namespace: &str,
        bucket: &str,
        key: &str,
        value: &[u8],
        max_keys: u64,
    ) -> Result<(), KvError>;
    /// Remove `key`; removing a missing key succeeds.
    fn delete(&self, namespace: &str, bucket: &str, key: &str) -> Result<(), KvError>;
    /// Up to `limit` keys of the bucket in byte order, after skipping the first `offset`.
    fn list(
        &self,
        namespace: &str,
        bucket: &str,
        offset: u64,
        limit: usize,
    ) -> Result<Vec<String>, KvError>;
}

const DATA: TableDefinition<(&str, &str, &str), &[u8]> = TableDefinition::new("data");
const COUNTS: TableDefinition<&str, u64> = TableDefinition::new("key_counts");

/// Keys the namespace holds.
fn count(counts: &redb::Table<&str, u64>, namespace: &str) -> Result<u64, KvError> {
    Ok(counts
        .get(namespace)
        .map_err(backend)?
        .map_or(0, |c| c.value()))
}

/// The default backend: one redb file. Each write is its own transaction, committed with
/// redb's default durability (fsync before the commit returns).
pub struct RedbBackend {
    db: Database,
}

fn backend<E: std::fmt::Display>(e: E) -> KvError {
    KvError::Backend(e.to_string())
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
}

impl KvBackend for RedbBackend {
    fn get(&self, namespace: &str, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, KvError> {
        let txn = self.db.begin_read().map_err(backend)?;
        let table = txn.open_table(DATA).map_err(backend)?;
        let value = table.get((namespace, bucket, key)).map_err(backend)?;
        Ok(value.map(|v| v.value().to_vec()))
    }

    fn set(
        &self,
        namespace: &str,
        bucket: &str,
        key: &str,
        value: &[u8],
        max_keys: u64,
    ) -> Result<(), KvError> {
        let txn = self.db.begin_write().map_err(backend)?;
        {
            let mut data = txn.open_table(DATA).map_err(backend)?;
            let mut counts = txn.open_table(COUNTS).map_err(backend)?;
            let exists = data
                .get((namespace, bucket, key))
                .map_err(backend)?
                .is_some();
            if !exists {
                let count = count(&counts, namespace)?;
                if count >= max_keys {
                    return Err(KvError::TooManyKeys { limit: max_keys });
                }
                counts.insert(namespace, count + 1).map_err(backend)?;
            }
            data.insert((namespace, bucket, key), value)
                .map_err(backend)?;
        }
        txn.commit().map_err(backend)
    }

    fn delete(&self, namespace: &str, bucket: &str, key: &str) -> Result<(), KvError> {
        let txn = self.db.begin_write().map_err(backend)?;
        {
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
        }
        txn.commit().map_err(backend)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_and_buckets_are_separate_and_counted() {
        let dir = std::env::temp_dir().join(format!("palisade-kv-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = RedbBackend::open(dir.join("kv.redb")).unwrap();
        store.set("a", "app", "k", b"1", 2).unwrap();
        store.set("a", "app", "k", b"2", 2).unwrap();
        store.set("a", "other", "k", b"3", 2).unwrap();
        assert_eq!(
            store.set("a", "app", "k2", b"4", 2),
            Err(KvError::TooManyKeys { limit: 2 })
        );
        assert_eq!(
            store.get("a", "app", "k").unwrap().as_deref(),
            Some(&b"2"[..])
        );
        assert_eq!(store.get("b", "app", "k").unwrap(), None);
        store.delete("a", "other", "k").unwrap();
        store.set("a", "app", "k2", b"4", 2).unwrap();
        assert_eq!(store.list("a", "app", 0, 10).unwrap(), ["k", "k2"]);
        assert_eq!(store.list("a", "app", 1, 10).unwrap(), ["k2"]);
        assert!(store.list("b", "app", 0, 10).unwrap().is_empty());
        drop(store);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
