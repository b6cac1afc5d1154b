// The `kv` global over the natives of kv.rs. Keys are strings; values are stored as bytes.
(function (op, list, refusal) {
  "use strict";
  const freeze = Object.freeze;
  class KvError extends Error {
    constructor(message) {
      super(message);
      this.name = "KvError";
    }
  }
  Object.defineProperty(globalThis, "KvError", { value: KvError, writable: true, configurable: true, enumerable: false });
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();

  const fail = (bucket, reply) => {
    if (reply[0] === 1) {
      const denial = refusal(`kv:${bucket}`);
      if (denial) return new PolicyDeniedError(denial);
    }
    return new KvError(`kv bucket \`${bucket}\`: ${reply[1]}`);
  };

  // `nameOf` gives the bucket's name when an operation runs: the default bucket is the call's,
  // set by `use` after the snapshot.
  function bucket(nameOf) {
    const call = (kind, key, value) => {
      if (typeof key !== "string") throw new TypeError("kv keys are strings");
      const name = nameOf();
      const reply = op(kind, name, key, value);
      if (reply[0] !== 0) throw fail(name, reply);
      return reply[1];
    };
    return freeze({
      async get(key) {
        const bytes = call("get", key);
        return bytes === null ? null : decoder.decode(bytes);
      },
      async getJSON(key) {
        const bytes = call("get", key);
        return bytes === null ? null : JSON.parse(decoder.decode(bytes));
      },
      async getBytes(key) {
        return call("get", key);
      },
      async set(key, value) {
        let bytes;
        if (typeof value === "string") bytes = encoder.encode(value);
        else if (value instanceof Uint8Array) bytes = value;
        else {
          const text = JSON.stringify(value);
          if (text === undefined) throw new TypeError("the value has no JSON form");
          bytes = encoder.encode(text);
        }
        call("set", key, bytes);
      },
      async delete(key) {
        call("delete", key);
      },
      async has(key) {
        return call("has", key);
      },
      // Keys in byte order, those starting with `prefix`, at most `limit`; `cursor` continues.
      async list({ prefix = "", cursor = null, limit = 100 } = {}) {
        prefix = String(prefix);
        let offset = cursor === null ? 0 : Number(cursor);
        if (!Number.isInteger(offset) || offset < 0) throw new TypeError("not a kv cursor");
        const name = nameOf();
        const keys = [];
        for (;;) {
          const reply = list(name, offset);
          if (reply[0] !== 0) throw fail(name, reply);
          const [, page, next] = reply;
          for (let i = 0; i < page.length; i++) {
            const key = page[i];
            if (key.startsWith(prefix)) {
              keys.push(key);
              if (keys.length >= limit) {
                const more = i + 1 < page.length || next != null;
                return { keys, cursor: more ? String(offset + i + 1) : null };
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
      const fixed = String(name);
      return bucket(() => fixed);
    },
  });
  return [kv, (name) => { current = name; }];
})
