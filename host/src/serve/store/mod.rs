//! What the server keeps across restarts: session records, idempotency records, and the action
//! apps' tables (apps, session states, the event log and their idempotency records). The
//! services reach it only through [`Store`], a typed handle over a [`Backend`]: the embedded
//! redb file ([`RedbBackend`], `DATA/server.redb`, the default) is one implementation, and
//! Redis, which replicas share ([`RedisBackend`], `palisade serve --store redis://…`), is
//! another. Every write is durable (fsynced) before the call that makes it returns, which is
//! before the response that acknowledges it. Replicas take turns through [`lease`] leases.

pub mod lease;
mod redb;
mod redis;

pub use self::lease::Lease;
pub use self::redb::RedbBackend;
pub use self::redis::RedisBackend;
use super::errors::ApiError;
use crate::Error;
use serde::{Serialize, de::DeserializeOwned};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// The shared store is down or did not answer in time: nothing was written, and the same
    /// request may succeed later (`store_unavailable`, 503 with `Retry-After`).
    Unavailable(String),
    /// The batch carried a [`Write::Fence`] whose lease had passed to another holder: nothing
    /// was written.
    Fenced,
    /// Anything else: the server's own fault (`internal`).
    Failed(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Unavailable(detail) => write!(f, "store unavailable: {detail}"),
            StoreError::Fenced => f.write_str("the lease of this write was lost"),
            StoreError::Failed(detail) => f.write_str(detail),
        }
    }
}

impl From<String> for StoreError {
    fn from(detail: String) -> Self {
        StoreError::Failed(detail)
    }
}

/// How long a caller is told to wait before retrying a request the store could not take.
pub const RETRY_AFTER_SECONDS: u64 = 1;

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(detail) => {
                tracing::warn!("{detail}");
                ApiError::retry_after(Error::StoreUnavailable, RETRY_AFTER_SECONDS)
            }
            StoreError::Fenced => {
                tracing::warn!("a commit was refused: its lease had passed to another replica");
                ApiError::retry_after(Error::StoreUnavailable, RETRY_AFTER_SECONDS)
            }
            StoreError::Failed(detail) => Error::Internal { detail }.into(),
        }
    }
}

/// The tables, by what they hold. Keys are text; values are JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    /// Session records, by session id.
    Sessions,
    /// The same records by `tenant\nsession id`, so that a tenant's are read without the
    /// others' (kept by `serve::sessions` beside each record).
    TenantSessions,
    /// `POST /v1/run`'s idempotency records, by `tenant\nkey`.
    RunKeys,
    /// Apps, by `tenant\napp\n`.
    Apps,
    /// An app session's state and counters, by `tenant\napp\nsession\n`.
    AppSessions,
    /// The event log, by the session's key and the event's id (20 digits).
    AppEvents,
    /// App actions' idempotency records, by the session's key and the key.
    AppKeys,
    /// What each tenant's records take (`runs\nTENANT`: its `POST /v1/run` key records).
    Usage,
}

impl Table {
    /// Its name in the store (the embedded file's table names, kept across versions).
    pub fn name(self) -> &'static str {
        match self {
            Table::Sessions => "sessions",
            Table::TenantSessions => "tenant_sessions",
            Table::RunKeys => "idempotency",
            Table::Apps => "apps",
            Table::AppSessions => "app_sessions",
            Table::AppEvents => "app_events",
            Table::AppKeys => "app_idempotency",
            Table::Usage => "usage",
        }
    }

    /// Every table.
    pub const ALL: [Table; 8] = [
        Table::Sessions,
        Table::TenantSessions,
        Table::RunKeys,
        Table::Apps,
        Table::AppSessions,
        Table::AppEvents,
        Table::AppKeys,
        Table::Usage,
    ];
}

/// One write of an atomic batch ([`Backend::apply`]).
#[derive(Debug, Clone)]
pub enum Write {
    /// Set `key` to `value`.
    Put {
        /// The table.
        table: Table,
        /// The key.
        key: String,
        /// The JSON value.
        value: String,
    },
    /// Remove `key`, if it is there.
    Remove {
        /// The table.
        table: Table,
        /// The key.
        key: String,
    },
    /// Remove every key that starts with `prefix`.
    RemovePrefix {
        /// The table.
        table: Table,
        /// The prefix.
        prefix: String,
    },
    /// Write nothing of the batch unless `holder` still holds the lease `lease`
    /// ([`Lease::fence`]). Only a shared store has leases: the embedded one, which one server
    /// uses, keeps every fence.
    Fence {
        /// The lease's name.
        lease: String,
        /// Its holder when the batch was made.
        holder: String,
    },
}

/// A range of one table, in key order: the keys that start with `prefix`, after `after`
/// (exclusive) when given, at most `limit` of them, stopping once `max_bytes` of values were
/// read (at least one is returned when there is one).
#[derive(Debug, Clone, Copy)]
pub struct Scan<'a> {
    /// The keys' common prefix (`""`: all).
    pub prefix: &'a str,
    /// Start after this key.
    pub after: Option<&'a str>,
    /// At most this many entries.
    pub limit: usize,
    /// Stop once this many bytes of values were read.
    pub max_bytes: usize,
}

impl<'a> Scan<'a> {
    /// Every key under `prefix`.
    pub fn prefix(prefix: &'a str) -> Scan<'a> {
        Scan {
            prefix,
            after: None,
            limit: usize::MAX,
            max_bytes: usize::MAX,
        }
    }
}

/// Where the records live. Each method is one durable, atomic step: a reader never sees half
/// of an [`apply`](Backend::apply).
pub trait Backend: Send + Sync {
    /// The value under `key`.
    fn get(&self, table: Table, key: &str) -> Result<Option<String>, StoreError>;
    /// The entries of `scan`, in key order.
    fn scan(&self, table: Table, scan: Scan<'_>) -> Result<Vec<(String, String)>, StoreError>;
    /// Apply `writes` together, durably, or none of them.
    fn apply(&self, writes: &[Write]) -> Result<(), StoreError>;
    /// Remove each of `keys` whose value, read in the same step, still satisfies `still`; the
    /// number removed (a purge: a record written anew meanwhile stays).
    fn remove_if(
        &self,
        table: Table,
        keys: &[String],
        still: &dyn Fn(&str) -> bool,
    ) -> Result<usize, StoreError>;
    /// Whether the last write succeeded (`/readyz` reports the server not ready otherwise).
    fn writable(&self) -> bool;
    /// Try a durable write that changes nothing, to learn whether writes work again.
    fn probe(&self) -> Result<(), StoreError>;
    /// Whether several servers share this store: they then take turns through leases, and
    /// learn of each other's commits by reading the store.
    fn shared(&self) -> bool {
        false
    }
    /// Take (or extend) the lease `name` for `holder` for `ttl`, if it is free or already
    /// `holder`'s; whether it is now `holder`'s. A store of one server has no leases: always.
    fn try_lease(&self, _name: &str, _holder: &str, _ttl: Duration) -> Result<bool, StoreError> {
        Ok(true)
    }
    /// Give the lease `name` back, if `holder` still holds it.
    fn release(&self, _name: &str, _holder: &str) -> Result<(), StoreError> {
        Ok(())
    }
    /// Take one request from the rate `name` (one every `interval`, `burst` at once), shared by
    /// every server on the store (GCRA): `None` when taken, else how long until one is free. A
    /// store of one server keeps no rates (the server's own limiter does): always taken.
    fn take_rate(
        &self,
        _name: &str,
        _interval: Duration,
        _burst: u32,
    ) -> Result<Option<Duration>, StoreError> {
        Ok(None)
    }
}

/// The server's durable records: a typed handle over a [`Backend`], cheap to clone.
#[derive(Clone)]
pub struct Store {
    backend: Arc<dyn Backend>,
}

fn err<E: std::fmt::Display>(e: E) -> StoreError {
    StoreError::Failed(format!("server store: {e}"))
}

impl Store {
    /// The embedded store at `path` (opened, or created).
    pub fn open(path: &Path) -> Result<Store, String> {
        Ok(Store::new(Arc::new(RedbBackend::open(path)?)))
    }

    /// The store `--store` names: `redis://HOST:PORT/DB` (shared by replicas), else the
    /// embedded file at `path`.
    pub fn open_at(url: Option<&str>, path: &Path) -> Result<Store, String> {
        match url {
            Some(url) => Ok(Store::new(Arc::new(RedisBackend::open(url)?))),
            None => Store::open(path),
        }
    }

    /// Whether several servers share this store ([`Backend::shared`]).
    pub fn shared(&self) -> bool {
        self.backend.shared()
    }

    /// A store over `backend`.
    pub fn new(backend: Arc<dyn Backend>) -> Store {
        Store { backend }
    }

    /// The backend, for what the typed methods do not cover.
    pub fn backend(&self) -> &dyn Backend {
        &*self.backend
    }

    /// Write `value` under `key`, durably.
    pub fn put<T: Serialize>(&self, table: Table, key: &str, value: &T) -> Result<(), StoreError> {
        let value = serde_json::to_string(value).map_err(err)?;
        self.backend.apply(&[Write::Put {
            table,
            key: key.to_owned(),
            value,
        }])
    }

    /// The record under `key`, if any.
    pub fn get<T: DeserializeOwned>(
        &self,
        table: Table,
        key: &str,
    ) -> Result<Option<T>, StoreError> {
        match self.backend.get(table, key)? {
            Some(text) => serde_json::from_str(&text).map(Some).map_err(err),
            None => Ok(None),
        }
    }

    /// Remove the records under `keys`, durably.
    pub fn remove(&self, table: Table, keys: &[String]) -> Result<(), StoreError> {
        if keys.is_empty() {
            return Ok(());
        }
        let writes: Vec<Write> = keys
            .iter()
            .map(|key| Write::Remove {
                table,
                key: key.clone(),
            })
            .collect();
        self.backend.apply(&writes)
    }

    /// Every record of `table` under `prefix`; records that no longer parse are skipped.
    pub fn all<T: DeserializeOwned>(
        &self,
        table: Table,
        prefix: &str,
    ) -> Result<Vec<(String, T)>, StoreError> {
        Ok(self
            .backend
            .scan(table, Scan::prefix(prefix))?
            .into_iter()
            .filter_map(|(k, v)| serde_json::from_str(&v).ok().map(|v| (k, v)))
            .collect())
    }

    /// Whether writes work: the last one succeeded, or, after a failure, a probe now does.
    pub fn writable(&self) -> bool {
        self.backend.writable() || self.backend.probe().is_ok()
    }

    /// Apply `writes` together, durably.
    pub fn apply(&self, writes: &[Write]) -> Result<(), StoreError> {
        self.backend.apply(writes)
    }

    /// The entries of `scan`.
    pub fn scan(&self, table: Table, scan: Scan<'_>) -> Result<Vec<(String, String)>, StoreError> {
        self.backend.scan(table, scan)
    }
}

/// Run `f` (store or file work) on the blocking pool: a store that is down is
/// `store_unavailable`, any other error `internal`.
pub async fn blocking<T: Send + 'static, E: Into<StoreError> + Send + 'static>(
    f: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Result<T, ApiError> {
    Ok(blocking_store(f).await?)
}

/// [`blocking`], keeping the store's own error.
pub async fn blocking_store<T: Send + 'static, E: Into<StoreError> + Send + 'static>(
    f: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Result<T, StoreError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result.map_err(Into::into),
        Err(e) => Err(StoreError::Failed(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::{Backend, RedbBackend, RedisBackend, Scan, StoreError, Table, Write};
    use std::time::Duration;

    fn put(table: Table, key: &str, value: &str) -> Write {
        Write::Put {
            table,
            key: key.to_owned(),
            value: value.to_owned(),
        }
    }

    /// What every backend must do, the way the services use it.
    fn conformance(b: &dyn Backend) {
        let t = Table::AppEvents;
        b.apply(&[
            put(t, "a\nx\n01", "1"),
            put(t, "a\nx\n02", "22"),
            put(t, "a\nx\n03", "333"),
            put(t, "a\ny\n01", "4"),
            put(Table::Apps, "a\nx\n", "{}"),
        ])
        .unwrap();
        assert_eq!(b.get(t, "a\nx\n02").unwrap().as_deref(), Some("22"));
        assert_eq!(
            b.get(Table::AppSessions, "a\nx\n02").unwrap(),
            None,
            "tables are apart"
        );
        let keys = |scan| -> Vec<String> {
            b.scan(t, scan)
                .unwrap()
                .into_iter()
                .map(|(k, _)| k)
                .collect()
        };
        assert_eq!(
            keys(Scan::prefix("a\nx\n")),
            ["a\nx\n01", "a\nx\n02", "a\nx\n03"]
        );
        let after = Scan {
            after: Some("a\nx\n01"),
            ..Scan::prefix("a\nx\n")
        };
        assert_eq!(keys(after), ["a\nx\n02", "a\nx\n03"]);
        assert_eq!(keys(Scan { limit: 1, ..after }), ["a\nx\n02"]);
        assert_eq!(
            keys(Scan {
                max_bytes: 2,
                ..after
            }),
            ["a\nx\n02"],
            "stops once 2 bytes are read"
        );
        assert_eq!(keys(Scan::prefix("")).len(), 4);
        b.apply(&[
            Write::RemovePrefix {
                table: t,
                prefix: "a\nx\n".into(),
            },
            Write::Remove {
                table: Table::Apps,
                key: "a\nx\n".into(),
            },
        ])
        .unwrap();
        assert_eq!(keys(Scan::prefix("")), ["a\ny\n01"]);
        assert_eq!(b.get(Table::Apps, "a\nx\n").unwrap(), None);
        let gone = b
            .remove_if(t, &["a\ny\n01".into(), "missing".into()], &|v| v == "5")
            .unwrap();
        assert_eq!(gone, 0, "its value changed: it stays");
        let gone = b.remove_if(t, &["a\ny\n01".into()], &|v| v == "4").unwrap();
        assert_eq!(gone, 1);
        assert!(keys(Scan::prefix("")).is_empty());
    }

    /// The shared backend keeps the same contract on a real Redis, and its leases: one holder
    /// at a time, a fence that refuses a batch (writing nothing) once the lease passed on, and
    /// a lease given back free for the next holder.
    #[test]
    fn the_redis_backend_keeps_the_contract_and_its_leases() {
        let redis = crate::redis_pool::TestRedis::start("store");
        let b = RedisBackend::open(&redis.url).unwrap();
        conformance(&b);
        let ttl = Duration::from_secs(10);
        assert!(b.try_lease("s", "a", ttl).unwrap());
        assert!(b.try_lease("s", "a", ttl).unwrap(), "its holder extends it");
        assert!(!b.try_lease("s", "b", ttl).unwrap(), "held by a");
        // Replica r gives its lease back while replica q waits: q takes it next, not r.
        assert!(b.try_lease("t", "r#1", ttl).unwrap());
        assert!(!b.try_lease("t", "q#1", ttl).unwrap(), "q waits");
        b.release("t", "r#1").unwrap();
        assert!(!b.try_lease("t", "r#2", ttl).unwrap(), "r yields to q");
        assert!(b.try_lease("t", "q#1", ttl).unwrap());
        b.release("t", "q#1").unwrap();
        assert!(
            b.try_lease("t", "r#2", ttl).unwrap(),
            "nobody waits: r takes it"
        );
        let fenced = |holder: &str| {
            b.apply(&[
                Write::Fence {
                    lease: "s".into(),
                    holder: holder.into(),
                },
                put(Table::Apps, "fenced", "1"),
            ])
        };
        assert_eq!(fenced("b"), Err(StoreError::Fenced));
        assert_eq!(
            b.get(Table::Apps, "fenced").unwrap(),
            None,
            "nothing written"
        );
        assert!(b.writable(), "a fence is no failure of the store");
        fenced("a").unwrap();
        b.release("s", "b").unwrap();
        assert!(
            !b.try_lease("s", "b", ttl).unwrap(),
            "only its holder gives it back"
        );
        b.release("s", "a").unwrap();
        assert!(b.try_lease("s", "b", ttl).unwrap());
        drop(redis);
        assert!(matches!(
            b.get(Table::Apps, "fenced"),
            Err(StoreError::Unavailable(_))
        ));
        assert!(
            !b.writable(),
            "a store that does not answer is not writable"
        );
    }

    /// `Store::lease`: a lease given back is free at once for another replica, whose commit
    /// then carries its own fence; on the embedded store a lease is a no-op without a fence.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn leases_are_given_back_and_fence_commits() {
        let redis = crate::redis_pool::TestRedis::start("lease");
        let store = super::Store::new(std::sync::Arc::new(RedisBackend::open(&redis.url).unwrap()));
        let first = store.lease("app\ns", "a").await.unwrap().unwrap();
        let fence = first.fence().unwrap();
        first.release().await;
        let ttl = Duration::from_secs(10);
        assert!(
            store.backend().try_lease("app\ns", "b#0", ttl).unwrap(),
            "free at once, not when it expires"
        );
        store.backend().release("app\ns", "b#0").unwrap();
        let second = store.lease("app\ns", "b").await.unwrap().unwrap();
        let stale = store.apply(&[fence, put(Table::Apps, "k", "1")]);
        assert_eq!(stale, Err(StoreError::Fenced), "a's fence no longer holds");
        let fresh = second.fence().unwrap();
        store.apply(&[fresh, put(Table::Apps, "k", "2")]).unwrap();
        assert_eq!(
            store.backend().get(Table::Apps, "k").unwrap().as_deref(),
            Some("2")
        );
        drop(second);
        let dir = std::env::temp_dir().join(format!("palisade-lease-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let embedded = super::Store::open(&dir.join("server.redb")).unwrap();
        let lease = embedded.lease("app\ns", "a").await.unwrap().unwrap();
        assert!(lease.fence().is_none());
        drop(embedded);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_embedded_backend_keeps_the_contract() {
        let dir = std::env::temp_dir().join(format!("palisade-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        conformance(&RedbBackend::open(&dir.join("server.redb")).unwrap());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
