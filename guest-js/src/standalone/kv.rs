//! `kv.compareAndSwap` over standard `wasi:keyvalue`, which has no compare-and-swap: a read,
//! a comparison and a write. The guest is single-threaded and the stock CLI's store lives in its
//! one process, so nothing runs between the read and the write there; a store shared between
//! processes would need the Palisade host's atomic `palisade:sandbox/kv`.

use crate::wasi::keyvalue::store::{Bucket, Error};

/// Set `key` to `next` when its value is `expected` (`None`: absent); whether it did.
pub fn compare_and_swap(
    bucket: &Bucket,
    key: &str,
    expected: Option<&[u8]>,
    next: &[u8],
) -> Result<bool, Error> {
    let current = bucket.get(key)?;
    if current.as_deref() != expected {
        return Ok(false);
    }
    bucket.set(key, next)?;
    Ok(true)
}
