/*
 * `crypto.subtle` (`SubtleCrypto`) and `CryptoKey`: `digest` with SHA-1, SHA-256, SHA-384 and
 * SHA-512; HMAC keys to `sign` and `verify`; AES-GCM (96-bit IVs), AES-CBC and AES-CTR keys to
 * `encrypt` and `decrypt`; AES-KW and the AES ciphers to `wrapKey` and `unwrapKey`; ECDSA
 * (P-256, P-384, P-521) and Ed25519 keys to `sign` and `verify`; ECDH (the same curves) and
 * X25519 private keys, and HKDF and PBKDF2 keys, to `deriveBits` and `deriveKey`; RSASSA-PKCS1-v1_5
 * and RSA-PSS keys to `sign` and `verify`, RSA-OAEP keys to `encrypt`, `decrypt`, `wrapKey` and
 * `unwrapKey`. `importKey` and
 * `exportKey` take every format the key type has (raw, jwk, spki, pkcs8); `generateKey` makes all
 * but HKDF and PBKDF2 keys (bytes from the call's random source, the one `getRandomValues` draws
 * from). Every method returns a promise, rejected with the `TypeError` or `DOMException` Web
 * Crypto names (`NotSupportedError` for an algorithm Palisade does not have). The bytes given are
 * copied when the method is called; the arithmetic is done by the natives (mod.rs, ciphers.rs,
 * derive.rs, aes.rs, rsa.rs). `crypto` (crypto.rs) is frozen, so it is rebuilt here with `subtle` added.
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

  // importKey's work: the arguments read now, and the function that makes the key (run a
  // microtask later by importKey; at once by deriveKey and unwrapKey, which are already later).
  const prepareImport = (format, keyData, algorithm, extractable, keyUsages) => {
    format = StringCtor(format);
    if (format !== "raw" && format !== "jwk" && format !== "spki" && format !== "pkcs8") {
      throw new TypeErrorCtor("'" + format + "' is not a valid KeyFormat");
    }
    // The key data is copied (or the JWK checked to be an object) when the method is called.
    if (format === "jwk") {
      if (keyData === null || typeof keyData !== "object") throw new TypeErrorCtor("keyData is not a JsonWebKey");
    } else {
      keyData = copyBytes(keyData, "keyData");
    }
    const name = algorithmName(algorithm);
    const kind = KINDS[toLowerCase(name)];
    if (kind === undefined) throw notSupported("Unrecognized algorithm name");
    // The algorithm is normalized now; the key is made a microtask later, as Web Crypto
    // does the rest of importKey in parallel.
    if (kind !== "HMAC") return importOther(kind, format, keyData, algorithm, extractable, keyUsages);
    const hashAlgorithm = algorithm.hash;
    if (hashAlgorithm === undefined) throw new TypeErrorCtor("HmacImportParams: hash is required");
    const hash = hashOf(hashAlgorithm);
    const requested = algorithm.length;
    return () => {
      const usages = readUsages(keyUsages);
      let bytes;
      if (format === "raw") bytes = keyData;
      else if (format === "jwk") {
        if (keyData.kty !== "oct") throw dataError("an HMAC JWK has kty \"oct\"");
        bytes = base64url(keyData.k, "k");
        if (keyData.alg !== undefined && keyData.alg !== HMAC_JWK_ALG[hash]) throw dataError("the JWK's alg does not match the hash");
        checkJwk(keyData, usages, extractable, "sig");
      } else throw notSupported("HMAC keys are imported as raw or jwk");
      const bits = bufferByteLength(bytes) * 8;
      if (bits === 0) throw new DOMExceptionCtor("HMAC key data must not be empty", "DataError");
      let length = bits;
      if (requested !== undefined) {
        length = requested >>> 0;
        if (length === 0 || length > bits || length <= bits - 8) {
          throw new DOMExceptionCtor("The key length does not match the key data", "DataError");
        }
      }
      const slot = { __proto__: null, kind: "HMAC", type: "secret", extractable: !!extractable, hash, bytes };
      slot.algorithm = { name: "HMAC", hash: { name: HASH_NAMES[hash] }, length };
      return makeKey(slot, usages);
    };
  };

  method(SubtlePrototype, {
    importKey(format, keyData, algorithm, extractable, keyUsages) {
      const given = arguments.length;
      return staged(() => {
        checkThis(this);
        requireArgs(given, 5, "importKey");
        return prepareImport(format, keyData, algorithm, extractable, keyUsages);
      });
    },
  }.importKey);

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

  // importKey for AES-GCM, ECDSA and Ed25519: the part run a microtask after the call, with the
  // key data already copied (or the JWK checked to be an object).
  const importOther = (kind, format, keyData, algorithm, extractable, keyUsages) => {
    const jwk = format === "jwk";
    if (RSA_KINDS[kind] !== undefined) {
      if (algorithm.hash === undefined) throw new TypeErrorCtor("RsaHashedImportParams: hash is required");
      const hash = hashOf(algorithm.hash);
      return () => importRsa(kind, format, keyData, extractable, keyUsages, hash);
    }
    let namedCurve, curve = OKP_KINDS[kind];
    if (EC_KINDS[kind] === true) {
      if (algorithm.namedCurve === undefined) throw new TypeErrorCtor("EcKeyImportParams: namedCurve is required");
      namedCurve = StringCtor(algorithm.namedCurve);
      curve = CURVES[namedCurve];
      if (curve === undefined) throw notSupported(kind + " curves here are P-256, P-384 and P-521");
    }
    return () => importAfter(kind, format, jwk, keyData, extractable, keyUsages, namedCurve, curve);
  };
  function importAfter(kind, format, jwk, keyData, extractable, keyUsages, namedCurve, curve) {
    const slot = { __proto__: null, kind, extractable: !!extractable };
    if (AES_KINDS[kind] !== undefined) {
      const usages = readUsages(keyUsages, aesUsages(kind));
      let bytes;
      if (format === "raw") bytes = keyData;
      else if (jwk) {
        if (keyData.kty !== "oct") throw dataError("an AES JWK has kty \"oct\"");
        bytes = base64url(keyData.k, "k");
        checkJwk(keyData, usages, extractable, "enc");
      } else throw notSupported(kind + " keys are imported as raw or jwk");
      const length = bufferByteLength(bytes);
      if (length !== 16 && length !== 24 && length !== 32) throw dataError("an AES key is 128, 192 or 256 bits");
      if (jwk && keyData.alg !== undefined && keyData.alg !== "A" + length * 8 + AES_KINDS[kind]) {
        throw dataError("the JWK's alg does not match the key");
      }
      slot.type = "secret";
      slot.bytes = bytes;
      slot.algorithm = { name: kind, length: length * 8 };
      return makeKey(slot, usages);
    }
    if (KDF_KINDS[kind] === true) {
      if (format !== "raw") throw notSupported(kind + " keys are imported as raw");
      const usages = readUsages(keyUsages, DERIVE_USAGES);
      if (extractable) throw new DOMExceptionCtor(kind + " keys are not extractable", "SyntaxError");
      slot.type = "secret";
      slot.bytes = keyData;
      slot.algorithm = { name: kind };
      return makeKey(slot, usages);
    }
    let data, code, isPrivate;
    const ec = EC_KINDS[kind] === true;
    if (jwk) {
      const kty = ec ? "EC" : "OKP";
      if (keyData.kty !== kty) throw dataError("the JWK's kty is not " + kty);
      if (keyData.crv !== (ec ? namedCurve : kind)) throw dataError("the JWK's crv does not match");
      isPrivate = keyData.d !== undefined;
      if (isPrivate) {
        data = base64url(keyData.d, "d");
        code = SECRET;
      } else if (ec) {
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
      data = keyData;
    }
    const usages = readUsages(keyUsages, isPrivate ? privateUsages(kind) : publicUsages(kind));
    if (jwk) checkJwk(keyData, usages, extractable, jwkUse(kind));
    const parts = keyImport(curve, code, data);
    if (parts === null || parts === undefined) throw dataError("the key data is not a " + (ec ? namedCurve : kind) + " key");
    if (jwk && isPrivate && keyData.x !== undefined) {
      // A private JWK's public half must be the one its secret gives.
      const given = new Uint8ArrayCtor(base64url(keyData.x, "x"));
      const point = new Uint8ArrayCtor(parts[1]);
      const offset = ec ? 1 : 0;
      for (let i = 0; i < given.length; i++) if (given[i] !== point[offset + i]) throw dataError("the JWK's x does not match d");
    }
    slot.type = isPrivate ? "private" : "public";
    slot.curve = curve;
    slot.secret = isPrivate ? parts[0] : null;
    slot.point = isPrivate ? parts[1] : parts[0];
    slot.algorithm = algorithmOf(kind, namedCurve);
    return makeKey(slot, usages);
  }

  // The number of bits of a big-endian unsigned integer without leading zeros (an RSA modulus).
  const bitLength = (buffer) => {
    const bytes = new Uint8ArrayCtor(buffer);
    if (bytes.length === 0) return 0;
    let bits = (bytes.length - 1) * 8;
    for (let top = bytes[0]; top > 0; top >>>= 1) bits++;
    return bits;
  };
  // An RSA key's slot from the natives' parts: `[spki, n, e]` or `[pkcs8, spki, n, e]`.
  const rsaSlot = (slot, kind, hash, parts) => {
    const isPrivate = parts.length === 4;
    const at = isPrivate ? 2 : 1;
    slot.type = isPrivate ? "private" : "public";
    slot.hash = hash;
    slot.der = parts[0];
    slot.spki = isPrivate ? parts[1] : parts[0];
    slot.algorithm = {
      name: kind, modulusLength: bitLength(parts[at]), publicExponent: new Uint8ArrayCtor(parts[at + 1]),
      hash: { name: HASH_NAMES[hash] },
    };
    return slot;
  };
  // importKey for RSASSA-PKCS1-v1_5, RSA-PSS and RSA-OAEP (spki, pkcs8, jwk), a microtask after
  // the call.
  function importRsa(kind, format, keyData, extractable, keyUsages, hash) {
    if (format === "raw") throw notSupported(kind + " keys are imported as spki, pkcs8 or jwk");
    const jwk = format === "jwk";
    let isPrivate = format === "pkcs8";
    if (jwk) {
      if (keyData.kty !== "RSA") throw dataError("the JWK's kty is not RSA");
      isPrivate = keyData.d !== undefined;
    }
    const usages = readUsages(keyUsages, isPrivate ? privateUsages(kind) : publicUsages(kind));
    let parts;
    if (jwk) {
      checkJwk(keyData, usages, extractable, jwkUse(kind));
      if (keyData.alg !== undefined && keyData.alg !== RSA_JWK_ALG[kind][hash]) throw dataError("the JWK's alg does not match the hash");
      if (keyData.oth !== undefined) throw notSupported("Palisade imports RSA keys of two primes");
      const members = isPrivate ? RSA_PRIVATE_MEMBERS : RSA_PUBLIC_MEMBERS;
      const components = [];
      for (let i = 0; i < members.length; i++) components[i] = base64url(keyData[members[i]], members[i]);
      parts = rsaFromComponents(components);
    } else {
      parts = rsaImport(FORMATS[format], keyData);
    }
    if (parts === null || parts === undefined) throw dataError("the key data is not an RSA " + (isPrivate ? "private" : "public") + " key");
    const slot = rsaSlot({ __proto__: null, kind, extractable: !!extractable }, kind, hash, parts);
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
    if (slot.kind === "HMAC" || AES_KINDS[slot.kind] !== undefined) {
      jwk.kty = "oct";
      jwk.k = toBase64url(slot.bytes);
      jwk.alg = slot.kind === "HMAC" ? HMAC_JWK_ALG[slot.hash] : "A" + bufferByteLength(slot.bytes) * 8 + AES_KINDS[slot.kind];
    } else if (RSA_KINDS[slot.kind] !== undefined) {
      const isPrivate = slot.type === "private";
      const components = rsaComponents(isPrivate, slot.der);
      if (components === null || components === undefined) throw operationError("the key could not be encoded");
      const members = isPrivate ? RSA_PRIVATE_MEMBERS : RSA_PUBLIC_MEMBERS;
      jwk.kty = "RSA";
      for (let i = 0; i < members.length; i++) jwk[members[i]] = toBase64url(components[i]);
      jwk.alg = RSA_JWK_ALG[slot.kind][slot.hash];
    } else if (EC_KINDS[slot.kind] === true) {
      const size = POINT_BYTES[slot.curve];
      jwk.kty = "EC";
      jwk.crv = slot.algorithm.namedCurve;
      jwk.x = toBase64url(copy(slot.point, 1, size));
      jwk.y = toBase64url(copy(slot.point, 1 + size, size));
      if (slot.type === "private") jwk.d = toBase64url(slot.secret);
    } else {
      jwk.kty = "OKP";
      jwk.crv = slot.kind;
      jwk.x = toBase64url(slot.point);
      if (slot.type === "private") jwk.d = toBase64url(slot.secret);
    }
    const ops = [];
    for (let i = 0; i < slot.usages.length; i++) ops[i] = slot.usages[i];
    jwk.key_ops = ops;
    jwk.ext = slot.extractable;
    return jwk;
  };

  // The key of `slot` in `format` (checked to be a KeyFormat), as exportKey gives it.
  const exportNow = (format, slot) => {
    if (KDF_KINDS[slot.kind] === true) throw notSupported(slot.kind + " keys cannot be exported");
    const rsa = RSA_KINDS[slot.kind] !== undefined;
    const asymmetric = rsa || EC_KINDS[slot.kind] === true || OKP_KINDS[slot.kind] !== undefined;
    if (!asymmetric && format !== "raw" && format !== "jwk") {
      throw notSupported(slot.kind + " keys are exported as raw or jwk");
    }
    if (rsa && format === "raw") throw notSupported(slot.kind + " keys are exported as spki, pkcs8 or jwk");
    if (!slot.extractable) throw new DOMExceptionCtor("key is not extractable", "InvalidAccessError");
    if (format === "jwk") return exportJwk(slot);
    if (!asymmetric) return copy(slot.bytes, 0, bufferByteLength(slot.bytes));
    const wanted = format === "pkcs8" ? "private" : "public";
    if (slot.type !== wanted) {
      throw new DOMExceptionCtor("the " + format + " format is for a " + wanted + " key", "InvalidAccessError");
    }
    if (format === "raw") return copy(slot.point, 0, bufferByteLength(slot.point));
    if (rsa) return copy(slot.der, 0, bufferByteLength(slot.der));
    const der = keyExport(slot.curve, FORMATS[format], format === "pkcs8" ? slot.secret : slot.point);
    if (der === null || der === undefined) throw new DOMExceptionCtor("the key could not be encoded", "OperationError");
    return der;
  };

  method(SubtlePrototype, {
    exportKey(format, key) {
      const given = arguments.length;
      return staged(() => {
        checkThis(this);
        requireArgs(given, 2, "exportKey");
        format = StringCtor(format);
        if (format !== "raw" && format !== "jwk" && format !== "spki" && format !== "pkcs8") {
          throw new TypeErrorCtor("'" + format + "' is not a valid KeyFormat");
        }
        const slot = slotOf(key);
        // The rest runs a microtask later, as Web Crypto exports in parallel.
        return () => exportNow(format, slot);
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
        } else if (AES_KINDS[kind] !== undefined) {
          if (algorithm.length === undefined) throw new TypeErrorCtor("AesKeyGenParams: length is required");
          const length = enforceRange(algorithm.length, 0xffff, "AesKeyGenParams.length");
          if (length !== 128 && length !== 192 && length !== 256) {
            throw new DOMExceptionCtor("an AES key is 128, 192 or 256 bits", "OperationError");
          }
          make = () => {
            checkUsages(requested, aesUsages(kind));
            const slot = { __proto__: null, kind, type: "secret", extractable, bytes: randomBytes(length / 8) };
            slot.algorithm = { name: kind, length };
            return makeKey(slot, requested);
          };
        } else if (KDF_KINDS[kind] === true) {
          throw notSupported(kind + " keys are imported, not generated");
        } else if (RSA_KINDS[kind] !== undefined) {
          if (algorithm.modulusLength === undefined) throw new TypeErrorCtor("RsaHashedKeyGenParams: modulusLength is required");
          const modulusLength = enforceRange(algorithm.modulusLength, 0xffffffff, "RsaHashedKeyGenParams.modulusLength");
          const exponent = algorithm.publicExponent;
          if (exponent === undefined) throw new TypeErrorCtor("RsaHashedKeyGenParams: publicExponent is required");
          if (!isView(exponent) || typedArrayName(exponent) !== "Uint8Array") {
            throw new TypeErrorCtor("RsaHashedKeyGenParams.publicExponent is not a Uint8Array");
          }
          const publicExponent = copyBytes(exponent, "publicExponent");
          if (algorithm.hash === undefined) throw new TypeErrorCtor("RsaHashedKeyGenParams: hash is required");
          const hash = hashOf(algorithm.hash);
          const forPrivate = privateUsages(kind), forPublic = publicUsages(kind);
          make = () => {
            for (const usage in requested) {
              if (forPrivate[usage] !== true && forPublic[usage] !== true) {
                throw new DOMExceptionCtor("Cannot create a key with usage '" + usage + "'", "SyntaxError");
              }
            }
            // The size and exponent, then the private key's usages, are checked before the
            // slow part, finding two primes, which the call's fuel and deadline bound.
            const unusable = () =>
              operationError("Palisade generates RSA keys of 64 to 4,096 bits with an odd public exponent from 3 to 2^33 - 1");
            const usable = rsaGenerate(modulusLength, publicExponent, false);
            if (usable === null || usable === undefined) throw unusable();
            let none = true;
            for (const _usage in pick(requested, forPrivate)) none = false;
            if (none) throw new DOMExceptionCtor("A private key needs at least one usage", "SyntaxError");
            const parts = rsaGenerate(modulusLength, publicExponent, true);
            if (parts === null || parts === undefined) throw unusable();
            const privateSlot = rsaSlot({ __proto__: null, kind, extractable }, kind, hash, parts);
            const publicSlot = rsaSlot({ __proto__: null, kind, extractable: true }, kind, hash, [parts[1], parts[2], parts[3]]);
            const privateKey = makeKey(privateSlot, pick(requested, forPrivate));
            const publicKey = makeKey(publicSlot, pick(requested, forPublic));
            return { publicKey, privateKey };
          };
        } else {
          let curve = OKP_KINDS[kind], namedCurve;
          if (EC_KINDS[kind] === true) {
            if (algorithm.namedCurve === undefined) throw new TypeErrorCtor("EcKeyGenParams: namedCurve is required");
            namedCurve = StringCtor(algorithm.namedCurve);
            curve = CURVES[namedCurve];
            if (curve === undefined) throw notSupported(kind + " curves here are P-256, P-384 and P-521");
          }
          const forPrivate = privateUsages(kind), forPublic = publicUsages(kind);
          make = () => {
            for (const usage in requested) {
              if (forPrivate[usage] !== true && forPublic[usage] !== true) {
                throw new DOMExceptionCtor("Cannot create a key with usage '" + usage + "'", "SyntaxError");
              }
            }
            const parts = keyGenerate(curve);
            const half = (type, usages) => {
              const slot = { __proto__: null, kind, type, extractable: type === "public" ? true : extractable, curve };
              slot.secret = type === "private" ? parts[0] : null;
              slot.point = parts[1];
              slot.algorithm = algorithmOf(kind, namedCurve);
              return makeKey(slot, usages);
            };
            const privateKey = half("private", pick(requested, forPrivate));
            const publicKey = half("public", pick(requested, forPublic));
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
    // Web Crypto normalizes the algorithm for the operation first: an algorithm that has no
    // sign or verify (AES, ECDH, X25519, HKDF, PBKDF2, RSA-OAEP) is NotSupportedError, whatever
    // the key; a signing algorithm that is not the key's is InvalidAccessError, below.
    if (SIGN_KINDS[kind] !== true) throw notSupported(kind + " does not " + usage);
    // ECDSA names its hash in the parameters, read before the data is copied; RSA-PSS its salt
    // length.
    const hash = kind === "ECDSA" ? hashOf(algorithm.hash) : 0;
    let saltLength = 0;
    if (kind === "RSA-PSS") {
      if (algorithm.saltLength === undefined) throw new TypeErrorCtor("RsaPssParams: saltLength is required");
      saltLength = enforceRange(algorithm.saltLength, 0xffffffff, "RsaPssParams.saltLength");
    }
    return () => {
      const slot = slotOf(key);
      if (slot.kind !== kind) {
        throw new DOMExceptionCtor("the key is not a " + kind + " key", "InvalidAccessError");
      }
      slot.operationHash = hash;
      slot.operationSalt = saltLength;
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
        if (RSA_KINDS[slot.kind] !== undefined) {
          const out = rsaSign(RSA_KINDS[slot.kind], slot.hash, slot.der, slot.operationSalt, bytes);
          if (out === null || out === undefined) throw operationError("the salt is too long for the key");
          return out;
        }
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
        if (RSA_KINDS[slot.kind] !== undefined) {
          return rsaVerify(RSA_KINDS[slot.kind], slot.hash, slot.der, slot.operationSalt, signatureBytes, bytes);
        }
        return keyVerify(slot.curve, slot.operationHash, slot.point, signatureBytes, bytes);
      });
    },
  }.verify);

  const operationError = (what) => new DOMExceptionCtor(what, "OperationError");
  const failed = () => operationError("The operation failed for an operation-specific reason");

  // The parameters of an AES cipher or RSA-OAEP, read (and their bytes copied) now: a function
  // that runs the cipher with a key's slot over `bytes` in the direction `encrypt`, or null when the
  // native refuses the input (which callers turn into an OperationError).
  const cipherParams = (kind, algorithm) => {
    if (kind === "AES-GCM") {
      if (algorithm.iv === undefined) throw new TypeErrorCtor("AesGcmParams: iv is required");
      const iv = copyBytes(algorithm.iv, "iv");
      const aad = algorithm.additionalData === undefined ? new ArrayBufferCtor(0) : copyBytes(algorithm.additionalData, "additionalData");
      const tagLength = algorithm.tagLength === undefined ? 128 : algorithm.tagLength >>> 0;
      return (key, bytes, encrypt) => {
        if (GCM_TAGS[tagLength] !== true) throw operationError("tagLength is not 32, 64 or 96 to 128");
        if (bufferByteLength(iv) !== 12) throw notSupported("Palisade's AES-GCM takes 96-bit IVs");
        return (encrypt ? aesEncrypt : aesDecrypt)(key.bytes, iv, aad, tagLength / 8, bytes);
      };
    }
    if (kind === "AES-CBC") {
      if (algorithm.iv === undefined) throw new TypeErrorCtor("AesCbcParams: iv is required");
      const iv = copyBytes(algorithm.iv, "iv");
      return (key, bytes, encrypt) => {
        if (bufferByteLength(iv) !== 16) throw operationError("the AES-CBC iv is 16 bytes");
        return aesCbc(encrypt, key.bytes, iv, bytes);
      };
    }
    if (kind === "AES-CTR") {
      if (algorithm.counter === undefined) throw new TypeErrorCtor("AesCtrParams: counter is required");
      const counter = copyBytes(algorithm.counter, "counter");
      if (algorithm.length === undefined) throw new TypeErrorCtor("AesCtrParams: length is required");
      const length = enforceRange(algorithm.length, 0xff, "AesCtrParams.length");
      return (key, bytes) => {
        if (bufferByteLength(counter) !== 16) throw operationError("the AES-CTR counter is 16 bytes");
        if (length === 0 || length > 128) throw operationError("the AES-CTR length is 1 to 128 bits");
        return aesCtr(key.bytes, counter, length, bytes);
      };
    }
    if (kind === "AES-KW") return (key, bytes, encrypt) => aesKw(encrypt, key.bytes, bytes);
    if (kind === "RSA-OAEP") {
      const label = algorithm.label === undefined ? new ArrayBufferCtor(0) : copyBytes(algorithm.label, "label");
      return (key, bytes, encrypt) => rsaOaep(encrypt, key.hash, key.der, label, bytes);
    }
    throw notSupported("Unrecognized algorithm name");
  };

  // encrypt and decrypt: AES-GCM (96-bit IVs), AES-CBC, AES-CTR and RSA-OAEP.
  const cipher = (method, given, self, algorithm, key, data) =>
    promised(() => {
      checkThis(self);
      requireArgs(given, 3, method);
      const kind = KINDS[toLowerCase(algorithmName(algorithm))];
      if (kind === "AES-KW" || (AES_KINDS[kind] === undefined && kind !== "RSA-OAEP")) throw notSupported("Unrecognized algorithm name");
      const run = cipherParams(kind, algorithm);
      const bytes = copyBytes(data, "data");
      const slot = slotOf(key);
      if (slot.kind !== kind) throw new DOMExceptionCtor("the key is not an " + kind + " key", "InvalidAccessError");
      if (slot[method] !== true) throw new DOMExceptionCtor("key does not support the '" + method + "' operation", "InvalidAccessError");
      const out = run(slot, bytes, method === "encrypt");
      if (out === null || out === undefined) throw failed();
      return out;
    });
  method(SubtlePrototype, {
    encrypt(algorithm, key, data) {
      return cipher("encrypt", arguments.length, this, algorithm, key, data);
    },
  }.encrypt);
  method(SubtlePrototype, {
    decrypt(algorithm, key, data) {
      return cipher("decrypt", arguments.length, this, algorithm, key, data);
    },
  }.decrypt);

  // The first `length` bits of `buffer` (all of it for null), or an OperationError when it is
  // shorter: the result of ECDH and X25519 deriveBits.
  const firstBits = (buffer, length) => {
    const total = bufferByteLength(buffer) * 8;
    if (length === null) return buffer;
    if (length > total) throw operationError("the shared secret has " + total + " bits");
    const out = new Uint8ArrayCtor(copy(buffer, 0, (length + 7) >>> 3));
    if (length % 8 !== 0) out[out.length - 1] &= (0xff << (8 - (length % 8))) & 0xff;
    return typedArrayBuffer(out);
  };

  // The parameters of deriveBits and deriveKey, read (and their bytes copied) now: the kind of
  // base key they take and a function that derives `length` bits (or null) from its slot.
  const deriveParams = (algorithm) => {
    const kind = KINDS[toLowerCase(algorithmName(algorithm))];
    if (kind === "ECDH" || kind === "X25519") {
      const publicKey = algorithm.public;
      const other = slotOf(publicKey);
      return {
        kind,
        run: (slot, length) => {
          if (other.type !== "public") throw new DOMExceptionCtor("the public member is not a public key", "InvalidAccessError");
          if (other.kind !== kind || other.curve !== slot.curve) {
            throw new DOMExceptionCtor("the public key is not a key of the same algorithm and curve", "InvalidAccessError");
          }
          const secret = keyAgree(slot.curve, slot.secret, other.point);
          if (secret === null || secret === undefined) throw failed();
          return firstBits(secret, length);
        },
      };
    }
    if (kind === "HKDF" || kind === "PBKDF2") {
      if (algorithm.hash === undefined) throw new TypeErrorCtor(kind + " params: hash is required");
      const hash = hashOf(algorithm.hash);
      if (algorithm.salt === undefined) throw new TypeErrorCtor(kind + " params: salt is required");
      const salt = copyBytes(algorithm.salt, "salt");
      let info, iterations;
      if (kind === "HKDF") {
        if (algorithm.info === undefined) throw new TypeErrorCtor("HkdfParams: info is required");
        info = copyBytes(algorithm.info, "info");
      } else {
        if (algorithm.iterations === undefined) throw new TypeErrorCtor("Pbkdf2Params: iterations is required");
        iterations = enforceRange(algorithm.iterations, 0xffffffff, "Pbkdf2Params.iterations");
      }
      return {
        kind,
        run: (slot, length) => {
          if (length === null || length % 8 !== 0) throw operationError(kind + " derives a whole number of bytes");
          if (length > MAX_DERIVED_BITS) throw operationError("Palisade derives up to 524,288 bits at once");
          if (kind === "PBKDF2") {
            if (iterations === 0) throw operationError("PBKDF2 needs at least one iteration");
            return pbkdf2Native(hash, slot.bytes, salt, iterations, length / 8);
          }
          const out = hkdfNative(hash, slot.bytes, salt, info, length / 8);
          if (out === null || out === undefined) throw operationError("HKDF derives at most 255 hash lengths");
          return out;
        },
      };
    }
    throw notSupported("Unrecognized algorithm name");
  };
  // The base key's checks, made a microtask after the call.
  const baseSlot = (slot, kind, usage) => {
    if (slot.kind !== kind) throw new DOMExceptionCtor("the key is not a " + kind + " key", "InvalidAccessError");
    if (slot[usage] !== true) throw new DOMExceptionCtor("key does not support the '" + usage + "' operation", "InvalidAccessError");
    return slot;
  };

  method(SubtlePrototype, {
    deriveBits(algorithm, baseKey, length) {
      const given = arguments.length;
      return staged(() => {
        checkThis(this);
        requireArgs(given, 2, "deriveBits");
        const params = deriveParams(algorithm);
        const slot = slotOf(baseKey);
        const bits = length === undefined || length === null ? null : NumberCtor(length) >>> 0;
        return () => params.run(baseSlot(slot, params.kind, "deriveBits"), bits);
      });
    },
  }.deriveBits);

  // The length of key deriveKey asks for: an AES key's length, an HMAC key's (its hash's
  // block size unless given), or null for HKDF and PBKDF2.
  const derivedLength = (algorithm) => {
    const kind = KINDS[toLowerCase(algorithmName(algorithm))];
    if (AES_KINDS[kind] !== undefined) {
      if (algorithm.length === undefined) throw new TypeErrorCtor("AesDerivedKeyParams: length is required");
      const length = enforceRange(algorithm.length, 0xffff, "AesDerivedKeyParams.length");
      if (length !== 128 && length !== 192 && length !== 256) throw operationError("an AES key is 128, 192 or 256 bits");
      return length;
    }
    if (kind === "HMAC") {
      if (algorithm.hash === undefined) throw new TypeErrorCtor("HmacImportParams: hash is required");
      const hash = hashOf(algorithm.hash);
      if (algorithm.length === undefined) return HMAC_BLOCK_BITS[hash];
      const length = algorithm.length >>> 0;
      if (length === 0) throw new TypeErrorCtor("an HMAC key is at least one bit long");
      return length;
    }
    if (KDF_KINDS[kind] === true) return null;
    throw notSupported("Unrecognized algorithm name");
  };

  method(SubtlePrototype, {
    deriveKey(algorithm, baseKey, derivedKeyType, extractable, keyUsages) {
      const given = arguments.length;
      return staged(() => {
        checkThis(this);
        requireArgs(given, 5, "deriveKey");
        const params = deriveParams(algorithm);
        const length = derivedLength(derivedKeyType);
        const slot = slotOf(baseKey);
        return () => {
          const bits = params.run(baseSlot(slot, params.kind, "deriveKey"), length);
          return prepareImport("raw", bits, derivedKeyType, extractable, keyUsages)();
        };
      });
    },
  }.deriveKey);

  // A string's UTF-8 bytes, and back (a JWK wrapped as JSON).
  const utf8 = (text) => {
    const out = [];
    for (let i = 0; i < text.length; i++) {
      let code = charCodeAt(text, i);
      if (code >= 0xd800 && code < 0xdc00 && i + 1 < text.length) {
        const low = charCodeAt(text, i + 1);
        if (low >= 0xdc00 && low < 0xe000) {
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          i++;
        }
      }
      if (code >= 0xd800 && code < 0xe000) code = 0xfffd;
      if (code < 0x80) out[out.length] = code;
      else if (code < 0x800) {
        out[out.length] = 0xc0 | (code >> 6);
        out[out.length] = 0x80 | (code & 0x3f);
      } else if (code < 0x10000) {
        out[out.length] = 0xe0 | (code >> 12);
        out[out.length] = 0x80 | ((code >> 6) & 0x3f);
        out[out.length] = 0x80 | (code & 0x3f);
      } else {
        out[out.length] = 0xf0 | (code >> 18);
        out[out.length] = 0x80 | ((code >> 12) & 0x3f);
        out[out.length] = 0x80 | ((code >> 6) & 0x3f);
        out[out.length] = 0x80 | (code & 0x3f);
      }
    }
    const bytes = new Uint8ArrayCtor(out.length);
    for (let i = 0; i < out.length; i++) bytes[i] = out[i];
    return typedArrayBuffer(bytes);
  };
  const textOf = (buffer) => {
    const bytes = new Uint8ArrayCtor(buffer);
    let binary = "";
    for (let i = 0; i < bytes.length; i++) binary += fromCharCode(bytes[i]);
    try {
      return decodeURIComponentIntrinsic(escapeIntrinsic(binary));
    } catch {
      throw dataError("the unwrapped key is not UTF-8");
    }
  };

  // wrapKey and unwrapKey: AES-KW, or AES-GCM, AES-CBC, AES-CTR and RSA-OAEP used as ciphers.
  const wrapParams = (wrapAlgorithm) => {
    const kind = KINDS[toLowerCase(algorithmName(wrapAlgorithm))];
    if (AES_KINDS[kind] === undefined && kind !== "RSA-OAEP") throw notSupported("Unrecognized algorithm name");
    return { kind, run: cipherParams(kind, wrapAlgorithm) };
  };
  const checkFormat = (format) => {
    format = StringCtor(format);
    if (format !== "raw" && format !== "jwk" && format !== "spki" && format !== "pkcs8") {
      throw new TypeErrorCtor("'" + format + "' is not a valid KeyFormat");
    }
    return format;
  };

  method(SubtlePrototype, {
    wrapKey(format, key, wrappingKey, wrapAlgorithm) {
      const given = arguments.length;
      return staged(() => {
        checkThis(this);
        requireArgs(given, 4, "wrapKey");
        format = checkFormat(format);
        const params = wrapParams(wrapAlgorithm);
        const slot = slotOf(key);
        const wrapping = slotOf(wrappingKey);
        return () => {
          baseSlot(wrapping, params.kind, "wrapKey");
          const exported = exportNow(format, slot);
          let bytes = exported;
          if (format === "jwk") {
            let text = jsonStringify(exported);
            // AES-KW wraps whole 64-bit blocks: as Web Crypto's note to wrapKey allows (and
            // browsers and Node do), a JWK's JSON is padded with spaces, which the JSON parse in
            // unwrapKey skips, to a multiple of 8 bytes. A JWK's text is ASCII.
            if (params.kind === "AES-KW") {
              while (text.length % 8 !== 0) text += " ";
            }
            bytes = utf8(text);
          }
          const out = params.run(wrapping, bytes, true);
          if (out === null || out === undefined) throw failed();
          return out;
        };
      });
    },
  }.wrapKey);

  method(SubtlePrototype, {
    unwrapKey(format, wrappedKey, unwrappingKey, unwrapAlgorithm, unwrappedKeyAlgorithm, extractable, keyUsages) {
      const given = arguments.length;
      return staged(() => {
        checkThis(this);
        requireArgs(given, 7, "unwrapKey");
        format = checkFormat(format);
        const wrapped = copyBytes(wrappedKey, "wrappedKey");
        const params = wrapParams(unwrapAlgorithm);
        const unwrapping = slotOf(unwrappingKey);
        // The unwrapped key's algorithm is normalized now, as importKey does.
        algorithmName(unwrappedKeyAlgorithm);
        return () => {
          baseSlot(unwrapping, params.kind, "unwrapKey");
          const bytes = params.run(unwrapping, wrapped, false);
          if (bytes === null || bytes === undefined) throw failed();
          let keyData = bytes;
          if (format === "jwk") {
            try {
              keyData = jsonParse(textOf(bytes));
            } catch (error) {
              throw error instanceof DOMExceptionCtor ? error : dataError("the unwrapped key is not a JWK");
            }
          }
          return prepareImport(format, keyData, unwrappedKeyAlgorithm, extractable, keyUsages)();
        };
      });
    },
  }.unwrapKey);
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
