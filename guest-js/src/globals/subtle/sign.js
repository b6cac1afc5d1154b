// `crypto.subtle`'s `sign` and `verify`: HMAC (subtle.js's natives), ECDSA and Ed25519
// (ciphers.rs), RSASSA-PKCS1-v1_5 and RSA-PSS (rsa.rs). A function of subtle.js's internals (`S`).
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (S) {
  "use strict";

  const {
    DOMExceptionCtor, KINDS, RSA_KINDS, SIGN_KINDS, SubtlePrototype, TypeErrorCtor,
    algorithmName, checkThis, copyBytes, enforceRange, hashOf, keySign, keyVerify, method,
    notSupported, operationError, promised, requireArgs, rsaSign, rsaVerify, signNative, slotOf,
    toLowerCase, verifyNative,
  } = S;

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
})
