//! Key-value storage behind the `wasi:keyvalue` capability: the [`KvBackend`] trait, the
//! embedded, durable default on SQLite ([`SqliteBackend`], one file that many processes share),
//! [`RedbBackend`] for a store that one process owns, and, with the `redis` feature,
//! `RedisKv` for processes on several machines that share one Redis.
//!
//! Every key lives under a namespace (from the policy; the script cannot name it) and a bucket.
//! Backends see the three parts separately, never a joined string, so no key — `../x`, `a/b`,
//! one with NUL bytes — can reach another namespace or bucket.

mod overlay;
mod redb;
#[cfg(feature = "redis")]
mod redis;
mod sqlite;
mod writes;

pub(crate) use self::overlay::KvOverlay;
pub use self::redb::RedbBackend;
#[cfg(feature = "redis")]
pub use self::redis::RedisKv;
pub(crate) use self::sqlite::SharedRates;
pub use self::sqlite::SqliteBackend;
pub use self::writes::{KvOp, KvTransaction, KvWrite, KvWrites, MAX_TRANSACTION_BYTES};
use std::path::Path;

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KvError {
    /// The namespace already holds its maximum number of keys.
    #[error("the namespace holds {limit} keys, its maximum")]
    TooManyKeys {
        /// The namespace's key limit.
        limit: u64,
    },
    /// `increment` found a value that is not a counter (decimal digits, as `kv.set(key, 5)`
    /// stores a number), or the sum passed `u64::MAX`.
    #[error("the value of `{key}` is not a counter: {reason}")]
    NotACounter {
        /// The key.
        key: String,
        /// What is wrong with its value.
        reason: &'static str,
    },
    /// Applying a call's [`KvWrites`]: another writer moved the value of `key` since the call,
    /// so that a compare-and-swap of the call would now answer otherwise. Nothing was applied.
    #[error(
        "another writer changed `{bucket}/{key}` since the call compared it; nothing was applied"
    )]
    Conflict {
        /// The bucket.
        bucket: String,
        /// The key.
        key: String,
    },
    /// A call under a key-value transaction wrote more than [`MAX_TRANSACTION_BYTES`].
    #[error("the call's pending key-value writes hold over {limit} bytes, their maximum")]
    TransactionTooLarge {
        /// [`MAX_TRANSACTION_BYTES`], in bytes.
        limit: u64,
    },
    /// The storage itself failed.
    #[error("the key-value store failed: {0}")]
    Backend(String),
    /// The storage is shared and did not answer (Redis down, unreachable or stalled): the same
    /// operation may succeed later. A call that meets it ends as `store_unavailable`
    /// (retryable), whatever its script does with the error.
    #[error("the key-value store is unavailable: {0}")]
    Unavailable(String),
}

/// Token buckets for a policy's `[http] rate` that every process on one store shares: the
/// SQLite file's `rate.sqlite3` ([`SqliteBackend`]'s data directory) or `RedisKv`'s Redis.
pub trait SharedRate: Send + Sync {
    /// Take one request from `policy`'s bucket, which holds at most `count` and refills
    /// `count` every `per`; whether there was one.
    fn take(&self, policy: &str, count: u32, per: std::time::Duration) -> Result<bool, KvError>;
}

/// One stored entry: namespace, bucket, key and value (for copying a store elsewhere).
pub type Entry = (String, String, String, Vec<u8>);

/// What [`KvBackend::update`] asks of its caller: given the current value, the value to store
/// (`None`: leave it as it is).
pub type Decide<'a> = dyn FnMut(Option<&[u8]>) -> Result<Option<Vec<u8>>, KvError> + 'a;

/// A key-value store. Implementations must be durable when `set` or `delete` returns `Ok`:
/// an acknowledged write survives a crash of the process.
pub trait KvBackend: Send + Sync + 'static {
    /// The value of `key`, if set.
    fn get(&self, namespace: &str, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, KvError>;
    /// In one atomic step that no other writer (thread or process sharing the store) can
    /// interleave with: read `key`, let `decide` say what to store (`None`: leave it as it is),
    /// store it. A new key is refused when the namespace already holds `max_keys` keys.
    fn update(
        &self,
        namespace: &str,
        bucket: &str,
        key: &str,
        max_keys: u64,
        decide: &mut Decide<'_>,
    ) -> Result<(), KvError>;
    /// Set `key`. A new key is refused when the namespace already holds `max_keys` keys.
    fn set(
        &self,
        namespace: &str,
        bucket: &str,
        key: &str,
        value: &[u8],
        max_keys: u64,
    ) -> Result<(), KvError> {
        self.update(namespace, bucket, key, max_keys, &mut |_| {
            Ok(Some(value.to_vec()))
        })
    }
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
    /// Add `delta` to the counter at `key` and return the new value, in one atomic step. A
    /// missing key starts at 0 (and counts against `max_keys`). Counters are stored as decimal
    /// ASCII digits, so `get` reads them as the JSON number they are.
    fn increment(
        &self,
        namespace: &str,
        bucket: &str,
        key: &str,
        delta: u64,
        max_keys: u64,
    ) -> Result<u64, KvError> {
        let mut value = 0;
        self.update(namespace, bucket, key, max_keys, &mut |current| {
            value = add_to_counter(key, current, delta)?;
            Ok(Some(value.to_string().into_bytes()))
        })?;
        Ok(value)
    }
    /// Keys `namespace` holds, all buckets together (what `max_keys` is checked against).
    fn key_count(&self, namespace: &str) -> Result<u64, KvError>;
    /// The policies' `[http] rate` buckets this store shares between its processes, if it
    /// keeps any; otherwise each process keeps its own.
    fn shared_rate(self: std::sync::Arc<Self>) -> Option<std::sync::Arc<dyn SharedRate>> {
        None
    }
    /// Apply a call's writes ([`crate::RunOptions::kv_transaction`]) in one transaction: all of
    /// them, or none and the first error. Open a transaction of the store, wrap it in a type
    /// implementing [`KvTransaction`], call [`KvWrites::apply_in`], and commit only when it
    /// returns `Ok`. The built-in backends do so in one SQLite or redb write transaction.
    fn apply(&self, writes: &KvWrites) -> Result<(), KvError>;
    /// Set `key` to `new` only when its value is `expected` (`None`: only when it is missing),
    /// in one atomic step; returns whether it swapped.
    fn compare_and_swap(
        &self,
        namespace: &str,
        bucket: &str,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
        max_keys: u64,
    ) -> Result<bool, KvError> {
        let mut swapped = false;
        self.update(namespace, bucket, key, max_keys, &mut |current| {
            swapped = current == expected;
            Ok(swapped.then(|| new.to_vec()))
        })?;
        Ok(swapped)
    }
}

pub(crate) fn backend<E: std::fmt::Display>(e: E) -> KvError {
    KvError::Backend(e.to_string())
}

/// The counter `current` plus `delta`.
pub(crate) fn add_to_counter(
    key: &str,
    current: Option<&[u8]>,
    delta: u64,
) -> Result<u64, KvError> {
    let not = |reason| KvError::NotACounter {
        key: key.to_owned(),
        reason,
    };
    let value = match current {
        None => 0,
        Some(bytes) => {
            if bytes.is_empty() || bytes.len() > 20 || !bytes.iter().all(u8::is_ascii_digit) {
                return Err(not("it is not decimal digits"));
            }
            // ASCII digits: valid UTF-8, and at most 20 of them.
            std::str::from_utf8(bytes)
                .ok()
                .and_then(|t| t.parse::<u64>().ok())
                .ok_or_else(|| not("it is larger than 2^64 - 1"))?
        }
    };
    value
        .checked_add(delta)
        .ok_or_else(|| not("the sum is larger than 2^64 - 1"))
}

/// Open the store at `path` with the default backend (SQLite). A store that an earlier version
/// kept in redb (`kv.redb` beside `path`) is copied over once, the first time `path` does not
/// exist yet, so upgrading loses nothing; the redb file is left in place.
pub fn open_default(path: &Path) -> Result<SqliteBackend, KvError> {
    let legacy = path.with_file_name("kv.redb");
    let fresh = !path.exists();
    let store = SqliteBackend::open(path)?;
    if fresh && legacy != path && legacy.is_file() {
        let old = RedbBackend::open(&legacy)?;
        store.import(old.entries()?)?;
    }
    Ok(store)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    pub(super) fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("palisade-kv-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn namespaces_and_buckets_are_separate_and_counted(store: &dyn KvBackend) {
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
        store.delete("a", "other", "k").unwrap();
        store.set("a", "app", "k2", b"4", 2).unwrap();
        assert_eq!(store.list("a", "app", 0, 10).unwrap(), ["k", "k2"]);
        assert_eq!(store.list("a", "app", 1, 10).unwrap(), ["k2"]);
        assert_eq!(store.list("a", "app", 0, 1).unwrap(), ["k"]);
        assert!(store.list("b", "app", 0, 10).unwrap().is_empty());
        // Keys with separators and NUL bytes stay inside their bucket.
        store.set("c", "b", "x\0y", b"1", 9).unwrap();
        store.set("c", "b\0x", "y", b"2", 9).unwrap();
        assert_eq!(store.list("c", "b", 0, 10).unwrap(), ["x\0y"]);
    }

    fn counters_and_swaps(store: &dyn KvBackend) {
        assert_eq!(store.increment("n", "b", "c", 5, 2).unwrap(), 5);
        assert_eq!(store.increment("n", "b", "c", 1, 2).unwrap(), 6);
        assert_eq!(
            store.get("n", "b", "c").unwrap().as_deref(),
            Some(&b"6"[..])
        );
        store.set("n", "b", "text", b"\"6\"", 2).unwrap();
        assert!(matches!(
            store.increment("n", "b", "text", 1, 2),
            Err(KvError::NotACounter { .. })
        ));
        assert_eq!(
            store.increment("n", "b", "third", 1, 2),
            Err(KvError::TooManyKeys { limit: 2 })
        );
        store
            .set("n", "b", "c", u64::MAX.to_string().as_bytes(), 2)
            .unwrap();
        assert!(matches!(
            store.increment("n", "b", "c", 1, 2),
            Err(KvError::NotACounter { .. })
        ));
        assert!(
            !store
                .compare_and_swap("n", "b", "c", Some(b"1"), b"x", 2)
                .unwrap()
        );
        assert!(
            store
                .compare_and_swap(
                    "n",
                    "b",
                    "c",
                    Some(u64::MAX.to_string().as_bytes()),
                    b"x",
                    2
                )
                .unwrap()
        );
        assert_eq!(
            store.get("n", "b", "c").unwrap().as_deref(),
            Some(&b"x"[..])
        );
        assert!(
            store
                .compare_and_swap("m", "b", "new", None, b"1", 1)
                .unwrap()
        );
        assert!(
            !store
                .compare_and_swap("m", "b", "new", None, b"2", 1)
                .unwrap()
        );
        assert_eq!(
            store.get("m", "b", "new").unwrap().as_deref(),
            Some(&b"1"[..])
        );
    }

    #[test]
    fn sqlite_keeps_namespaces_counts_counters_and_swaps() {
        let dir = dir("sqlite");
        let store = SqliteBackend::open(dir.join("kv.sqlite3")).unwrap();
        namespaces_and_buckets_are_separate_and_counted(&store);
        counters_and_swaps(&store);
        drop(store);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The same contract on a real Redis, and a call's transaction applied whole: a quota
    /// past its limit, or a compare-and-swap that another writer moved, writes nothing.
    #[cfg(feature = "redis")]
    #[test]
    fn redis_keeps_namespaces_counts_counters_swaps_and_transactions() {
        let server = crate::redis_pool::TestRedis::start("kv");
        let store = RedisKv::open(&server.url).unwrap();
        namespaces_and_buckets_are_separate_and_counted(&store);
        counters_and_swaps(&store);
        let write = |key: &str, op: KvOp| KvWrite {
            namespace: "t".into(),
            bucket: "b".into(),
            key: key.into(),
            max_keys: 2,
            op,
        };
        let mut batch = KvWrites::default();
        batch.push(write("a", KvOp::Set(b"1".to_vec()))).unwrap();
        batch.push(write("n", KvOp::Increment(2))).unwrap();
        store.apply(&batch).unwrap();
        assert_eq!(store.list("t", "b", 0, 9).unwrap(), ["a", "n"]);
        let mut past_quota = KvWrites::default();
        past_quota.push(write("n", KvOp::Increment(1))).unwrap();
        past_quota
            .push(write("c", KvOp::Set(b"3".to_vec())))
            .unwrap();
        assert_eq!(
            store.apply(&past_quota),
            Err(KvError::TooManyKeys { limit: 2 })
        );
        assert_eq!(
            store.get("t", "b", "n").unwrap().as_deref(),
            Some(&b"2"[..])
        );
        let mut moved = KvWrites::default();
        moved.push(write("n", KvOp::Increment(1))).unwrap();
        let swap = KvOp::CompareAndSwap {
            expected: Some(b"1".to_vec()),
            new: b"x".to_vec(),
            swapped: true,
        };
        moved.push(write("a", swap)).unwrap();
        store.set("t", "b", "a", b"9", 2).unwrap();
        assert!(matches!(store.apply(&moved), Err(KvError::Conflict { .. })));
        assert_eq!(
            store.get("t", "b", "n").unwrap().as_deref(),
            Some(&b"2"[..])
        );
        store.delete("t", "b", "a").unwrap();
        assert_eq!(store.key_count("t").unwrap(), 1);
        drop(server);
        assert!(matches!(
            store.get("t", "b", "n"),
            Err(KvError::Unavailable(_))
        ));
    }

    /// A policy's `[http] rate` of 3 a minute holds for two clients of one Redis together
    /// (two processes, as replicas are), and per policy.
    #[cfg(feature = "redis")]
    #[test]
    fn redis_shares_http_rates_between_clients() {
        let server = crate::redis_pool::TestRedis::start("kv-rate");
        let one: std::sync::Arc<dyn KvBackend> =
            std::sync::Arc::new(RedisKv::open(&server.url).unwrap());
        let two: std::sync::Arc<dyn KvBackend> =
            std::sync::Arc::new(RedisKv::open(&server.url).unwrap());
        let (one, two) = (one.shared_rate().unwrap(), two.shared_rate().unwrap());
        let minute = std::time::Duration::from_secs(60);
        let taken: Vec<bool> = (0..4)
            .map(|i| {
                let store = if i % 2 == 0 { &one } else { &two };
                store.take("p", 3, minute).unwrap()
            })
            .collect();
        assert_eq!(taken, [true, true, true, false]);
        assert!(two.take("other", 3, minute).unwrap(), "each policy its own");
    }

    /// Eight threads, each with its own connection pool, add 1 to one counter 50 times: no
    /// update is lost to the optimistic transactions' races.
    #[cfg(feature = "redis")]
    #[test]
    fn redis_counters_hold_across_clients() {
        let server = crate::redis_pool::TestRedis::start("kv-shared");
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let url = server.url.clone();
                std::thread::spawn(move || {
                    let store = RedisKv::open(&url).unwrap();
                    for _ in 0..50 {
                        store.increment("ns", "b", "n", 1, 10).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let store = RedisKv::open(&server.url).unwrap();
        assert_eq!(
            store.get("ns", "b", "n").unwrap().as_deref(),
            Some(&b"400"[..])
        );
    }

    #[test]
    fn redb_keeps_namespaces_counts_counters_and_swaps() {
        let dir = dir("redb");
        let store = RedbBackend::open(dir.join("kv.redb")).unwrap();
        namespaces_and_buckets_are_separate_and_counted(&store);
        counters_and_swaps(&store);
        drop(store);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Eight connections to one file (SQLite locks between connections of one process as it
    /// does between processes) each add 1 to one counter 50 times: no update is lost.
    #[test]
    fn sqlite_counters_hold_across_connections() {
        let dir = dir("shared");
        let path = dir.join("kv.sqlite3");
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let store = SqliteBackend::open(&path).unwrap();
                    for _ in 0..50 {
                        store.increment("ns", "b", "n", 1, 10).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let store = SqliteBackend::open(&path).unwrap();
        assert_eq!(
            store.get("ns", "b", "n").unwrap().as_deref(),
            Some(&b"400"[..])
        );
        drop(store);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A store kept in redb by an earlier version is copied into the SQLite file once.
    #[test]
    fn open_default_copies_a_legacy_redb_store_once() {
        let dir = dir("legacy");
        let old = RedbBackend::open(dir.join("kv.redb")).unwrap();
        old.set("ns", "app", "k", b"1", 10).unwrap();
        old.set("ns", "app", "j", b"2", 10).unwrap();
        drop(old);
        let store = open_default(&dir.join("kv.sqlite3")).unwrap();
        assert_eq!(store.list("ns", "app", 0, 10).unwrap(), ["j", "k"]);
        assert_eq!(
            store.set("ns", "app", "third", b"3", 2),
            Err(KvError::TooManyKeys { limit: 2 })
        );
        store.delete("ns", "app", "j").unwrap();
        drop(store);
        let store = open_default(&dir.join("kv.sqlite3")).unwrap();
        assert_eq!(store.list("ns", "app", 0, 10).unwrap(), ["k"]);
        drop(store);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
