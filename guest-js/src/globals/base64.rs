//! `atob` and `btoa`, as in browsers: Latin-1 strings to and from base64.

use javy::quickjs::{Ctx, Function, Result};

const PRELUDE: &str = r#"
(function () {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const invalid = (message) => { const e = new Error(message); e.name = "InvalidCharacterError"; return e; };
  globalThis.btoa = function btoa(data) {
    const text = String(data);
    let out = "";
    for (let i = 0; i < text.length; i += 3) {
      const codes = [text.charCodeAt(i), text.charCodeAt(i + 1), text.charCodeAt(i + 2)];
      for (const c of codes) if (c > 255) throw invalid("btoa: the string has characters outside Latin-1");
      const [a, b, c] = codes;
      const n = (a << 16) | ((b || 0) << 8) | (c || 0);
      out += alphabet[(n >> 18) & 63] + alphabet[(n >> 12) & 63];
      out += i + 1 < text.length ? alphabet[(n >> 6) & 63] : "=";
      out += i + 2 < text.length ? alphabet[n & 63] : "=";
    }
    return out;
  };
  globalThis.atob = function atob(data) {
    let text = String(data).replace(/[\t\n\f\r ]/g, "");
    if (text.length % 4 === 0) text = text.replace(/==?$/, "");
    if (text.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(text)) throw invalid("atob: not valid base64");
    let out = "", bits = 0, value = 0;
    for (const ch of text) {
      value = (value << 6) | alphabet.indexOf(ch);
      bits += 6;
      if (bits >= 8) { bits -= 8; out += String.fromCharCode((value >> bits) & 255); }
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
