/*
 * `crypto.subtle` (`SubtleCrypto`) and `CryptoKey`: `digest` with SHA-1, SHA-256, SHA-384 and
 * SHA-512, and HMAC keys imported from raw bytes (`importKey`), exported (`exportKey`), and used
 * to `sign` and `verify`. Every method returns a promise, rejected with the `TypeError` or
 * `DOMException` Web Crypto names (`NotSupportedError` for an algorithm Palisade does not have).
 * The bytes given are copied when the method is called; the hashing is done by the natives
 * (mod.rs). `crypto` (crypto.rs) is frozen, so it is rebuilt here with `subtle` added.
 */
(function (digestNative, signNative, verifyNative) {
  "use strict";
  // Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const { defineProperty, getOwnPropertyDescriptor, getOwnPropertyDescriptors, create, freeze, getPrototypeOf } = Object;
  const { isView } = ArrayBuffer;
  const { isArray } = Array;
  const ArrayBufferCtor = ArrayBuffer;
  const Uint8ArrayCtor = Uint8Array;
  const StringCtor = String;
  const TypeErrorCtor = TypeError;
  const DOMExceptionCtor = DOMException;
  const PromiseCtor = Promise;
  const WeakMapCtor = WeakMap;
  const weakGet = uncurry(WeakMap.prototype.get);
  const weakSet = uncurry(WeakMap.prototype.set);
  const toLowerCase = uncurry(String.prototype.toLowerCase);
  const SymbolIterator = Symbol.iterator;
  const bufferByteLength = uncurry(getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get);
  const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype);
  const typedGetter = (key) => uncurry(getOwnPropertyDescriptor(TypedArrayPrototype, key).get);
  const typedArrayName = typedGetter(Symbol.toStringTag);
  const typedArrayBuffer = typedGetter("buffer");
  const typedArrayOffset = typedGetter("byteOffset");
  const typedArrayLength = typedGetter("byteLength");
  const typedArraySet = uncurry(TypedArrayPrototype.set);
  const viewGetter = (key) => uncurry(getOwnPropertyDescriptor(DataView.prototype, key).get);
  const viewBuffer = viewGetter("buffer");
  const viewOffset = viewGetter("byteOffset");
  const viewLength = viewGetter("byteLength");

  const HASHES = { __proto__: null, "sha-1": 1, "sha-256": 256, "sha-384": 384, "sha-512": 512 };
  const HASH_NAMES = { __proto__: null, 1: "SHA-1", 256: "SHA-256", 384: "SHA-384", 512: "SHA-512" };
  const USAGES = {
    __proto__: null, encrypt: true, decrypt: true, sign: true, verify: true, deriveKey: true,
    deriveBits: true, wrapKey: true, unwrapKey: true,
  };

  const notSupported = (what) => new DOMExceptionCtor(what, "NotSupportedError");

  // A copy of a BufferSource's bytes in a fresh ArrayBuffer (an empty one for a detached buffer),
  // made with the typed-array `set` rather than `slice`, which would consult the species.
  const copy = (buffer, offset, length) => {
    const out = new Uint8ArrayCtor(length);
    if (length > 0) typedArraySet(out, new Uint8ArrayCtor(buffer, offset, length));
    return typedArrayBuffer(out);
  };
  const copyBytes = (data, what) => {
    if (isView(data)) {
      if (typedArrayName(data) !== undefined) {
        return copy(typedArrayBuffer(data), typedArrayOffset(data), typedArrayLength(data));
      }
      let buffer, offset, length;
      try {
        buffer = viewBuffer(data);
        offset = viewOffset(data);
        length = viewLength(data);
      } catch {
        return new ArrayBufferCtor(0);
      }
      return copy(buffer, offset, length);
    }
    let length;
    try {
      length = bufferByteLength(data);
    } catch {
      throw new TypeErrorCtor(what + " is not of type '(ArrayBuffer or ArrayBufferView)'");
    }
    return copy(data, 0, length);
  };

  // The name of an AlgorithmIdentifier (a string, or an object with a `name`).
  const algorithmName = (algorithm) => {
    if (typeof algorithm === "string") return algorithm;
    if (algorithm === null || (typeof algorithm !== "object" && typeof algorithm !== "function")) {
      throw new TypeErrorCtor("Algorithm: not an object or a string");
    }
    const name = algorithm.name;
    if (name === undefined) throw new TypeErrorCtor("Algorithm: name is required");
    if (typeof name === "symbol") throw new TypeErrorCtor("Algorithm: name is a symbol");
    return StringCtor(name);
  };
  const hashOf = (algorithm) => {
    const hash = HASHES[toLowerCase(algorithmName(algorithm))];
    if (hash === undefined) throw notSupported("Unrecognized hash algorithm");
    return hash;
  };
  const requireArgs = (given, needed, method) => {
    if (given < needed) {
      throw new TypeErrorCtor(StringCtor(method) + ": " + needed + " arguments required, but only " + given + " present");
    }
  };

  // Run `body` and settle a new promise with its result or its exception.
  const promised = (body) =>
    new PromiseCtor((resolve) => {
      resolve(body());
    });

  const keys = new WeakMapCtor();
  const slotOf = (key) => {
    const slot = key !== null && typeof key === "object" ? weakGet(keys, key) : undefined;
    if (slot === undefined) throw new TypeErrorCtor("parameter is not of type 'CryptoKey'");
    return slot;
  };

  const accessor = (proto, name, get) =>
    defineProperty(proto, name, { __proto__: null, get, enumerable: true, configurable: true });
  const method = (proto, fn) =>
    defineProperty(proto, fn.name, { __proto__: null, value: fn, writable: true, enumerable: true, configurable: true });
  const tag = (proto, name) =>
    defineProperty(proto, Symbol.toStringTag, { __proto__: null, value: name, configurable: true });

  class CryptoKey {
    constructor() {
      throw new TypeErrorCtor("Illegal constructor");
    }
  }
  const KeyPrototype = CryptoKey.prototype;
  accessor(KeyPrototype, "type", function type() {
    return slotOf(this).type;
  });
  accessor(KeyPrototype, "extractable", function extractable() {
    return slotOf(this).extractable;
  });
  accessor(KeyPrototype, "algorithm", function algorithm() {
    return slotOf(this).algorithm;
  });
  accessor(KeyPrototype, "usages", function usages() {
    return slotOf(this).usages;
  });
  tag(KeyPrototype, "CryptoKey");

  // The usages a key is imported with: strings of the KeyUsage enum, of which HMAC allows
  // `sign` and `verify`; an array is read by index, another iterable through its iterator.
  const readUsages = (list) => {
    const seen = { __proto__: null };
    const take = (value) => {
      const usage = StringCtor(value);
      if (USAGES[usage] !== true) throw new TypeErrorCtor("'" + usage + "' is not a valid KeyUsage");
      if (usage !== "sign" && usage !== "verify") {
        throw new DOMExceptionCtor("Cannot create a key with usage '" + usage + "'", "SyntaxError");
      }
      seen[usage] = true;
    };
    if (isArray(list)) {
      for (let i = 0; i < list.length; i++) take(list[i]);
    } else if (list !== null && typeof list === "object" && typeof list[SymbolIterator] === "function") {
      for (const value of list) take(value);
    } else {
      throw new TypeErrorCtor("keyUsages is not a sequence");
    }
    return seen;
  };

  class SubtleCrypto {
    constructor() {
      throw new TypeErrorCtor("Illegal constructor");
    }
  }
  const SubtlePrototype = SubtleCrypto.prototype;
  let subtle;
  const checkThis = (self) => {
    if (self !== subtle) throw new TypeErrorCtor("Illegal invocation");
  };

  method(SubtlePrototype, {
    digest(algorithm, data) {
      const given = arguments.length;
      return promised(() => {
        checkThis(this);
        requireArgs(given, 2, "digest");
        const hash = hashOf(algorithm);
        return digestNative(hash, copyBytes(data, "data"));
      });
    },
  }.digest);

  method(SubtlePrototype, {
    importKey(format, keyData, algorithm, extractable, keyUsages) {
      const given = arguments.length;
      return promised(() => {
        checkThis(this);
        requireArgs(given, 5, "importKey");
        format = StringCtor(format);
        if (format !== "raw" && format !== "jwk" && format !== "spki" && format !== "pkcs8") {
          throw new TypeErrorCtor("'" + format + "' is not a valid KeyFormat");
        }
        const name = algorithmName(algorithm);
        if (toLowerCase(name) !== "hmac") throw notSupported("Unrecognized algorithm name");
        const hashAlgorithm = algorithm.hash;
        if (hashAlgorithm === undefined) throw new TypeErrorCtor("HmacImportParams: hash is required");
        const hash = hashOf(hashAlgorithm);
        const requested = algorithm.length;
        const usages = readUsages(keyUsages);
        if (format !== "raw") throw notSupported("Palisade imports HMAC keys in the raw format only");
        const bytes = copyBytes(keyData, "keyData");
        const bits = bufferByteLength(bytes) * 8;
        if (bits === 0) throw new DOMExceptionCtor("HMAC key data must not be empty", "DataError");
        let length = bits;
        if (requested !== undefined) {
          length = requested >>> 0;
          if (length === 0 || length > bits || length <= bits - 8) {
            throw new DOMExceptionCtor("The key length does not match the key data", "DataError");
          }
        }
        const usageList = [];
        if (usages.sign) usageList[usageList.length] = "sign";
        if (usages.verify) usageList[usageList.length] = "verify";
        const key = create(KeyPrototype);
        weakSet(keys, key, {
          __proto__: null,
          type: "secret",
          extractable: !!extractable,
          algorithm: { name: "HMAC", hash: { name: HASH_NAMES[hash] }, length },
          usages: usageList,
          hash,
          bytes,
          sign: usages.sign === true,
          verify: usages.verify === true,
        });
        return key;
      });
    },
  }.importKey);

  method(SubtlePrototype, {
    exportKey(format, key) {
      const given = arguments.length;
      return promised(() => {
        checkThis(this);
        requireArgs(given, 2, "exportKey");
        format = StringCtor(format);
        if (format !== "raw" && format !== "jwk" && format !== "spki" && format !== "pkcs8") {
          throw new TypeErrorCtor("'" + format + "' is not a valid KeyFormat");
        }
        const slot = slotOf(key);
        if (format !== "raw") throw notSupported("Palisade exports HMAC keys in the raw format only");
        if (!slot.extractable) throw new DOMExceptionCtor("key is not extractable", "InvalidAccessError");
        return copy(slot.bytes, 0, bufferByteLength(slot.bytes));
      });
    },
  }.exportKey);

  // The key for `sign` or `verify` under `algorithm`, with the checks Web Crypto makes.
  const hmacKey = (algorithm, key, usage) => {
    const name = algorithmName(algorithm);
    if (toLowerCase(name) !== "hmac") throw notSupported("Unrecognized algorithm name");
    return () => {
      const slot = slotOf(key);
      if (slot[usage] !== true) {
        throw new DOMExceptionCtor("key does not support the '" + usage + "' operation", "InvalidAccessError");
      }
      return slot;
    };
  };

  method(SubtlePrototype, {
    sign(algorithm, key, data) {
      const given = arguments.length;
      return promised(() => {
        checkThis(this);
        requireArgs(given, 3, "sign");
        slotOf(key);
        const checked = hmacKey(algorithm, key, "sign");
        const bytes = copyBytes(data, "data");
        const slot = checked();
        return signNative(slot.hash, slot.bytes, bytes);
      });
    },
  }.sign);

  method(SubtlePrototype, {
    verify(algorithm, key, signature, data) {
      const given = arguments.length;
      return promised(() => {
        checkThis(this);
        requireArgs(given, 4, "verify");
        slotOf(key);
        const checked = hmacKey(algorithm, key, "verify");
        const signatureBytes = copyBytes(signature, "signature");
        const bytes = copyBytes(data, "data");
        const slot = checked();
        return verifyNative(slot.hash, slot.bytes, bytes, signatureBytes);
      });
    },
  }.verify);
  tag(SubtlePrototype, "SubtleCrypto");

  subtle = create(SubtlePrototype);
  const old = globalThis.crypto;
  const descriptors = getOwnPropertyDescriptors(old);
  descriptors.subtle = { __proto__: null, value: subtle, writable: false, enumerable: true, configurable: false };
  const crypto = freeze(create(getPrototypeOf(old), descriptors));
  defineProperty(globalThis, "crypto", { __proto__: null, value: crypto, writable: true, configurable: true, enumerable: false });
  for (const [name, value] of [["SubtleCrypto", SubtleCrypto], ["CryptoKey", CryptoKey]]) {
    defineProperty(globalThis, name, { __proto__: null, value, writable: true, configurable: true, enumerable: false });
  }
})
