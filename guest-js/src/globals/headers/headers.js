/**
 * `Headers` for Palisade guests, per the Fetch standard: a header list with lowercased names,
 * validated names and values, combined reads, and sorted iteration that keeps `set-cookie`
 * values apart. The symbol-keyed static hook `palisade.headers.guard` sets a Headers object's
 * guard to "immutable" (every mutation throws a TypeError) or back to "none".
 */
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(() => {
  "use strict";

  // Intrinsics, captured before the snapshot: nothing below looks one up at call time.
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  // QuickJS compiles a template literal to a call of `String.prototype.concat`: none here.
  const concat = uncurry(String.prototype.concat);
  const { defineProperty, freeze, getOwnPropertyDescriptor, getOwnPropertyNames, getPrototypeOf } = Object;
  const { apply, ownKeys } = Reflect;
  const { isArray } = Array;
  const { iterator } = Symbol;
  const TypeErrorCtor = TypeError;
  const exec = uncurry(RegExp.prototype.exec);
  const sort = uncurry(Array.prototype.sort);
  const toLowerCase = uncurry(String.prototype.toLowerCase);
  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const slice = uncurry(String.prototype.slice);
  const push = (list, value) => { defineProperty(list, list.length, { __proto__: null, value, writable: true, enumerable: true, configurable: true }); };

  const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  const ABOVE_LATIN1 = /[^\x00-\xff]/;
  const FORBIDDEN_VALUE = /[\0\r\n]/;
  const isHttpWhitespace = (code) => code === 0x09 || code === 0x0a || code === 0x0d || code === 0x20;

  const requireArgs = (args, count, method) => {
    if (args.length < count) {
      throw new TypeErrorCtor(concat("Headers.", method, ": ", count, " argument", count > 1 ? "s" : "", " required, but only ", args.length, " present"));
    }
  };

  const toByteString = (value) => {
    const text = concat("", value);
    if (exec(ABOVE_LATIN1, text) !== null) throw new TypeErrorCtor(concat("Headers: \"", text, "\" has a character above U+00FF"));
    return text;
  };

  const headerName = (value) => {
    const name = toByteString(value);
    if (exec(TOKEN, name) === null) throw new TypeErrorCtor(concat("Headers: \"", name, "\" is not a valid header name"));
    return toLowerCase(name);
  };

  // Strip leading and trailing HTTP whitespace, then refuse NUL, CR and LF.
  const headerValue = (value) => {
    const text = toByteString(value);
    let start = 0, end = text.length;
    while (start < end && isHttpWhitespace(charCodeAt(text, start))) start++;
    while (end > start && isHttpWhitespace(charCodeAt(text, end - 1))) end--;
    const normalized = slice(text, start, end);
    if (exec(FORBIDDEN_VALUE, normalized) !== null) throw new TypeErrorCtor(concat("Headers: \"", normalized, "\" is not a valid header value"));
    return normalized;
  };

  // The pairs of a sequence init: arrays by index, other iterables by their own protocol.
  const pairOf = (header) => {
    if ((typeof header !== "object" || header === null) && typeof header !== "function") {
      throw new TypeErrorCtor("Headers: each header must be a sequence of a name and a value");
    }
    const pair = isArray(header) ? header : [...header];
    if (pair.length !== 2) throw new TypeErrorCtor("Headers: each header must be a sequence of exactly a name and a value");
    return pair;
  };

  // The values of `list` named `name`, joined as a combined header value, or null.
  const combined = (list, name) => {
    let out = null;
    for (let i = 0; i < list.length; i++) {
      if (list[i][0] === name) out = out === null ? list[i][1] : concat("", out, ", ", list[i][1]);
    }
    return out;
  };

  // `list` without the entries `drop(entry, index)` picks.
  const without = (list, drop) => {
    const kept = [];
    for (let i = 0; i < list.length; i++) if (!drop(list[i], i)) push(kept, list[i]);
    return kept;
  };

  let pairsOf, setGuard, isHeaders, appendTo, listOf;

  class Headers {
    #list = [];
    #guard = "none";
    #sorted = null;

    constructor(init = undefined) {
      if (init === undefined) return;
      if ((typeof init !== "object" || init === null) && typeof init !== "function") {
        throw new TypeErrorCtor("Headers: init must be a sequence of name-value pairs or a record");
      }
      // A Headers or an array is copied from its list, not through `Headers.prototype`'s or
      // `Array.prototype`'s @@iterator, which a script may have replaced; one with an
      // @@iterator of its own is a sequence read through that, as Web IDL reads it.
      const listed = isHeaders(init) || isArray(init);
      if (listed && getOwnPropertyDescriptor(init, iterator) === undefined) {
        if (isArray(init)) {
          for (let i = 0; i < init.length; i++) {
            const pair = pairOf(init[i]);
            this.#append(pair[0], pair[1]);
          }
        } else {
          const list = init.#pairs();
          for (let i = 0; i < list.length; i++) this.#append(list[i][0], list[i][1]);
        }
        return;
      }
      // Web IDL's overload resolution reads @@iterator once: a sequence when it is there.
      const method = init[iterator];
      if (method != null) {
        if (typeof method !== "function") throw new TypeErrorCtor("Headers: init's @@iterator is not a function");
        const it = apply(method, init, []);
        if ((typeof it !== "object" || it === null) && typeof it !== "function") throw new TypeErrorCtor("Headers: init's iterator is not an object");
        const next = it.next;
        for (;;) {
          const step = apply(next, it, []);
          if ((typeof step !== "object" || step === null) && typeof step !== "function") throw new TypeErrorCtor("Headers: an iterator result is not an object");
          if (step.done) break;
          const pair = pairOf(step.value);
          this.#append(pair[0], pair[1]);
        }
      } else {
        const keys = ownKeys(init);
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i];
          if (getOwnPropertyDescriptor(init, key)?.enumerable) this.#append(toByteString(key), init[key]);
        }
      }
    }

    #mutable() {
      if (this.#guard === "immutable") throw new TypeErrorCtor("Headers: these headers are immutable");
      this.#sorted = null;
    }

    #append(name, value) {
      name = headerName(name);
      value = headerValue(value);
      this.#mutable();
      push(this.#list, [name, value]);
    }

    // The sorted, combined pairs that iteration walks; recomputed only after a change.
    #pairs() {
      if (this.#sorted === null) {
        const list = this.#list;
        const names = [];
        const groups = { __proto__: null };
        for (let i = 0; i < list.length; i++) {
          const name = list[i][0];
          const values = groups[name];
          if (values === undefined) {
            groups[name] = [list[i][1]];
            push(names, name);
          } else {
            push(values, list[i][1]);
          }
        }
        sort(names);
        const sorted = [];
        for (let n = 0; n < names.length; n++) {
          const name = names[n];
          const values = groups[name];
          if (name === "set-cookie") {
            for (let i = 0; i < values.length; i++) push(sorted, [name, values[i]]);
          } else {
            let value = values[0];
            for (let i = 1; i < values.length; i++) value = concat("", value, ", ", values[i]);
            push(sorted, [name, value]);
          }
        }
        this.#sorted = sorted;
      }
      return this.#sorted;
    }

    append(name, value) {
      requireArgs(arguments, 2, "append");
      this.#append(name, value);
    }

    delete(name) {
      requireArgs(arguments, 1, "delete");
      name = headerName(name);
      this.#mutable();
      this.#list = without(this.#list, (header) => header[0] === name);
    }

    get(name) {
      requireArgs(arguments, 1, "get");
      return combined(this.#list, headerName(name));
    }

    getSetCookie() {
      const values = [];
      const list = this.#list;
      for (let i = 0; i < list.length; i++) if (list[i][0] === "set-cookie") push(values, list[i][1]);
      return values;
    }

    has(name) {
      requireArgs(arguments, 1, "has");
      name = headerName(name);
      const list = this.#list;
      for (let i = 0; i < list.length; i++) if (list[i][0] === name) return true;
      return false;
    }

    set(name, value) {
      requireArgs(arguments, 2, "set");
      name = headerName(name);
      value = headerValue(value);
      this.#mutable();
      const list = this.#list;
      let first = -1;
      for (let i = 0; i < list.length && first < 0; i++) if (list[i][0] === name) first = i;
      if (first < 0) push(list, [name, value]);
      else {
        list[first][1] = value;
        this.#list = without(list, (header, i) => i > first && header[0] === name);
      }
    }

    forEach(callback, thisArg = undefined) {
      requireArgs(arguments, 1, "forEach");
      if (typeof callback !== "function") throw new TypeErrorCtor("Headers.forEach: callback is not a function");
      for (let i = 0; i < this.#pairs().length; i++) {
        const pair = this.#pairs()[i];
        apply(callback, thisArg, [pair[1], pair[0], this]);
      }
    }

    keys() {
      return new HeadersIterator(this, "key");
    }

    values() {
      return new HeadersIterator(this, "value");
    }

    entries() {
      return new HeadersIterator(this, "key+value");
    }

    static {
      pairsOf = (headers) => headers.#pairs();
      setGuard = (headers, guard) => {
        if (guard !== "immutable" && guard !== "none") throw new TypeErrorCtor('Headers guard must be "immutable" or "none"');
        headers.#guard = guard;
      };
      isHeaders = (value) => (typeof value === "object" && value !== null) && #list in value;
      appendTo = (headers, name, value) => headers.#append(name, value);
      listOf = (headers) => headers.#list;
    }
  }

  class HeadersIterator {
    #headers;
    #kind;
    #index = 0;

    constructor(headers, kind) {
      this.#headers = headers;
      this.#kind = kind;
    }

    next() {
      const pairs = pairsOf(this.#headers);
      if (this.#index >= pairs.length) return { value: undefined, done: true };
      const pair = pairs[this.#index++];
      const name = pair[0], value = pair[1];
      return { value: this.#kind === "key" ? name : this.#kind === "value" ? value : [name, value], done: false };
    }
  }

  const IteratorPrototype = getPrototypeOf(getPrototypeOf([][iterator]()));
  Object.setPrototypeOf(HeadersIterator.prototype, IteratorPrototype);
  delete HeadersIterator.prototype.constructor;

  // Web IDL members are enumerable; @@iterator is the same function as entries.
  const proto = Headers.prototype;
  for (const target of [proto, HeadersIterator.prototype]) {
    for (const key of getOwnPropertyNames(target)) {
      if (key !== "constructor") defineProperty(target, key, { enumerable: true });
    }
  }
  defineProperty(proto, iterator, { value: proto.entries, writable: true, configurable: true });
  defineProperty(proto, Symbol.toStringTag, { value: "Headers", configurable: true });
  defineProperty(HeadersIterator.prototype, Symbol.toStringTag, { value: "Headers Iterator", configurable: true });
  defineProperty(Headers, Symbol.for("palisade.headers.guard"), { value: setGuard });

  // What fetch.js uses instead of the public methods, which a script can replace. fetch.js
  // takes it and deletes it before the snapshot.
  const has = (headers, name) => combined(listOf(headers), name) !== null;
  const get = (headers, name) => combined(listOf(headers), name);
  // A copy of `pairs` (arrays of a name and a value: the host's, or the pairs of `sent`).
  const fromPairs = (pairs) => {
    const headers = new Headers();
    for (let i = 0; i < pairs.length; i++) appendTo(headers, pairs[i][0], pairs[i][1]);
    return headers;
  };
  // The header list to send: the sorted, combined pairs, each a fresh array.
  const sent = (headers) => {
    const pairs = pairsOf(headers);
    const out = [];
    for (let i = 0; i < pairs.length; i++) push(out, [pairs[i][0], pairs[i][1]]);
    return out;
  };
  defineProperty(Headers, Symbol.for("palisade.internals"), {
    // `copy`: a new Headers with the same list, not through an @@iterator a script replaced.
    value: freeze({ __proto__: null, isHeaders, has, get, append: appendTo, fromPairs, sent, guard: setGuard, copy: (headers) => fromPairs(pairsOf(headers)) }),
    configurable: true,
  });

  defineProperty(globalThis, "Headers", { value: Headers, writable: true, configurable: true, enumerable: false });
})();
