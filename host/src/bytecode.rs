//! The host-side bytecode cache: scripts given as source are compiled to QuickJS bytecode once
//! (in a sandbox of their own, under the call's policy) and later calls run the bytecode, which
//! skips parsing. Keyed by SHA-256 of the module name and source; bounded in entries and bytes.
//!
//! A call that misses compiles the script (a flight), and calls that miss while it compiles
//! wait for its end instead of compiling the same source each in a slot of its own. The compile
//! is a future shared by every call waiting for it, and whichever of them is polled drives it:
//! a call set aside holds up no other, and once every call holding it is dropped, so is the
//! compile.

use futures_util::future::{BoxFuture, FutureExt, Shared, WeakShared};
use lru::LruCache;
use std::any::Any;
use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard};

/// Bounds what the cache can pin in host memory; hostile scripts can fill it only with entries
/// that are each at most a script's own compiled size.
const MAX_BYTES: usize = 64 << 20;

type Key = [u8; 32];

/// How a compile ended, as every call that waited for it sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Compiled {
    Bytecode(Arc<[u8]>),
    /// The script does not compile (a syntax error): its calls run it from source, for its
    /// error.
    Syntax,
    /// The compile stopped at its own call's limits (fuel, memory, deadline).
    Stopped,
}

/// A compile: how it ended, and the fuel it used.
pub(crate) type Compile = BoxFuture<'static, (Compiled, u64)>;

/// A flight: a compile that every call waiting for it polls.
pub(crate) type Flight = Shared<Compile>;

pub(crate) struct BytecodeCache {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    entries: LruCache<Key, Arc<[u8]>>,
    bytes: usize,
    /// The flights under way, by key (at most one each), each with its number: held weakly,
    /// so that a flight no call holds any more is dropped.
    flights: HashMap<Key, (u64, WeakShared<Compile>)>,
    /// The next flight's number.
    next: u64,
}

/// Where a script's bytecode comes from for one call.
pub(crate) enum Lookup {
    Hit(Arc<[u8]>),
    /// This call's own compile, the first: the call is charged its fuel.
    Compile(Flight),
    /// Another call's compile under way.
    Wait(Flight),
}

/// Ends a flight: its bytecode cached, then its entry removed (when dropped, the entry alone).
struct Landing {
    inner: Arc<Mutex<Inner>>,
    key: Key,
    number: u64,
}

fn lock(inner: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    inner.lock().unwrap_or_else(|e| e.into_inner())
}

impl BytecodeCache {
    pub fn new(entries: usize) -> Option<Self> {
        let entries = NonZeroUsize::new(entries)?;
        Some(Self {
            inner: Arc::new(Mutex::new(Inner {
                entries: LruCache::new(entries),
                bytes: 0,
                flights: HashMap::new(),
                next: 0,
            })),
        })
    }

    /// The cached bytecode, else the flight under way, else a flight of `compile()` (which
    /// only makes the future: this call polls it).
    pub fn lookup(&self, key: &Key, compile: impl FnOnce() -> Compile) -> Lookup {
        let mut inner = lock(&self.inner);
        if let Some(bytecode) = inner.entries.get(key) {
            return Lookup::Hit(bytecode.clone());
        }
        if let Some(flight) = inner.flights.get(key).and_then(|(_, weak)| weak.upgrade()) {
            return Lookup::Wait(flight);
        }
        // Made before its landing, which would otherwise lock the cache if `compile` panicked.
        let compile = compile();
        let number = inner.next;
        inner.next += 1;
        let landing = Landing {
            inner: self.inner.clone(),
            key: *key,
            number,
        };
        let flight = async move {
            let (compiled, fuel) = AssertUnwindSafe(compile)
                .catch_unwind()
                .await
                .unwrap_or_else(|panic| stopped_by(&*panic));
            if let Compiled::Bytecode(bytecode) = &compiled {
                lock(&landing.inner).insert(landing.key, bytecode.clone());
            }
            drop(landing);
            (compiled, fuel)
        }
        .boxed()
        .shared();
        let weak = flight.downgrade().expect("a flight not yet polled");
        inner.flights.insert(*key, (number, weak));
        Lookup::Compile(flight)
    }

    /// Cache bytecode compiled outside a flight.
    pub fn insert(&self, key: Key, bytecode: Arc<[u8]>) {
        lock(&self.inner).insert(key, bytecode);
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

/// A compile that panicked (a host defect) ends as `Stopped`, logged, so that every call
/// polling it is woken and goes on: a `Shared` future that panics wakes no other poller, and
/// fails each of them when polled again.
fn stopped_by(panic: &(dyn Any + Send)) -> (Compiled, u64) {
    let panic = crate::caps::capability::panic_message(panic);
    tracing::error!(panic, "a bytecode compile panicked");
    (Compiled::Stopped, 0)
}

impl Drop for Landing {
    fn drop(&mut self) {
        // Its own entry only: once no call held this flight, a lookup may have put a new one in
        // its place before this drop took the lock.
        let mut inner = lock(&self.inner);
        if inner
            .flights
            .get(&self.key)
            .is_some_and(|(n, _)| *n == self.number)
        {
            inner.flights.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests;
