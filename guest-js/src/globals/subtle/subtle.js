/*
 * `crypto.subtle` (`SubtleCrypto`) and `CryptoKey`, the part every algorithm family shares: the
 * intrinsics, the algorithm tables, reading BufferSources and AlgorithmIdentifiers, the key
 * slots, usages and JWK checks, and `digest` (SHA-1, SHA-256, SHA-384, SHA-512). The families
 * are in their own files, each a function that takes the internals (`S`) this one returns and
 * adds its methods to `SubtleCrypto.prototype` in the order Web Crypto lists them: keys.js
 * (`importKey`, `exportKey`, `generateKey`: HMAC, AES, HKDF, PBKDF2, the EC and OKP curves),
 * rsa.js (RSA keys), sign.js (`sign`, `verify`), ciphers.js (`encrypt`, `decrypt`), derive.js
 * (`deriveBits`, `deriveKey`) and wrap.js (`wrapKey`, `unwrapKey`); `S.install()` then puts
 * `crypto.subtle`, `SubtleCrypto` and `CryptoKey` on the global object. Every method returns a
 * promise, rejected with the `TypeError` or `DOMException` Web Crypto names (`NotSupportedError`
 * for an algorithm Palisade does not have). The bytes given are copied when the method is called;
 * the arithmetic is done by the natives (mod.rs, ciphers.rs, derive.rs, aes.rs, rsa.rs).
 * `crypto` (crypto.rs) is frozen, so `install` rebuilds it with `subtle` added.
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
  const decodeURIComponentIntrinsic = decodeURIComponent;
  const escapeIntrinsic = escape;
  const { aesEncrypt, aesDecrypt, keyImport, keyVerify, keySign, keyGenerate, keyExport, randomBytes } = natives;
  const { keyAgree, hkdfNative, pbkdf2Native, aesCbc, aesCtr, aesKw } = natives;
  const { rsaImport, rsaFromComponents, rsaComponents, rsaGenerate, rsaSign, rsaVerify, rsaOaep } = natives;
  const jsonStringify = JSON.stringify;
  const jsonParse = JSON.parse;
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
  const KINDS = {
    __proto__: null, hmac: "HMAC", "aes-gcm": "AES-GCM", "aes-cbc": "AES-CBC", "aes-ctr": "AES-CTR", "aes-kw": "AES-KW",
    ecdsa: "ECDSA", ecdh: "ECDH", ed25519: "Ed25519", x25519: "X25519", hkdf: "HKDF", pbkdf2: "PBKDF2",
    "rsassa-pkcs1-v1_5": "RSASSA-PKCS1-v1_5", "rsa-pss": "RSA-PSS", "rsa-oaep": "RSA-OAEP",
  };
  // The AES kinds, with the ending of their JWK `alg` ("A128GCM", "A256KW").
  const AES_KINDS = { __proto__: null, "AES-GCM": "GCM", "AES-CBC": "CBC", "AES-CTR": "CTR", "AES-KW": "KW" };
  // Keys on the NIST curves, and on Curve25519 with the natives' code for the curve.
  const EC_KINDS = { __proto__: null, ECDSA: true, ECDH: true };
  const OKP_KINDS = { __proto__: null, Ed25519: 25519, X25519: 25520 };
  const KDF_KINDS = { __proto__: null, HKDF: true, PBKDF2: true };
  // The kinds that sign and verify.
  const SIGN_KINDS = { __proto__: null, HMAC: true, ECDSA: true, Ed25519: true, "RSASSA-PKCS1-v1_5": true, "RSA-PSS": true };
  // The RSA kinds, with the natives' code for their signature scheme (RSA-OAEP signs nothing),
  // and the JWK `alg` of each with each hash.
  const RSA_KINDS = { __proto__: null, "RSASSA-PKCS1-v1_5": 0, "RSA-PSS": 1, "RSA-OAEP": 2 };
  const RSA_JWK_ALG = {
    __proto__: null,
    "RSASSA-PKCS1-v1_5": { __proto__: null, 1: "RS1", 256: "RS256", 384: "RS384", 512: "RS512" },
    "RSA-PSS": { __proto__: null, 1: "PS1", 256: "PS256", 384: "PS384", 512: "PS512" },
    "RSA-OAEP": { __proto__: null, 1: "RSA-OAEP", 256: "RSA-OAEP-256", 384: "RSA-OAEP-384", 512: "RSA-OAEP-512" },
  };
  // A JWK's RSA members, in the order of the natives' components.
  const RSA_PUBLIC_MEMBERS = ["n", "e"];
  const RSA_PRIVATE_MEMBERS = ["n", "e", "d", "p", "q", "dp", "dq", "qi"];
  // The most bits deriveBits gives from HKDF or PBKDF2 at once, as for an HMAC key.
  const MAX_DERIVED_BITS = 524288;
  const CURVES = { __proto__: null, "P-256": 256, "P-384": 384, "P-521": 521 };
  const POINT_BYTES = { __proto__: null, 256: 32, 384: 48, 521: 66 };
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
  // Run `prepare` now (reading the arguments; an exception rejects the promise at once) and the
  // function it returns a microtask later, settling the promise with its result or exception:
  // the part of a method that Web Crypto runs in parallel.
  const staged = (prepare) =>
    new PromiseCtor((resolve, reject) => {
      const rest = prepare();
      promiseThen(promiseResolve(undefined), () => {
        try {
          resolve(rest());
        } catch (error) {
          reject(error);
        }
      });
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

  const USAGE_ORDER = ["encrypt", "decrypt", "sign", "verify", "deriveKey", "deriveBits", "wrapKey", "unwrapKey"];
  const AES_USAGES = { __proto__: null, encrypt: true, decrypt: true, wrapKey: true, unwrapKey: true };
  const PUBLIC_USAGES = { __proto__: null, verify: true };
  const PRIVATE_USAGES = { __proto__: null, sign: true };
  const KW_USAGES = { __proto__: null, wrapKey: true, unwrapKey: true };
  const DERIVE_USAGES = { __proto__: null, deriveKey: true, deriveBits: true };
  const NO_USAGES = { __proto__: null };
  const OAEP_PRIVATE_USAGES = { __proto__: null, decrypt: true, unwrapKey: true };
  const OAEP_PUBLIC_USAGES = { __proto__: null, encrypt: true, wrapKey: true };
  const aesUsages = (kind) => (kind === "AES-KW" ? KW_USAGES : AES_USAGES);
  const privateUsages = (kind) =>
    kind === "ECDH" || kind === "X25519" ? DERIVE_USAGES : kind === "RSA-OAEP" ? OAEP_PRIVATE_USAGES : PRIVATE_USAGES;
  const publicUsages = (kind) =>
    kind === "ECDH" || kind === "X25519" ? NO_USAGES : kind === "RSA-OAEP" ? OAEP_PUBLIC_USAGES : PUBLIC_USAGES;
  const jwkUse = (kind) => (kind === "ECDH" || kind === "X25519" || kind === "RSA-OAEP" ? "enc" : "sig");
  const algorithmOf = (kind, namedCurve) => (EC_KINDS[kind] === true ? { name: kind, namedCurve } : { name: kind });
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

  // The checks every imported JWK gets: its `use`, `key_ops` and `ext` must allow what the key
  // is imported for (a DataError otherwise).
  const checkJwk = (jwk, usages, extractable, use) => {
    if (jwk.use !== undefined && jwk.use !== use) throw dataError("the JWK's use is not \"" + use + "\"");
    const ops = jwk.key_ops;
    if (ops !== undefined) {
      if (!isArray(ops)) throw dataError("the JWK's key_ops is not a list");
      for (const usage in usages) {
        let found = false;
        for (let i = 0; i < ops.length; i++) if (ops[i] === usage) found = true;
        if (!found) throw dataError("the JWK's key_ops does not allow '" + usage + "'");
      }
    }
    if (jwk.ext === false && extractable) throw dataError("the JWK is not extractable");
  };

  // An ArrayBuffer as base64url without padding (a JWK member).
  const toBase64url = (buffer) => {
    const bytes = new Uint8ArrayCtor(buffer);
    let binary = "";
    for (let i = 0; i < bytes.length; i++) binary += fromCharCode(bytes[i]);
    return stringReplace(stringReplace(stringReplace(btoaIntrinsic(binary), /\+/g, "-"), /\//g, "_"), /=+$/, "");
  };
  const HMAC_JWK_ALG = { __proto__: null, 1: "HS1", 256: "HS256", 384: "HS384", 512: "HS512" };

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

  const operationError = (what) => new DOMExceptionCtor(what, "OperationError");
  const failed = () => operationError("The operation failed for an operation-specific reason");

  // The base key's checks, made a microtask after the call (deriveBits, deriveKey, wrapKey,
  // unwrapKey).
  const baseSlot = (slot, kind, usage) => {
    if (slot.kind !== kind) throw new DOMExceptionCtor("the key is not a " + kind + " key", "InvalidAccessError");
    if (slot[usage] !== true) throw new DOMExceptionCtor("key does not support the '" + usage + "' operation", "InvalidAccessError");
    return slot;
  };

  // Run once every family has added its methods: the globals, with `subtle` the one instance.
  const install = () => {
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
  };

  // What the family files (keys.js, rsa.js, sign.js, ciphers.js, derive.js, wrap.js) use.
  return {
    __proto__: null,
    AES_KINDS, ArrayBufferCtor, CURVES, DERIVE_USAGES, DOMExceptionCtor, EC_KINDS, FORMATS,
    GCM_TAGS, HASH_NAMES, HMAC_BLOCK_BITS, HMAC_JWK_ALG, KDF_KINDS, KINDS, MAX_DERIVED_BITS,
    NumberCtor, OKP_KINDS, POINT_BYTES, PromiseCtor, RSA_JWK_ALG, RSA_KINDS,
    RSA_PRIVATE_MEMBERS, RSA_PUBLIC_MEMBERS, SECRET, SIGN_KINDS, SIGN_VERIFY, StringCtor,
    SubtlePrototype, TypeErrorCtor, USAGES, Uint8ArrayCtor, aesCbc, aesCtr, aesDecrypt,
    aesEncrypt, aesKw, aesUsages, algorithmName, algorithmOf, base64url, baseSlot,
    bufferByteLength, charCodeAt, checkJwk, checkThis, checkUsages, concatBuffers, copy,
    copyBytes, dataError, decodeURIComponentIntrinsic, enforceRange, escapeIntrinsic, failed,
    fromCharCode, hashOf, hkdfNative, isView, jsonParse, jsonStringify, jwkUse, keyAgree,
    keyExport, keyGenerate, keyImport, keySign, keyVerify, makeKey, method, notSupported,
    operationError, pbkdf2Native, pick, privateUsages, promiseResolve, promiseThen, promised,
    publicUsages, randomBytes, readUsages, requireArgs, rsaComponents, rsaFromComponents,
    rsaGenerate, rsaImport, rsaOaep, rsaSign, rsaVerify, signNative, slotOf, staged,
    toBase64url, toLowerCase, typedArrayBuffer, typedArrayName, verifyNative, install,
  };
})
