// `crypto.subtle`'s RSA keys (RSASSA-PKCS1-v1_5, RSA-PSS, RSA-OAEP): import from spki, pkcs8
// and jwk, the JWK members of an export, and generateKey's parameters and key pair, over the
// natives of rsa.rs. A function of subtle.js's internals (`S`), to which it adds `importRsa`,
// `rsaJwk` and `rsaGenerateKey` for keys.js.
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (S) {
  "use strict";

  const {
    DOMExceptionCtor, FORMATS, HASH_NAMES, RSA_JWK_ALG, RSA_PRIVATE_MEMBERS, RSA_PUBLIC_MEMBERS,
    TypeErrorCtor, Uint8ArrayCtor, base64url, checkJwk, copyBytes, dataError, enforceRange,
    hashOf, isView, jwkUse, makeKey, notSupported, operationError, pick, privateUsages,
    publicUsages, readUsages, rsaComponents, rsaFromComponents, rsaGenerate, rsaImport,
    toBase64url, typedArrayName,
  } = S;

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

  // The RSA members of `slot`'s JWK, added to `jwk` (exportKey).
  const rsaJwk = (slot, jwk) => {
    const isPrivate = slot.type === "private";
    const components = rsaComponents(isPrivate, slot.der);
    if (components === null || components === undefined) throw operationError("the key could not be encoded");
    const members = isPrivate ? RSA_PRIVATE_MEMBERS : RSA_PUBLIC_MEMBERS;
    jwk.kty = "RSA";
    for (let i = 0; i < members.length; i++) jwk[members[i]] = toBase64url(components[i]);
    jwk.alg = RSA_JWK_ALG[slot.kind][slot.hash];
  };

  // generateKey's RSA parameters, read and checked when the method is called; returns the
  // function that makes the key pair a microtask later.
  const rsaGenerateKey = (kind, algorithm, extractable, requested) => {
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
    return () => {
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
  };

  S.importRsa = importRsa;
  S.rsaJwk = rsaJwk;
  S.rsaGenerateKey = rsaGenerateKey;
})
