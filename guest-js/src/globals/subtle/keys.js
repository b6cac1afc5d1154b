// `crypto.subtle`'s keys: `importKey`, `exportKey` and `generateKey` for HMAC, AES (GCM, CBC,
// CTR, KW), HKDF and PBKDF2, and the EC (ECDSA, ECDH on P-256, P-384, P-521) and OKP (Ed25519,
// X25519) curves, over the natives of ciphers.rs; RSA keys through rsa.js's `importRsa`,
// `rsaJwk` and `rsaGenerateKey`. A function of subtle.js's internals (`S`), to which it adds
// `prepareImport` and `exportNow` for derive.js and wrap.js.
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (S) {
  "use strict";

  const {
    AES_KINDS, CURVES, DERIVE_USAGES, DOMExceptionCtor, EC_KINDS, FORMATS, HASH_NAMES,
    HMAC_BLOCK_BITS, HMAC_JWK_ALG, KDF_KINDS, KINDS, OKP_KINDS, POINT_BYTES, PromiseCtor,
    RSA_KINDS, SECRET, SIGN_VERIFY, StringCtor, SubtlePrototype, TypeErrorCtor, USAGES,
    Uint8ArrayCtor, aesUsages, algorithmName, algorithmOf, base64url, bufferByteLength,
    checkJwk, checkThis, checkUsages, concatBuffers, copy, copyBytes, dataError, enforceRange,
    hashOf, importRsa, jwkUse, keyExport, keyGenerate, keyImport, makeKey, method, notSupported,
    pick, privateUsages, promiseResolve, promiseThen, publicUsages, randomBytes, readUsages,
    requireArgs, rsaGenerateKey, rsaJwk, slotOf, staged, toBase64url, toLowerCase,
    typedArrayBuffer,
  } = S;

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
      // Ed25519 names itself (or the older "EdDSA") in alg, with that case; ECDSA, ECDH and
      // X25519 ignore alg.
      if (kind === "Ed25519" && keyData.alg !== undefined && keyData.alg !== "Ed25519" && keyData.alg !== "EdDSA") {
        throw dataError("the JWK's alg is not Ed25519 or EdDSA");
      }
      isPrivate = keyData.d !== undefined;
      if (isPrivate) {
        data = base64url(keyData.d, "d");
        if (bufferByteLength(data) !== (ec ? POINT_BYTES[curve] : 32)) throw dataError("the JWK's d has the wrong length");
        // A private JWK carries its public half too, checked against d below.
        if (keyData.x === undefined || (ec && keyData.y === undefined)) throw dataError("the JWK's x or y is missing");
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
    if (jwk && isPrivate) {
      // A private JWK's public half must be the one its secret gives: x (and y) of the point.
      const point = new Uint8ArrayCtor(parts[1]);
      const size = ec ? POINT_BYTES[curve] : point.length;
      const members = ec ? ["x", "y"] : ["x"];
      for (let m = 0; m < members.length; m++) {
        const given = new Uint8ArrayCtor(base64url(keyData[members[m]], members[m]));
        const offset = ec ? 1 + m * size : 0;
        if (given.length !== size) throw dataError("the JWK's " + members[m] + " does not match d");
        for (let i = 0; i < size; i++) if (given[i] !== point[offset + i]) throw dataError("the JWK's " + members[m] + " does not match d");
      }
    }
    slot.type = isPrivate ? "private" : "public";
    slot.curve = curve;
    slot.secret = isPrivate ? parts[0] : null;
    slot.point = isPrivate ? parts[1] : parts[0];
    slot.algorithm = algorithmOf(kind, namedCurve);
    return makeKey(slot, usages);
  }

  // The JWK of a key: the members Web Crypto's export gives, in the order Node gives them.
  const exportJwk = (slot) => {
    const jwk = {};
    if (slot.kind === "HMAC" || AES_KINDS[slot.kind] !== undefined) {
      jwk.kty = "oct";
      jwk.k = toBase64url(slot.bytes);
      jwk.alg = slot.kind === "HMAC" ? HMAC_JWK_ALG[slot.hash] : "A" + bufferByteLength(slot.bytes) * 8 + AES_KINDS[slot.kind];
    } else if (RSA_KINDS[slot.kind] !== undefined) {
      rsaJwk(slot, jwk);
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
      if (slot.kind === "Ed25519") jwk.alg = "Ed25519";
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
          make = rsaGenerateKey(kind, algorithm, extractable, requested);
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

  S.prepareImport = prepareImport;
  S.exportNow = exportNow;
})
