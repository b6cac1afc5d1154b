// MIME types (WHATWG MIME Sniffing, "parse a MIME type" and "serialize a MIME type"), for the
// `Content-Type` of a `data:` URL's response: the type and subtype, and each parameter's name,
// in ASCII lower case; parameters with an invalid name or value, or a name seen before, dropped;
// a value quoted when it is empty or not a token.
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function () {
  "use strict";

  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const concat = uncurry(String.prototype.concat);
  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const charAt = uncurry(String.prototype.charAt);
  const stringSlice = uncurry(String.prototype.slice);
  const toLowerCase = uncurry(String.prototype.toLowerCase);
  const test = uncurry(RegExp.prototype.test);

  const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  const QUOTED_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
  const isHttpSpace = (c) => c === 0x09 || c === 0x0a || c === 0x0d || c === 0x20;
  const trimEnd = (text) => {
    let end = text.length;
    while (end > 0 && isHttpSpace(charCodeAt(text, end - 1))) end--;
    return stringSlice(text, 0, end);
  };

  // "Collect an HTTP quoted string" with its value extracted, from the `"` at `at`: [value, the
  // position after it].
  const quoted = (text, at) => {
    let value = "";
    at++;
    for (;;) {
      while (at < text.length && charAt(text, at) !== "\"" && charAt(text, at) !== "\\") value = concat(value, charAt(text, at++));
      if (at >= text.length) break;
      const quoteOrBackslash = charAt(text, at++);
      if (quoteOrBackslash === "\\") {
        if (at >= text.length) {
          value = concat(value, "\\");
          break;
        }
        value = concat(value, charAt(text, at++));
      } else break;
    }
    return [value, at];
  };

  // The parameters after the subtype (`at` is at the first `;`), serialized.
  const parameters = (text, at) => {
    const seen = { __proto__: null };
    let out = "";
    while (at < text.length) {
      at++;
      while (at < text.length && isHttpSpace(charCodeAt(text, at))) at++;
      let end = at;
      while (end < text.length && charAt(text, end) !== ";" && charAt(text, end) !== "=") end++;
      const name = toLowerCase(stringSlice(text, at, end));
      at = end;
      if (at >= text.length) break;
      if (charAt(text, at) === ";") continue;
      at++;
      if (at >= text.length) break;
      let value;
      if (charAt(text, at) === "\"") {
        const read = quoted(text, at);
        value = read[0];
        at = read[1];
        while (at < text.length && charAt(text, at) !== ";") at++;
      } else {
        end = at;
        while (end < text.length && charAt(text, end) !== ";") end++;
        value = trimEnd(stringSlice(text, at, end));
        at = end;
        if (value === "") continue;
      }
      if (name !== "" && test(TOKEN, name) && test(QUOTED_VALUE, value) && seen[name] !== true) {
        seen[name] = true;
        out = concat(out, ";", name, "=", serializeValue(value));
      }
    }
    return out;
  };

  const serializeValue = (value) => {
    if (value !== "" && test(TOKEN, value)) return value;
    let out = "\"";
    for (let i = 0; i < value.length; i++) {
      const c = charAt(value, i);
      out = concat(out, c === "\"" || c === "\\" ? "\\" : "", c);
    }
    return concat(out, "\"");
  };

  // The serialized MIME type `text` parses to, or null when it is not one.
  const serialize = (text) => {
    let start = 0, end = text.length;
    while (start < end && isHttpSpace(charCodeAt(text, start))) start++;
    while (end > start && isHttpSpace(charCodeAt(text, end - 1))) end--;
    text = stringSlice(text, start, end);
    let at = 0;
    while (at < text.length && charAt(text, at) !== "/") at++;
    const type = stringSlice(text, 0, at);
    if (type === "" || !test(TOKEN, type) || at >= text.length) return null;
    const from = ++at;
    while (at < text.length && charAt(text, at) !== ";") at++;
    const subtype = trimEnd(stringSlice(text, from, at));
    if (subtype === "" || !test(TOKEN, subtype)) return null;
    return concat(toLowerCase(type), "/", toLowerCase(subtype), parameters(text, at));
  };

  return { __proto__: null, serialize };
})
