//! What one tenant's idempotency records keep in the store: each `POST /v1/run` and each
//! committed app action with an `Idempotency-Key` keeps its response for the TTL (24 hours by
//! default), so one tenant could otherwise fill the store. The tenant's account
//! (`Table::Usage`, `runs\nTENANT`) counts both kinds of record and their bytes; it changes in
//! the same atomic batch as the records it counts (a new record's, with an app's state and
//! events when it is an action's; a purge's; an app's unload). A new keyed run or action is
//! refused (429 `capacity_exhausted`) while the account is at its [`KeyQuota`]; a replay of a
//! stored key always answers. A store written before the accounts counted every record is
//! counted once when it is opened ([`Accounts::rebuild_once`]).

use super::super::errors::ApiError;
use super::super::store::{Scan, Store, StoreError, Table, Write};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What one tenant's keyed runs and actions may keep: records, and their bytes (key and
/// stored response).
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
    /// The accounts in `store`, for the replica named `replica`, each under `quota`.
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
    /// and actions of one tenant admitted at once may each keep their record: the account
    /// passes its quota by at most the keyed requests in flight when it is reached.)
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
                "your key keeps {} idempotency records (keyed runs and app actions) of {} \
                 bytes, and may keep {} records of {} bytes; each is kept for the idempotency \
                 TTL (24 hours by default) and then removed within a minute. Retry later, send \
                 the request without Idempotency-Key, or ask for a higher --max-keyed-records \
                 / --max-keyed-bytes",
                usage.records, usage.bytes, quota.records, quota.bytes
            ),
        ))
    }

    /// Run `f` in the turn of each of `tenants` (sorted, without repeats): this server's, and
    /// on a shared store the leases `usage\nTENANT`, whose fences `f` puts in its batch.
    fn in_turn<T>(
        &self,
        tenants: &[&str],
        f: impl FnOnce(Vec<Write>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let backend = self.store.backend();
        // On a store of one server, this server's lock is the turn (its leases are no-ops); on
        // a shared store, the tenants' own leases are, and no lock of every tenant's is held
        // while they are waited for. Taken in key order, so two batches never wait on each
        // other.
        let _turn =
            (!backend.shared()).then(|| self.turn.lock().unwrap_or_else(|e| e.into_inner()));
        let holder = format!("{}#{}", self.replica, crate::serve::new_id());
        let mut held = Vec::with_capacity(tenants.len());
        let taken = tenants
            .iter()
            .try_for_each(|tenant| {
                let lease = format!("usage\n{tenant}");
                self.take(&lease, &holder, &format!("the account of `{tenant}`"))?;
                held.push(lease);
                Ok(())
            })
            .and_then(|()| {
                let fences = held.iter().map(|lease| Write::Fence {
                    lease: lease.clone(),
                    holder: holder.clone(),
                });
                f(fences.collect())
            });
        for lease in &held {
            let _ = backend.release(lease, &holder);
        }
        taken
    }

    /// Wait for the lease `lease` (of `what`), at most [`TURN_WAIT`].
    fn take(&self, lease: &str, holder: &str, what: &str) -> Result<(), StoreError> {
        let started = Instant::now();
        let ttl = super::super::store::lease::LEASE_TTL;
        while !self.store.backend().try_lease(lease, holder, ttl)? {
            if started.elapsed() >= TURN_WAIT {
                return Err(StoreError::Unavailable(format!(
                    "{what} stayed held by another replica for {} s",
                    TURN_WAIT.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }

    /// Keep `value` under `id` (`TENANT\nKEY`) in `POST /v1/run`'s table, with `fences` (the
    /// key's lease), counted in its tenant's account, in one batch.
    pub fn keep(&self, id: String, value: String, fences: Vec<Write>) -> Result<(), StoreError> {
        let kept = Kept {
            table: Table::RunKeys,
            id,
            value,
        };
        self.apply_counted(fences, vec![kept])
    }

    /// Apply `writes` and keep the records `kept`, each counted in its tenant's account, in
    /// one atomic batch, in those tenants' turns; a record one replaces (expired) is
    /// uncounted. With nothing kept, `writes` alone, in no turn.
    pub fn apply_counted(&self, mut writes: Vec<Write>, kept: Vec<Kept>) -> Result<(), StoreError> {
        if kept.is_empty() {
            return self.store.apply(&writes);
        }
        let tenants: std::collections::BTreeSet<String> =
            kept.iter().map(|k| tenant_of(&k.id).to_owned()).collect();
        let names: Vec<&str> = tenants.iter().map(String::as_str).collect();
        self.in_turn(&names, |fences| {
            let mut accounts = std::collections::BTreeMap::new();
            for tenant in &names {
                accounts.insert(*tenant, self.usage(tenant)?);
            }
            for k in &kept {
                let usage = accounts.entry(tenant_of(&k.id)).or_default();
                match self.store.backend().get(k.table, &k.id)? {
                    Some(old) => usage.bytes = usage.bytes.saturating_sub(size(&k.id, &old)),
                    None => usage.records += 1,
                }
                usage.bytes += size(&k.id, &k.value);
            }
            writes.extend(fences);
            for (tenant, usage) in accounts {
                writes.push(account(tenant, usage)?);
            }
            writes.extend(kept.into_iter().map(|k| Write::Put {
                table: k.table,
                key: k.id,
                value: k.value,
            }));
            self.store.apply(&writes)
        })
    }

    /// Remove those of `ids` (all of one tenant's) in `table` whose value still satisfies
    /// `still`, and uncount them, in one batch; the number removed.
    pub fn remove_if(
        &self,
        (tenant, table): (&str, Table),
        ids: &[String],
        still: &dyn Fn(&str) -> bool,
    ) -> Result<usize, StoreError> {
        self.in_turn(&[tenant], |fences| {
            let mut usage = self.usage(tenant)?;
            let mut writes = fences;
            let before = writes.len();
            for id in ids {
                if let Some(value) = self.store.backend().get(table, id)?
                    && still(&value)
                {
                    usage.records = usage.records.saturating_sub(1);
                    usage.bytes = usage.bytes.saturating_sub(size(id, &value));
                    writes.push(Write::Remove {
                        table,
                        key: id.clone(),
                    });
                }
            }
            let removed = writes.len() - before;
            if removed > 0 {
                writes.push(account(tenant, usage)?);
                self.store.apply(&writes)?;
            }
            Ok(removed)
        })
    }

    /// Apply `writes`, which remove every record of `table` under `prefix` (all of
    /// `tenant`'s: an app's, unloaded), and uncount those records, in one batch.
    pub fn remove_prefix(
        &self,
        (tenant, table): (&str, Table),
        prefix: &str,
        mut writes: Vec<Write>,
    ) -> Result<(), StoreError> {
        // Counted before the turn: reading an app's records (up to the quota) must not hold
        // every tenant's keyed writes (on the embedded store the turn is one for all). A record
        // kept under the prefix meanwhile is removed without being uncounted, which errs on the
        // side of the quota.
        let gone = tally(&self.store, table, prefix)?;
        self.in_turn(&[tenant], |fences| {
            let mut usage = self.usage(tenant)?;
            let gone = gone.get(tenant).copied().unwrap_or_default();
            usage.records = usage.records.saturating_sub(gone.records);
            usage.bytes = usage.bytes.saturating_sub(gone.bytes);
            writes.extend(fences);
            if gone.records > 0 {
                writes.push(account(tenant, usage)?);
            }
            self.store.apply(&writes)
        })
    }
}

impl Accounts {
    /// Count every record of `tables` into the accounts anew, once per store: when the store
    /// has no `VERSION_KEY` (a store written before the accounts counted every key record,
    /// whose purges would otherwise uncount records never counted). In one batch, with the
    /// marker; on a shared store, in the turn of the lease `usage-rebuild`, so the first
    /// replica of this version to start rebuilds and the others find the marker. The batch
    /// carries no fence: a tally of a large store may outlive the lease, and a rebuild that
    /// could never write would keep the server from starting; two replicas that rebuild at
    /// once each write a whole count. Whether it rebuilt.
    pub fn rebuild_once(&self, tables: &[Table]) -> Result<bool, StoreError> {
        let backend = self.store.backend();
        let _turn =
            (!backend.shared()).then(|| self.turn.lock().unwrap_or_else(|e| e.into_inner()));
        let (lease, holder) = (
            "usage-rebuild",
            format!("{}#{}", self.replica, crate::serve::new_id()),
        );
        self.take(lease, &holder, "the accounts' rebuild")?;
        let rebuilt = (|| {
            if backend.get(Table::Usage, VERSION_KEY)?.as_deref() == Some(VERSION) {
                return Ok(false);
            }
            let mut by_tenant = std::collections::BTreeMap::<String, Usage>::new();
            for table in tables {
                for (tenant, usage) in tally(&self.store, *table, "")? {
                    let total = by_tenant.entry(tenant).or_default();
                    total.records += usage.records;
                    total.bytes += usage.bytes;
                }
            }
            let mut writes = vec![Write::RemovePrefix {
                table: Table::Usage,
                prefix: account_key(""),
            }];
            for (tenant, usage) in &by_tenant {
                writes.push(account(tenant, *usage)?);
            }
            writes.push(Write::Put {
                table: Table::Usage,
                key: VERSION_KEY.to_owned(),
                value: VERSION.to_owned(),
            });
            self.store.apply(&writes)?;
            tracing::info!(tenants = by_tenant.len(), "idempotency accounts rebuilt");
            Ok(true)
        })();
        let _ = backend.release(lease, &holder);
        rebuilt
    }
}

/// The key, in `Table::Usage`, of the accounts' version: [`VERSION`] once they count every
/// record of `POST /v1/run` and of the apps' actions. (No account key is without a newline.)
pub const VERSION_KEY: &str = "version";

/// The accounts' version.
const VERSION: &str = "2";

/// A record to keep, counted in its tenant's account.
pub struct Kept {
    /// Its table: `POST /v1/run`'s or the apps'.
    pub table: Table,
    /// Its key, which starts with `TENANT\n`.
    pub id: String,
    /// Its JSON.
    pub value: String,
}

/// What a record takes in its account: key and value.
fn size(id: &str, value: &str) -> u64 {
    (id.len() + value.len()) as u64
}

/// Most bytes of records one page of [`tally`] reads.
const TALLY_PAGE_BYTES: usize = 16 << 20;

/// What the records of `table` under `prefix` take, by tenant, read a page at a time.
fn tally(
    store: &Store,
    table: Table,
    prefix: &str,
) -> Result<std::collections::BTreeMap<String, Usage>, StoreError> {
    let mut by_tenant = std::collections::BTreeMap::<String, Usage>::new();
    let mut after: Option<String> = None;
    loop {
        let page = store.scan(
            table,
            Scan {
                prefix,
                after: after.as_deref(),
                limit: 1_000,
                max_bytes: TALLY_PAGE_BYTES,
            },
        )?;
        let Some((last, _)) = page.last() else {
            return Ok(by_tenant);
        };
        after = Some(last.clone());
        for (id, value) in &page {
            let usage = by_tenant.entry(tenant_of(id).to_owned()).or_default();
            usage.records += 1;
            usage.bytes += size(id, value);
        }
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
