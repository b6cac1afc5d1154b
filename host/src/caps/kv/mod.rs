//! `wasi:keyvalue/store`, `wasi:keyvalue/atomics` and Palisade's `kv` (compare-and-swap): buckets of the policy's `[kv]` table, under the policy's namespace.
//! Every check happens here: the bucket is granted, writes go to `rw` buckets only, keys and
//! values fit, the namespace has room. Storage calls run on tokio's blocking pool (a write waits
//! for its fsync). Every operation is an audit record; a refusal is also kept under the target
//! `kv:BUCKET`, for the guest's `PolicyDeniedError`.

mod decide;

use crate::audit::{AuditLog, Decision, Entry};
use crate::bindings::Bucket;
use crate::bindings::palisade::sandbox::kv as cas;
use crate::bindings::wasi::keyvalue::atomics;
use crate::bindings::wasi::keyvalue::store::{self, Error as StoreError, KeyResponse};
use crate::caps::gate::{Capability, Refusal};
use crate::hex::{hex, unhex};
use crate::kv::{KvBackend, KvError};
use crate::policy::Kv;
use crate::record::{KvEvent, KvOutcome, Tape, event_bytes};
use decide::KeyCheck;
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::{HasData, Linker, Resource, ResourceTable};

/// Keys per `list-keys` page.
const PAGE: usize = 100;

/// The call's key-value access.
pub(crate) struct KvState {
    policy: Option<Arc<Kv>>,
    backend: Option<Arc<dyn KvBackend>>,
    audit: AuditLog,
    tape: Tape,
}

/// A storage result as a transcript holds it.
trait Taped: Sized {
    fn put(&self, event: &mut KvEvent);
    fn take(event: KvEvent) -> Self;
}

impl Taped for Option<Vec<u8>> {
    fn put(&self, event: &mut KvEvent) {
        event.value = self.as_deref().map(hex);
    }
    fn take(event: KvEvent) -> Self {
        event.value.map(|v| unhex(&v))
    }
}

impl Taped for () {
    fn put(&self, _: &mut KvEvent) {}
    fn take(_: KvEvent) -> Self {}
}

impl Taped for Vec<String> {
    fn put(&self, event: &mut KvEvent) {
        event.keys = self.clone();
    }
    fn take(event: KvEvent) -> Self {
        event.keys
    }
}

impl Taped for u64 {
    fn put(&self, event: &mut KvEvent) {
        event.value = Some(hex(self.to_string().as_bytes()));
    }
    fn take(event: KvEvent) -> Self {
        event
            .value
            .and_then(|v| String::from_utf8(unhex(&v)).ok())
            .and_then(|t| t.parse().ok())
            .unwrap_or(0)
    }
}

/// Whether a compare-and-swap swapped: `cursor` 1 or 0.
impl Taped for bool {
    fn put(&self, event: &mut KvEvent) {
        event.cursor = Some(u64::from(*self));
    }
    fn take(event: KvEvent) -> Self {
        event.cursor == Some(1)
    }
}

impl KvState {
    pub fn new(
        policy: Option<Arc<Kv>>,
        backend: Option<Arc<dyn KvBackend>>,
        audit: AuditLog,
        tape: Tape,
    ) -> Self {
        Self {
            policy,
            backend,
            audit,
            tape,
        }
    }

    fn deny(&self, refusal: Refusal) -> StoreError {
        self.audit.deny(refusal, Instant::now(), 0);
        StoreError::AccessDenied
    }

    fn policy(&self) -> Result<&Arc<Kv>, StoreError> {
        self.policy.as_ref().ok_or(StoreError::NoSuchStore)
    }

    fn check_key(&self, bucket: &Bucket, key: &str) -> Result<(), StoreError> {
        match decide::check_key(self.policy()?, &bucket.name, key) {
            Ok(()) => Ok(()),
            Err(KeyCheck::Empty) => Err(StoreError::Other("keys are not empty".into())),
            Err(KeyCheck::Refused(refusal)) => Err(self.deny(refusal)),
        }
    }

    fn check_write(&self, bucket: &Bucket) -> Result<(), StoreError> {
        decide::check_write(&bucket.name, bucket.mode).map_err(|r| self.deny(r))
    }

    fn record(
        &self,
        bucket: &Bucket,
        key: &str,
        started: Instant,
        bytes: (u64, u64),
        error: Option<String>,
    ) {
        self.audit.record(Entry {
            capability: Capability::Kv,
            target: &format!("{}/{key}", bucket.name),
            decision: Decision::Allow,
            rule: &format!("kv.buckets.{}", bucket.name),
            started,
            bytes,
            error,
        });
    }

    /// Run a storage call on the blocking pool; when recording, its result goes to the
    /// transcript, and when replaying, the recorded result is the answer (no store access). A
    /// store that did not answer ([`KvError::Unavailable`]) ends the call: the outer error,
    /// which the call's outcome reports as `store_unavailable`.
    async fn storage<T: Taped + Send + 'static>(
        &self,
        (op, bucket, key): (&str, &str, &str),
        f: impl FnOnce(&dyn KvBackend, &str) -> Result<T, KvError> + Send + 'static,
    ) -> Storage<T> {
        if let Some(replay) = self.tape.replaying() {
            let Some(event) = replay
                .kv()
                .filter(|e| e.op == op && e.bucket == bucket && e.key == key)
            else {
                return Ok(Err(StoreError::Other(
                    "the transcript has no further answer for this kv operation".into(),
                )));
            };
            return Ok(Ok(match event.outcome {
                KvOutcome::Ok => Ok(T::take(event)),
                KvOutcome::TooManyKeys => Err(KvError::TooManyKeys {
                    limit: event.cursor.unwrap_or(0),
                }),
                KvOutcome::Other => Err(KvError::Backend(event.message)),
            }));
        }
        let policy = match self.policy() {
            Ok(policy) => policy,
            Err(e) => return Ok(Err(e)),
        };
        let Some(backend) = self.backend.clone() else {
            return Ok(Err(StoreError::Other(
                "no key-value store is configured in this host".into(),
            )));
        };
        let namespace = policy.namespace.clone();
        let result =
            match tokio::task::spawn_blocking(move || f(backend.as_ref(), &namespace)).await {
                Ok(Err(KvError::Unavailable(detail))) => {
                    tracing::warn!(bucket, key, "key-value store unavailable: {detail}");
                    return Err(wasmtime::Error::new(KvUnavailable));
                }
                Ok(result) => result,
                Err(e) => {
                    return Ok(Err(StoreError::Other(format!(
                        "the key-value store failed: {e}"
                    ))));
                }
            };
        if let Tape::Record(_) = &self.tape {
            let mut event = KvEvent {
                op: op.into(),
                bucket: bucket.into(),
                key: key.into(),
                value: None,
                keys: Vec::new(),
                cursor: None,
                outcome: KvOutcome::Ok,
                message: String::new(),
            };
            match &result {
                Ok(value) => value.put(&mut event),
                Err(KvError::TooManyKeys { limit }) => {
                    event.outcome = KvOutcome::TooManyKeys;
                    event.cursor = Some(*limit);
                }
                // Replayed as `KvError::Backend` with the same text: the script sees the same
                // `StoreError::Other`.
                Err(
                    error @ (KvError::NotACounter { .. }
                    | KvError::TransactionTooLarge { .. }
                    | KvError::Conflict { .. }),
                ) => {
                    event.outcome = KvOutcome::Other;
                    event.message = error.to_string();
                }
                Err(KvError::Backend(message) | KvError::Unavailable(message)) => {
                    event.outcome = KvOutcome::Other;
                    event.message = message.clone();
                }
            }
            let texts = [&event.bucket, &event.key, &event.message]
                .into_iter()
                .chain(&event.keys)
                .map(String::as_str);
            let bytes = event_bytes(texts) + event.value.as_ref().map_or(0, |v| v.len() as u64);
            self.tape.record_sized(bytes, |t| t.kv.push(event));
        }
        Ok(Ok(result))
    }

    /// A write of `key`: the gate's checks (the key fits, the bucket is `rw`, a value of
    /// `value` bytes fits), then the storage call `f` (given the backend, the namespace and
    /// `max_keys`), audited.
    async fn write<T: Taped + Send + 'static>(
        &self,
        (op, bucket, key): (&str, &Bucket, &str),
        value: Option<usize>,
        f: impl FnOnce(&dyn KvBackend, &str, u64) -> Result<T, KvError> + Send + 'static,
    ) -> StoreResult<T> {
        let started = Instant::now();
        let max_keys = match self.check_writable(bucket, key, value) {
            Ok(max_keys) => max_keys,
            Err(e) => return Ok(Err(e)),
        };
        let bytes = value.unwrap_or(0) as u64;
        let result = match self
            .storage((op, &bucket.name, key), move |b, ns| f(b, ns, max_keys))
            .await?
        {
            Ok(result) => result,
            Err(e) => return Ok(Err(e)),
        };
        Ok(match result {
            Ok(done) => {
                self.record(bucket, key, started, (bytes, 0), None);
                Ok(done)
            }
            Err(e @ KvError::TooManyKeys { .. }) => Err(self.store_error(bucket, e)),
            Err(e) => {
                self.record(bucket, key, started, (bytes, 0), Some(e.to_string()));
                Err(self.store_error(bucket, e))
            }
        })
    }

    /// The gate's checks of a write: the key fits, the bucket is `rw`, a value of `value`
    /// bytes fits; the namespace's `max_keys`.
    fn check_writable(
        &self,
        bucket: &Bucket,
        key: &str,
        value: Option<usize>,
    ) -> Result<u64, StoreError> {
        self.check_key(bucket, key)?;
        self.check_write(bucket)?;
        let policy = self.policy()?;
        if let Some(len) = value {
            decide::check_value(policy, &bucket.name, len).map_err(|r| self.deny(r))?;
        }
        Ok(policy.max_keys)
    }

    fn store_error(&self, bucket: &Bucket, error: KvError) -> StoreError {
        match error {
            KvError::TooManyKeys { limit } => self.deny(decide::too_many_keys(&bucket.name, limit)),
            KvError::NotACounter { .. }
            | KvError::TransactionTooLarge { .. }
            | KvError::Conflict { .. } => StoreError::Other(error.to_string()),
            KvError::Backend(message) | KvError::Unavailable(message) => StoreError::Other(message),
        }
    }
}

type StoreResult<T> = wasmtime::Result<Result<T, StoreError>>;

/// What [`KvState::storage`] gives: the call's end (the store did not answer), a refusal the
/// script gets, or the backend's answer.
type Storage<T> = wasmtime::Result<Result<Result<T, KvError>, StoreError>>;

/// The trap a call ends with when its key-value store did not answer: the outcome is
/// `store_unavailable` (retryable), so that no script goes on as if a write it could not make
/// had failed for a reason of its own.
#[derive(Debug, thiserror::Error)]
#[error("the key-value store is unavailable")]
pub(crate) struct KvUnavailable;

/// What `wasi:keyvalue/store` reaches of a call's state: the gate and the resource table its
/// buckets live in.
pub(crate) struct KvView<'a> {
    pub kv: &'a KvState,
    pub table: &'a mut ResourceTable,
}

/// [`HasData`] for [`KvView`].
struct HasKv;

impl HasData for HasKv {
    type Data<'a> = KvView<'a>;
}

/// Link `wasi:keyvalue/store` to the view `view` makes of the store's state.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    view: fn(&mut T) -> KvView<'_>,
) -> wasmtime::Result<()> {
    store::add_to_linker::<T, HasKv>(linker, view)?;
    atomics::add_to_linker::<T, HasKv>(linker, view)?;
    cas::add_to_linker::<T, HasKv>(linker, view)
}

impl atomics::Host for KvView<'_> {
    async fn increment(
        &mut self,
        this: Resource<Bucket>,
        key: String,
        delta: u64,
    ) -> StoreResult<u64> {
        let bucket = self.table.get(&this)?;
        let (name, k) = (bucket.name.clone(), key.clone());
        self.kv
            .write(("increment", bucket, &key), None, move |b, ns, max_keys| {
                b.increment(ns, &name, &k, delta, max_keys)
            })
            .await
    }
}

impl cas::Host for KvView<'_> {
    async fn compare_and_swap(
        &mut self,
        this: Resource<Bucket>,
        key: String,
        expected: Option<Vec<u8>>,
        next: Vec<u8>,
    ) -> StoreResult<bool> {
        let bucket = self.table.get(&this)?;
        let len = next.len();
        let (name, k) = (bucket.name.clone(), key.clone());
        self.kv
            .write(("cas", bucket, &key), Some(len), move |b, ns, max_keys| {
                b.compare_and_swap(ns, &name, &k, expected.as_deref(), &next, max_keys)
            })
            .await
    }
}

impl store::Host for KvView<'_> {
    async fn open(&mut self, identifier: String) -> StoreResult<Resource<Bucket>> {
        let kv = self.kv;
        let mode = match decide::open_bucket(kv.policy.as_deref(), &identifier) {
            Ok(mode) => mode,
            Err(refusal) => return Ok(Err(kv.deny(refusal))),
        };
        let bucket = Bucket {
            name: identifier,
            mode,
        };
        Ok(Ok(self.table.push(bucket)?))
    }
}

impl store::HostBucket for KvView<'_> {
    async fn get(&mut self, this: Resource<Bucket>, key: String) -> StoreResult<Option<Vec<u8>>> {
        let started = Instant::now();
        let bucket = self.table.get(&this)?;
        let kv = self.kv;
        if let Err(e) = kv.check_key(bucket, &key) {
            return Ok(Err(e));
        }
        let (name, k) = (bucket.name.clone(), key.clone());
        let result = match kv
            .storage(("get", &bucket.name, &key), move |b, ns| {
                b.get(ns, &name, &k)
            })
            .await?
        {
            Ok(result) => result,
            Err(e) => return Ok(Err(e)),
        };
        Ok(match result {
            Ok(value) => {
                let n = value.as_ref().map_or(0, |v| v.len() as u64);
                kv.record(bucket, &key, started, (0, n), None);
                Ok(value)
            }
            Err(e) => {
                kv.record(bucket, &key, started, (0, 0), Some(e.to_string()));
                Err(kv.store_error(bucket, e))
            }
        })
    }

    async fn set(
        &mut self,
        this: Resource<Bucket>,
        key: String,
        value: Vec<u8>,
    ) -> StoreResult<()> {
        let bucket = self.table.get(&this)?;
        let len = value.len();
        let (name, k) = (bucket.name.clone(), key.clone());
        self.kv
            .write(("set", bucket, &key), Some(len), move |b, ns, max_keys| {
                b.set(ns, &name, &k, &value, max_keys)
            })
            .await
    }

    async fn delete(&mut self, this: Resource<Bucket>, key: String) -> StoreResult<()> {
        let started = Instant::now();
        let bucket = self.table.get(&this)?;
        let kv = self.kv;
        if let Err(e) = kv
            .check_key(bucket, &key)
            .and_then(|()| kv.check_write(bucket))
        {
            return Ok(Err(e));
        }
        let (name, k) = (bucket.name.clone(), key.clone());
        let result = match kv
            .storage(("delete", &bucket.name, &key), move |b, ns| {
                b.delete(ns, &name, &k)
            })
            .await?
        {
            Ok(result) => result,
            Err(e) => return Ok(Err(e)),
        };
        Ok(match result {
            Ok(()) => {
                kv.record(bucket, &key, started, (0, 0), None);
                Ok(())
            }
            Err(e) => Err(kv.store_error(bucket, e)),
        })
    }

    async fn exists(&mut self, this: Resource<Bucket>, key: String) -> StoreResult<bool> {
        Ok(self.get(this, key).await?.map(|v| v.is_some()))
    }

    async fn list_keys(
        &mut self,
        this: Resource<Bucket>,
        cursor: Option<u64>,
    ) -> StoreResult<KeyResponse> {
        let started = Instant::now();
        let bucket = self.table.get(&this)?;
        let kv = self.kv;
        let offset = cursor.unwrap_or(0);
        let name = bucket.name.clone();
        let shown = offset.to_string();
        let result = match kv
            .storage(("list", &bucket.name, &shown), move |b, ns| {
                b.list(ns, &name, offset, PAGE)
            })
            .await?
        {
            Ok(result) => result,
            Err(e) => return Ok(Err(e)),
        };
        Ok(match result {
            Ok(keys) => {
                kv.record(
                    bucket,
                    "",
                    started,
                    (0, keys.iter().map(|k| k.len() as u64).sum()),
                    None,
                );
                let cursor = (keys.len() == PAGE).then(|| offset + PAGE as u64);
                Ok(KeyResponse { keys, cursor })
            }
            Err(e) => Err(kv.store_error(bucket, e)),
        })
    }

    async fn drop(&mut self, this: Resource<Bucket>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}
