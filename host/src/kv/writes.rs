//! The writes a call made under a key-value transaction ([`crate::RunOptions::kv_transaction`]),
//! held until the embedder applies them ([`KvWrites::apply`]) or drops them (a dry run).
//!
//! A batch is applied as the operations it recorded, in order, in one transaction of the
//! backend, so that what another writer did between the call and the apply is handled as it
//! would be by the same operations made directly:
//!
//! - `set` and `delete` are blind: they replace or remove whatever is stored then.
//! - `increment` adds its delta to the value stored then: no increment of another writer is
//!   lost, and the stored counter may be higher than the value the call saw.
//! - `compareAndSwap` is checked again: it must give the answer it gave during the call
//!   (swapped or not). If another writer moved the value so that it would not, the apply fails
//!   with [`KvError::Conflict`] and writes nothing.
//! - Quotas are checked again: a new key past `max_keys` fails the apply with
//!   [`KvError::TooManyKeys`], a counter that another writer made a non-counter with
//!   [`KvError::NotACounter`]; either way nothing is written.
//!
//! Reads (`get`, `has`, `list`) are not re-checked: a call under a transaction sees the store as
//! a direct call would, each read at the moment it is made.
//!
//! Why this rule: it gives a committed call the guarantees of the same call made directly, no
//! fewer and no more. Checking increments or reads as well would fail every commit that raced
//! another writer on a counter or a key it only read, where a direct call succeeds; a script
//! that needs a value to hold until its write says so with `compareAndSwap`, the one operation
//! whose answer depends on it, and that answer is what the apply checks.

use super::{Decide, KvBackend, KvError, add_to_counter};

/// The most bytes (64 MiB) a call's pending writes may hold (keys, values, and 64 bytes per
/// operation): they live in host memory until the call ends, so this bounds what one call can
/// pin there (its view also keeps the latest value of each key it wrote, at most as much
/// again). Repeated writes of one key fold into one operation (see [`KvWrites::iter`]), so a loop
/// over a counter or one key stays small.
pub const MAX_TRANSACTION_BYTES: u64 = 64 << 20;

/// Bytes counted for each operation besides its key and values.
const OP_OVERHEAD: u64 = 64;

/// What one recorded operation does to its key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KvOp {
    /// Store this value.
    Set(Vec<u8>),
    /// Remove the key (a missing key is no error).
    Delete,
    /// Add this delta to the counter (a missing key starts at 0).
    Increment(u64),
    /// Store `new` when the value is `expected` (`None`: missing). `swapped` is the answer the
    /// call got; the apply fails with [`KvError::Conflict`] when it would answer otherwise.
    CompareAndSwap {
        /// The value the swap expects.
        expected: Option<Vec<u8>>,
        /// The value it stores.
        new: Vec<u8>,
        /// Whether it swapped during the call.
        swapped: bool,
    },
}

/// One operation of a call's transaction, with the namespace, bucket and key it applies to and
/// the namespace's key limit at the time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvWrite {
    /// The policy's namespace.
    pub namespace: String,
    /// The bucket.
    pub bucket: String,
    /// The key.
    pub key: String,
    /// The namespace's `max_keys` when the call ran.
    pub max_keys: u64,
    /// What it does.
    pub op: KvOp,
}

impl KvWrite {
    fn bytes(&self) -> u64 {
        let values = match &self.op {
            KvOp::Set(value) => value.len(),
            KvOp::Delete | KvOp::Increment(_) => 0,
            KvOp::CompareAndSwap { expected, new, .. } => {
                expected.as_ref().map_or(0, Vec::len) + new.len()
            }
        };
        (self.namespace.len() + self.bucket.len() + self.key.len() + values) as u64 + OP_OVERHEAD
    }

    fn same_key(&self, other: &KvWrite) -> bool {
        self.key == other.key && self.bucket == other.bucket && self.namespace == other.namespace
    }

    /// Apply this operation inside `txn`.
    fn apply_in(&self, txn: &mut dyn KvTransaction) -> Result<(), KvError> {
        let (namespace, bucket, key) = (&*self.namespace, &*self.bucket, &*self.key);
        let max_keys = self.max_keys;
        match &self.op {
            KvOp::Delete => txn.delete(namespace, bucket, key),
            KvOp::Set(value) => txn.update(namespace, bucket, key, max_keys, &mut |_| {
                Ok(Some(value.clone()))
            }),
            KvOp::Increment(delta) => {
                txn.update(namespace, bucket, key, max_keys, &mut |current| {
                    let sum = add_to_counter(key, current, *delta)?;
                    Ok(Some(sum.to_string().into_bytes()))
                })
            }
            KvOp::CompareAndSwap {
                expected,
                new,
                swapped,
            } => txn.update(namespace, bucket, key, max_keys, &mut |current| {
                if (current == expected.as_deref()) != *swapped {
                    return Err(KvError::Conflict {
                        bucket: bucket.to_owned(),
                        key: key.to_owned(),
                    });
                }
                Ok(swapped.then(|| new.clone()))
            }),
        }
    }
}

/// The two writes a backend makes inside one of its own transactions: what
/// [`KvWrites::apply_in`] needs to apply a batch. A backend implements
/// [`KvBackend::apply`] by opening a transaction, wrapping it in a type with this trait, calling
/// `apply_in`, and committing only when it returns `Ok` (rolling back otherwise).
pub trait KvTransaction {
    /// As [`KvBackend::update`], inside the transaction.
    fn update(
        &mut self,
        namespace: &str,
        bucket: &str,
        key: &str,
        max_keys: u64,
        decide: &mut Decide<'_>,
    ) -> Result<(), KvError>;
    /// As [`KvBackend::delete`], inside the transaction.
    fn delete(&mut self, namespace: &str, bucket: &str, key: &str) -> Result<(), KvError>;
}

/// The writes of one call made under a key-value transaction, in the order it made them:
/// nothing of them has reached the store. [`KvWrites::apply`] applies them all or none (see the
/// module documentation for what a concurrent writer does to them); dropping them discards
/// them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KvWrites {
    writes: Vec<KvWrite>,
    bytes: u64,
}

impl KvWrites {
    /// Whether the call wrote nothing.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// The operations, in order. A write right after another of the same key is folded into it
    /// when the pair has the effect of one operation (two increments, a set after a set or
    /// delete, …), so a loop over one key records one operation.
    pub fn iter(&self) -> std::slice::Iter<'_, KvWrite> {
        self.writes.iter()
    }

    /// Apply the writes to `backend` in one transaction: all of them, or none and the error.
    pub fn apply(&self, backend: &dyn KvBackend) -> Result<(), KvError> {
        if self.is_empty() {
            return Ok(());
        }
        backend.apply(self)
    }

    /// Apply the writes in order inside `txn`, a transaction of the backend; the first error
    /// stops it, and the backend then rolls the transaction back.
    pub fn apply_in(&self, txn: &mut dyn KvTransaction) -> Result<(), KvError> {
        self.writes.iter().try_for_each(|write| write.apply_in(txn))
    }

    /// Record `write` after the others, folding it into the last one when both touch the same
    /// key and the pair has the effect of one operation: two increments (their sum), a set or
    /// delete after a set or delete (the later), an increment after a set (the set of the sum),
    /// a compare-and-swap after a set or delete (a set when it swapped; nothing when it did
    /// not, as the value it saw was the batch's own), and a repeated compare-and-swap.
    /// Refused, with nothing recorded, past [`MAX_TRANSACTION_BYTES`].
    pub(crate) fn push(&mut self, write: KvWrite) -> Result<(), KvError> {
        let fold = match self.writes.last() {
            Some(last) if last.same_key(&write) => fold(last, &write),
            _ => Fold::Append,
        };
        let freed = match fold {
            Fold::Replace(_) => self.writes.last().map_or(0, KvWrite::bytes),
            Fold::Append | Fold::Drop => 0,
        };
        let added = match &fold {
            Fold::Append => write.bytes(),
            Fold::Replace(folded) => folded.bytes(),
            Fold::Drop => 0,
        };
        let bytes = self.bytes - freed + added;
        if bytes > MAX_TRANSACTION_BYTES {
            return Err(KvError::TransactionTooLarge {
                limit: MAX_TRANSACTION_BYTES,
            });
        }
        self.bytes = bytes;
        match fold {
            Fold::Append => self.writes.push(write),
            Fold::Replace(folded) => {
                self.writes.pop();
                self.writes.push(folded);
            }
            Fold::Drop => {}
        }
        Ok(())
    }
}

/// What [`KvWrites::push`] does with a write after one on the same key.
enum Fold {
    /// Record it after the last one.
    Append,
    /// Replace the last one with this, which has the effect of both.
    Replace(KvWrite),
    /// Nothing: it adds nothing to the last one.
    Drop,
}

/// How `next` folds into `last`, an operation on the same key.
fn fold(last: &KvWrite, next: &KvWrite) -> Fold {
    let op = match (&last.op, &next.op) {
        (KvOp::Increment(a), KvOp::Increment(b)) => match a.checked_add(*b) {
            Some(sum) => KvOp::Increment(sum),
            None => return Fold::Append,
        },
        (KvOp::Set(_) | KvOp::Delete, KvOp::Set(_) | KvOp::Delete) => next.op.clone(),
        (KvOp::Set(value), KvOp::Increment(delta)) => {
            match add_to_counter(&last.key, Some(value), *delta) {
                Ok(sum) => KvOp::Set(sum.to_string().into_bytes()),
                Err(_) => return Fold::Append,
            }
        }
        (KvOp::Set(_) | KvOp::Delete, KvOp::CompareAndSwap { new, swapped, .. }) => {
            if !swapped {
                return Fold::Drop;
            }
            KvOp::Set(new.clone())
        }
        (a @ KvOp::CompareAndSwap { .. }, b) if a == b => return Fold::Drop,
        _ => return Fold::Append,
    };
    Fold::Replace(KvWrite { op, ..next.clone() })
}
