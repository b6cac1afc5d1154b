//! The key-value store in Redis ([`RedisKv`]), for processes on several machines that share one
//! store: `palisade serve --store redis://…` replicas, or embedders that hand it to
//! [`crate::Builder::kv_backend`]. Namespaces, buckets, key quotas, counters, compare-and-swap
//! and a call's transaction ([`KvWrites`]) hold as on SQLite, across every process.
//!
//! Layout: each namespace and bucket is a hash of its keys' values beside a sorted set of its
//! keys (every score 0, so `list` reads them in byte order), and each namespace has a counter of
//! the keys it holds. A name is length-prefixed (`palisade:kv:v:LEN:NAMESPACE:BUCKET`), so no
//! namespace or bucket, whatever bytes it holds, reaches another's keys.
//!
//! Every write is an optimistic transaction: `WATCH` the bucket and the namespace's counter,
//! read, decide, then `MULTI` … `EXEC`, which Redis refuses when another writer touched a watched
//! key meanwhile; the transaction then runs again from the read after a random back-off, at most
//! [`ATTEMPTS`] times.
//! Durability is Redis's (`appendfsync always`: docs/scaling.md). A Redis that is down or slow
//! fails the operation within the pool's bounds (`KvError::Unavailable`); nothing waits longer. Unlike
//! the server store's idempotent steps, a failed write is not sent again on its own: an increment
//! whose reply was lost might have been applied.

use super::{Decide, KvBackend, KvError, KvTransaction, KvWrites, SharedRate};
use crate::redis_pool::{Failure, Gcra, Pool, is_unavailable};
use redis::Connection;
use std::collections::HashMap;

/// How many times an optimistic transaction runs before it gives up: each retry means another
/// writer committed on the same bucket, so this bounds the work of one write under contention.
pub const ATTEMPTS: usize = 64;

/// The key-value store in one Redis.
pub struct RedisKv {
    pool: Pool,
    gcra: Gcra,
}

fn name(kind: &str, namespace: &str, bucket: &str) -> String {
    format!(
        "palisade:kv:{kind}:{}:{namespace}:{bucket}",
        namespace.len()
    )
}

fn values(namespace: &str, bucket: &str) -> String {
    name("v", namespace, bucket)
}

fn keys(namespace: &str, bucket: &str) -> String {
    name("k", namespace, bucket)
}

fn count(namespace: &str) -> String {
    format!("palisade:kv:n:{namespace}")
}

/// A Redis error met inside a transaction: a Redis that is gone or did not answer is
/// [`KvError::Unavailable`].
fn backend(e: redis::RedisError) -> KvError {
    if is_unavailable(&e) {
        KvError::Unavailable(e.to_string())
    } else {
        KvError::Backend(e.to_string())
    }
}

/// A pooled operation's failure as the key-value store's.
fn failure(e: Failure) -> KvError {
    match e {
        Failure::Unavailable(detail) => KvError::Unavailable(detail),
        Failure::Failed(detail) => KvError::Backend(detail),
    }
}

impl RedisKv {
    /// The store at `url` (`redis://HOST:PORT/DB`); it connects at once, so that a wrong
    /// address is said at start.
    pub fn open(url: &str) -> Result<RedisKv, KvError> {
        let pool = Pool::open(url).map_err(KvError::Backend)?;
        pool.run(|c| redis::cmd("PING").query::<String>(c))
            .map_err(|e| KvError::Backend(format!("cannot reach {}: {e}", pool.shown())))?;
        Ok(RedisKv {
            pool,
            gcra: Gcra::new(),
        })
    }

    /// Run `body` in an optimistic transaction until Redis commits it (or [`ATTEMPTS`] runs).
    fn transaction<T>(
        &self,
        mut body: impl FnMut(&mut Optimistic<'_>) -> Result<T, KvError>,
    ) -> Result<T, KvError> {
        let mut outcome = None;
        self.pool
            .run_once(|conn| {
                for attempt in 0..ATTEMPTS {
                    let mut txn = Optimistic::new(conn);
                    match body(&mut txn) {
                        Ok(value) => {
                            if txn.commit()? {
                                outcome = Some(Ok(value));
                                break;
                            }
                            back_off(attempt);
                        }
                        Err(e) => {
                            redis::cmd("UNWATCH").query::<()>(txn.conn)?;
                            outcome = Some(Err(e));
                            break;
                        }
                    }
                }
                Ok(())
            })
            .map_err(failure)?;
        outcome.unwrap_or_else(|| {
            Err(KvError::Backend(format!(
                "other writers kept changing the bucket: {ATTEMPTS} attempts"
            )))
        })
    }
}

/// Wait before attempt `attempt + 1` of a transaction another writer beat: a random time up
/// to 50 µs doubled each attempt (at most about 13 ms), so that writers racing on one bucket
/// spread out instead of beating each other again in step. The 64 attempts then wait at most
/// about 0.5 s in all.
fn back_off(attempt: usize) {
    let ceiling = 50u64 << attempt.min(8);
    std::thread::sleep(std::time::Duration::from_micros(
        rand::random::<u64>() % ceiling,
    ));
}

/// One attempt of an optimistic transaction: the keys it watches, and its writes, held until
/// [`Optimistic::commit`].
struct Optimistic<'c> {
    conn: &'c mut Connection,
    /// The values it wrote (`None`: deleted), by namespace, bucket and key.
    pending: HashMap<(String, String, String), Option<Vec<u8>>>,
    /// Keys added (or removed, negative) per namespace, and the count read at the start.
    counts: HashMap<String, (i64, u64)>,
}

impl<'c> Optimistic<'c> {
    fn new(conn: &'c mut Connection) -> Self {
        Optimistic {
            conn,
            pending: HashMap::new(),
            counts: HashMap::new(),
        }
    }

    /// The value of a key as this transaction sees it, watching its bucket.
    fn read(
        &mut self,
        namespace: &str,
        bucket: &str,
        key: &str,
    ) -> Result<Option<Vec<u8>>, KvError> {
        let id = (namespace.to_owned(), bucket.to_owned(), key.to_owned());
        if let Some(value) = self.pending.get(&id) {
            return Ok(value.clone());
        }
        let hash = values(namespace, bucket);
        redis::cmd("WATCH")
            .arg(&hash)
            .query::<()>(self.conn)
            .map_err(backend)?;
        redis::cmd("HGET")
            .arg(&hash)
            .arg(key)
            .query(self.conn)
            .map_err(backend)
    }

    /// Count one key more (or less) in `namespace`, refusing one past `max_keys`.
    fn add_key(&mut self, namespace: &str, delta: i64, max_keys: u64) -> Result<(), KvError> {
        if !self.counts.contains_key(namespace) {
            let counter = count(namespace);
            redis::cmd("WATCH")
                .arg(&counter)
                .query::<()>(self.conn)
                .map_err(backend)?;
            let held: Option<u64> = redis::cmd("GET")
                .arg(&counter)
                .query(self.conn)
                .map_err(backend)?;
            self.counts
                .insert(namespace.to_owned(), (0, held.unwrap_or(0)));
        }
        let (added, held) = self
            .counts
            .get_mut(namespace)
            .ok_or_else(|| KvError::Backend("count".into()))?;
        if delta > 0 && held.saturating_add_signed(*added) >= max_keys {
            return Err(KvError::TooManyKeys { limit: max_keys });
        }
        *added += delta;
        Ok(())
    }

    /// Send the writes in `MULTI` … `EXEC`; whether Redis committed them (`false`: a watched
    /// key changed, run again).
    fn commit(self) -> redis::RedisResult<bool> {
        let mut pipe = redis::pipe();
        pipe.atomic();
        for ((namespace, bucket, key), value) in &self.pending {
            let (hash, set) = (values(namespace, bucket), keys(namespace, bucket));
            match value {
                Some(value) => {
                    pipe.cmd("HSET").arg(&hash).arg(key).arg(value).ignore();
                    pipe.cmd("ZADD").arg(&set).arg(0).arg(key).ignore();
                }
                None => {
                    pipe.cmd("HDEL").arg(&hash).arg(key).ignore();
                    pipe.cmd("ZREM").arg(&set).arg(key).ignore();
                }
            }
        }
        for (namespace, (added, _)) in &self.counts {
            if *added != 0 {
                pipe.cmd("INCRBY")
                    .arg(count(namespace))
                    .arg(*added)
                    .ignore();
            }
        }
        // An aborted EXEC answers nil: no value at all.
        let done: Option<()> = pipe.query(self.conn)?;
        Ok(done.is_some())
    }
}

impl KvTransaction for Optimistic<'_> {
    fn update(
        &mut self,
        namespace: &str,
        bucket: &str,
        key: &str,
        max_keys: u64,
        decide: &mut Decide<'_>,
    ) -> Result<(), KvError> {
        let current = self.read(namespace, bucket, key)?;
        if let Some(next) = decide(current.as_deref())? {
            if current.is_none() {
                self.add_key(namespace, 1, max_keys)?;
            }
            self.pending.insert(
                (namespace.to_owned(), bucket.to_owned(), key.to_owned()),
                Some(next),
            );
        }
        Ok(())
    }

    fn delete(&mut self, namespace: &str, bucket: &str, key: &str) -> Result<(), KvError> {
        if self.read(namespace, bucket, key)?.is_some() {
            self.add_key(namespace, -1, u64::MAX)?;
            self.pending.insert(
                (namespace.to_owned(), bucket.to_owned(), key.to_owned()),
                None,
            );
        }
        Ok(())
    }
}

impl KvBackend for RedisKv {
    fn get(&self, namespace: &str, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, KvError> {
        let hash = values(namespace, bucket);
        self.pool
            .run(|c| redis::cmd("HGET").arg(&hash).arg(key).query(c))
            .map_err(failure)
    }

    fn update(
        &self,
        namespace: &str,
        bucket: &str,
        key: &str,
        max_keys: u64,
        decide: &mut Decide<'_>,
    ) -> Result<(), KvError> {
        self.transaction(|txn| txn.update(namespace, bucket, key, max_keys, decide))
    }

    fn delete(&self, namespace: &str, bucket: &str, key: &str) -> Result<(), KvError> {
        self.transaction(|txn| txn.delete(namespace, bucket, key))
    }

    fn list(
        &self,
        namespace: &str,
        bucket: &str,
        offset: u64,
        limit: usize,
    ) -> Result<Vec<String>, KvError> {
        let set = keys(namespace, bucket);
        let limit = i64::try_from(limit).unwrap_or(-1);
        self.pool
            .run(|c| {
                redis::cmd("ZRANGEBYLEX")
                    .arg(&set)
                    .arg("-")
                    .arg("+")
                    .arg("LIMIT")
                    .arg(offset)
                    .arg(limit)
                    .query(c)
            })
            .map_err(failure)
    }

    fn key_count(&self, namespace: &str) -> Result<u64, KvError> {
        let counter = count(namespace);
        let held: Option<u64> = self
            .pool
            .run(|c| redis::cmd("GET").arg(&counter).query(c))
            .map_err(failure)?;
        Ok(held.unwrap_or(0))
    }

    fn apply(&self, writes: &KvWrites) -> Result<(), KvError> {
        self.transaction(|txn| writes.apply_in(txn))
    }

    fn shared_rate(self: std::sync::Arc<Self>) -> Option<std::sync::Arc<dyn SharedRate>> {
        Some(self)
    }
}

/// A policy's `[http] rate` in Redis: GCRA on Redis's clock, which every process reads, with
/// the bucket's refill as its pace (`count` per `per`, up to `count` at once).
impl SharedRate for RedisKv {
    fn take(&self, policy: &str, count: u32, per: std::time::Duration) -> Result<bool, KvError> {
        let key = format!("palisade:kv:rate:{policy}");
        let interval = per / count.max(1);
        let wait = self
            .gcra
            .take(&self.pool, &key, interval, count)
            .map_err(failure)?;
        Ok(wait.is_none())
    }
}
