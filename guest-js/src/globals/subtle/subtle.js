/*
 * `crypto.subtle` (`SubtleCrypto`) and `CryptoKey`: `digest` with SHA-1, SHA-256, SHA-384 and
 * SHA-512; HMAC keys imported from raw bytes (`importKey`), exported (`exportKey`), and used
 * to `sign` and `verify`; AES-GCM keys (raw, jwk) to `encrypt` and `decrypt` (96-bit IVs);
 * ECDSA P-256 and P-384 and Ed25519 keys (raw and spki public keys, pkcs8 private keys, jwk) to
 * `verify` and `sign`; `generateKey` for all four (bytes from the call's random source, the one
 * `getRandomValues` draws from) and `exportKey` in raw, jwk, spki and pkcs8 as the key type
 * allows. Every method returns a promise, rejected with the `TypeError` or
 * `DOMException` Web Crypto names (`NotSupportedError` for an algorithm Palisade does not have).
 * The bytes given are copied when the method is called; the hashing is done by the natives
 * (mod.rs). `crypto` (crypto.rs) is frozen, so it is rebuilt here with `subtle` added.
 */
(function (digestNative, signNative, verifyNative, natives) {
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
  const stringReplace = uncurry(String.prototype.replace);
  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const atobIntrinsic = atob;
  const { aesEncrypt, aesDecrypt, keyImport, keyVerify, keySign, keyGenerate, keyExport, randomBytes } = natives;
  // Internal promises, chained with no lookup a script can reach (promises.js).
  const { then: promiseThen, resolved: promiseResolve } = globalThis.__palisadePromises;
  const btoaIntrinsic = btoa;
  const fromCharCode = String.fromCharCode;
  const NumberCtor = Number;
  const { isFinite: isFiniteNumber } = Number;
  const { trunc } = Math;
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
  const dataError = (what) => new DOMExceptionCtor(what, "DataError");
  // The algorithms, by their names in lower case.
  const KINDS = { __proto__: null, hmac: "HMAC", "aes-gcm": "AES-GCM", ecdsa: "ECDSA", ed25519: "Ed25519" };
  const CURVES = { __proto__: null, "P-256": 256, "P-384": 384 };
  const POINT_BYTES = { __proto__: null, 256: 32, 384: 48 };
  const FORMATS = { __proto__: null, raw: 0, spki: 1, pkcs8: 2 };
  const SECRET = 3;
  const GCM_TAGS = { __proto__: null, 32: true, 64: true, 96: true, 104: true, 112: true, 120: true, 128: true };
  // base64url (a JWK member) as an ArrayBuffer; a DataError if it is not.
  const base64url = (text, what) => {
    if (typeof text !== "string") throw dataError(what + " is missing from the JWK");
    let binary;
    try {
      binary = atobIntrinsic(stringReplace(stringReplace(text, /-/g, "+"), /_/g, "/"));
    } catch {
      throw dataError(what + " is not base64url");
    }
    const out = new Uint8ArrayCtor(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = charCodeAt(binary, i);
    return typedArrayBuffer(out);
  };
  const concatBuffers = (parts) => {
    let length = 0;
    for (let i = 0; i < parts.length; i++) length += bufferByteLength(parts[i]);
    const out = new Uint8ArrayCtor(length);
    let at = 0;
    for (let i = 0; i < parts.length; i++) {
      typedArraySet(out, new Uint8ArrayCtor(parts[i]), at);
      at += bufferByteLength(parts[i]);
    }
    return typedArrayBuffer(out);
  };

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
  const SIGN_VERIFY = { __proto__: null, sign: true, verify: true };
  const readUsages = (list, allowed = SIGN_VERIFY) => {
    const seen = { __proto__: null };
    const take = (value) => {
      const usage = StringCtor(value);
      if (USAGES[usage] !== true) throw new TypeErrorCtor("'" + usage + "' is not a valid KeyUsage");
      if (allowed[usage] !== true) {
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
        const kind = KINDS[toLowerCase(name)];
        if (kind === undefined) throw notSupported("Unrecognized algorithm name");
        if (kind !== "HMAC") return importOther(kind, format, keyData, algorithm, extractable, keyUsages);
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
          kind: "HMAC",
          sign: usages.sign === true,
          verify: usages.verify === true,
        });
        return key;
      });
    },
  }.importKey);

  const USAGE_ORDER = ["encrypt", "decrypt", "sign", "verify", "deriveKey", "deriveBits", "wrapKey", "unwrapKey"];
  const AES_USAGES = { __proto__: null, encrypt: true, decrypt: true, wrapKey: true, unwrapKey: true };
  const PUBLIC_USAGES = { __proto__: null, verify: true };
  const PRIVATE_USAGES = { __proto__: null, sign: true };
  const makeKey = (slot, usages) => {
    const list = [];
    for (let i = 0; i < USAGE_ORDER.length; i++) if (usages[USAGE_ORDER[i]] === true) list[list.length] = USAGE_ORDER[i];
    if (list.length === 0 && slot.type !== "public") throw new DOMExceptionCtor("A " + slot.type + " key needs at least one usage", "SyntaxError");
    slot.usages = list;
    for (let i = 0; i < list.length; i++) slot[list[i]] = true;
    const key = create(KeyPrototype);
    weakSet(keys, key, slot);
    return key;
  };

  // importKey for AES-GCM, ECDSA and Ed25519.
  function importOther(kind, format, keyData, algorithm, extractable, keyUsages) {
    const jwk = format === "jwk";
    if (jwk && (keyData === null || typeof keyData !== "object")) throw new TypeErrorCtor("keyData is not a JsonWebKey");
    const slot = { __proto__: null, kind, extractable: !!extractable };
    if (kind === "AES-GCM") {
      const usages = readUsages(keyUsages, AES_USAGES);
      let bytes;
      if (format === "raw") bytes = copyBytes(keyData, "keyData");
      else if (jwk) {
        if (keyData.kty !== "oct") throw dataError("an AES JWK has kty \"oct\"");
        bytes = base64url(keyData.k, "k");
      } else throw notSupported("AES-GCM keys are imported as raw or jwk");
      const length = bufferByteLength(bytes);
      if (length !== 16 && length !== 24 && length !== 32) throw dataError("an AES key is 128, 192 or 256 bits");
      slot.type = "secret";
      slot.bytes = bytes;
      slot.algorithm = { name: "AES-GCM", length: length * 8 };
      return makeKey(slot, usages);
    }
    let curve = 25519, namedCurve;
    if (kind === "ECDSA") {
      namedCurve = StringCtor(algorithm.namedCurve);
      curve = CURVES[namedCurve];
      if (curve === undefined) throw notSupported("ECDSA curves here are P-256 and P-384");
    }
    let data, code, isPrivate;
    if (jwk) {
      const kty = kind === "ECDSA" ? "EC" : "OKP";
      if (keyData.kty !== kty) throw dataError("the JWK's kty is not " + kty);
      if (keyData.crv !== (kind === "ECDSA" ? namedCurve : "Ed25519")) throw dataError("the JWK's crv does not match");
      isPrivate = keyData.d !== undefined;
      if (isPrivate) {
        data = base64url(keyData.d, "d");
        code = SECRET;
      } else if (kind === "ECDSA") {
        const x = base64url(keyData.x, "x"), y = base64url(keyData.y, "y");
        if (bufferByteLength(x) !== POINT_BYTES[curve] || bufferByteLength(y) !== POINT_BYTES[curve]) throw dataError("the JWK's x or y has the wrong length");
        const prefix = new Uint8ArrayCtor(1);
        prefix[0] = 4;
        data = concatBuffers([typedArrayBuffer(prefix), x, y]);
        code = FORMATS.raw;
      } else {
        data = base64url(keyData.x, "x");
        code = FORMATS.raw;
      }
    } else {
      code = FORMATS[format];
      isPrivate = format === "pkcs8";
      data = copyBytes(keyData, "keyData");
    }
    const usages = readUsages(keyUsages, isPrivate ? PRIVATE_USAGES : PUBLIC_USAGES);
    const parts = keyImport(curve, code, data);
    if (parts === null || parts === undefined) throw dataError("the key data is not a " + (kind === "ECDSA" ? namedCurve : "Ed25519") + " key");
    if (jwk && isPrivate && keyData.x !== undefined) {
      // A private JWK's public half must be the one its secret gives.
      const given = new Uint8ArrayCtor(base64url(keyData.x, "x"));
      const point = new Uint8ArrayCtor(parts[1]);
      const offset = kind === "ECDSA" ? 1 : 0;
      for (let i = 0; i < given.length; i++) if (given[i] !== point[offset + i]) throw dataError("the JWK's x does not match d");
    }
    slot.type = isPrivate ? "private" : "public";
    slot.curve = curve;
    slot.secret = isPrivate ? parts[0] : null;
    slot.point = isPrivate ? parts[1] : parts[0];
    slot.algorithm = kind === "ECDSA" ? { name: "ECDSA", namedCurve } : { name: "Ed25519" };
    return makeKey(slot, usages);
  }

  // An ArrayBuffer as base64url without padding (a JWK member).
  const toBase64url = (buffer) => {
    const bytes = new Uint8ArrayCtor(buffer);
    let binary = "";
    for (let i = 0; i < bytes.length; i++) binary += fromCharCode(bytes[i]);
    return stringReplace(stringReplace(stringReplace(btoaIntrinsic(binary), /\+/g, "-"), /\//g, "_"), /=+$/, "");
  };
  const HMAC_JWK_ALG = { __proto__: null, 1: "HS1", 256: "HS256", 384: "HS384", 512: "HS512" };
  // The JWK of a key: the members Web Crypto's export gives, in the order Node gives them.
  const exportJwk = (slot) => {
    const jwk = {};
    if (slot.kind === "HMAC" || slot.kind === "AES-GCM") {
      jwk.kty = "oct";
      jwk.k = toBase64url(slot.bytes);
      jwk.alg = slot.kind === "HMAC" ? HMAC_JWK_ALG[slot.hash] : "A" + bufferByteLength(slot.bytes) * 8 + "GCM";
    } else if (slot.kind === "ECDSA") {
      const size = POINT_BYTES[slot.curve];
      jwk.kty = "EC";
      jwk.crv = slot.algorithm.namedCurve;
      jwk.x = toBase64url(copy(slot.point, 1, size));
      jwk.y = toBase64url(copy(slot.point, 1 + size, size));
      if (slot.type === "private") jwk.d = toBase64url(slot.secret);
    } else {
      jwk.kty = "OKP";
      jwk.crv = "Ed25519";
      jwk.x = toBase64url(slot.point);
      if (slot.type === "private") jwk.d = toBase64url(slot.secret);
    }
    const ops = [];
    for (let i = 0; i < slot.usages.length; i++) ops[i] = slot.usages[i];
    jwk.key_ops = ops;
    jwk.ext = slot.extractable;
    return jwk;
  };

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
        const asymmetric = slot.kind === "ECDSA" || slot.kind === "Ed25519";
        if (!asymmetric && format !== "raw" && format !== "jwk") {
          throw notSupported(slot.kind + " keys are exported as raw or jwk");
        }
        if (!slot.extractable) throw new DOMExceptionCtor("key is not extractable", "InvalidAccessError");
        if (format === "jwk") return exportJwk(slot);
        if (!asymmetric) return copy(slot.bytes, 0, bufferByteLength(slot.bytes));
        const wanted = format === "pkcs8" ? "private" : "public";
        if (slot.type !== wanted) {
          throw new DOMExceptionCtor("the " + format + " format is for a " + wanted + " key", "InvalidAccessError");
        }
        if (format === "raw") return copy(slot.point, 0, bufferByteLength(slot.point));
        const der = keyExport(slot.curve, FORMATS[format], format === "pkcs8" ? slot.secret : slot.point);
        if (der === null || der === undefined) throw new DOMExceptionCtor("the key could not be encoded", "OperationError");
        return der;
      });
    },
  }.exportKey);

  // [EnforceRange] of an unsigned integer type whose largest value is `max`.
  const enforceRange = (value, max, what) => {
    const number = NumberCtor(value);
    if (!isFiniteNumber(number)) throw new TypeErrorCtor(what + " is not a finite number");
    const integer = trunc(number);
    if (integer < 0 || integer > max) throw new TypeErrorCtor(what + " is outside the range of its type");
    return integer;
  };
  const pick = (requested, allowed) => {
    const out = { __proto__: null };
    for (const usage in requested) if (allowed[usage] === true) out[usage] = true;
    return out;
  };
  const checkUsages = (requested, allowed) => {
    for (const usage in requested) {
      if (allowed[usage] !== true) throw new DOMExceptionCtor("Cannot create a key with usage '" + usage + "'", "SyntaxError");
    }
  };
  const HMAC_BLOCK_BITS = { __proto__: null, 1: 512, 256: 512, 384: 1024, 512: 1024 };

  // generateKey: the algorithm is read and checked when called (a TypeError, NotSupportedError
  // or OperationError rejects the promise at once, as Web Crypto's normalization does); the
  // usages are checked and the key made a microtask later, with bytes from the call's random
  // source (the one `getRandomValues` draws from, seeded under `[determinism]`).
  method(SubtlePrototype, {
    generateKey(algorithm, extractable, keyUsages) {
      const given = arguments.length;
      return new PromiseCtor((resolve, reject) => {
        checkThis(this);
        requireArgs(given, 3, "generateKey");
        extractable = !!extractable;
        const requested = readUsages(keyUsages, USAGES);
        const name = algorithmName(algorithm);
        const kind = KINDS[toLowerCase(name)];
        if (kind === undefined) throw notSupported("Unrecognized algorithm name");
        let make;
        if (kind === "HMAC") {
          const hashAlgorithm = algorithm.hash;
          if (hashAlgorithm === undefined) throw new TypeErrorCtor("HmacKeyGenParams: hash is required");
          const hash = hashOf(hashAlgorithm);
          let length = algorithm.length;
          if (length === undefined) length = HMAC_BLOCK_BITS[hash];
          else {
            length = enforceRange(length, 0xffffffff, "HmacKeyGenParams.length");
            if (length === 0) throw new DOMExceptionCtor("an HMAC key is at least one bit long", "OperationError");
            // The random source gives at most 65,536 bytes at a time, the bound of getRandomValues.
            if (length > 524288) throw new DOMExceptionCtor("Palisade makes HMAC keys of up to 524,288 bits", "OperationError");
          }
          make = () => {
            checkUsages(requested, SIGN_VERIFY);
            const bytes = randomBytes((length + 7) >>> 3);
            if (length % 8 !== 0) {
              const view = new Uint8ArrayCtor(bytes);
              view[view.length - 1] &= (0xff << (8 - (length % 8))) & 0xff;
            }
            const slot = { __proto__: null, kind, type: "secret", extractable, hash, bytes };
            slot.algorithm = { name: "HMAC", hash: { name: HASH_NAMES[hash] }, length };
            return makeKey(slot, requested);
          };
        } else if (kind === "AES-GCM") {
          if (algorithm.length === undefined) throw new TypeErrorCtor("AesKeyGenParams: length is required");
          const length = enforceRange(algorithm.length, 0xffff, "AesKeyGenParams.length");
          if (length !== 128 && length !== 192 && length !== 256) {
            throw new DOMExceptionCtor("an AES key is 128, 192 or 256 bits", "OperationError");
          }
          make = () => {
            checkUsages(requested, AES_USAGES);
            const slot = { __proto__: null, kind, type: "secret", extractable, bytes: randomBytes(length / 8) };
            slot.algorithm = { name: "AES-GCM", length };
            return makeKey(slot, requested);
          };
        } else {
          let curve = 25519, namedCurve;
          if (kind === "ECDSA") {
            if (algorithm.namedCurve === undefined) throw new TypeErrorCtor("EcKeyGenParams: namedCurve is required");
            namedCurve = StringCtor(algorithm.namedCurve);
            curve = CURVES[namedCurve];
            if (curve === undefined) throw notSupported("ECDSA curves here are P-256 and P-384");
          }
          make = () => {
            checkUsages(requested, SIGN_VERIFY);
            const parts = keyGenerate(curve);
            const half = (type, usages) => {
              const slot = { __proto__: null, kind, type, extractable: type === "public" ? true : extractable, curve };
              slot.secret = type === "private" ? parts[0] : null;
              slot.point = parts[1];
              slot.algorithm = kind === "ECDSA" ? { name: "ECDSA", namedCurve } : { name: "Ed25519" };
              return makeKey(slot, usages);
            };
            const privateKey = half("private", pick(requested, PRIVATE_USAGES));
            const publicKey = half("public", pick(requested, PUBLIC_USAGES));
            return { publicKey, privateKey };
          };
        }
        promiseThen(promiseResolve(undefined), () => {
          try {
            resolve(make());
          } catch (error) {
            reject(error);
          }
        });
      });
    },
  }.generateKey);

  // The key for `sign` or `verify` under `algorithm`, with the checks Web Crypto makes.
  const hmacKey = (algorithm, key, usage) => {
    const name = algorithmName(algorithm);
    const kind = KINDS[toLowerCase(name)];
    if (kind === undefined) throw notSupported("Unrecognized algorithm name");
    // ECDSA names its hash in the parameters, read before the data is copied.
    const hash = kind === "ECDSA" ? hashOf(algorithm.hash) : 0;
    return () => {
      const slot = slotOf(key);
      if (slot.kind !== kind) {
        throw new DOMExceptionCtor("the key is not a " + kind + " key", "InvalidAccessError");
      }
      slot.operationHash = hash;
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
        if (slot.kind === "HMAC") return signNative(slot.hash, slot.bytes, bytes);
        if (slot.kind === "AES-GCM") throw new DOMExceptionCtor("AES-GCM does not sign", "InvalidAccessError");
        const signature = keySign(slot.curve, slot.operationHash, slot.secret, bytes);
        if (signature === null || signature === undefined) throw new DOMExceptionCtor("signing failed", "OperationError");
        return signature;
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
        if (slot.kind === "HMAC") return verifyNative(slot.hash, slot.bytes, bytes, signatureBytes);
        if (slot.kind === "AES-GCM") throw new DOMExceptionCtor("AES-GCM does not verify", "InvalidAccessError");
        return keyVerify(slot.curve, slot.operationHash, slot.point, signatureBytes, bytes);
      });
    },
  }.verify);

  // encrypt and decrypt: AES-GCM with a 96-bit IV.
  const gcm = (method, given, self, algorithm, key, data) =>
    promised(() => {
      checkThis(self);
      requireArgs(given, 3, method);
      const name = algorithmName(algorithm);
      const kind = KINDS[toLowerCase(name)];
      if (kind !== "AES-GCM") throw notSupported("Unrecognized algorithm name");
      if (algorithm.iv === undefined) throw new TypeErrorCtor("AesGcmParams: iv is required");
      const iv = copyBytes(algorithm.iv, "iv");
      const aad = algorithm.additionalData === undefined ? new ArrayBufferCtor(0) : copyBytes(algorithm.additionalData, "additionalData");
      const tagLength = algorithm.tagLength === undefined ? 128 : algorithm.tagLength >>> 0;
      const bytes = copyBytes(data, "data");
      const slot = slotOf(key);
      if (slot.kind !== "AES-GCM") throw new DOMExceptionCtor("the key is not an AES-GCM key", "InvalidAccessError");
      if (slot[method] !== true) throw new DOMExceptionCtor("key does not support the '" + method + "' operation", "InvalidAccessError");
      if (GCM_TAGS[tagLength] !== true) throw new DOMExceptionCtor("tagLength is not 32, 64 or 96 to 128", "OperationError");
      if (bufferByteLength(iv) !== 12) throw notSupported("Palisade's AES-GCM takes 96-bit IVs");
      const out = (method === "encrypt" ? aesEncrypt : aesDecrypt)(slot.bytes, iv, aad, tagLength / 8, bytes);
      if (out === null || out === undefined) throw new DOMExceptionCtor("The operation failed for an operation-specific reason", "OperationError");
      return out;
    });
  method(SubtlePrototype, {
    encrypt(algorithm, key, data) {
      return gcm("encrypt", arguments.length, this, algorithm, key, data);
    },
  }.encrypt);
  method(SubtlePrototype, {
    decrypt(algorithm, key, data) {
      return gcm("decrypt", arguments.length, this, algorithm, key, data);
    },
  }.decrypt);
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
