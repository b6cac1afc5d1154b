// `crypto.subtle`'s `deriveBits` and `deriveKey`: ECDH and X25519 (key agreement), HKDF and
// PBKDF2, over the natives of derive.rs. A function of subtle.js's internals (`S`).
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (S) {
  "use strict";

  const {
    AES_KINDS, DOMExceptionCtor, HMAC_BLOCK_BITS, KDF_KINDS, KINDS, MAX_DERIVED_BITS,
    NumberCtor, SubtlePrototype, TypeErrorCtor, Uint8ArrayCtor, algorithmName, baseSlot,
    bufferByteLength, checkThis, copy, copyBytes, enforceRange, failed, hashOf, hkdfNative,
    keyAgree, method, notSupported, operationError, pbkdf2Native, prepareImport, requireArgs,
    slotOf, staged, toLowerCase, typedArrayBuffer,
  } = S;

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
})
