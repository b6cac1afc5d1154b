// The `kv` global over the natives of kv.rs. Keys are strings; values are stored as bytes.
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (op, list, refusal, encode, decode) {
  "use strict";
  const { defineProperty, freeze, getPrototypeOf, hasOwn } = Object;
  // QuickJS compiles a template literal to a call of `String.prototype.concat`: none here.
  const concat = Function.prototype.call.bind(String.prototype.concat);
  const ObjectPrototype = Object.prototype;
  const { parse, stringify } = JSON;
  const StringCtor = String;
  const NumberCtor = Number;
  const { isInteger, isSafeInteger } = Number;
  const TypeErrorCtor = TypeError;
  const startsWith = Function.prototype.call.bind(String.prototype.startsWith);
  const typedArrayName = Function.prototype.call.bind(
    Object.getOwnPropertyDescriptor(getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag).get);
  const PolicyDeniedErrorCtor = PolicyDeniedError;
  const own = (object, key, value) =>
    defineProperty(object, key, { __proto__: null, value, writable: true, enumerable: true, configurable: true });
  // A dictionary member as Web IDL reads it, except that nothing is taken from
  // `Object.prototype`, where only a script that tampers with it could have put it.
  const member = (dict, key) => {
    for (let o = dict; o !== null && o !== ObjectPrototype; o = getPrototypeOf(o)) {
      if (hasOwn(o, key)) return dict[key];
    }
    return undefined;
  };

  class KvError extends Error {
    constructor(message) {
      super(message);
      own(this, "name", "KvError");
    }
  }
  defineProperty(globalThis, "KvError", { value: KvError, writable: true, configurable: true, enumerable: false });

  const fail = (bucket, reply) => {
    if (reply[0] === 1) {
      const denial = refusal(concat("kv:", bucket));
      if (denial) return new PolicyDeniedErrorCtor(denial);
    }
    return new KvError(concat("kv bucket `", bucket, "`: ", reply[1]));
  };

  // A value as `set` stores it: a string's UTF-8, a Uint8Array's bytes, anything else's JSON.
  const bytesOf = (value) => {
    if (typeof value === "string") return encode(value);
    if (typedArrayName(value) === "Uint8Array") return value;
    const text = stringify(value);
    if (text === undefined) throw new TypeErrorCtor("the value has no JSON form");
    return encode(text);
  };

  // `nameOf` gives the bucket's name when an operation runs: the default bucket is the call's,
  // set by `use` after the snapshot.
  function bucket(nameOf) {
    const call = (kind, key, value) => {
      if (typeof key !== "string") throw new TypeErrorCtor("kv keys are strings");
      const name = nameOf();
      const reply = op(kind, name, key, value);
      if (reply[0] !== 0) throw fail(name, reply);
      return reply[1];
    };
    return freeze({
      async get(key) {
        const bytes = call("get", key);
        return bytes === null ? null : decode(bytes);
      },
      async getJSON(key) {
        const bytes = call("get", key);
        return bytes === null ? null : parse(decode(bytes));
      },
      async getBytes(key) {
        return call("get", key);
      },
      async set(key, value) {
        call("set", key, bytesOf(value));
      },
      // The counter at `key` plus `delta`, stored atomically; a missing key starts at 0.
      async increment(key, delta = 1) {
        if (typeof key !== "string") throw new TypeErrorCtor("kv keys are strings");
        if (typeof delta !== "number" || !isSafeInteger(delta) || delta < 0) {
          throw new TypeErrorCtor("kv.increment's delta is a non-negative safe integer");
        }
        return call("increment", key, delta);
      },
      // Store `next` only when the value is `expected` (null: only when the key is missing).
      async compareAndSwap(key, expected, next) {
        if (typeof key !== "string") throw new TypeErrorCtor("kv keys are strings");
        const pair = [expected === null ? null : bytesOf(expected), bytesOf(next)];
        return call("cas", key, pair);
      },
      async delete(key) {
        call("delete", key);
      },
      async has(key) {
        return call("has", key);
      },
      // Keys in byte order, those starting with `prefix`, at most `limit`; `cursor` continues.
      async list(options = {}) {
        if (options === null) throw new TypeErrorCtor("kv.list options must be an object");
        const given = (key, fallback) => {
          const value = member(options, key);
          return value === undefined ? fallback : value;
        };
        const prefix = StringCtor(given("prefix", ""));
        const cursor = given("cursor", null);
        const limit = given("limit", 100);
        let offset = cursor === null ? 0 : NumberCtor(cursor);
        if (!isInteger(offset) || offset < 0) throw new TypeErrorCtor("not a kv cursor");
        const name = nameOf();
        const keys = [];
        for (;;) {
          const reply = list(name, offset);
          if (reply[0] !== 0) throw fail(name, reply);
          const page = reply[1], next = reply[2];
          for (let i = 0; i < page.length; i++) {
            const key = page[i];
            if (startsWith(key, prefix)) {
              own(keys, keys.length, key);
              if (keys.length >= limit) {
                const more = i + 1 < page.length || next != null;
                return { keys, cursor: more ? StringCtor(offset + i + 1) : null };
              }
            }
          }
          if (next == null) return { keys, cursor: null };
          offset = next;
        }
      },
    });
  }

  // Made once, before the snapshot (making it took 60,000 wasm instructions); a call only names
  // its default bucket.
  let current = null;
  const kv = freeze({
    ...bucket(() => current),
    bucket: (name) => {
      const fixed = StringCtor(name);
      return bucket(() => fixed);
    },
  });
  return [kv, (name) => { current = name; }];
})
