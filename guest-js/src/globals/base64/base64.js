
(function (encode, decode) {
  "use strict";
  // Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
  const StringCtor = String;
  const ErrorCtor = Error;
  const defineProperty = Object.defineProperty;
  const invalid = (message) => {
    const e = new ErrorCtor(message);
    defineProperty(e, "name", { __proto__: null, value: "InvalidCharacterError", writable: true, enumerable: true, configurable: true });
    return e;
  };
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
