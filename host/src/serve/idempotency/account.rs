//! What one tenant's keyed runs keep in the store: each `POST /v1/run` with an
//! `Idempotency-Key` keeps its response for the TTL (24 hours by default), so one tenant could
//! otherwise fill the store. The tenant's account (`Table::Usage`, `runs\nTENANT`) counts its
//! records and their bytes; it changes in the same atomic batch as the records it counts, a
//! new record's and a purge's. A new keyed run is refused (429 `capacity_exhausted`) while the
//! account is at its [`KeyQuota`]; a replay of a stored key always answers.

use super::super::errors::ApiError;
use super::super::store::{Store, StoreError, Table, Write};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What one tenant's keyed runs may keep: records, and their bytes (key and stored response).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyQuota {
    /// The most records.
    pub records: u64,
    /// The most bytes.
    pub bytes: u64,
}

impl Default for KeyQuota {
    /// 10,000 records and 256 MiB per tenant: a response is kept whole, up to the output and
    /// log caps of its policy (about 2 MB each at most by default), so the bytes bound what
    /// the records alone would not.
    fn default() -> Self {
        KeyQuota {
            records: 10_000,
            bytes: 256 << 20,
        }
    }
}

/// A tenant's account, as the store keeps it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Records kept.
    pub records: u64,
    /// Their bytes: key and value.
    pub bytes: u64,
}

/// How long the account's turn is waited for on a shared store before `store_unavailable`.
const TURN_WAIT: Duration = Duration::from_secs(30);

/// The tenants' accounts: the store, this server's turn on them, and the quota.
#[derive(Clone)]
pub struct Accounts {
    store: Store,
    replica: String,
    quota: KeyQuota,
    /// One account changes at a time on a store of one server; on a shared store, replicas
    /// and this server's own threads take turns through the lease `usage\nTENANT`.
    turn: Arc<Mutex<()>>,
}

/// The key of `tenant`'s account.
fn account_key(tenant: &str) -> String {
    format!("runs\n{tenant}")
}

/// The tenant of a record's key (`TENANT\nKEY`).
pub fn tenant_of(id: &str) -> &str {
    id.split_once('\n').map_or(id, |(tenant, _)| tenant)
}

impl Accounts {
    pub fn new(store: Store, replica: String, quota: KeyQuota) -> Accounts {
        Accounts {
            store,
            replica,
            quota,
            turn: Arc::default(),
        }
    }

    /// The quota every tenant has.
    pub fn quota(&self) -> KeyQuota {
        self.quota
    }

    /// `tenant`'s account now.
    pub fn usage(&self, tenant: &str) -> Result<Usage, StoreError> {
        Ok(self
            .store
            .get(Table::Usage, &account_key(tenant))?
            .unwrap_or_default())
    }

    /// Whether `tenant` may keep one more record: 429 `capacity_exhausted` at its quota. (Runs
    /// of one tenant admitted at once may each keep their record: the account passes its
    /// quota by at most the keyed runs in flight when it is reached.)
    pub fn admit(&self, tenant: &str) -> Result<(), ApiError> {
        let usage = self.usage(tenant)?;
        let quota = self.quota;
        if usage.records < quota.records && usage.bytes < quota.bytes {
            return Ok(());
        }
        Err(ApiError::capacity(
            StatusCode::TOO_MANY_REQUESTS,
            0,
            60,
            &format!(
                "your key keeps {} idempotency records of {} bytes, and may keep {} records of \
                 {} bytes; each is kept for the idempotency TTL (24 hours by default) and then \
                 removed within a minute. Retry later, send the run without Idempotency-Key, \
                 or ask for a higher --max-keyed-records / --max-keyed-bytes",
                usage.records, usage.bytes, quota.records, quota.bytes
            ),
        ))
    }

    /// Run `f` in `tenant`'s turn: this server's, and on a shared store the lease
    /// `usage\nTENANT`, whose fence `f` puts in its batch.
    fn in_turn<T>(
        &self,
        tenant: &str,
        f: impl FnOnce(Write) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let backend = self.store.backend();
        // On a store of one server, this server's lock is the turn (its leases are no-ops); on
        // a shared store, the tenant's own lease is, and no lock of every tenant's is held
        // while it is waited for.
        let _turn =
            (!backend.shared()).then(|| self.turn.lock().unwrap_or_else(|e| e.into_inner()));
        let lease = format!("usage\n{tenant}");
        let holder = format!("{}#{}", self.replica, crate::serve::new_id());
        let started = Instant::now();
        while !backend.try_lease(&lease, &holder, super::super::store::lease::LEASE_TTL)? {
            if started.elapsed() >= TURN_WAIT {
                return Err(StoreError::Unavailable(format!(
                    "the account of `{tenant}` stayed held by another replica for {} s",
                    TURN_WAIT.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let result = f(Write::Fence {
            lease: lease.clone(),
            holder: holder.clone(),
        });
        let _ = backend.release(&lease, &holder);
        result
    }

    /// Keep `value` under `id` (`TENANT\nKEY`), with `fences` (the key's lease), and count it
    /// in its tenant's account, in one batch; a record it replaces (expired) is uncounted.
    pub fn keep(&self, id: String, value: String, fences: Vec<Write>) -> Result<(), StoreError> {
        let tenant = tenant_of(&id).to_owned();
        self.in_turn(&tenant, |fence| {
            let mut usage = self.usage(&tenant)?;
            match self.store.backend().get(Table::RunKeys, &id)? {
                Some(old) => {
                    usage.bytes = usage.bytes.saturating_sub((id.len() + old.len()) as u64)
                }
                None => usage.records += 1,
            }
            usage.bytes += (id.len() + value.len()) as u64;
            let mut writes = fences;
            writes.push(fence);
            writes.push(account(&tenant, usage)?);
            writes.push(Write::Put {
                table: Table::RunKeys,
                key: id,
                value,
            });
            self.store.apply(&writes)
        })
    }

    /// Remove those of `ids` (all of one tenant's) whose value still satisfies `still`, and
    /// uncount them, in one batch; the number removed.
    pub fn remove_if(
        &self,
        tenant: &str,
        ids: &[String],
        still: &dyn Fn(&str) -> bool,
    ) -> Result<usize, StoreError> {
        self.in_turn(tenant, |fence| {
            let mut usage = self.usage(tenant)?;
            let mut writes = vec![fence];
            for id in ids {
                if let Some(value) = self.store.backend().get(Table::RunKeys, id)?
                    && still(&value)
                {
                    usage.records = usage.records.saturating_sub(1);
                    usage.bytes = usage.bytes.saturating_sub((id.len() + value.len()) as u64);
                    writes.push(Write::Remove {
                        table: Table::RunKeys,
                        key: id.clone(),
                    });
                }
            }
            let removed = writes.len() - 1;
            if removed > 0 {
                writes.push(account(tenant, usage)?);
                self.store.apply(&writes)?;
            }
            Ok(removed)
        })
    }
}

/// The write of `tenant`'s account.
fn account(tenant: &str, usage: Usage) -> Result<Write, StoreError> {
    Ok(Write::Put {
        table: Table::Usage,
        key: account_key(tenant),
        value: serde_json::to_string(&usage).map_err(|e| StoreError::Failed(e.to_string()))?,
    })
}
