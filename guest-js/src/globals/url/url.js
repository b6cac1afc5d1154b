// `URL` over the host-side WHATWG parser (url.rs). Parts are kept as one array:
// [href, origin, protocol, username, password, host, hostname, port, pathname, search, hash].
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (parse, set) {
  "use strict";
  const StringCtor = String;
  const TypeErrorCtor = TypeError;
  const { defineProperty, freeze } = Object;
  const slice = Function.prototype.call.bind(String.prototype.slice);
  // QuickJS compiles a template literal to a call of `String.prototype.concat`: none here.
  const concat = Function.prototype.call.bind(String.prototype.concat);
  const SP = globalThis.URLSearchParams;
  const bind = SP[Symbol.for("palisade.urlsp.bind")];
  const reset = SP[Symbol.for("palisade.urlsp.reset")];
  const INDEX = { protocol: 2, username: 3, password: 4, host: 5, hostname: 6, port: 7, pathname: 8, search: 9, hash: 10 };

  class URL {
    #parts;
    #params = null;

    constructor(url, base) {
      const parts = parse(StringCtor(url), base === undefined ? undefined : StringCtor(base));
      if (!parts) throw new TypeErrorCtor(concat("Invalid URL: ", StringCtor(url)));
      this.#parts = parts;
    }

    static canParse(url, base) {
      return parse(StringCtor(url), base === undefined ? undefined : StringCtor(base)) != null;
    }

    static parse(url, base) {
      try {
        return new URL(url, base);
      } catch {
        return null;
      }
    }

    #set(part, value) {
      const parts = set(this.#parts[0], part, StringCtor(value));
      if (parts) this.#parts = parts;
      if (part === "search" && this.#params) reset(this.#params, slice(this.#parts[9], 1));
    }

    get href() { return this.#parts[0]; }
    set href(value) {
      const parts = parse(StringCtor(value), undefined);
      if (!parts) throw new TypeErrorCtor(concat("Invalid URL: ", StringCtor(value)));
      this.#parts = parts;
      if (this.#params) reset(this.#params, slice(parts[9], 1));
    }
    get origin() { return this.#parts[1]; }
    get searchParams() {
      if (!this.#params) {
        this.#params = new SP(this.#parts[9]);
        bind(this.#params, (query) => {
          const parts = set(this.#parts[0], "search", query);
          if (parts) this.#parts = parts;
        });
      }
      return this.#params;
    }
    toString() { return this.#parts[0]; }
    toJSON() { return this.#parts[0]; }

    static {
      for (const [name, index] of Object.entries(INDEX)) {
        Object.defineProperty(URL.prototype, name, {
          get() { return this.#parts[index]; },
          set(value) { this.#set(name, value); },
          enumerable: true,
          configurable: true,
        });
      }
    }
  }

  // What fetch.js parses with instead of the global `URL`, which a script can replace: the parts
  // of `url` against `base`, or null. fetch.js takes it and deletes it before the snapshot.
  const parseParts = (url, base) => parse(url, base);
  defineProperty(URL, Symbol.for("palisade.internals"), { value: freeze({ __proto__: null, parse: parseParts }), configurable: true });

  Object.defineProperty(URL.prototype, Symbol.toStringTag, { value: "URL", configurable: true });
  Object.defineProperty(globalThis, "URL", { value: URL, writable: true, configurable: true, enumerable: false });
})
