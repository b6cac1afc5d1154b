/**
 * `Headers` for Palisade guests, per the Fetch standard: a header list with lowercased names,
 * validated names and values, combined reads, and sorted iteration that keeps `set-cookie`
 * values apart. The symbol-keyed static hook `palisade.headers.guard` sets a Headers object's
 * guard to "immutable" (every mutation throws a TypeError) or back to "none".
 */
(() => {
  "use strict";

  const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  const isHttpWhitespace = (code) => code === 0x09 || code === 0x0a || code === 0x0d || code === 0x20;

  const requireArgs = (args, count, method) => {
    if (args.length < count) {
      throw new TypeError(`Headers.${method}: ${count} argument${count > 1 ? "s" : ""} required, but only ${args.length} present`);
    }
  };

  const toByteString = (value) => {
    const text = `${value}`;
    if (/[^\x00-\xff]/.test(text)) throw new TypeError(`Headers: "${text}" has a character above U+00FF`);
    return text;
  };

  const headerName = (value) => {
    const name = toByteString(value);
    if (!TOKEN.test(name)) throw new TypeError(`Headers: "${name}" is not a valid header name`);
    return name.toLowerCase();
  };

  // Strip leading and trailing HTTP whitespace, then refuse NUL, CR and LF.
  const headerValue = (value) => {
    const text = toByteString(value);
    let start = 0, end = text.length;
    while (start < end && isHttpWhitespace(text.charCodeAt(start))) start++;
    while (end > start && isHttpWhitespace(text.charCodeAt(end - 1))) end--;
    const normalized = text.slice(start, end);
    if (/[\0\r\n]/.test(normalized)) throw new TypeError(`Headers: "${normalized}" is not a valid header value`);
    return normalized;
  };

  let pairsOf, setGuard;

  class Headers {
    #list = [];
    #guard = "none";
    #sorted = null;

    constructor(init = undefined) {
      if (init === undefined) return;
      if ((typeof init !== "object" || init === null) && typeof init !== "function") {
        throw new TypeError("Headers: init must be a sequence of name-value pairs or a record");
      }
      if (init[Symbol.iterator] != null) {
        for (const header of init) {
          if ((typeof header !== "object" || header === null) && typeof header !== "function") {
            throw new TypeError("Headers: each header must be a sequence of a name and a value");
          }
          const pair = [...header];
          if (pair.length !== 2) throw new TypeError("Headers: each header must be a sequence of exactly a name and a value");
          this.#append(pair[0], pair[1]);
        }
      } else {
        for (const key of Reflect.ownKeys(init)) {
          if (Reflect.getOwnPropertyDescriptor(init, key)?.enumerable) this.#append(toByteString(key), init[key]);
        }
      }
    }

    #mutable() {
      if (this.#guard === "immutable") throw new TypeError("Headers: these headers are immutable");
      this.#sorted = null;
    }

    #append(name, value) {
      name = headerName(name);
      value = headerValue(value);
      this.#mutable();
      this.#list.push([name, value]);
    }

    // The sorted, combined pairs that iteration walks; recomputed only after a change.
    #pairs() {
      if (this.#sorted === null) {
        const groups = new Map();
        for (const [name, value] of this.#list) {
          const values = groups.get(name);
          if (values === undefined) groups.set(name, [value]);
          else values.push(value);
        }
        this.#sorted = [];
        for (const name of [...groups.keys()].sort()) {
          if (name === "set-cookie") for (const value of groups.get(name)) this.#sorted.push([name, value]);
          else this.#sorted.push([name, groups.get(name).join(", ")]);
        }
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
      this.#list = this.#list.filter((header) => header[0] !== name);
    }

    get(name) {
      requireArgs(arguments, 1, "get");
      name = headerName(name);
      const values = this.#list.filter((header) => header[0] === name).map((header) => header[1]);
      return values.length === 0 ? null : values.join(", ");
    }

    getSetCookie() {
      return this.#list.filter((header) => header[0] === "set-cookie").map((header) => header[1]);
    }

    has(name) {
      requireArgs(arguments, 1, "has");
      name = headerName(name);
      return this.#list.some((header) => header[0] === name);
    }

    set(name, value) {
      requireArgs(arguments, 2, "set");
      name = headerName(name);
      value = headerValue(value);
      this.#mutable();
      const first = this.#list.findIndex((header) => header[0] === name);
      if (first < 0) this.#list.push([name, value]);
      else {
        this.#list[first][1] = value;
        this.#list = this.#list.filter((header, i) => i <= first || header[0] !== name);
      }
    }

    forEach(callback, thisArg = undefined) {
      requireArgs(arguments, 1, "forEach");
      if (typeof callback !== "function") throw new TypeError("Headers.forEach: callback is not a function");
      for (let i = 0; i < this.#pairs().length; i++) {
        const [name, value] = this.#pairs()[i];
        callback.call(thisArg, value, name, this);
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
        if (guard !== "immutable" && guard !== "none") throw new TypeError('Headers guard must be "immutable" or "none"');
        headers.#guard = guard;
      };
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
      const [name, value] = pairs[this.#index++];
      return { value: this.#kind === "key" ? name : this.#kind === "value" ? value : [name, value], done: false };
    }
  }

  const IteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
  Object.setPrototypeOf(HeadersIterator.prototype, IteratorPrototype);
  delete HeadersIterator.prototype.constructor;

  // Web IDL members are enumerable; @@iterator is the same function as entries.
  const proto = Headers.prototype;
  for (const target of [proto, HeadersIterator.prototype]) {
    for (const key of Object.getOwnPropertyNames(target)) {
      if (key !== "constructor") Object.defineProperty(target, key, { enumerable: true });
    }
  }
  Object.defineProperty(proto, Symbol.iterator, { value: proto.entries, writable: true, configurable: true });
  Object.defineProperty(proto, Symbol.toStringTag, { value: "Headers", configurable: true });
  Object.defineProperty(HeadersIterator.prototype, Symbol.toStringTag, { value: "Headers Iterator", configurable: true });
  Object.defineProperty(Headers, Symbol.for("palisade.headers.guard"), { value: setGuard });

  Object.defineProperty(globalThis, "Headers", { value: Headers, writable: true, configurable: true, enumerable: false });
})();
