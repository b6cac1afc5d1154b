/*
 * `navigator` (`Navigator`) with `userAgent`, as in the WinterTC Minimum Common API.
 */
(function (userAgent) {
  "use strict";
  const { defineProperty, getOwnPropertyDescriptor, create } = Object;
  const TypeErrorCtor = TypeError;
  class Navigator {
    constructor() {
      throw new TypeErrorCtor("Illegal constructor");
    }
  }
  const proto = Navigator.prototype;
  let navigator;
  defineProperty(proto, "userAgent", {
    __proto__: null,
    get: getOwnPropertyDescriptor({
      get userAgent() {
        if (this !== navigator) throw new TypeErrorCtor("Illegal invocation");
        return userAgent;
      },
    }, "userAgent").get,
    enumerable: true,
    configurable: true,
  });
  defineProperty(proto, Symbol.toStringTag, { __proto__: null, value: "Navigator", configurable: true });
  navigator = create(proto);
  defineProperty(globalThis, "navigator", { __proto__: null, value: navigator, writable: true, configurable: true, enumerable: true });
  defineProperty(globalThis, "Navigator", { __proto__: null, value: Navigator, writable: true, configurable: true, enumerable: false });
})
