/**
 * `DOMException` for Palisade guests, when the engine has none: the error class that
 * `AbortSignal`, `structuredClone` and `crypto` throw, with the standard legacy `code`s.
 */
// Host-facing: `name` and `code` are getters over a private field, so a frozen `Error.prototype` cannot refuse them.
(() => {
  "use strict";
  // QuickJS compiles a template literal to a call of `String.prototype.concat`: none here.
  const concat = Function.prototype.call.bind(String.prototype.concat);

  if (typeof globalThis.DOMException !== "function") {
    const CODES = {
      __proto__: null, IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4,
      InvalidCharacterError: 5, NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9,
      InUseAttributeError: 10, InvalidStateError: 11, SyntaxError: 12, InvalidModificationError: 13,
      NamespaceError: 14, InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18,
      NetworkError: 19, AbortError: 20, URLMismatchError: 21, QuotaExceededError: 22,
      TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
    };
    class DOMException extends Error {
      #name;
      constructor(message = "", name = "Error") {
        super(concat("", message));
        this.#name = concat("", name);
      }
      get name() { return this.#name; }
      get code() { return CODES[this.#name] ?? 0; }
    }
    Object.defineProperty(DOMException.prototype, Symbol.toStringTag, { value: "DOMException", configurable: true });
    Object.defineProperty(globalThis, "DOMException", {
      value: DOMException, writable: true, configurable: true, enumerable: false,
    });
  }
})();
