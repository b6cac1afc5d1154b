//! The host-side bytecode cache: scripts given as source are compiled to QuickJS bytecode once
//! (in a sandbox of their own, under the call's policy) and later calls run the bytecode, which
//! skips parsing. Keyed by SHA-256 of the module name and source; bounded in entries and bytes.
//! One call compiles a script at a time: calls that miss while it compiles wait for its
//! bytecode instead of compiling the same source each in a slot of its own.

use lru::LruCache;
use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::watch;

/// Bounds what the cache can pin in host memory; hostile scripts can fill it only with entries
/// that are each at most a script's own compiled size.
const MAX_BYTES: usize = 64 << 20;

type Key = [u8; 32];

/// What a compile under way hands its waiters: `None` until it lands.
type Landing = watch::Receiver<Option<Arc<[u8]>>>;

pub(crate) struct BytecodeCache {
    inner: Mutex<Inner>,
}

struct Inner {
    entries: LruCache<Key, Arc<[u8]>>,
    bytes: usize,
    /// The compiles under way, by key (at most one each).
    flights: HashMap<Key, Landing>,
}

/// Where a script's bytecode comes from for one call.
pub(crate) enum Lookup<'a> {
    Hit(Arc<[u8]>),
    /// This call compiles it and hands it to [`Flight::land`].
    Compile(Flight<'a>),
    /// Another call is compiling it: [`wait`] for its bytecode.
    Wait(Landing),
}

/// A compile under way. Dropped without landing (the compile failed, or its call was dropped),
/// it lets its waiters go on without bytecode: they run the source, as a call does with no
/// cache, and a later call compiles it again.
pub(crate) struct Flight<'a> {
    cache: &'a BytecodeCache,
    key: Key,
    sender: watch::Sender<Option<Arc<[u8]>>>,
}

impl BytecodeCache {
    pub fn new(entries: usize) -> Option<Self> {
        let entries = NonZeroUsize::new(entries)?;
        Some(Self {
            inner: Mutex::new(Inner {
                entries: LruCache::new(entries),
                bytes: 0,
                flights: HashMap::new(),
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cached bytecode, else a compile to wait for, else this call's own compile.
    pub fn lookup(&self, key: &Key) -> Lookup<'_> {
        let mut inner = self.lock();
        if let Some(bytecode) = inner.entries.get(key) {
            return Lookup::Hit(bytecode.clone());
        }
        if let Some(landing) = inner.flights.get(key) {
            return Lookup::Wait(landing.clone());
        }
        let (sender, landing) = watch::channel(None);
        inner.flights.insert(*key, landing);
        Lookup::Compile(Flight {
            cache: self,
            key: *key,
            sender,
        })
    }
}

impl Inner {
    fn insert(&mut self, key: Key, bytecode: Arc<[u8]>) {
        if bytecode.len() > MAX_BYTES / 4 {
            return;
        }
        self.bytes += bytecode.len();
        if let Some((_, old)) = self.entries.push(key, bytecode) {
            self.bytes -= old.len();
        }
        while self.bytes > MAX_BYTES {
            match self.entries.pop_lru() {
                Some((_, old)) => self.bytes -= old.len(),
                None => break,
            }
        }
    }
}

impl Flight<'_> {
    /// Cache the bytecode and hand it to the calls waiting for it.
    pub fn land(self, bytecode: Arc<[u8]>) {
        self.cache.lock().insert(self.key, bytecode.clone());
        self.sender.send_replace(Some(bytecode));
    }
}

impl Drop for Flight<'_> {
    fn drop(&mut self) {
        // Cached (or too large to cache) first, then no longer under way: a call that looks it
        // up in between finds one or the other.
        self.cache.lock().flights.remove(&self.key);
    }
}

/// The bytecode another call is compiling, once it lands; `None` if that compile fails or is
/// dropped, or at `deadline` (the waiting call's own, which then runs out in its run).
pub(crate) async fn wait(mut landing: Landing, deadline: std::time::Instant) -> Option<Arc<[u8]>> {
    let landed = landing.wait_for(Option::is_some);
    match tokio::time::timeout_at(deadline.into(), landed).await {
        Ok(Ok(bytecode)) => bytecode.clone(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(10)
    }

    #[tokio::test]
    async fn calls_that_miss_during_a_compile_wait_for_its_bytecode() {
        let cache = BytecodeCache::new(4).unwrap();
        let Lookup::Compile(flight) = cache.lookup(&[1; 32]) else {
            panic!("the first lookup compiles")
        };
        let (Lookup::Wait(a), Lookup::Wait(b)) = (cache.lookup(&[1; 32]), cache.lookup(&[1; 32]))
        else {
            panic!("lookups during the compile wait")
        };
        assert!(
            matches!(cache.lookup(&[2; 32]), Lookup::Compile(_)),
            "keys are apart"
        );
        let waiters = tokio::spawn(async move { (wait(a, soon()).await, wait(b, soon()).await) });
        tokio::task::yield_now().await;
        flight.land(Arc::from(&b"code"[..]));
        let (a, b) = waiters.await.unwrap();
        assert_eq!(
            (a.as_deref(), b.as_deref()),
            (Some(&b"code"[..]), Some(&b"code"[..]))
        );
        assert!(matches!(cache.lookup(&[1; 32]), Lookup::Hit(code) if &*code == b"code"));
    }

    #[tokio::test]
    async fn a_compile_that_fails_lets_its_waiters_go_and_the_next_call_compiles() {
        let cache = BytecodeCache::new(4).unwrap();
        let Lookup::Compile(flight) = cache.lookup(&[1; 32]) else {
            panic!("the first lookup compiles")
        };
        let Lookup::Wait(landing) = cache.lookup(&[1; 32]) else {
            panic!("a lookup during the compile waits")
        };
        let waiter = tokio::spawn(wait(landing, soon()));
        tokio::task::yield_now().await;
        drop(flight);
        assert_eq!(waiter.await.unwrap(), None);
        assert!(matches!(cache.lookup(&[1; 32]), Lookup::Compile(_)));
    }

    #[tokio::test]
    async fn a_waiter_stops_at_its_deadline() {
        let cache = BytecodeCache::new(4).unwrap();
        let _flight = cache.lookup(&[1; 32]);
        let Lookup::Wait(landing) = cache.lookup(&[1; 32]) else {
            panic!("a lookup during the compile waits")
        };
        let deadline = Instant::now() + Duration::from_millis(20);
        assert_eq!(wait(landing, deadline).await, None);
        assert!(Instant::now() >= deadline);
    }

    #[test]
    fn bytecode_too_large_to_cache_is_handed_over_and_compiled_again() {
        let cache = BytecodeCache::new(4).unwrap();
        let Lookup::Compile(flight) = cache.lookup(&[1; 32]) else {
            panic!("the first lookup compiles")
        };
        let Lookup::Wait(landing) = cache.lookup(&[1; 32]) else {
            panic!("a lookup during the compile waits")
        };
        flight.land(vec![0; MAX_BYTES / 4 + 1].into());
        assert_eq!(
            landing.borrow().as_ref().map(|b| b.len()),
            Some(MAX_BYTES / 4 + 1)
        );
        assert!(matches!(cache.lookup(&[1; 32]), Lookup::Compile(_)));
    }

    #[test]
    fn the_cache_keeps_its_bytes_bound() {
        let cache = BytecodeCache::new(64).unwrap();
        for key in 0..8u8 {
            let Lookup::Compile(flight) = cache.lookup(&[key; 32]) else {
                panic!("a new key compiles")
            };
            flight.land(vec![key; MAX_BYTES / 4].into());
        }
        assert!(cache.lock().bytes <= MAX_BYTES);
        assert!(
            matches!(cache.lookup(&[7; 32]), Lookup::Hit(_)),
            "the newest stays"
        );
        assert!(
            matches!(cache.lookup(&[0; 32]), Lookup::Compile(_)),
            "the oldest went"
        );
    }
}
