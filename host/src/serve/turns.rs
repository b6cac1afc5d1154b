//! Turns by key: one async lock per key in use (an idempotency key, an app session), dropped
//! from the map when nobody holds or waits for it, so the map holds only keys in use.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

/// One lock per key in use.
#[derive(Default)]
pub struct Turns {
    map: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Turns {
    /// Run `f` in `key`'s turn: after every earlier holder of `key` is done.
    pub async fn run<T>(&self, key: &str, f: impl Future<Output = T>) -> T {
        let lock = {
            let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
            map.entry(key.to_owned()).or_default().clone()
        };
        let result = {
            let _turn = lock.lock().await;
            f.await
        };
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        // The map's own reference and this one: nobody else waits for the key.
        if Arc::strong_count(&lock) <= 2 {
            map.remove(key);
        }
        result
    }

    /// Keys in use now.
    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether no key is in use.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::Turns;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Two holders of one key never overlap; the map is empty once both are done.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_holder_per_key_and_nothing_kept() {
        let turns = Arc::new(Turns::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let (turns, inside) = (turns.clone(), inside.clone());
            tasks.push(tokio::spawn(async move {
                turns
                    .run("k", async {
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                        tokio::task::yield_now().await;
                        inside.fetch_sub(1, Ordering::SeqCst);
                    })
                    .await;
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert!(turns.is_empty());
    }
}
