//! `kv`: the key-value store the policy's `[kv]` table grants, over `wasi:keyvalue/store`,
//! `wasi:keyvalue/atomics` and Palisade's `kv` interface (compare-and-swap).
//! `kv.get/set/delete/has/list/increment/compareAndSwap` use the policy's first bucket;
//! `kv.bucket(name)` any other granted one. Values are strings, JSON (`getJSON`; `set` of a
//! non-string stores its JSON) or bytes (`getBytes`; `set` of a `Uint8Array`). The host decides
//! every operation; a refusal (an ungranted bucket, a write to a read-only one, a quota) is a
//! `PolicyDeniedError`.

#[cfg(feature = "capabilities")]
use crate::palisade::sandbox::kv::compare_and_swap;
#[cfg(feature = "capabilities")]
use crate::wasi::keyvalue::atomics::increment;
#[cfg(feature = "capabilities")]
use crate::wasi::keyvalue::store::{Bucket, Error as StoreError, open};
#[cfg(feature = "capabilities")]
use javy::quickjs::TypedArray;
use javy::quickjs::prelude::Func;
use javy::quickjs::{Array, Ctx, Function, Persistent, Result, Value};
use std::cell::RefCell;
#[cfg(feature = "capabilities")]
use std::collections::HashMap;

#[cfg(feature = "capabilities")]
thread_local! {
    static BUCKETS: RefCell<HashMap<String, Bucket>> = RefCell::new(HashMap::new());
}

thread_local! {
    /// The `kv` object and the function that sets its default bucket, from the prelude.
    static KV: RefCell<Option<(Persistent<Value<'static>>, Persistent<Function<'static>>)>> =
        const { RefCell::new(None) };
}

#[cfg(feature = "capabilities")]
/// `[0, value]`, `[1, message]` for a refusal, `[2, message]` for any other failure.
fn reply<'js>(cx: &Ctx<'js>, status: i32, value: Value<'js>) -> Result<Value<'js>> {
    let out = Array::new(cx.clone())?;
    crate::globals::define_index(&out, 0, status)?;
    crate::globals::define_index(&out, 1, value)?;
    Ok(out.into_value())
}

#[cfg(feature = "capabilities")]
fn failure<'js>(cx: &Ctx<'js>, error: StoreError) -> Result<Value<'js>> {
    let (status, message) = match error {
        StoreError::AccessDenied => (1, "access denied".to_owned()),
        StoreError::NoSuchStore => (1, "no such bucket".to_owned()),
        StoreError::Other(message) => (2, message),
    };
    let message = javy::quickjs::String::from_str(cx.clone(), &message)?.into_value();
    reply(cx, status, message)
}

#[cfg(feature = "capabilities")]
/// Run `f` on the open bucket `name`, opening it on first use in this call.
fn with_bucket<'js>(
    cx: &Ctx<'js>,
    name: &str,
    f: impl FnOnce(&Bucket) -> Result<Value<'js>>,
) -> Result<Value<'js>> {
    let opened = BUCKETS.with(|b| b.borrow().contains_key(name));
    if !opened {
        match open(name) {
            Ok(bucket) => BUCKETS.with(|b| b.borrow_mut().insert(name.to_owned(), bucket)),
            Err(e) => return failure(cx, e),
        };
    }
    BUCKETS.with(|b| f(&b.borrow()[name]))
}

#[cfg(feature = "capabilities")]
fn kv_op<'js>(
    cx: Ctx<'js>,
    op: String,
    bucket: String,
    key: String,
    value: Value<'js>,
) -> Result<Value<'js>> {
    with_bucket(&cx, &bucket, |b| match op.as_str() {
        "get" => match b.get(&key) {
            Ok(Some(bytes)) => reply(
                &cx,
                0,
                TypedArray::<u8>::new(cx.clone(), bytes)?.into_value(),
            ),
            Ok(None) => reply(&cx, 0, Value::new_null(cx.clone())),
            Err(e) => failure(&cx, e),
        },
        "has" => match b.exists(&key) {
            Ok(found) => reply(&cx, 0, Value::new_bool(cx.clone(), found)),
            Err(e) => failure(&cx, e),
        },
        "set" => {
            let bytes = TypedArray::<u8>::from_value(value)?
                .as_bytes()
                .map(<[u8]>::to_vec)
                .unwrap_or_default();
            match b.set(&key, &bytes) {
                Ok(()) => reply(&cx, 0, Value::new_null(cx.clone())),
                Err(e) => failure(&cx, e),
            }
        }
        // `value` is the delta, a non-negative safe integer (kv.js checks it).
        "increment" => match increment(b, &key, value.as_number().unwrap_or(0.0) as u64) {
            Ok(n) => reply(&cx, 0, Value::new_number(cx.clone(), n as f64)),
            Err(e) => failure(&cx, e),
        },
        // `value` is `[expected bytes or null, next bytes]`.
        "cas" => {
            let pair = Array::from_value(value)?;
            let bytes = |v: Value<'js>| -> Result<Vec<u8>> {
                Ok(TypedArray::<u8>::from_value(v)?
                    .as_bytes()
                    .map(<[u8]>::to_vec)
                    .unwrap_or_default())
            };
            let expected: Value = pair.get(0)?;
            let expected = if expected.is_null() {
                None
            } else {
                Some(bytes(expected)?)
            };
            let next = bytes(pair.get(1)?)?;
            match compare_and_swap(b, &key, expected.as_deref(), &next) {
                Ok(swapped) => reply(&cx, 0, Value::new_bool(cx.clone(), swapped)),
                Err(e) => failure(&cx, e),
            }
        }
        "delete" => match b.delete(&key) {
            Ok(()) => reply(&cx, 0, Value::new_null(cx.clone())),
            Err(e) => failure(&cx, e),
        },
        _ => reply(&cx, 2, Value::new_null(cx.clone())),
    })
}

#[cfg(feature = "capabilities")]
/// One page of keys after `offset`: `[0, keys, next offset or null]`.
fn kv_list<'js>(cx: Ctx<'js>, bucket: String, offset: f64) -> Result<Value<'js>> {
    with_bucket(&cx, &bucket, |b| {
        let cursor = (offset > 0.0).then_some(offset as u64);
        match b.list_keys(cursor) {
            Ok(page) => {
                let out = Array::new(cx.clone())?;
                crate::globals::define_index(&out, 0, 0)?;
                crate::globals::define_index(
                    &out,
                    1,
                    crate::globals::string_array(&cx, page.keys)?,
                )?;
                crate::globals::define_index(&out, 2, page.cursor.map(|c| c as f64))?;
                Ok(out.into_value())
            }
            Err(e) => failure(&cx, e),
        }
    })
}

const PRELUDE: &str = include_str!("kv.js");

/// Evaluate the prelude and keep the `kv` object it makes. Runs once, before the snapshot.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    #[cfg(feature = "capabilities")]
    let (op, list) = (Func::from(kv_op), Func::from(kv_list));
    #[cfg(not(feature = "capabilities"))]
    let (op, list) = (
        Func::from(crate::globals::absent),
        Func::from(crate::globals::absent),
    );
    let made: Array = prelude.call((
        op,
        list,
        Func::from(crate::globals::io::refusal),
        Func::from(crate::globals::utf8::utf8_encode),
        Func::from(crate::globals::utf8::utf8_decode),
    ))?;
    let (kv, use_bucket): (Value, Function) = (made.get(0)?, made.get(1)?);
    KV.with(|slot| {
        *slot.borrow_mut() = Some((Persistent::save(cx, kv), Persistent::save(cx, use_bucket)))
    });
    Ok(())
}

/// Install `kv` for this call, over `bucket` by default.
pub fn install(cx: &Ctx<'_>, bucket: &str) -> Result<()> {
    #[cfg(feature = "capabilities")]
    BUCKETS.with(|b| b.borrow_mut().clear());
    let (kv, use_bucket) = KV
        .with(|slot| slot.borrow().clone())
        .expect("the kv prelude ran at init");
    use_bucket.restore(cx)?.call::<_, ()>((bucket,))?;
    crate::globals::define_global(cx, "kv", kv.restore(cx)?)
}

/// Close the buckets this call opened: a live session's instance outlives the call, and the
/// next call's host knows none of this call's handles.
pub fn close_buckets() {
    #[cfg(feature = "capabilities")]
    BUCKETS.with(|b| b.borrow_mut().clear());
}
