//! `crypto.getRandomValues` and `crypto.randomUUID`, drawing from `wasi:random/random`: the
//! host's secure generator, or the policy's seed under `[determinism]`.

use crate::wasi::random::random::get_random_bytes;
use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Function, Result, TypedArray};

fn random_bytes(cx: Ctx<'_>, len: u32) -> Result<TypedArray<'_, u8>> {
    TypedArray::new(cx, get_random_bytes(u64::from(len.min(65_536))))
}

const PRELUDE: &str = r#"
(function (randomBytes) {
  "use strict";
  const INTEGER = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array,
    Int32Array, Uint32Array, BigInt64Array, BigUint64Array];
  const crypto = {
    getRandomValues(array) {
      if (!INTEGER.some((T) => array instanceof T)) {
        throw new TypeError("getRandomValues needs an integer typed array");
      }
      if (array.byteLength > 65536) {
        throw new DOMException(
          `${array.byteLength} bytes requested; at most 65536 per call`, "QuotaExceededError");
      }
      new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(randomBytes(array.byteLength));
      return array;
    },
    randomUUID() {
      const b = randomBytes(16);
      b[6] = (b[6] & 0x0f) | 0x40;
      b[8] = (b[8] & 0x3f) | 0x80;
      const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    },
  };
  Object.defineProperty(crypto, Symbol.toStringTag, { value: "Crypto" });
  Object.defineProperty(globalThis, "crypto", { value: Object.freeze(crypto), writable: true, configurable: true, enumerable: false });
})
"#;

/// Install `crypto`. Runs once, before the snapshot (no randomness is drawn then).
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    prelude.call((Func::from(random_bytes),))
}
