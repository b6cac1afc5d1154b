
(function (native, refusal) {
  "use strict";
  // Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
  const { defineProperty, freeze } = Object;
  const ErrorCtor = Error;
  // QuickJS compiles a template literal to a call of `String.prototype.concat`: none here.
  const concat = Function.prototype.call.bind(String.prototype.concat);
  const own = (object, key, value) =>
    defineProperty(object, key, { __proto__: null, value, writable: true, enumerable: true, configurable: true });
  const wrap = (name) => async (...args) => {
    const list = [];
    for (let i = 0; i < args.length; i++) own(list, i, args[i]);
    const reply = native(name, list);
    const value = reply[1];
    if (reply[0]) return value;
    const code = reply[2];
    // A write the host refused for a quota reaches the guest's libc as a plain I/O error; the
    // host's record says what happened.
    const denial = code === "EIO" && name === "writeFile" ? refusal("fs") : null;
    if (denial) {
      const error = new ErrorCtor(concat("ENOSPC: ", denial.reason));
      own(error, "code", "ENOSPC");
      own(error, "rule", denial.rule);
      own(error, "fix", denial.fix ?? null);
      throw error;
    }
    const error = new ErrorCtor(concat("", code, ": ", value));
    own(error, "code", code);
    throw error;
  };
  const fs = {};
  for (const name of ["readFile", "writeFile", "readdir", "stat", "mkdir", "rm"]) fs[name] = wrap(name);
  return freeze(fs);
})
