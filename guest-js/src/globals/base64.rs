//! `atob` and `btoa`, as in browsers: Latin-1 strings to and from base64.

use javy::quickjs::{Ctx, Function, Result};

const PRELUDE: &str = r#"
(function () {
  "use strict";
  // Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const StringCtor = String;
  const ErrorCtor = Error;
  const { fromCharCode } = String;
  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const indexOf = uncurry(String.prototype.indexOf);
  const exec = uncurry(RegExp.prototype.exec);
  const defineProperty = Object.defineProperty;
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const NOT_BASE64 = /[^A-Za-z0-9+/]/;
  const invalid = (message) => {
    const e = new ErrorCtor(message);
    defineProperty(e, "name", { __proto__: null, value: "InvalidCharacterError", writable: true, enumerable: true, configurable: true });
    return e;
  };
  const isWhitespace = (c) => c === "\t" || c === "\n" || c === "\f" || c === "\r" || c === " ";
  globalThis.btoa = function btoa(data) {
    const text = StringCtor(data);
    let out = "";
    for (let i = 0; i < text.length; i += 3) {
      const a = charCodeAt(text, i), b = charCodeAt(text, i + 1), c = charCodeAt(text, i + 2);
      if (a > 255 || b > 255 || c > 255) throw invalid("btoa: the string has characters outside Latin-1");
      const n = (a << 16) | ((b || 0) << 8) | (c || 0);
      out += alphabet[(n >> 18) & 63] + alphabet[(n >> 12) & 63];
      out += i + 1 < text.length ? alphabet[(n >> 6) & 63] : "=";
      out += i + 2 < text.length ? alphabet[n & 63] : "=";
    }
    return out;
  };
  globalThis.atob = function atob(data) {
    const input = StringCtor(data);
    let text = "";
    for (let i = 0; i < input.length; i++) if (!isWhitespace(input[i])) text += input[i];
    if (text.length % 4 === 0) {
      // Drop one or two trailing "=".
      let end = text.length;
      if (end > 0 && text[end - 1] === "=") end--;
      if (end > 0 && text[end - 1] === "=" && end === text.length - 1) end--;
      let kept = "";
      for (let i = 0; i < end; i++) kept += text[i];
      text = kept;
    }
    if (text.length % 4 === 1 || exec(NOT_BASE64, text) !== null) throw invalid("atob: not valid base64");
    let out = "", bits = 0, value = 0;
    for (let i = 0; i < text.length; i++) {
      value = (value << 6) | indexOf(alphabet, text[i]);
      bits += 6;
      if (bits >= 8) { bits -= 8; out += fromCharCode((value >> bits) & 255); }
    }
    return out;
  };
})
"#;

/// Install `atob` and `btoa`. Runs once, before the snapshot.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    prelude.call(())
}
