/**
 * `URLSearchParams` for Palisade guests, per the WHATWG URL standard: the
 * application/x-www-form-urlencoded parser and serializer over an ordered list of name-value
 * pairs. Two symbol-keyed static hooks let Palisade's URL keep its query in sync:
 * `palisade.urlsp.bind` registers a callback that gets the serialization after each mutation,
 * and `palisade.urlsp.reset` replaces the list from a query string without calling it.
 */
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(() => {
  "use strict";

  const { encodeURIComponent } = globalThis;
  const exec = Function.prototype.call.bind(RegExp.prototype.exec);
  // QuickJS compiles a template literal to a call of `String.prototype.concat`: none here.
  const concat = Function.prototype.call.bind(String.prototype.concat);
  const toWellFormed = String.prototype.toWellFormed ? Function.prototype.call.bind(String.prototype.toWellFormed) : null;
  const stringReplace = Function.prototype.call.bind(String.prototype.replace);
  const TypeErrorCtor = TypeError;
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const { fromCharCode, fromCodePoint } = String;
  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const stringSlice = uncurry(String.prototype.slice);
  const sort = uncurry(Array.prototype.sort);
  const { apply, ownKeys, getOwnPropertyDescriptor } = Reflect;
  const { isArray } = Array;
  const { iterator } = Symbol;
  const defineProperty = Object.defineProperty;
  const push = (list, value) => {
    defineProperty(list, list.length, { __proto__: null, value, writable: true, enumerable: true, configurable: true });
  };
  // `list` without the pairs `drop(pair, index)` picks.
  const without = (list, drop) => {
    const kept = [];
    for (let i = 0; i < list.length; i++) if (!drop(list[i], i)) push(kept, list[i]);
    return kept;
  };
  // The value of a hex digit's code, or -1.
  const hexValue = (code) => (code >= 0x30 && code <= 0x39 ? code - 0x30
    : code >= 0x41 && code <= 0x46 ? code - 0x37 : code >= 0x61 && code <= 0x66 ? code - 0x57 : -1);
  const isEscape = (text, i) => text[i] === "%" && hexValue(charCodeAt(text, i + 1)) >= 0 && hexValue(charCodeAt(text, i + 2)) >= 0;
  const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
  const toUSVString = String.prototype.toWellFormed
    ? (value) => toWellFormed(concat("", value))
    : (value) => stringReplace(concat("", value), LONE_SURROGATE, "\uFFFD");

  const requireArgs = (args, count, method) => {
    if (args.length < count) {
      throw new TypeErrorCtor(concat("URLSearchParams.", method, ": ", count, " argument", count > 1 ? "s" : "", " required, but only ", args.length, " present"));
    }
  };

  // UTF-8 decode a run of %XX escapes, with U+FFFD for each maximal invalid subpart (WHATWG Encoding).
  function decodeEscapes(run) {
    let out = "", codePoint = 0, needed = 0, seen = 0, lower = 0x80, upper = 0xbf;
    for (let i = 1; i < run.length; i += 3) {
      const byte = hexValue(charCodeAt(run, i)) * 16 + hexValue(charCodeAt(run, i + 1));
      if (needed === 0) {
        if (byte < 0x80) {
          out += fromCharCode(byte);
        } else if (byte >= 0xc2 && byte <= 0xdf) {
          needed = 1;
          codePoint = byte & 0x1f;
        } else if (byte >= 0xe0 && byte <= 0xef) {
          if (byte === 0xe0) lower = 0xa0;
          if (byte === 0xed) upper = 0x9f;
          needed = 2;
          codePoint = byte & 0xf;
        } else if (byte >= 0xf0 && byte <= 0xf4) {
          if (byte === 0xf0) lower = 0x90;
          if (byte === 0xf4) upper = 0x8f;
          needed = 3;
          codePoint = byte & 0x7;
        } else {
          out += "\uFFFD";
        }
      } else if (byte < lower || byte > upper) {
        // Not a continuation: the sequence so far is one error, and this byte starts afresh.
        out += "\uFFFD";
        needed = seen = 0;
        lower = 0x80;
        upper = 0xbf;
        i -= 3;
      } else {
        lower = 0x80;
        upper = 0xbf;
        codePoint = (codePoint << 6) | (byte & 0x3f);
        if (++seen === needed) {
          out += fromCodePoint(codePoint);
          needed = seen = 0;
        }
      }
    }
    return needed === 0 ? out : concat("", out, "\uFFFD");
  }

  // Characters outside escapes are already whole code points, so each run of escapes decodes alone.
  // "+" is a space; each maximal run of %XX escapes is decoded as UTF-8.
  const decode = (text) => {
    let out = "";
    for (let i = 0; i < text.length;) {
      if (isEscape(text, i)) {
        let end = i + 3;
        while (isEscape(text, end)) end += 3;
        out += decodeEscapes(stringSlice(text, i, end));
        i = end;
      } else {
        out += text[i] === "+" ? " " : text[i];
        i++;
      }
    }
    return out;
  };

  function parse(query) {
    const list = [];
    let start = 0;
    for (let i = 0; i <= query.length; i++) {
      if (i < query.length && query[i] !== "&") continue;
      const sequence = stringSlice(query, start, i);
      start = i + 1;
      if (sequence === "") continue;
      let eq = -1;
      for (let j = 0; j < sequence.length && eq < 0; j++) if (sequence[j] === "=") eq = j;
      push(list, eq < 0 ? [decode(sequence), ""]
        : [decode(stringSlice(sequence, 0, eq)), decode(stringSlice(sequence, eq + 1))]);
    }
    return list;
  }

  // encodeURIComponent keeps A-Z a-z 0-9 and -_.!~*'(); the form-urlencoded set keeps only *-._
  const SAFE = /^[\w*.-]*$/;
  const FORM_ESCAPES = { __proto__: null, "!": "%21", "'": "%27", "(": "%28", ")": "%29", "~": "%7E" };
  const encode = (text) => {
    if (exec(SAFE, text) !== null) return text;
    const escaped = encodeURIComponent(text);
    let out = "";
    for (let i = 0; i < escaped.length; i++) {
      const c = escaped[i];
      if (c === "%" && escaped[i + 1] === "2" && escaped[i + 2] === "0") {
        out += "+";
        i += 2;
      } else {
        out += FORM_ESCAPES[c] ?? c;
      }
    }
    return out;
  };
  const serialize = (list) => {
    let out = "";
    for (let i = 0; i < list.length; i++) {
      out += concat("", i === 0 ? "" : "&", encode(list[i][0]), "=", encode(list[i][1]));
    }
    return out;
  };

  let listOf, bind, reset, hasList;

  class URLSearchParams {
    #list = [];
    #onUpdate = null;

    constructor(init = "") {
      if ((typeof init === "object" && init !== null) || typeof init === "function") {
        const add = (pair) => {
          if ((typeof pair !== "object" || pair === null) && typeof pair !== "function") {
            throw new TypeErrorCtor("URLSearchParams: each pair must be a sequence of a name and a value");
          }
          const items = isArray(pair) ? pair : [...pair];
          if (items.length !== 2) {
            throw new TypeErrorCtor("URLSearchParams: each pair must be a sequence of exactly a name and a value");
          }
          push(this.#list, [toUSVString(items[0]), toUSVString(items[1])]);
        };
        if (isArray(init)) {
          for (let i = 0; i < init.length; i++) add(init[i]);
        } else if (init[iterator] != null) {
          for (const pair of init) add(pair);
        } else {
          // A record: a later key that is the same USV string replaces the value in place.
          const at = { __proto__: null };
          const keys = ownKeys(init);
          for (let i = 0; i < keys.length; i++) {
            if (getOwnPropertyDescriptor(init, keys[i])?.enumerable) {
              const name = toUSVString(keys[i]), value = toUSVString(init[keys[i]]);
              if (at[name] === undefined) {
                at[name] = this.#list.length;
                push(this.#list, [name, value]);
              } else {
                this.#list[at[name]][1] = value;
              }
            }
          }
        }
      } else {
        const query = toUSVString(init);
        this.#list = parse(query[0] === "?" ? stringSlice(query, 1) : query);
      }
    }

    #update() {
      if (this.#onUpdate !== null) this.#onUpdate(serialize(this.#list));
    }

    get size() {
      return this.#list.length;
    }

    append(name, value) {
      requireArgs(arguments, 2, "append");
      push(this.#list, [toUSVString(name), toUSVString(value)]);
      this.#update();
    }

    delete(name, value = undefined) {
      requireArgs(arguments, 1, "delete");
      name = toUSVString(name);
      if (value === undefined) this.#list = without(this.#list, (pair) => pair[0] === name);
      else {
        value = toUSVString(value);
        this.#list = without(this.#list, (pair) => pair[0] === name && pair[1] === value);
      }
      this.#update();
    }

    get(name) {
      requireArgs(arguments, 1, "get");
      name = toUSVString(name);
      const list = this.#list;
      for (let i = 0; i < list.length; i++) if (list[i][0] === name) return list[i][1];
      return null;
    }

    getAll(name) {
      requireArgs(arguments, 1, "getAll");
      name = toUSVString(name);
      const values = [];
      const list = this.#list;
      for (let i = 0; i < list.length; i++) if (list[i][0] === name) push(values, list[i][1]);
      return values;
    }

    has(name, value = undefined) {
      requireArgs(arguments, 1, "has");
      name = toUSVString(name);
      const list = this.#list;
      if (value !== undefined) value = toUSVString(value);
      for (let i = 0; i < list.length; i++) {
        if (list[i][0] === name && (value === undefined || list[i][1] === value)) return true;
      }
      return false;
    }

    set(name, value) {
      requireArgs(arguments, 2, "set");
      name = toUSVString(name);
      value = toUSVString(value);
      const list = this.#list;
      let first = -1;
      for (let i = 0; i < list.length && first < 0; i++) if (list[i][0] === name) first = i;
      if (first < 0) push(list, [name, value]);
      else {
        list[first][1] = value;
        this.#list = without(list, (pair, i) => i > first && pair[0] === name);
      }
      this.#update();
    }

    sort() {
      sort(this.#list, (a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      this.#update();
    }

    forEach(callback, thisArg = undefined) {
      requireArgs(arguments, 1, "forEach");
      if (typeof callback !== "function") throw new TypeErrorCtor("URLSearchParams.forEach: callback is not a function");
      for (let i = 0; i < this.#list.length; i++) {
        const pair = this.#list[i];
        apply(callback, thisArg, [pair[1], pair[0], this]);
      }
    }

    keys() {
      return new ParamsIterator(this, "key");
    }

    values() {
      return new ParamsIterator(this, "value");
    }

    entries() {
      return new ParamsIterator(this, "key+value");
    }

    toString() {
      return serialize(this.#list);
    }

    static {
      listOf = (params) => params.#list;
      hasList = (value) => #list in value;
      bind = (params, onUpdate) => {
        if (onUpdate !== null && typeof onUpdate !== "function") throw new TypeErrorCtor("onUpdate must be a function or null");
        params.#onUpdate = onUpdate;
      };
      reset = (params, query) => {
        params.#list = query == null ? [] : parse(toUSVString(query));
      };
    }
  }

  class ParamsIterator {
    #params;
    #kind;
    #index = 0;

    constructor(params, kind) {
      this.#params = params;
      this.#kind = kind;
    }

    next() {
      const list = listOf(this.#params);
      if (this.#index >= list.length) return { value: undefined, done: true };
      const pair = list[this.#index++];
      const name = pair[0], value = pair[1];
      return { value: this.#kind === "key" ? name : this.#kind === "value" ? value : [name, value], done: false };
    }
  }

  const IteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
  Object.setPrototypeOf(ParamsIterator.prototype, IteratorPrototype);
  delete ParamsIterator.prototype.constructor;

  // Web IDL members are enumerable; @@iterator is the same function as entries.
  const proto = URLSearchParams.prototype;
  for (const target of [proto, ParamsIterator.prototype]) {
    for (const key of Object.getOwnPropertyNames(target)) {
      if (key !== "constructor") Object.defineProperty(target, key, { enumerable: true });
    }
  }
  Object.defineProperty(proto, Symbol.iterator, { value: proto.entries, writable: true, configurable: true });
  Object.defineProperty(proto, Symbol.toStringTag, { value: "URLSearchParams", configurable: true });
  Object.defineProperty(ParamsIterator.prototype, Symbol.toStringTag, { value: "URLSearchParams Iterator", configurable: true });

  const hook = (name, value) => Object.defineProperty(URLSearchParams, Symbol.for(name), { value });
  hook("palisade.urlsp.bind", bind);
  hook("palisade.urlsp.reset", reset);

  // What fetch.js uses instead of the public members, which a script can replace. fetch.js takes
  // it and deletes it before the snapshot.
  const isParams = (value) => typeof value === "object" && value !== null && hasList(value);
  Object.defineProperty(URLSearchParams, Symbol.for("palisade.internals"), {
    value: Object.freeze({ __proto__: null, isParams, serialize: (params) => serialize(listOf(params)) }),
    configurable: true,
  });

  Object.defineProperty(globalThis, "URLSearchParams", {
    value: URLSearchParams, writable: true, configurable: true, enumerable: false,
  });
})();
