//! The apps' durable tables, in the server's [`Store`] beside sessions and idempotency records:
//! apps by tenant and name, each session's state and sequence number, the event log, and the
//! apps' idempotency records. A commit writes a session's state, its events and its
//! idempotency record in one atomic step (durable before the response is sent).

pub use super::super::idempotency::KeyRecord;
use super::super::idempotency::{Accounts, Kept};
use super::super::store::{Scan, Store, StoreError, Table, Write};
use super::events::MAX_EVENTS_PER_SESSION;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A loaded app, as kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AppRecord {
    /// Its name, unique per tenant.
    pub name: String,
    /// The policy its calls run under.
    pub policy: String,
    /// Its source.
    pub source: String,
    /// SHA-256 of the source.
    pub sha256: String,
    /// `manifest`, as the app gives it.
    pub manifest: Value,
    /// The names of its actions.
    pub actions: Vec<String>,
    /// When it was loaded (Unix milliseconds); the clock of a new session's first action.
    pub created_unix_ms: u64,
}

/// A session's state and counters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionState {
    /// The app's state, as its last committed action returned it.
    pub state: Value,
    /// Committed actions so far.
    pub seq: u64,
    /// The clock of the next action (Unix milliseconds): when the last one committed.
    pub clock_unix_ms: u64,
    /// Events written so far (the last event's id).
    pub events: u64,
}

/// One event of the log.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EventRecord {
    /// Its id within the session, from 1.
    pub id: u64,
    /// The event, as the action returned it.
    pub event: Value,
}

fn err<E: std::fmt::Display>(e: E) -> StoreError {
    StoreError::Failed(format!("app store: {e}"))
}

pub use super::super::store::blocking;

/// The app under `key` (`tenant\napp\n`).
pub fn app(store: &Store, key: &str) -> Result<Option<AppRecord>, StoreError> {
    store.get(Table::Apps, key)
}

/// Every app of `tenant`.
pub fn apps(store: &Store, tenant: &str) -> Result<Vec<AppRecord>, StoreError> {
    Ok(store
        .all(Table::Apps, &format!("{tenant}\n"))?
        .into_iter()
        .map(|(_, app)| app)
        .collect())
}

/// Write an app (loading it again replaces it and keeps its sessions).
pub fn put_app(store: &Store, key: &str, record: &AppRecord) -> Result<(), StoreError> {
    store.put(Table::Apps, key, record)
}

/// Remove an app (`key`: `tenant\napp\n`) with its sessions, events and idempotency records,
/// in one step that also uncounts those records from the tenant's account; whether it existed.
pub fn remove_app(store: &Store, accounts: &Accounts, key: &str) -> Result<bool, StoreError> {
    let existed = store.backend().get(Table::Apps, key)?.is_some();
    let mut writes = vec![Write::Remove {
        table: Table::Apps,
        key: key.to_owned(),
    }];
    for table in [Table::AppSessions, Table::AppEvents, Table::AppKeys] {
        writes.push(Write::RemovePrefix {
            table,
            prefix: key.to_owned(),
        });
    }
    let tenant = super::super::idempotency::tenant_of(key);
    accounts.remove_prefix((tenant, Table::AppKeys), key, writes)?;
    Ok(existed)
}

/// A session's state, if it has committed anything.
pub fn session(store: &Store, key: &str) -> Result<Option<SessionState>, StoreError> {
    store.get(Table::AppSessions, key)
}

/// Write a session's state (`/init` of `palisade serve --app`: the counters go on).
pub fn put_session(store: &Store, key: &str, session: &SessionState) -> Result<(), StoreError> {
    store.put(Table::AppSessions, key, session)
}

/// An idempotency record.
pub fn key_record(store: &Store, key: &str) -> Result<Option<KeyRecord>, StoreError> {
    store.get(Table::AppKeys, key)
}

/// What one commit writes.
pub struct Commit {
    /// `tenant\napp\nsession\n`.
    pub session_key: String,
    /// The session after the action.
    pub session: SessionState,
    /// The events, with their ids.
    pub events: Vec<EventRecord>,
    /// The idempotency record, under its key.
    pub key: Option<(String, KeyRecord)>,
    /// The fences of the session's lease and, for a commit that creates the session, of the
    /// tenant's, on a shared store ([`Write::Fence`]).
    pub fences: Vec<Write>,
}

/// Most commits written in one transaction by the [`Committer`].
const GROUP: usize = 256;

type Waiting = (Commit, tokio::sync::oneshot::Sender<Result<(), StoreError>>);

/// Group commit: one thread writes the commits that arrive while it is busy in one
/// transaction (one fsync for all), and answers each when that transaction is durable. A
/// session's commits never share a transaction: its turn is held until its commit returns.
pub struct Committer {
    queue: Option<std::sync::mpsc::Sender<Waiting>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The thread ends with the committer, and closes its handle on the database with it: a
/// server opened again on the same folder finds the file free.
impl Drop for Committer {
    fn drop(&mut self) {
        self.queue.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Committer {
    /// Start the thread; it ends when the committer is dropped. Key records are counted in
    /// `accounts`, in the same transaction.
    pub fn start(accounts: Accounts) -> Result<Committer, StoreError> {
        let (queue, commits) = std::sync::mpsc::channel::<Waiting>();
        let thread = std::thread::Builder::new()
            .name("palisade-app-commits".into())
            .spawn(move || {
                while let Ok(first) = commits.recv() {
                    let mut group = vec![first];
                    while group.len() < GROUP {
                        match commits.try_recv() {
                            Ok(next) => group.push(next),
                            Err(_) => break,
                        }
                    }
                    let result = write(&accounts, group.iter().map(|(c, _)| c));
                    for (_, done) in group {
                        let _ = done.send(result.clone());
                    }
                }
            })
            .map_err(err)?;
        Ok(Committer {
            queue: Some(queue),
            thread: Some(thread),
        })
    }

    /// Write `commit` durably, in the next group.
    pub async fn commit(&self, commit: Commit) -> Result<(), StoreError> {
        let (done, wait) = tokio::sync::oneshot::channel();
        self.queue
            .as_ref()
            .ok_or_else(|| "the commit thread has stopped".to_owned())?
            .send((commit, done))
            .map_err(|_| "the commit thread has stopped".to_owned())?;
        wait.await
            .map_err(|_| "the commit thread has stopped".to_owned())?
    }
}

/// Write commits in one atomic step, their key records counted in their tenants' accounts.
pub fn write<'a>(
    accounts: &Accounts,
    commits: impl Iterator<Item = &'a Commit>,
) -> Result<(), StoreError> {
    let mut writes = Vec::new();
    let mut kept = Vec::new();
    for commit in commits {
        writes.extend(commit.fences.iter().cloned());
        writes.push(Write::Put {
            table: Table::AppSessions,
            key: commit.session_key.clone(),
            value: serde_json::to_string(&commit.session).map_err(err)?,
        });
        for event in &commit.events {
            writes.push(Write::Put {
                table: Table::AppEvents,
                key: format!("{}{:020}", commit.session_key, event.id),
                value: serde_json::to_string(event).map_err(err)?,
            });
            // Ids run from 1 without a hole: dropping the one `MAX_EVENTS_PER_SESSION` back
            // keeps exactly the last that many.
            if let Some(old) = event
                .id
                .checked_sub(MAX_EVENTS_PER_SESSION)
                .filter(|id| *id > 0)
            {
                writes.push(Write::Remove {
                    table: Table::AppEvents,
                    key: format!("{}{:020}", commit.session_key, old),
                });
            }
        }
        if let Some((key, record)) = &commit.key {
            kept.push(Kept {
                table: Table::AppKeys,
                id: key.clone(),
                value: serde_json::to_string(record).map_err(err)?,
            });
        }
    }
    accounts.apply_counted(writes, kept)
}

/// An event as the stream sends it: its id and its JSON text, never parsed into a tree.
pub struct EventText {
    /// Its id within the session.
    pub id: u64,
    /// The event's JSON.
    pub json: String,
}

#[derive(Deserialize)]
struct EventRaw<'a> {
    id: u64,
    #[serde(borrow)]
    event: &'a serde_json::value::RawValue,
}

/// The events of a session after the id `after`, at most `limit` of them and no more than
/// `max_bytes` of JSON (at least one, when there is one).
pub fn events_after(
    store: &Store,
    session_key: &str,
    after: u64,
    (limit, max_bytes): (usize, usize),
) -> Result<Vec<EventText>, StoreError> {
    let start = format!("{session_key}{:020}", after);
    let scan = Scan {
        prefix: session_key,
        after: Some(&start),
        limit,
        max_bytes,
    };
    let mut out = Vec::new();
    for (_, v) in store.scan(Table::AppEvents, scan)? {
        let raw: EventRaw<'_> = serde_json::from_str(&v).map_err(err)?;
        out.push(EventText {
            id: raw.id,
            json: raw.event.get().to_owned(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{Accounts, Commit, EventRecord, SessionState, events_after, write};
    use crate::serve::apps::events::MAX_EVENTS_PER_SESSION;
    use crate::serve::idempotency::KeyQuota;
    use crate::serve::store::{RedisBackend, Store};
    use std::sync::Arc;

    /// 1,100 events, committed a hundred at a time: the log keeps the last 1,000, on every
    /// backend.
    fn keeps_the_last_events(store: &Store) {
        let key = "t\napp\ns\n".to_owned();
        for batch in 0..11u64 {
            let events = (1..=100)
                .map(|i| EventRecord {
                    id: batch * 100 + i,
                    event: serde_json::json!({ "n": batch * 100 + i }),
                })
                .collect();
            let commit = Commit {
                session_key: key.clone(),
                session: SessionState {
                    state: serde_json::Value::Null,
                    seq: batch + 1,
                    clock_unix_ms: 0,
                    events: batch * 100 + 100,
                },
                events,
                key: None,
                fences: Vec::new(),
            };
            let accounts = Accounts::new(store.clone(), String::new(), KeyQuota::default());
            write(&accounts, std::iter::once(&commit)).unwrap();
        }
        let kept = events_after(store, &key, 0, (usize::MAX, usize::MAX)).unwrap();
        assert_eq!(kept.len() as u64, MAX_EVENTS_PER_SESSION);
        assert_eq!(kept.first().unwrap().id, 101);
        assert_eq!(kept.last().unwrap().id, 1100);
    }

    #[test]
    fn the_embedded_store_keeps_the_last_events() {
        let dir = std::env::temp_dir().join(format!("palisade-events-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        keeps_the_last_events(&Store::open(&dir.join("server.redb")).unwrap());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn redis_keeps_the_last_events() {
        let redis = crate::redis_pool::TestRedis::start("events");
        let store = Store::new(Arc::new(RedisBackend::open(&redis.url).unwrap()));
        keeps_the_last_events(&store);
    }
}
