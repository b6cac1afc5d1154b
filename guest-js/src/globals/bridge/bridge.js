
(function (start, startArgs, wait) {
"use strict";
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
const { defineProperty, freeze, create } = Object;
const { parse, stringify } = JSON;
const ProxyCtor = Proxy;
// QuickJS compiles a template literal to a call of `String.prototype.concat`: none here.
const concat = Function.prototype.call.bind(String.prototype.concat);
// Own data properties, as assignments made them, defined so that a frozen or poisoned
// `Error.prototype` or `Object.prototype` cannot refuse or intercept them.
const own = (object, key, value) =>
  defineProperty(object, key, { __proto__: null, value, writable: true, enumerable: true, configurable: true });

class PolicyDeniedError extends Error {
  constructor(denial) {
    super(concat("policy denied capability `", denial.capability, "`: ", denial.reason));
    own(this, "name", "PolicyDeniedError");
    own(this, "capability", denial.capability);
    own(this, "rule", denial.rule);
    own(this, "fix", denial.fix ?? null);
  }
}
class CapabilityError extends Error {
  constructor(capability, message, code, retryable) {
    super(message);
    own(this, "name", "CapabilityError");
    own(this, "capability", capability);
    own(this, "code", code ?? "handler_error");
    own(this, "retryable", retryable === true);
  }
}
globalThis.PolicyDeniedError = PolicyDeniedError;
globalThis.CapabilityError = CapabilityError;

// One argument travels as itself, several as their list: every argument reaches the host.
const invoke = async (name, args) => {
  const started = args.length > 1
    ? startArgs(name, stringify(args))
    : start(name, stringify(args.length === 0 || args[0] === undefined ? null : args[0]));
  const reply = (await wait(started)).value;
  const status = reply[0], result = reply[1];
  if (status === 0) return parse(result);
  if (status === 1) throw new PolicyDeniedError(result);
  throw new CapabilityError(name, result, reply[2], reply[3]);
};

return new ProxyCtor(freeze(create(null)), {
  __proto__: null,
  get(_, name) {
    // Not thenable, not a symbol-keyed protocol object: only named capabilities.
    if (typeof name !== "string" || name === "then") return undefined;
    return (...args) => invoke(name, args);
  },
  set() { return false; },
  defineProperty() { return false; },
});
})
