// `crypto.subtle`'s `wrapKey` and `unwrapKey`: a key exported (keys.js's `exportNow`) and
// encrypted with AES-KW or one of ciphers.js's ciphers, and decrypted and imported
// (`prepareImport`). A function of subtle.js's internals (`S`).
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (S) {
  "use strict";

  const {
    AES_KINDS, DOMExceptionCtor, KINDS, StringCtor, SubtlePrototype, TypeErrorCtor,
    Uint8ArrayCtor, algorithmName, baseSlot, charCodeAt, checkThis, cipherParams, copyBytes,
    dataError, decodeURIComponentIntrinsic, escapeIntrinsic, exportNow, failed, fromCharCode,
    jsonParse, jsonStringify, method, notSupported, prepareImport, requireArgs, slotOf, staged,
    toLowerCase, typedArrayBuffer,
  } = S;

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
})
