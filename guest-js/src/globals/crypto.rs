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
  // Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  // QuickJS compiles a template literal to a call of `String.prototype.concat`: none here.
  const concat = uncurry(String.prototype.concat);
  const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
  const getter = (key) => uncurry(Object.getOwnPropertyDescriptor(TypedArrayPrototype, key).get);
  const typedArrayName = getter(Symbol.toStringTag);
  const typedArrayBuffer = getter("buffer");
  const typedArrayOffset = getter("byteOffset");
  const typedArrayLength = getter("byteLength");
  const typedArraySet = uncurry(TypedArrayPrototype.set);
  const Uint8ArrayCtor = Uint8Array;
  const TypeErrorCtor = TypeError;
  const DOMExceptionCtor = DOMException;
  const INTEGER = { __proto__: null, Int8Array: true, Uint8Array: true, Uint8ClampedArray: true, Int16Array: true,
    Uint16Array: true, Int32Array: true, Uint32Array: true, BigInt64Array: true, BigUint64Array: true };
  const HEX = "0123456789abcdef";
  const hex = (bytes, from, to) => {
    let out = "";
    for (let i = from; i < to; i++) out += HEX[bytes[i] >> 4] + HEX[bytes[i] & 15];
    return out;
  };
  const crypto = {
    getRandomValues(array) {
      const name = typedArrayName(array);
      if (name === undefined || INTEGER[name] !== true) {
        throw new TypeErrorCtor("getRandomValues needs an integer typed array");
      }
      const byteLength = typedArrayLength(array);
      if (byteLength > 65536) {
        throw new DOMExceptionCtor(
          concat("", byteLength, " bytes requested; at most 65536 per call"), "QuotaExceededError");
      }
      typedArraySet(new Uint8ArrayCtor(typedArrayBuffer(array), typedArrayOffset(array), byteLength), randomBytes(byteLength));
      return array;
    },
    randomUUID() {
      const b = randomBytes(16);
      b[6] = (b[6] & 0x0f) | 0x40;
      b[8] = (b[8] & 0x3f) | 0x80;
      return concat("", hex(b, 0, 4), "-", hex(b, 4, 6), "-", hex(b, 6, 8), "-", hex(b, 8, 10), "-", hex(b, 10, 16));
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
