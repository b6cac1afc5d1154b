// `crypto.subtle`'s `encrypt` and `decrypt`: AES-GCM (96-bit IVs), AES-CBC, AES-CTR and RSA-OAEP,
// over the natives of ciphers.rs, aes.rs and rsa.rs. A function of subtle.js's internals (`S`),
// to which it adds `cipherParams` for wrap.js (AES-KW and the ciphers as key wrappers).
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (S) {
  "use strict";

  const {
    AES_KINDS, ArrayBufferCtor, DOMExceptionCtor, GCM_TAGS, KINDS, SubtlePrototype, method,
    TypeErrorCtor, aesCbc, aesCtr, aesDecrypt, aesEncrypt, aesKw, algorithmName,
    bufferByteLength, checkThis, copyBytes, enforceRange, failed, notSupported, operationError,
    promised, requireArgs, rsaOaep, slotOf, toLowerCase,
  } = S;

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

  S.cipherParams = cipherParams;
})
