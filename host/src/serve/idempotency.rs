//! The idempotency ledger (`Idempotency-Key`): the first request with a key runs and its
//! response is stored (durably, for `--idempotency-ttl`, 24 hours by default, per tenant); the
//! same key with the same body gets the stored response, marked `Idempotent-Replayed: true`;
//! the same key with another body is 422 `idempotency_conflict`. Concurrent requests with one
//! key are serialized, so only one runs. Refusals made before a call ran (auth, unknown
//! policy, capacity) are not stored. `POST /v1/run` goes through [`Ledger::answer`]; an app's
//! commit, which writes its key record in its own transaction with its state, asks
//! [`Ledger::judge`] and keeps [`Ledger::record`]'s record. [`Ledger::purge`] removes expired
//! records from every table the ledger was given, a bounded pass at a time. Each tenant's
//! records of both tables are counted in its account (the `account` module), bounded by a
//! [`KeyQuota`].

mod account;

pub use account::{Accounts, Kept, KeyQuota, Usage, tenant_of};

use super::errors::ApiError;
use super::reply::Stored;
use super::store::{Scan, Store, StoreError, Table, Write, blocking};
use super::turns::Turns;
use crate::Error;
use axum::http::HeaderMap;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

/// Longest key taken.
pub const MAX_KEY_BYTES: usize = 255;

/// The ledger: the store's key records, the turns of the keys in use, and where the next purge
/// pass starts in each table.
pub struct Ledger {
    store: Store,
    replica: String,
    ttl: Duration,
    tables: Vec<Table>,
    turns: Turns,
    purge_from: Mutex<Vec<Option<String>>>,
    accounts: Accounts,
}

/// What is kept of a keyed request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeyRecord {
    /// SHA-256 of the request's body.
    pub body_sha256: String,
    /// When it was stored.
    pub created_unix_ms: u64,
    /// The response.
    pub response: Stored,
}

/// What the ledger knows of a key.
#[derive(Debug)]
pub enum Seen {
    /// Nothing (or only an expired record): the request runs.
    Fresh,
    /// An earlier request with the same body: its response.
    Replay(Stored),
}

/// A response, and whether it is a replay.
pub struct Answer {
    /// The response.
    pub stored: Stored,
    /// Whether it was stored by an earlier request.
    pub replayed: bool,
}

impl Ledger {
    /// A ledger over `store`, keeping records for `ttl`, purging `tables` (the first is
    /// `POST /v1/run`'s own) and counting their records in the tenants' accounts (every key
    /// of them starts with `TENANT\n`).
    pub fn new(store: Store, ttl: Duration, tables: Vec<Table>) -> Ledger {
        let purge_from = Mutex::new(vec![None; tables.len()]);
        Ledger {
            accounts: Accounts::new(store.clone(), String::new(), KeyQuota::default()),
            store,
            replica: String::new(),
            ttl,
            tables,
            turns: Turns::default(),
            purge_from,
        }
    }

    /// The ledger of the replica named `replica` (the holder of its leases on a shared store).
    pub fn for_replica(mut self, replica: String) -> Ledger {
        self.accounts = Accounts::new(self.store.clone(), replica.clone(), self.accounts.quota());
        self.replica = replica;
        self
    }

    /// The ledger with `quota` for each tenant's `POST /v1/run` records.
    pub fn with_quota(mut self, quota: KeyQuota) -> Ledger {
        self.accounts = Accounts::new(self.store.clone(), self.replica.clone(), quota);
        self
    }

    /// What `tenant`'s key records (`POST /v1/run`'s and its apps') take now.
    pub fn usage(&self, tenant: &str) -> Result<Usage, StoreError> {
        self.accounts.usage(tenant)
    }

    /// The tenants' accounts, which an app's commit keeps its key record through.
    pub fn accounts(&self) -> &Accounts {
        &self.accounts
    }

    /// Whether `tenant` may keep one more key record (429 `capacity_exhausted` at its quota),
    /// asked before the keyed request runs.
    pub async fn admit(&self, tenant: &str) -> Result<(), ApiError> {
        let accounts = self.accounts.clone();
        let payer = tenant.to_owned();
        tokio::task::spawn_blocking(move || accounts.admit(&payer))
            .await
            .map_err(|e| Error::Internal {
                detail: format!("the idempotency account check ended: {e}"),
            })?
    }

    /// Count the records of the ledger's tables into the accounts, once per store
    /// ([`Accounts::rebuild_once`]); the server does it at start, before it serves. Whether
    /// it rebuilt them.
    pub fn count_stored_records(&self) -> Result<bool, StoreError> {
        self.accounts.rebuild_once(&self.tables)
    }

    /// The request's `Idempotency-Key`, if any: visible ASCII, 1 to [`MAX_KEY_BYTES`] bytes.
    /// The one place a key is checked.
    pub fn key(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
        let Some(value) = headers.get("idempotency-key") else {
            return Ok(None);
        };
        let key = value
            .to_str()
            .map_err(|_| ApiError::invalid("the Idempotency-Key is not visible ASCII"))?;
        if key.is_empty() || key.len() > MAX_KEY_BYTES || key.chars().any(char::is_control) {
            return Err(ApiError::invalid(format!(
                "an Idempotency-Key has 1 to {MAX_KEY_BYTES} bytes and no control characters"
            )));
        }
        Ok(Some(key))
    }

    /// The SHA-256 of a request's body, as records keep it.
    pub fn hash(body: &[u8]) -> String {
        crate::hex::sha256(body)
    }

    /// Judge `found` (the record under `key`, if any) for a request whose body hashes to
    /// `hash`, at `now`: fresh (none, or expired), a replay, or `idempotency_conflict`.
    pub fn judge(
        &self,
        found: Option<KeyRecord>,
        key: &str,
        hash: &str,
        now: u64,
    ) -> Result<Seen, ApiError> {
        let ttl = self.ttl.as_millis() as u64;
        match found.filter(|r| now.saturating_sub(r.created_unix_ms) < ttl) {
            None => Ok(Seen::Fresh),
            Some(record) if record.body_sha256 == hash => Ok(Seen::Replay(record.response)),
            Some(_) => Err(ApiError::from(Error::IdempotencyConflict {
                key: key.to_owned(),
            })),
        }
    }

    /// The record to keep for a request whose body hashes to `hash`, answered `response`.
    pub fn record(hash: String, response: &Stored) -> KeyRecord {
        KeyRecord {
            body_sha256: hash,
            created_unix_ms: crate::audit::now_unix_ms(),
            response: response.clone(),
        }
    }

    /// Run `f` in the turn of `id` (a tenant's key): requests with one key take turns.
    pub async fn in_turn<T>(&self, id: &str, f: impl Future<Output = T>) -> T {
        self.turns.run(id, f).await
    }

    /// Answer a `POST /v1/run` of `tenant` with `key` (if any) and `body`, running `run` at
    /// most once per key.
    pub async fn answer<F, Fut>(
        &self,
        tenant: &str,
        key: Option<&str>,
        body: &[u8],
        run: F,
    ) -> Result<Answer, ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Stored, ApiError>>,
    {
        let Some(key) = key else {
            return Ok(Answer {
                stored: run().await?,
                replayed: false,
            });
        };
        let id = format!("{tenant}\n{key}");
        let hash = Ledger::hash(body);
        let turn = id.clone();
        self.in_turn(&turn, async {
            // Replicas sharing the store take turns on the key through its lease.
            let lease = self
                .store
                .lease(&format!("run\n{id}"), &self.replica)
                .await?
                .ok_or_else(|| busy(key))?;
            let store = self.store.clone();
            let lookup = id.clone();
            let found = blocking(move || store.get(Table::RunKeys, &lookup)).await?;
            if let Seen::Replay(stored) =
                self.judge(found, key, &hash, crate::audit::now_unix_ms())?
            {
                lease.release().await;
                return Ok(Answer {
                    stored,
                    replayed: true,
                });
            }
            self.admit(tenant).await?;
            let stored = run().await?;
            let record = Ledger::record(hash, &stored);
            let value = serde_json::to_string(&record).map_err(|e| Error::Internal {
                detail: format!("an idempotency record cannot be written as JSON: {e}"),
            })?;
            let fences: Vec<Write> = lease.fence().into_iter().collect();
            let accounts = self.accounts.clone();
            blocking(move || accounts.keep(id, value, fences)).await?;
            lease.release().await;
            Ok(Answer {
                stored,
                replayed: false,
            })
        })
        .await
    }
}

/// 409 `session_busy` for a key whose lease another replica held past the wait.
fn busy(key: &str) -> ApiError {
    ApiError::from(Error::SessionBusy { id: key.to_owned() }).note(
        "another replica is running a request with this Idempotency-Key: retry to get its response",
    )
}

/// Most records one purge pass reads from each table. A pass reads them in a read transaction
/// (commits go on meanwhile), so this bounds the time and memory one pass takes; the next pass
/// goes on from where this one stopped, and wraps around at the end of the table.
pub const PURGE_SCAN: usize = 20_000;

/// Most records removed in one write transaction: bounds how long a purge holds up commits.
const PURGE_BATCH: usize = 1_000;

/// The part of either kind of record a purge reads.
#[derive(Deserialize)]
struct Written {
    created_unix_ms: u64,
}

fn store_err(e: StoreError) -> String {
    format!("idempotency purge: {e}")
}

fn expired(value: &str, now: u64, ttl: u64) -> bool {
    serde_json::from_str::<Written>(value)
        .is_ok_and(|w| now.saturating_sub(w.created_unix_ms) >= ttl)
}

/// One bounded pass over `table`: read at most `scan` records after the key `from` (from the
/// start when `None`), and remove those older than `ttl` at `now`. Each is checked again in
/// the step that removes it, so a record written anew meanwhile stays. The number removed,
/// and where the next pass starts (`None`: this one reached the end).
fn purge_table(
    store: &Store,
    table: Table,
    from: Option<&str>,
    (now, ttl): (u64, u64),
    scan: usize,
    accounts: &Accounts,
) -> Result<(usize, Option<String>), String> {
    let read = store
        .scan(
            table,
            Scan {
                prefix: "",
                after: from,
                limit: scan,
                max_bytes: usize::MAX,
            },
        )
        .map_err(store_err)?;
    let last = (read.len() >= scan)
        .then(|| read.last().map(|(k, _)| k.clone()))
        .flatten();
    let old: Vec<String> = read
        .into_iter()
        .filter(|(_, v)| expired(v, now, ttl))
        .map(|(k, _)| k)
        .collect();
    let still = |v: &str| expired(v, now, ttl);
    let mut removed = 0;
    // Each tenant's records leave its account in the batch that removes them.
    let mut by_tenant: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for id in &old {
        by_tenant.entry(tenant_of(id)).or_default().push(id.clone());
    }
    for (tenant, ids) in by_tenant {
        for batch in ids.chunks(PURGE_BATCH) {
            removed += accounts
                .remove_if((tenant, table), batch, &still)
                .map_err(store_err)?;
        }
    }
    Ok((removed, last))
}

impl Ledger {
    /// Remove key records older than the TTL from every table of the ledger, in one bounded
    /// pass over each ([`PURGE_SCAN`]). The reaper runs it every minute, and at each of its
    /// ticks while a pass stops before the end of a table ([`Ledger::purge_unfinished`]).
    pub fn purge(&self) -> Result<Vec<usize>, String> {
        self.purge_at(crate::audit::now_unix_ms(), PURGE_SCAN)
    }

    /// Whether the last purge pass stopped before the end of a table (it read [`PURGE_SCAN`]
    /// records of it): the reaper then runs the next pass at its next tick.
    pub fn purge_unfinished(&self) -> bool {
        self.purge_from
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(Option::is_some)
    }

    /// [`Ledger::purge`] as if the time were `now` (Unix milliseconds), reading at most `scan`
    /// records of each table: a record older than the TTL at `now` goes. The number removed
    /// from each table, in the ledger's order. Tests move `now` on instead of waiting a day.
    pub fn purge_at(&self, now: u64, scan: usize) -> Result<Vec<usize>, String> {
        let ttl = self.ttl.as_millis() as u64;
        let mut from = self.purge_from.lock().unwrap_or_else(|e| e.into_inner());
        let mut removed = vec![0; self.tables.len()];
        for (i, table) in self.tables.iter().enumerate() {
            let (n, next) = purge_table(
                &self.store,
                *table,
                from[i].as_deref(),
                (now, ttl),
                scan.max(1),
                &self.accounts,
            )?;
            removed[i] = n;
            from[i] = next;
        }
        if removed.iter().any(|n| *n > 0) {
            tracing::info!(?removed, "purged expired idempotency records");
        }
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::{Ledger, Seen};
    use crate::serve::reply::Stored;
    use crate::serve::store::{Store, Table};
    use std::time::Duration;

    fn ledger(name: &str) -> (Ledger, std::path::PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("palisade-ledger-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let store = Store::open(&dir.join("server.redb")).unwrap();
        let ledger = Ledger::new(store, Duration::from_secs(60), vec![Table::RunKeys]);
        (ledger, dir)
    }

    fn ok(body: &str) -> Result<Stored, crate::serve::errors::ApiError> {
        Ok(Stored {
            status: 200,
            body: body.to_owned(),
        })
    }

    /// Fresh, then a replay of the same body, a conflict for another body, and fresh again
    /// once the record has expired and been purged.
    #[tokio::test]
    async fn fresh_replay_conflict_expired() {
        let (ledger, dir) = ledger("cycle");
        let first = ledger
            .answer("t", Some("k"), b"A", || async { ok("1") })
            .await
            .unwrap();
        assert!(!first.replayed);
        assert_eq!(first.stored.body, "1");
        let again = ledger
            .answer("t", Some("k"), b"A", || async { ok("2") })
            .await
            .unwrap();
        assert!(again.replayed, "the stored response, not a second run");
        assert_eq!(again.stored.body, "1");
        let other = ledger
            .answer("t", Some("k"), b"B", || async { ok("3") })
            .await;
        assert_eq!(other.err().unwrap().code(), "idempotency_conflict");
        // Another tenant's key of the same name is its own.
        let theirs = ledger
            .answer("u", Some("k"), b"B", || async { ok("4") })
            .await
            .unwrap();
        assert!(!theirs.replayed);
        let later = crate::audit::now_unix_ms() + 61_000;
        assert_eq!(ledger.purge_at(later, 100).unwrap(), vec![2]);
        assert!(!ledger.purge_unfinished());
        let fresh = ledger
            .answer("t", Some("k"), b"B", || async { ok("5") })
            .await
            .unwrap();
        assert!(!fresh.replayed);
        assert_eq!(fresh.stored.body, "5");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A tenant's keyed runs stop at its quota of records (429 `capacity_exhausted`, the run
    /// not made) while replays of its stored keys still answer and other tenants still run;
    /// the purge uncounts what it removes, and the tenant runs again.
    async fn the_quota_holds(store: Store) {
        let quota = super::KeyQuota {
            records: 2,
            bytes: 1 << 20,
        };
        let ledger =
            Ledger::new(store, Duration::from_secs(60), vec![Table::RunKeys]).with_quota(quota);
        for key in ["a", "b"] {
            let first = ledger.answer("t", Some(key), b"A", || async { ok(key) });
            assert!(!first.await.unwrap().replayed);
        }
        let usage = ledger.usage("t").unwrap();
        assert_eq!(usage.records, 2);
        assert!(usage.bytes > 0, "{usage:?}");
        let ran = std::sync::atomic::AtomicBool::new(false);
        let refused = ledger
            .answer("t", Some("c"), b"A", || async {
                ran.store(true, std::sync::atomic::Ordering::SeqCst);
                ok("c")
            })
            .await;
        let refused = refused.err().expect("past the quota");
        assert_eq!(refused.code(), "capacity_exhausted");
        assert_eq!(refused.status().as_u16(), 429);
        assert!(!ran.load(std::sync::atomic::Ordering::SeqCst), "not run");
        let replay = ledger.answer("t", Some("a"), b"A", || async { ok("again") });
        let replay = replay.await.unwrap();
        assert!(replay.replayed);
        assert_eq!(replay.stored.body, "a");
        let theirs = ledger.answer("u", Some("c"), b"A", || async { ok("u") });
        assert!(
            !theirs.await.unwrap().replayed,
            "another tenant's own quota"
        );
        let unkeyed = ledger.answer("t", None, b"A", || async { ok("free") });
        assert_eq!(
            unkeyed.await.unwrap().stored.body,
            "free",
            "keyless runs keep nothing"
        );
        let later = crate::audit::now_unix_ms() + 61_000;
        assert_eq!(ledger.purge_at(later, 100).unwrap(), vec![3]);
        assert_eq!(ledger.usage("t").unwrap(), super::Usage::default());
        let again = ledger.answer("t", Some("c"), b"A", || async { ok("c") });
        assert!(!again.await.unwrap().replayed);
        assert_eq!(ledger.usage("t").unwrap().records, 1);
    }

    /// Past the byte quota too: one record of a response larger than it fills it.
    async fn the_byte_quota_holds(store: Store) {
        let quota = super::KeyQuota {
            records: 100,
            bytes: 1_000,
        };
        let ledger =
            Ledger::new(store, Duration::from_secs(60), vec![Table::RunKeys]).with_quota(quota);
        let big = "x".repeat(2_000);
        let first = ledger.answer("t", Some("big"), b"A", || async { ok(&big) });
        assert!(!first.await.unwrap().replayed);
        assert!(ledger.usage("t").unwrap().bytes > 2_000);
        let refused = ledger.answer("t", Some("small"), b"A", || async { ok("1") });
        assert_eq!(refused.await.err().unwrap().code(), "capacity_exhausted");
    }

    #[tokio::test]
    async fn the_quota_holds_on_the_embedded_store() {
        let (ledger, dir) = ledger("quota");
        drop(ledger);
        let store = Store::open(&dir.join("quota.redb")).unwrap();
        the_quota_holds(store).await;
        let store = Store::open(&dir.join("bytes.redb")).unwrap();
        the_byte_quota_holds(store).await;
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_quota_holds_on_redis() {
        let redis = crate::redis_pool::TestRedis::start("quota");
        let open = || {
            let backend = crate::serve::store::RedisBackend::open(&redis.url).unwrap();
            Store::new(std::sync::Arc::new(backend))
        };
        the_quota_holds(open()).await;
        open()
            .apply(&[crate::serve::store::Write::RemovePrefix {
                table: Table::Usage,
                prefix: String::new(),
            }])
            .unwrap();
        open()
            .apply(&[crate::serve::store::Write::RemovePrefix {
                table: Table::RunKeys,
                prefix: String::new(),
            }])
            .unwrap();
        the_byte_quota_holds(open()).await;
    }

    /// Issue 38: a store an older server left (records of both tables, an account that
    /// counted only some of them, no version marker) is counted exactly once when it is
    /// opened, and the purge then brings the accounts to exactly nothing.
    fn an_upgraded_store_is_counted(open: &dyn Fn() -> Store) {
        use crate::serve::store::Write;
        let value = |n: usize| {
            let record = Ledger::record(Ledger::hash(b"A"), &ok(&"x".repeat(n)).unwrap());
            serde_json::to_string(&record).unwrap()
        };
        let records = [
            (Table::RunKeys, "t\nk1", value(10)),
            (Table::RunKeys, "t\nk2", value(20)),
            (Table::AppKeys, "t\napp\ns\nk3", value(30)),
            (Table::AppKeys, "u\napp\ns\nk", value(5)),
        ];
        let mut writes: Vec<Write> = records
            .iter()
            .map(|(table, key, value)| Write::Put {
                table: *table,
                key: (*key).to_owned(),
                value: value.clone(),
            })
            .collect();
        writes.push(Write::Put {
            table: Table::Usage,
            key: "runs\nt".into(),
            value: r#"{"records":1,"bytes":50}"#.into(),
        });
        open().apply(&writes).unwrap();
        let size = |tenant: &str| {
            let mine = records.iter().filter(|(_, k, _)| k.starts_with(tenant));
            mine.map(|(_, k, v)| (k.len() + v.len()) as u64)
                .sum::<u64>()
        };
        let tables = vec![Table::RunKeys, Table::AppKeys];
        let ledger = Ledger::new(open(), Duration::from_secs(60), tables.clone());
        assert!(ledger.count_stored_records().unwrap(), "rebuilt");
        let t = super::Usage {
            records: 3,
            bytes: size("t\n"),
        };
        assert_eq!(ledger.usage("t").unwrap(), t);
        let u = super::Usage {
            records: 1,
            bytes: size("u\n"),
        };
        assert_eq!(ledger.usage("u").unwrap(), u);
        drop(ledger);
        // Once: the next opening finds the marker and leaves the accounts as they are.
        let again = Ledger::new(open(), Duration::from_secs(60), tables);
        assert!(!again.count_stored_records().unwrap(), "rebuilt once");
        let later = crate::audit::now_unix_ms() + 61_000;
        assert_eq!(again.purge_at(later, 100).unwrap(), vec![2, 2]);
        assert_eq!(again.usage("t").unwrap(), super::Usage::default());
        assert_eq!(again.usage("u").unwrap(), super::Usage::default());
    }

    #[test]
    fn an_upgraded_store_is_counted_on_the_embedded_store() {
        let (ledger, dir) = ledger("upgraded");
        drop(ledger);
        let path = dir.join("upgraded.redb");
        an_upgraded_store_is_counted(&|| Store::open(&path).unwrap());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_upgraded_store_is_counted_on_redis() {
        let redis = crate::redis_pool::TestRedis::start("upgraded");
        an_upgraded_store_is_counted(&|| {
            let backend = crate::serve::store::RedisBackend::open(&redis.url).unwrap();
            Store::new(std::sync::Arc::new(backend))
        });
    }

    /// A record past the TTL is judged fresh even before a purge removes it.
    #[test]
    fn an_expired_record_is_fresh() {
        let (ledger, dir) = ledger("judge");
        let record = Ledger::record(Ledger::hash(b"A"), &ok("1").unwrap());
        let now = record.created_unix_ms;
        let seen = ledger
            .judge(Some(record.clone()), "k", &Ledger::hash(b"A"), now)
            .unwrap();
        assert!(matches!(seen, Seen::Replay(s) if s.body == "1"));
        let later = ledger
            .judge(Some(record), "k", &Ledger::hash(b"B"), now + 60_000)
            .unwrap();
        assert!(matches!(later, Seen::Fresh));
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Keys are 1 to 255 visible ASCII bytes.
    #[test]
    fn one_key_check() {
        let mut headers = axum::http::HeaderMap::new();
        assert_eq!(Ledger::key(&headers).unwrap(), None);
        headers.insert("idempotency-key", "abc".parse().unwrap());
        assert_eq!(Ledger::key(&headers).unwrap(), Some("abc"));
        headers.insert("idempotency-key", "x".repeat(256).parse().unwrap());
        assert_eq!(Ledger::key(&headers).unwrap_err().code(), "invalid_input");
        headers.insert("idempotency-key", "".parse().unwrap());
        assert_eq!(Ledger::key(&headers).unwrap_err().code(), "invalid_input");
    }
}
