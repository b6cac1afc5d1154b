
// `kv`, `fs`, `config` and the capability bridge (`host`) as a call sees them when its policy
// does not grant them: the same members, each refusing with the host's `PolicyDeniedError`
// (the rule, and the fix that would grant it). The host records the refusal, so that an
// uncaught one ends the call as `policy_denied`. A call whose policy grants one installs the
// real global over it.
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (deny) {
  "use strict";
  const { freeze, create } = Object;
  const ProxyCtor = Proxy;
  const StringCtor = String;
  const PolicyDeniedErrorCtor = PolicyDeniedError;
  // What the script named, as text for the host's fix: a bucket, a path, a key.
  const named = (value) => (typeof value === "string" ? value : "");
  const refuse = (global, name) => new PolicyDeniedErrorCtor(deny(global, name));

  // `kv`: the default bucket's operations and `bucket(name)`, all refused.
  const bucket = (name) => {
    const refused = async () => { throw refuse("kv", name); };
    return freeze({
      get: refused, getJSON: refused, getBytes: refused, set: refused,
      delete: refused, has: refused, list: refused,
    });
  };
  const kv = freeze({ ...bucket(""), bucket: (name) => bucket(StringCtor(name)) });

  // `fs`: every operation, refused with the path it was given.
  const file = async (path) => { throw refuse("fs", named(path)); };
  const fs = freeze({
    readFile: file, writeFile: file, readdir: file, stat: file, mkdir: file, rm: file,
  });

  // `config`: synchronous, as the real one is.
  const config = freeze({
    get(key) { throw refuse("config", named(key)); },
    getAll() { throw refuse("config", ""); },
  });

  // The bridge: every named property is an async function, refused with its name.
  const host = new ProxyCtor(freeze(create(null)), {
    __proto__: null,
    get(_, name) {
      if (typeof name !== "string" || name === "then") return undefined;
      return async () => { throw refuse("host", name); };
    },
    set() { return false; },
    defineProperty() { return false; },
  });

  return [kv, fs, config, host];
})
