//! Leases: how replicas sharing a store take turns on one session or one idempotency key. A
//! lease is a record in the shared store naming its holder, with a time to live; it is
//! renewed while held and given back when dropped, so a replica that dies (`kill -9`) holds
//! it at most [`LEASE_TTL`]. Commits made under a lease carry its fence ([`Lease::fence`]):
//! the store refuses the commit, writing nothing, when the lease has passed to another
//! holder meanwhile. On a store that only one server uses (the embedded file), the process's
//! own turns serialize everything and a lease is a no-op.

use super::{Store, StoreError, Write, blocking_store};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a lease lives unless renewed: how long a session stays blocked after its holder
/// died. Renewed every third of it.
pub const LEASE_TTL: Duration = Duration::from_secs(10);

/// How long a request waits for a lease that another replica holds before `session_busy`.
/// Longer than [`LEASE_TTL`], so that a lease left by a dead replica expires within it.
pub const LEASE_WAIT: Duration = Duration::from_secs(30);

/// How long to wait between two tries: short, because a turn usually takes milliseconds.
const RETRY: Duration = Duration::from_millis(5);

/// A lease held, given back when dropped.
pub struct Lease {
    held: Option<Held>,
}

struct Held {
    store: Store,
    name: String,
    holder: String,
    /// Its renewal, once taken.
    renew: Option<tokio::task::JoinHandle<()>>,
    /// Set when the lease is given up: a try still running on its blocking thread (its
    /// request was dropped meanwhile) then gives back what it took, itself, after taking it.
    abandoned: Arc<AtomicBool>,
}

impl Lease {
    /// No lease: for what writes nothing (a dry run), and on a store of one server.
    pub fn none() -> Lease {
        Lease { held: None }
    }

    /// Give the lease back now, before this server's next turn on the same name tries to take
    /// it (dropping it gives it back too, but later, on a blocking thread).
    pub async fn release(mut self) {
        if let Some((store, name, holder)) = self.give_up() {
            let _ = blocking_store(move || store.backend().release(&name, &holder)).await;
        }
    }

    /// Stop renewing; what to give back, if anything is held.
    fn give_up(&mut self) -> Option<(Store, String, String)> {
        let held = self.held.take()?;
        held.abandoned.store(true, Ordering::SeqCst);
        if let Some(renew) = &held.renew {
            renew.abort();
        }
        Some((held.store, held.name, held.holder))
    }

    /// The write that makes a batch fail unless this lease is still held (nothing on a store
    /// of one server).
    pub fn fence(&self) -> Option<Write> {
        self.held.as_ref().map(|h| Write::Fence {
            lease: h.name.clone(),
            holder: h.holder.clone(),
        })
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Some((store, name, holder)) = self.give_up() else {
            return;
        };
        // Given back on a blocking thread; if that fails, it expires.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn_blocking(move || store.backend().release(&name, &holder));
        }
    }
}

impl Store {
    /// Take the lease `name` for this server (`replica`), waiting up to [`LEASE_WAIT`] while
    /// another holds it: `Ok(None)` when it stayed held. On a store of one server, a no-op
    /// lease at once.
    pub async fn lease(&self, name: &str, replica: &str) -> Result<Option<Lease>, StoreError> {
        if !self.backend().shared() {
            return Ok(Some(Lease::none()));
        }
        let holder = format!("{replica}#{}", crate::serve::new_id());
        // Made before the first try, so that a request dropped while a try is on its blocking
        // thread (its client went away) gives back what that try took, instead of leaving it
        // held until it expires: the try sees `abandoned` once it has taken the lease, and
        // gives it back on the same thread (so after taking it, whatever order Redis would
        // serve two connections in).
        let abandoned = Arc::new(AtomicBool::new(false));
        let mut lease = Lease {
            held: Some(Held {
                store: self.clone(),
                name: name.to_owned(),
                holder: holder.clone(),
                renew: None,
                abandoned: abandoned.clone(),
            }),
        };
        let started = Instant::now();
        loop {
            let (store, n, h) = (self.clone(), name.to_owned(), holder.clone());
            let gone = abandoned.clone();
            let taken = blocking_store(move || {
                let taken = store.backend().try_lease(&n, &h, LEASE_TTL)?;
                if taken && gone.load(Ordering::SeqCst) {
                    store.backend().release(&n, &h)?;
                }
                Ok::<_, StoreError>(taken)
            })
            .await?;
            if taken {
                break;
            }
            if started.elapsed() >= LEASE_WAIT {
                return Ok(None);
            }
            tokio::time::sleep(RETRY).await;
        }
        if let Some(held) = &mut lease.held {
            held.renew = Some(tokio::spawn(renew(self.clone(), name.to_owned(), holder)));
        }
        Ok(Some(lease))
    }
}

/// Extend the lease every third of its life until it is lost or the task is aborted.
async fn renew(store: Store, name: String, holder: String) {
    loop {
        tokio::time::sleep(LEASE_TTL / 3).await;
        let (s, n, h) = (store.clone(), name.clone(), holder.clone());
        match blocking_store(move || s.backend().try_lease(&n, &h, LEASE_TTL)).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!("lost the lease on {name:?}: its commit will be refused");
                return;
            }
            // The store is down: try again; a commit meanwhile fails anyway.
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{LEASE_TTL, Store};
    use crate::serve::store::{Backend, RedisBackend};
    use std::sync::Arc;
    use std::time::Duration;

    /// A request dropped while its try to take a lease waits on a stalled Redis: once Redis
    /// answers, the try that took the lease gives it back, so another replica takes it at once
    /// rather than after its time to live.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_request_dropped_while_taking_a_lease_gives_it_back() {
        let redis = crate::redis_pool::TestRedis::start("lease-dropped");
        let backend = Arc::new(RedisBackend::open(&redis.url).unwrap());
        let store = Store::new(backend.clone());
        redis.signal("-STOP");
        let taking = store.lease("app\ns", "a");
        let dropped = tokio::time::timeout(Duration::from_millis(300), taking).await;
        assert!(dropped.is_err(), "the try waits on the stalled Redis");
        redis.signal("-CONT");
        let taken_by_b = tokio::task::spawn_blocking(move || {
            // Within half the lease's life: a lease left held would stay so for all of it.
            for _ in 0..(LEASE_TTL.as_millis() / 2 / 25) {
                if backend.try_lease("app\ns", "b#1", LEASE_TTL).unwrap() {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(25));
            }
            false
        })
        .await
        .unwrap();
        assert!(taken_by_b, "the dropped request's lease was given back");
    }
}
