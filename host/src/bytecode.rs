//! The host-side bytecode cache: scripts given as source are compiled to QuickJS bytecode once
//! (in a sandbox of their own, under the call's policy) and later calls run the bytecode, which
//! skips parsing. Keyed by SHA-256 of the module name and source; bounded in entries and bytes.

use lru::LruCache;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

/// Bounds what the cache can pin in host memory; hostile scripts can fill it only with entries
/// that are each at most a script's own compiled size.
const MAX_BYTES: usize = 64 << 20;

pub(crate) struct BytecodeCache {
    inner: Mutex<Inner>,
}

struct Inner {
    entries: LruCache<[u8; 32], Arc<[u8]>>,
    bytes: usize,
}

impl BytecodeCache {
    pub fn new(entries: usize) -> Option<Self> {
        let entries = NonZeroUsize::new(entries)?;
        Some(Self {
            inner: Mutex::new(Inner {
                entries: LruCache::new(entries),
                bytes: 0,
            }),
        })
    }

    pub fn get(&self, key: &[u8; 32]) -> Option<Arc<[u8]>> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.entries.get(key).cloned()
    }

    pub fn insert(&self, key: [u8; 32], bytecode: Arc<[u8]>) {
        if bytecode.len() > MAX_BYTES / 4 {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.bytes += bytecode.len();
        if let Some((_, old)) = inner.entries.push(key, bytecode) {
            inner.bytes -= old.len();
        }
        while inner.bytes > MAX_BYTES {
            match inner.entries.pop_lru() {
                Some((_, old)) => inner.bytes -= old.len(),
                None => break,
            }
        }
    }
}
