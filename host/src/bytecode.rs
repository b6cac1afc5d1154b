//! The host-side bytecode cache: scripts given as source are compiled to QuickJS bytecode once
//! (in a sandbox of their own, under the call's policy) and later calls run the bytecode, which
//! skips parsing. Keyed by SHA-256 of the module name and source; bounded in entries and bytes.
//! One call compiles a script at a time (a flight): calls that miss while it compiles wait for
//! its bytecode instead of compiling the same source each in a slot of its own.

use lru::LruCache;
use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::watch;

/// Bounds what the cache can pin in host memory; hostile scripts can fill it only with entries
/// that are each at most a script's own compiled size.
const MAX_BYTES: usize = 64 << 20;

type Key = [u8; 32];

/// What a flight hands its waiters: `None` while it compiles, then the bytecode, or `Err` for
/// a script that does not compile.
type State = Option<Result<Arc<[u8]>, NotCompiled>>;

/// The script does not compile (a syntax error): its calls run it from source, for its error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NotCompiled;

pub(crate) struct BytecodeCache {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    entries: LruCache<Key, Arc<[u8]>>,
    bytes: usize,
    /// The flights under way, by key (at most one each).
    flights: HashMap<Key, watch::Receiver<State>>,
}

/// Where a script's bytecode comes from for one call.
pub(crate) enum Lookup {
    Hit(Arc<[u8]>),
    /// This call compiles it and ends the flight ([`Flight::land`], [`Flight::not_compiled`]).
    Compile(Flight),
    /// Another call is compiling it: [`Landing::wait`] for its bytecode.
    Wait(Landing),
}

/// A compile under way. Dropped before it ends (the compile stopped at its call's limits, or
/// its call was dropped), it sends its waiters back to [`BytecodeCache::lookup`], where one of
/// them compiles the script under its own policy.
pub(crate) struct Flight {
    inner: Arc<Mutex<Inner>>,
    key: Key,
    sender: watch::Sender<State>,
}

/// A flight as its waiters see it.
pub(crate) struct Landing(watch::Receiver<State>);

/// How a wait for another call's compile ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Landed {
    Bytecode(Arc<[u8]>),
    NotCompiled,
    /// The flight was dropped before it ended: look the script up again.
    Dropped,
    /// The waiting call's deadline came first.
    Late,
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
            })),
        })
    }

    /// The cached bytecode, else a flight to wait for, else this call's own flight.
    pub fn lookup(&self, key: &Key) -> Lookup {
        let mut inner = lock(&self.inner);
        if let Some(bytecode) = inner.entries.get(key) {
            return Lookup::Hit(bytecode.clone());
        }
        if let Some(landing) = inner.flights.get(key) {
            return Lookup::Wait(Landing(landing.clone()));
        }
        let (sender, landing) = watch::channel(None);
        inner.flights.insert(*key, landing);
        Lookup::Compile(Flight {
            inner: self.inner.clone(),
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

impl Flight {
    /// Cache the bytecode and hand it to the calls waiting for it.
    pub fn land(self, bytecode: Arc<[u8]>) {
        lock(&self.inner).insert(self.key, bytecode.clone());
        self.sender.send_replace(Some(Ok(bytecode)));
    }

    /// The script does not compile: its waiters run it from source, as this call does.
    pub fn not_compiled(self) {
        self.sender.send_replace(Some(Err(NotCompiled)));
    }
}

impl Drop for Flight {
    fn drop(&mut self) {
        // Cached (or too large to cache) first, then no longer under way: a call that looks it
        // up in between finds one or the other.
        lock(&self.inner).flights.remove(&self.key);
    }
}

impl Landing {
    /// The flight's end, or `Late` at `deadline` (the waiting call's own, which then runs out
    /// in its run).
    pub async fn wait(mut self, deadline: std::time::Instant) -> Landed {
        let ended = self.0.wait_for(Option::is_some);
        match tokio::time::timeout_at(deadline.into(), ended).await {
            Ok(Ok(state)) => match &*state {
                Some(Ok(bytecode)) => Landed::Bytecode(bytecode.clone()),
                _ => Landed::NotCompiled,
            },
            Ok(Err(_)) => Landed::Dropped,
            Err(_) => Landed::Late,
        }
    }
}

#[cfg(test)]
mod tests;
