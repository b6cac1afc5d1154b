//! `Idempotency-Key` on `POST /v1/run`: the first request with a key runs and its response is
//! stored (durably, for 24 hours, per tenant); the same key with the same body gets the stored
//! response, marked `Idempotent-Replayed: true`; the same key with another body is 422
//! `idempotency_conflict`. Concurrent requests with one key are serialized, so only one runs.
//! Refusals made before a call ran (auth, unknown policy, capacity) are not stored. [`purge`]
//! removes expired records, these and the apps' (`apps/records.rs`), a bounded pass at a time.

use super::apps::records;
use super::errors::ApiError;
use super::runs::Stored;
use super::state::AppState;
use super::store::{Store, Table};
use crate::Error;
use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::future::Future;
use std::ops::Bound;
use std::sync::{Arc, Mutex};

/// Longest key taken.
pub const MAX_KEY_BYTES: usize = 255;

/// The locks of the keys in use, and where the next purge pass starts in each table.
#[derive(Default)]
pub struct Idempotency {
    in_flight: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    purge_from: Mutex<[Option<String>; 2]>,
}

#[derive(Serialize, Deserialize)]
struct Record {
    body_sha256: String,
    created_unix_ms: u64,
    response: Stored,
}

/// A response, and whether it is a replay.
pub struct Answer {
    /// The response.
    pub stored: Stored,
    /// Whether it was stored by an earlier request.
    pub replayed: bool,
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, ApiError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(detail)) => Err(Error::Internal { detail }.into()),
        Err(e) => Err(Error::Internal {
            detail: e.to_string(),
        }
        .into()),
    }
}

impl Idempotency {
    fn lock_for(&self, id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(id.to_owned()).or_default().clone()
    }

    fn release(&self, id: &str, lock: Arc<tokio::sync::Mutex<()>>) {
        let mut map = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        // The map's own reference and this one: nobody else waits for the key.
        if Arc::strong_count(&lock) <= 2 {
            map.remove(id);
        }
    }

    /// Answer a request with `key` (if any) and `body`, running `run` at most once per key.
    pub async fn answer<F, Fut>(
        &self,
        state: &Arc<AppState>,
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
        if key.is_empty() || key.len() > MAX_KEY_BYTES || key.chars().any(char::is_control) {
            return Err(ApiError::invalid(format!(
                "an Idempotency-Key has 1 to {MAX_KEY_BYTES} bytes and no control characters"
            )));
        }
        let id = format!("{tenant}\n{key}");
        let hash = crate::record::hex(&Sha256::digest(body));
        let lock = self.lock_for(&id);
        let result = {
            let _turn = lock.lock().await;
            self.answer_locked(state, &id, key, hash, run).await
        };
        self.release(&id, lock);
        result
    }

    async fn answer_locked<F, Fut>(
        &self,
        state: &Arc<AppState>,
        id: &str,
        key: &str,
        hash: String,
        run: F,
    ) -> Result<Answer, ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Stored, ApiError>>,
    {
        let store = state.store.clone();
        let lookup = id.to_owned();
        let found: Option<Record> =
            blocking(move || store.get(Table::Idempotency, &lookup)).await?;
        let ttl = state.config.idempotency_ttl.as_millis() as u64;
        if let Some(record) =
            found.filter(|r| crate::audit::now_unix_ms() - r.created_unix_ms < ttl)
        {
            if record.body_sha256 != hash {
                return Err(ApiError::from(Error::IdempotencyConflict {
                    key: key.to_owned(),
                }));
            }
            return Ok(Answer {
                stored: record.response,
                replayed: true,
            });
        }
        let stored = run().await?;
        let record = Record {
            body_sha256: hash,
            created_unix_ms: crate::audit::now_unix_ms(),
            response: stored.clone(),
        };
        let store = state.store.clone();
        let id = id.to_owned();
        blocking(move || store.put(Table::Idempotency, &id, &record)).await?;
        Ok(Answer {
            stored,
            replayed: false,
        })
    }
}

/// Most records one purge pass reads from each table. A pass reads them in a read transaction
/// (commits go on meanwhile), so this bounds the time and memory one pass takes; the next pass
/// goes on from where this one stopped, and wraps around at the end of the table.
pub const PURGE_SCAN: usize = 20_000;

/// Most records removed in one write transaction: bounds how long a purge holds up commits.
const PURGE_BATCH: usize = 1_000;

/// What one purge pass removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Purged {
    /// `POST /v1/run`'s records.
    pub runs: usize,
    /// App actions' records (`POST /v1/apps/{app}/actions`, `/press`, `/actions`).
    pub apps: usize,
}

/// The part of either kind of record a purge reads.
#[derive(Deserialize)]
struct Written {
    created_unix_ms: u64,
}

fn store_err<E: std::fmt::Display>(e: E) -> String {
    format!("idempotency purge: {e}")
}

fn expired(value: &str, now: u64, ttl: u64) -> bool {
    serde_json::from_str::<Written>(value)
        .is_ok_and(|w| now.saturating_sub(w.created_unix_ms) >= ttl)
}

/// One bounded pass over `table`: read at most `scan` records after the key `from` (from the
/// start when `None`), and remove those older than `ttl` at `now`. Each is checked again in
/// the transaction that removes it, so a record written anew meanwhile stays. The number
/// removed, and where the next pass starts (`None`: this one reached the end).
fn purge_table(
    store: &Store,
    table: TableDefinition<&str, &str>,
    from: Option<&str>,
    (now, ttl): (u64, u64),
    scan: usize,
) -> Result<(usize, Option<String>), String> {
    let mut old = Vec::new();
    let mut read = 0;
    let mut last = None;
    {
        let txn = store.db().begin_read().map_err(store_err)?;
        let t = match txn.open_table(table) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok((0, None)),
            Err(e) => return Err(store_err(e)),
        };
        let range = match from {
            Some(key) => t.range::<&str>((Bound::Excluded(key), Bound::Unbounded)),
            None => t.range::<&str>(..),
        }
        .map_err(store_err)?;
        for entry in range {
            let (k, v) = entry.map_err(store_err)?;
            read += 1;
            if expired(v.value(), now, ttl) {
                old.push(k.value().to_owned());
            }
            if read >= scan {
                last = Some(k.value().to_owned());
                break;
            }
        }
    }
    let mut removed = 0;
    for batch in old.chunks(PURGE_BATCH) {
        let txn = store.db().begin_write().map_err(store_err)?;
        {
            let mut t = txn.open_table(table).map_err(store_err)?;
            for key in batch {
                let still_old = t
                    .get(key.as_str())
                    .map_err(store_err)?
                    .is_some_and(|v| expired(v.value(), now, ttl));
                if still_old {
                    t.remove(key.as_str()).map_err(store_err)?;
                    removed += 1;
                }
            }
        }
        txn.commit().map_err(store_err)?;
    }
    Ok((removed, last))
}

/// Remove idempotency records older than the server's TTL (`Config::idempotency_ttl`, 24 hours
/// by default): `POST /v1/run`'s and the apps' alike, in one bounded pass over each table
/// ([`PURGE_SCAN`]). The reaper runs it every minute, and at each of its ticks while a pass
/// stops before the end of a table ([`purge_unfinished`]).
pub fn purge(state: &AppState) -> Result<Purged, String> {
    purge_at(state, crate::audit::now_unix_ms(), PURGE_SCAN)
}

/// Whether the last purge pass stopped before the end of either table (it read
/// [`PURGE_SCAN`] records of it): the reaper then runs the next pass at its next tick.
pub fn purge_unfinished(state: &AppState) -> bool {
    state
        .idempotency
        .purge_from
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .any(Option::is_some)
}

/// [`purge`] as if the time were `now` (Unix milliseconds), reading at most `scan` records of
/// each table: a record older than the TTL at `now` goes. Tests move `now` on instead of
/// waiting a day.
pub fn purge_at(state: &AppState, now: u64, scan: usize) -> Result<Purged, String> {
    let ttl = state.config.idempotency_ttl.as_millis() as u64;
    let mut from = state
        .idempotency
        .purge_from
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let tables = [Table::Idempotency.def(), records::IDEMPOTENCY];
    let mut removed = [0; 2];
    for (i, table) in tables.into_iter().enumerate() {
        let (n, next) = purge_table(
            &state.store,
            table,
            from[i].as_deref(),
            (now, ttl),
            scan.max(1),
        )?;
        removed[i] = n;
        from[i] = next;
    }
    let purged = Purged {
        runs: removed[0],
        apps: removed[1],
    };
    if purged != Purged::default() {
        tracing::info!(
            runs = purged.runs,
            apps = purged.apps,
            "purged expired idempotency records"
        );
    }
    Ok(purged)
}
