//! `Idempotency-Key` on `POST /v1/run`: the first request with a key runs and its response is
//! stored (durably, for 24 hours, per tenant); the same key with the same body gets the stored
//! response, marked `Idempotent-Replayed: true`; the same key with another body is 422
//! `idempotency_conflict`. Concurrent requests with one key are serialized, so only one runs.
//! Refusals made before a call ran (auth, unknown policy, capacity) are not stored.

use super::errors::ApiError;
use super::runs::Stored;
use super::state::AppState;
use super::store::Table;
use crate::Error;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

/// Longest key taken.
pub const MAX_KEY_BYTES: usize = 255;

/// The locks of the keys in use.
#[derive(Default)]
pub struct Idempotency {
    in_flight: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
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

/// Remove records older than the server's idempotency TTL.
pub fn purge(state: &AppState) -> Result<usize, String> {
    let ttl = state.config.idempotency_ttl.as_millis() as u64;
    let now = crate::audit::now_unix_ms();
    let old: Vec<String> = state
        .store
        .all::<Record>(Table::Idempotency)?
        .into_iter()
        .filter(|(_, r)| now.saturating_sub(r.created_unix_ms) >= ttl)
        .map(|(k, _)| k)
        .collect();
    state.store.remove(Table::Idempotency, &old)?;
    Ok(old.len())
}
