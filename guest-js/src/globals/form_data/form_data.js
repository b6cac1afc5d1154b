// `FormData` (XMLHttpRequest standard): an ordered list of entries, each a name and a string or
// a `File`, and its `multipart/form-data` serialization and parsing, which fetch.js uses for
// bodies (`body: formData`, `.formData()`).
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function () {
  "use strict";

  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const concat = uncurry(String.prototype.concat);
  const { defineProperty, freeze, getOwnPropertyNames, getPrototypeOf, setPrototypeOf } = Object;
  const { apply } = Reflect;
  const { iterator, toStringTag } = Symbol;
  const TypeErrorCtor = TypeError;
  const WeakMapCtor = WeakMap;
  const weakGet = uncurry(WeakMap.prototype.get);
  const weakSet = uncurry(WeakMap.prototype.set);
  const stringReplace = uncurry(String.prototype.replace);
  const stringSlice = uncurry(String.prototype.slice);
  const indexOf = uncurry(String.prototype.indexOf);
  const toLowerCase = uncurry(String.prototype.toLowerCase);
  const trim = uncurry(String.prototype.trim);
  // Remove element `index` of `list` in place (not `splice`, which asks for the array's species).
  const removeAt = (list, index) => {
    for (let i = index; i + 1 < list.length; i++) list[i] = list[i + 1];
    list.length = list.length - 1;
  };
  const toString16 = uncurry(Number.prototype.toString);
  const random = Math.random;
  const { floor } = Math;
  const toWellFormed = String.prototype.toWellFormed ? uncurry(String.prototype.toWellFormed) : null;
  const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
  const usv = (value) => (toWellFormed ? toWellFormed(concat("", value)) : stringReplace(concat("", value), LONE_SURROGATE, "\uFFFD"));
  const own = (list, value) =>
    defineProperty(list, list.length, { __proto__: null, value, writable: true, enumerable: true, configurable: true });

  const B = Blob[Symbol.for("palisade.internals")];
  const FileCtor = File;
  const encode = B.encode;

  const lists = new WeakMapCtor();
  const listOf = (object) => {
    const list = weakGet(lists, object);
    if (!list) throw new TypeErrorCtor("Illegal invocation");
    return list;
  };
  const requireArgs = (args, count, method) => {
    if (args.length < count) {
      throw new TypeErrorCtor(concat("FormData.", method, ": ", count, " argument", count > 1 ? "s" : "", " required, but only ", args.length, " present"));
    }
  };
  // An entry's value: a string, or a File (a Blob becomes a File named "blob", or `filename`).
  function entryValue(value, filename, hasFilename) {
    if (!B.isBlob(value)) return usv(value);
    if (!B.isFile(value) || hasFilename) {
      const name = hasFilename ? usv(filename) : B.isFile(value) ? B.nameOf(value) : "blob";
      return B.makeFile(B.bytesOf(value), name, B.typeOf(value), B.isFile(value) ? B.lastModifiedOf(value) : undefined);
    }
    return value;
  }
  const entry = (args, name, value, filename) => {
    if (args.length === 3 && !B.isBlob(value)) {
      throw new TypeErrorCtor("FormData: a filename is given only with a Blob value");
    }
    return [usv(name), entryValue(value, filename, args.length === 3)];
  };

  class FormData {
    constructor(form = undefined) {
      if (form !== undefined) throw new TypeErrorCtor("FormData: there is no HTML form element here");
      weakSet(lists, this, []);
    }
    append(name, value, filename = undefined) {
      requireArgs(arguments, 2, "append");
      const list = listOf(this);
      own(list, entry(arguments, name, value, filename));
    }
    delete(name) {
      requireArgs(arguments, 1, "delete");
      const list = listOf(this);
      name = usv(name);
      for (let i = list.length - 1; i >= 0; i--) if (list[i][0] === name) removeAt(list, i);
    }
    get(name) {
      requireArgs(arguments, 1, "get");
      const list = listOf(this);
      name = usv(name);
      for (let i = 0; i < list.length; i++) if (list[i][0] === name) return list[i][1];
      return null;
    }
    getAll(name) {
      requireArgs(arguments, 1, "getAll");
      const list = listOf(this);
      name = usv(name);
      const out = [];
      for (let i = 0; i < list.length; i++) if (list[i][0] === name) own(out, list[i][1]);
      return out;
    }
    has(name) {
      requireArgs(arguments, 1, "has");
      const list = listOf(this);
      name = usv(name);
      for (let i = 0; i < list.length; i++) if (list[i][0] === name) return true;
      return false;
    }
    set(name, value, filename = undefined) {
      requireArgs(arguments, 2, "set");
      const list = listOf(this);
      const e = entry(arguments, name, value, filename);
      let first = -1;
      for (let i = 0; i < list.length; i++) {
        if (list[i][0] !== e[0]) continue;
        if (first < 0) {
          first = i;
          list[i] = e;
        } else {
          removeAt(list, i);
          i--;
        }
      }
      if (first < 0) own(list, e);
    }
    forEach(callback, thisArg = undefined) {
      requireArgs(arguments, 1, "forEach");
      if (typeof callback !== "function") throw new TypeErrorCtor("FormData.forEach: callback is not a function");
      const list = listOf(this);
      for (let i = 0; i < list.length; i++) apply(callback, thisArg, [list[i][1], list[i][0], this]);
    }
    keys() { return iterate(this, "key"); }
    values() { return iterate(this, "value"); }
    entries() { return iterate(this, "key+value"); }
  }

  const iterators = new WeakMapCtor();
  class FormDataIterator {
    next() {
      const s = weakGet(iterators, this);
      if (!s) throw new TypeErrorCtor("Illegal invocation");
      const list = listOf(s.target);
      if (s.index >= list.length) return { value: undefined, done: true };
      const e = list[s.index++];
      return { value: s.kind === "key" ? e[0] : s.kind === "value" ? e[1] : [e[0], e[1]], done: false };
    }
  }
  const iterate = (target, kind) => {
    listOf(target);
    const it = new FormDataIterator();
    weakSet(iterators, it, { __proto__: null, target, kind, index: 0 });
    return it;
  };
  setPrototypeOf(FormDataIterator.prototype, getPrototypeOf(getPrototypeOf([][iterator]())));
  delete FormDataIterator.prototype.constructor;

  const proto = FormData.prototype;
  for (const target of [proto, FormDataIterator.prototype]) {
    const keys = getOwnPropertyNames(target);
    for (let i = 0; i < keys.length; i++) if (keys[i] !== "constructor") defineProperty(target, keys[i], { enumerable: true });
  }
  defineProperty(proto, iterator, { value: proto.entries, writable: true, configurable: true });
  defineProperty(proto, toStringTag, { value: "FormData", configurable: true });
  defineProperty(FormDataIterator.prototype, toStringTag, { value: "FormData Iterator", configurable: true });

  // multipart/form-data (RFC 7578, as the HTML standard writes it): names and filenames with
  // LF, CR and '"' escaped as %0A, %0D and %22; string values with line breaks as CRLF.
  const escapeName = (text) => stringReplace(stringReplace(stringReplace(text, /\n/g, "%0A"), /\r/g, "%0D"), /"/g, "%22");
  const CRLF = /\r\n|\r|\n/g;
  function serialize(formData) {
    const list = listOf(formData);
    let boundary = "----formdata-palisade-";
    for (let i = 0; i < 4; i++) boundary = concat(boundary, toString16(floor(random() * 0x100000000), 16));
    const chunks = [];
    for (let i = 0; i < list.length; i++) {
      const name = list[i][0], value = list[i][1];
      let head = concat("--", boundary, "\r\nContent-Disposition: form-data; name=\"", escapeName(name), "\"");
      if (typeof value === "string") {
        own(chunks, encode(concat(head, "\r\n\r\n", stringReplace(value, CRLF, "\r\n"), "\r\n")));
      } else {
        const type = B.typeOf(value) || "application/octet-stream";
        head = concat(head, "; filename=\"", escapeName(B.nameOf(value)), "\"\r\nContent-Type: ", type, "\r\n\r\n");
        own(chunks, encode(head));
        own(chunks, B.bytesOf(value));
        own(chunks, encode("\r\n"));
      }
    }
    own(chunks, encode(concat("--", boundary, "--\r\n")));
    return [B.join(chunks), concat("multipart/form-data; boundary=", boundary)];
  }

  // The parameter `key` of a header value such as `form-data; name="a"; filename="b.txt"`.
  function parameter(value, key) {
    const lower = toLowerCase(value);
    let at = 0;
    for (;;) {
      const semi = indexOf(lower, ";", at);
      if (semi < 0) return null;
      let i = semi + 1;
      while (lower[i] === " " || lower[i] === "\t") i++;
      if (stringSlice(lower, i, i + key.length + 1) === concat(key, "=")) {
        i += key.length + 1;
        if (value[i] === "\"") {
          let out = "";
          for (i++; i < value.length && value[i] !== "\""; i++) {
            if (value[i] === "\\" && i + 1 < value.length) i++;
            out = concat(out, value[i]);
          }
          return out;
        }
        const end = indexOf(value, ";", i);
        return trim(stringSlice(value, i, end < 0 ? value.length : end));
      }
      at = semi + 1;
    }
  }
  const unescapeName = (text) => stringReplace(stringReplace(stringReplace(text, /%0A/g, "\n"), /%0D/g, "\r"), /%22/g, "\"");

  // A multipart/form-data body as a FormData; `null` if it is malformed.
  function parse(bytes, contentType) {
    const boundary = parameter(contentType, "boundary");
    if (!boundary) return null;
    // Latin-1 text has one character per byte, so offsets in it are offsets in `bytes`.
    const text = B.latin1(bytes);
    const delimiter = concat("--", boundary);
    let at = indexOf(text, delimiter);
    if (at < 0) return null;
    const out = new FormData();
    const list = listOf(out);
    for (;;) {
      at += delimiter.length;
      if (stringSlice(text, at, at + 2) === "--") return out;
      if (stringSlice(text, at, at + 2) !== "\r\n") return null;
      at += 2;
      const headEnd = indexOf(text, "\r\n\r\n", at);
      if (headEnd < 0) return null;
      let name = null, filename = null, type = "";
      const lines = stringSlice(text, at, headEnd);
      let start = 0;
      while (start <= lines.length) {
        let end = indexOf(lines, "\r\n", start);
        if (end < 0) end = lines.length;
        const line = stringSlice(lines, start, end);
        const colon = indexOf(line, ":");
        if (colon > 0) {
          const key = toLowerCase(trim(stringSlice(line, 0, colon)));
          // The value's bytes as UTF-8 (a filename may be any text).
          const value = trim(B.decode(B.copy(bytes, at + start + colon + 1, at + end)));
          if (key === "content-disposition") {
            name = parameter(value, "name");
            filename = parameter(value, "filename");
          } else if (key === "content-type") type = value;
        }
        start = end + 2;
      }
      if (name === null) return null;
      const bodyStart = headEnd + 4;
      const next = indexOf(text, concat("\r\n", delimiter), bodyStart);
      if (next < 0) return null;
      const body = B.copy(bytes, bodyStart, next);
      name = unescapeName(name);
      if (filename !== null) {
        own(list, [name, B.makeFile(body, unescapeName(filename), type, undefined)]);
      } else {
        own(list, [name, B.decode(body)]);
      }
      at = next + 2;
    }
  }

  defineProperty(FormData, Symbol.for("palisade.internals"), {
    value: freeze({ __proto__: null, isFormData: (value) => typeof value === "object" && value !== null && weakGet(lists, value) !== undefined, serialize, parse, append: (formData, name, value) => own(listOf(formData), [name, value]) }),
    configurable: true,
  });
  defineProperty(globalThis, "FormData", { value: FormData, writable: true, configurable: true, enumerable: false });
})
