//! A call's transactional view of the store ([`crate::RunOptions::kv_transaction`]): reads see
//! the call's own writes, and nothing reaches the store until the embedder applies the
//! recorded [`KvWrites`].

use super::{KvBackend, KvError, KvOp, KvWrite, KvWrites, add_to_counter};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

/// A bucket's pending values by key: `None` for a key the call deleted.
type Pending = BTreeMap<String, Option<Vec<u8>>>;

/// The store as one call sees it: `base` under the call's pending writes. Reads go to the
/// pending value of a key the call wrote, else to `base`; writes go to the pending values and
/// the log of operations. Key quotas count `base`'s keys plus the keys the call added less
/// those it deleted.
pub(crate) struct KvOverlay {
    base: Arc<dyn KvBackend>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Pending values by (namespace, bucket).
    pending: HashMap<(String, String), Pending>,
    /// Keys the call added to each namespace, less the keys it removed.
    added: HashMap<String, i64>,
    /// The operations, in order; `None` once the call has ended.
    writes: Option<KvWrites>,
}

/// What a write leaves at its key (`None`: no value) and the operation that does it; `None`
/// when it changes nothing.
type Change = Option<(Option<Vec<u8>>, KvOp)>;

/// Where an operation applies.
struct At<'a> {
    namespace: &'a str,
    bucket: &'a str,
    key: &'a str,
    max_keys: u64,
}

impl<'a> At<'a> {
    fn new(namespace: &'a str, bucket: &'a str, key: &'a str, max_keys: u64) -> Self {
        Self {
            namespace,
            bucket,
            key,
            max_keys,
        }
    }
}

impl KvOverlay {
    pub fn new(base: Arc<dyn KvBackend>) -> Self {
        let state = State {
            writes: Some(KvWrites::default()),
            ..State::default()
        };
        Self {
            base,
            state: Mutex::new(state),
        }
    }

    /// The call's writes; afterwards the view refuses every operation (an operation still
    /// running when the call ended cannot add to writes already handed out).
    pub fn finish(&self) -> KvWrites {
        self.lock().writes.take().unwrap_or_default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The value the call sees at `key`.
    fn value(
        &self,
        state: &State,
        namespace: &str,
        bucket: &str,
        key: &str,
    ) -> Result<Option<Vec<u8>>, KvError> {
        if state.writes.is_none() {
            return Err(KvError::Backend("the call has ended".into()));
        }
        let pending = state
            .pending
            .get(&(namespace.to_owned(), bucket.to_owned()))
            .and_then(|bucket| bucket.get(key));
        match pending {
            Some(value) => Ok(value.clone()),
            None => self.base.get(namespace, bucket, key),
        }
    }

    /// Record `op`, which leaves `next` at `at` where the call saw `current`: a key it adds is
    /// counted against `max_keys` first, as the store counts it.
    fn put(
        &self,
        state: &mut State,
        at: At<'_>,
        current: Option<&[u8]>,
        next: Option<Vec<u8>>,
        op: KvOp,
    ) -> Result<(), KvError> {
        let added = state.added.get(at.namespace).copied().unwrap_or(0);
        if current.is_none() && next.is_some() {
            let held = self.base.key_count(at.namespace)?;
            if held.saturating_add_signed(added) >= at.max_keys {
                return Err(KvError::TooManyKeys { limit: at.max_keys });
            }
        }
        let write = KvWrite {
            namespace: at.namespace.to_owned(),
            bucket: at.bucket.to_owned(),
            key: at.key.to_owned(),
            max_keys: at.max_keys,
            op,
        };
        let writes = state
            .writes
            .as_mut()
            .ok_or_else(|| KvError::Backend("the call has ended".into()))?;
        writes.push(write)?;
        let change = i64::from(next.is_some()) - i64::from(current.is_some());
        state.added.insert(at.namespace.to_owned(), added + change);
        state
            .pending
            .entry((at.namespace.to_owned(), at.bucket.to_owned()))
            .or_default()
            .insert(at.key.to_owned(), next);
        Ok(())
    }

    /// Read `at`, let `decide` give the value to leave there and the operation that does it
    /// (`None`: nothing), and record that.
    fn write<T>(
        &self,
        at: At<'_>,
        decide: impl FnOnce(Option<&[u8]>) -> Result<(T, Change), KvError>,
    ) -> Result<T, KvError> {
        let mut state = self.lock();
        let current = self.value(&state, at.namespace, at.bucket, at.key)?;
        let (answer, change) = decide(current.as_deref())?;
        if let Some((next, op)) = change {
            self.put(&mut state, at, current.as_deref(), next, op)?;
        }
        Ok(answer)
    }
}

impl KvBackend for KvOverlay {
    fn get(&self, namespace: &str, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, KvError> {
        self.value(&self.lock(), namespace, bucket, key)
    }

    /// Recorded as a compare-and-swap from the value `decide` saw (the apply cannot run
    /// `decide` again): it conflicts when another writer moved that value.
    fn update(
        &self,
        namespace: &str,
        bucket: &str,
        key: &str,
        max_keys: u64,
        decide: &mut super::Decide<'_>,
    ) -> Result<(), KvError> {
        let at = At::new(namespace, bucket, key, max_keys);
        self.write(at, |current| {
            let change = decide(current)?.map(|new| {
                let op = KvOp::CompareAndSwap {
                    expected: current.map(<[u8]>::to_vec),
                    new: new.clone(),
                    swapped: true,
                };
                (Some(new), op)
            });
            Ok(((), change))
        })
    }

    fn set(
        &self,
        namespace: &str,
        bucket: &str,
        key: &str,
        value: &[u8],
        max_keys: u64,
    ) -> Result<(), KvError> {
        let at = At::new(namespace, bucket, key, max_keys);
        let op = KvOp::Set(value.to_vec());
        self.write(at, |_| Ok(((), Some((Some(value.to_vec()), op)))))
    }

    fn delete(&self, namespace: &str, bucket: &str, key: &str) -> Result<(), KvError> {
        let at = At::new(namespace, bucket, key, u64::MAX);
        self.write(at, |_| Ok(((), Some((None, KvOp::Delete)))))
    }

    fn list(
        &self,
        namespace: &str,
        bucket: &str,
        offset: u64,
        limit: usize,
    ) -> Result<Vec<String>, KvError> {
        let state = self.lock();
        if state.writes.is_none() {
            return Err(KvError::Backend("the call has ended".into()));
        }
        let Some(pending) = state
            .pending
            .get(&(namespace.to_owned(), bucket.to_owned()))
        else {
            return self.base.list(namespace, bucket, offset, limit);
        };
        let removed: BTreeSet<&str> = pending
            .iter()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| k.as_str())
            .collect();
        // The first `offset + limit` keys of the view are among the first `offset + limit`
        // keys of the store that the call did not delete, and the keys it wrote.
        let offset = usize::try_from(offset).unwrap_or(usize::MAX);
        let want = offset.saturating_add(limit).saturating_add(removed.len());
        let stored = self.base.list(namespace, bucket, 0, want)?;
        let written = pending.iter().filter(|(_, v)| v.is_some()).map(|(k, _)| k);
        let view: BTreeSet<&String> = stored
            .iter()
            .filter(|k| !removed.contains(k.as_str()))
            .chain(written)
            .collect();
        Ok(view.into_iter().skip(offset).take(limit).cloned().collect())
    }

    fn increment(
        &self,
        namespace: &str,
        bucket: &str,
        key: &str,
        delta: u64,
        max_keys: u64,
    ) -> Result<u64, KvError> {
        let at = At::new(namespace, bucket, key, max_keys);
        self.write(at, |current| {
            let sum = add_to_counter(key, current, delta)?;
            let next = Some(sum.to_string().into_bytes());
            Ok((sum, Some((next, KvOp::Increment(delta)))))
        })
    }

    fn compare_and_swap(
        &self,
        namespace: &str,
        bucket: &str,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
        max_keys: u64,
    ) -> Result<bool, KvError> {
        let at = At::new(namespace, bucket, key, max_keys);
        self.write(at, |current| {
            let swapped = current == expected;
            let next = if swapped {
                Some(new.to_vec())
            } else {
                current.map(<[u8]>::to_vec)
            };
            let op = KvOp::CompareAndSwap {
                expected: expected.map(<[u8]>::to_vec),
                new: new.to_vec(),
                swapped,
            };
            Ok((swapped, Some((next, op))))
        })
    }

    fn key_count(&self, namespace: &str) -> Result<u64, KvError> {
        let added = self.lock().added.get(namespace).copied().unwrap_or(0);
        Ok(self.base.key_count(namespace)?.saturating_add_signed(added))
    }

    /// A view applies nothing itself: its writes are applied to the store it views.
    fn apply(&self, _: &KvWrites) -> Result<(), KvError> {
        Err(KvError::Backend(
            "a call's transactional view cannot apply writes; apply them to the store".into(),
        ))
    }
}

#[cfg(test)]
mod tests;
