
(function (encode, decode) {
  "use strict";
  // Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
  const StringCtor = String;
  const DOMExceptionCtor = DOMException;
  const invalid = (message) => new DOMExceptionCtor(message, "InvalidCharacterError");
  globalThis.btoa = function btoa(data) {
    const out = encode(StringCtor(data));
    if (out === undefined) throw invalid("btoa: the string has characters outside Latin-1");
    return out;
  };
  globalThis.atob = function atob(data) {
    const out = decode(StringCtor(data));
    if (out === undefined) throw invalid("atob: not valid base64");
    return out;
  };
})
