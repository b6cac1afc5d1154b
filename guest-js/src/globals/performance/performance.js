/*
 * `performance` (`Performance`): `now()`, the milliseconds since the call began, from the host's
 * monotonic clock; `timeOrigin`, the wall-clock time (`Date.now()`'s scale) at which the call
 * began, worked out once per call from the first reading of both clocks; and `toJSON()`.
 * `performance` is an `EventTarget`, as in HR Time (no event is ever dispatched to it here).
 */
(function (monotonicMs) {
  "use strict";
  // Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
  const { defineProperty, getOwnPropertyDescriptor } = Object;
  const dateNow = Date.now;
  const TypeErrorCtor = TypeError;
  const EventTargetCtor = EventTarget;
  const { construct } = Reflect;
  // Each call starts from the snapshot, where this is unset.
  let origin;

  class Performance extends EventTargetCtor {
    constructor() {
      throw new TypeErrorCtor("Illegal constructor");
    }
  }
  const proto = Performance.prototype;
  let performance;
  const check = (self) => {
    if (self !== performance) throw new TypeErrorCtor("Illegal invocation");
  };
  const timeOrigin = () => {
    if (origin === undefined) origin = dateNow() - monotonicMs();
    return origin;
  };
  defineProperty(proto, "now", {
    __proto__: null,
    value: {
      now() {
        check(this);
        return monotonicMs();
      },
    }.now,
    writable: true,
    enumerable: true,
    configurable: true,
  });
  defineProperty(proto, "timeOrigin", {
    __proto__: null,
    get: getOwnPropertyDescriptor({
      get timeOrigin() {
        check(this);
        return timeOrigin();
      },
    }, "timeOrigin").get,
    enumerable: true,
    configurable: true,
  });
  defineProperty(proto, "toJSON", {
    __proto__: null,
    value: {
      toJSON() {
        check(this);
        return { timeOrigin: timeOrigin() };
      },
    }.toJSON,
    writable: true,
    enumerable: true,
    configurable: true,
  });
  defineProperty(proto, Symbol.toStringTag, { __proto__: null, value: "Performance", configurable: true });
  // An EventTarget made with this prototype, without running the constructor that throws.
  performance = construct(EventTargetCtor, [], Performance);
  defineProperty(globalThis, "performance", { __proto__: null, value: performance, writable: true, configurable: true, enumerable: true });
  defineProperty(globalThis, "Performance", { __proto__: null, value: Performance, writable: true, configurable: true, enumerable: false });
})
