
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
  const { isView } = ArrayBuffer;
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
      // WebIDL's ArrayBufferView, then the Web Crypto check of its type.
      if (!isView(array)) throw new TypeErrorCtor("getRandomValues needs an integer typed array");
      const name = typedArrayName(array);
      if (name === undefined || INTEGER[name] !== true) {
        throw new DOMExceptionCtor("getRandomValues needs an integer typed array", "TypeMismatchError");
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
