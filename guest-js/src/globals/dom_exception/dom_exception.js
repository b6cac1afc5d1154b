/**
 * `DOMException` for Palisade guests, when the engine has none, as WebIDL defines it: the error
 * class that `atob`, `AbortSignal`, `structuredClone` and `crypto` throw, with `name`, `message`,
 * `code` and `cause` as getters on the prototype and the legacy code constants
 * (`DOMException.INDEX_SIZE_ERR` …) on the constructor and the prototype.
 */
// Host-facing: the getters read private fields, so a frozen `Error.prototype` or a shadowing
// own property cannot change what they answer.
(() => {
  "use strict";
  // QuickJS compiles a template literal to a call of `String.prototype.concat`: none here.
  const concat = Function.prototype.call.bind(String.prototype.concat);
  const { defineProperty, setPrototypeOf } = Object;
  const { construct } = Reflect;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;

  if (typeof globalThis.DOMException !== "function") {
    // The legacy codes, by name, and the constants that spell them.
    const LEGACY = [
      ["IndexSizeError", "INDEX_SIZE_ERR"], ["", "DOMSTRING_SIZE_ERR"],
      ["HierarchyRequestError", "HIERARCHY_REQUEST_ERR"], ["WrongDocumentError", "WRONG_DOCUMENT_ERR"],
      ["InvalidCharacterError", "INVALID_CHARACTER_ERR"], ["", "NO_DATA_ALLOWED_ERR"],
      ["NoModificationAllowedError", "NO_MODIFICATION_ALLOWED_ERR"], ["NotFoundError", "NOT_FOUND_ERR"],
      ["NotSupportedError", "NOT_SUPPORTED_ERR"], ["InUseAttributeError", "INUSE_ATTRIBUTE_ERR"],
      ["InvalidStateError", "INVALID_STATE_ERR"], ["SyntaxError", "SYNTAX_ERR"],
      ["InvalidModificationError", "INVALID_MODIFICATION_ERR"], ["NamespaceError", "NAMESPACE_ERR"],
      ["InvalidAccessError", "INVALID_ACCESS_ERR"], ["", "VALIDATION_ERR"],
      ["TypeMismatchError", "TYPE_MISMATCH_ERR"], ["SecurityError", "SECURITY_ERR"],
      ["NetworkError", "NETWORK_ERR"], ["AbortError", "ABORT_ERR"], ["URLMismatchError", "URL_MISMATCH_ERR"],
      ["QuotaExceededError", "QUOTA_EXCEEDED_ERR"], ["TimeoutError", "TIMEOUT_ERR"],
      ["InvalidNodeTypeError", "INVALID_NODE_TYPE_ERR"], ["DataCloneError", "DATA_CLONE_ERR"],
    ];
    const CODES = { __proto__: null };
    for (let i = 0; i < LEGACY.length; i++) {
      if (LEGACY[i][0] !== "") CODES[LEGACY[i][0]] = i + 1;
    }
    const illegal = () => new TypeErrorCtor("Illegal invocation");

    // The fields of a DOMException, stamped onto the error object `DOMException` makes (a base
    // class that returns its argument lets a class add private fields to any object).
    class Stamp {
      constructor(target) {
        return target;
      }
    }
    class Fields extends Stamp {
      #name;
      #message;
      #code;
      #cause;
      constructor(target, name, message, cause) {
        super(target);
        this.#name = name;
        this.#message = message;
        this.#code = CODES[name] ?? 0;
        this.#cause = cause;
      }
      static {
        const proto = DOMException.prototype;
        const getter = (key, get) =>
          defineProperty(proto, key, { __proto__: null, get, enumerable: true, configurable: true });
        getter("name", function name() {
          if (!(#name in this)) throw illegal();
          return this.#name;
        });
        getter("message", function message() {
          if (!(#name in this)) throw illegal();
          return this.#message;
        });
        getter("code", function code() {
          if (!(#name in this)) throw illegal();
          return this.#code;
        });
        getter("cause", function cause() {
          if (!(#name in this)) throw illegal();
          return this.#cause;
        });
      }
    }

    // A function rather than a class that extends `Error`: WebIDL makes the interface object's
    // prototype `Function.prototype`, and the instance a real error (with `stack`).
    // `options` is WebIDL's `(DOMExceptionOptions or DOMString)`: an object (or null) is the
    // dictionary `{ cause, name }`, anything else the name.
    function DOMException(message = undefined, options = undefined) {
      if (new.target === undefined) throw new TypeErrorCtor("Constructor DOMException requires 'new'");
      message = message === undefined ? "" : concat("", message);
      let name = "Error";
      let cause;
      if (options === null || typeof options === "object" || typeof options === "function") {
        if (options !== null) {
          cause = options.cause;
          const given = options.name;
          if (given !== undefined) name = concat("", given);
        }
      } else if (options !== undefined) {
        name = concat("", options);
      }
      const self = construct(ErrorCtor, [], new.target);
      new Fields(self, name, message, cause);
      return self;
    }
    const proto = DOMException.prototype;
    setPrototypeOf(proto, ErrorCtor.prototype);
    for (let i = 0; i < LEGACY.length; i++) {
      const constant = { __proto__: null, value: i + 1, writable: false, enumerable: true, configurable: false };
      defineProperty(DOMException, LEGACY[i][1], constant);
      defineProperty(proto, LEGACY[i][1], constant);
    }
    defineProperty(proto, Symbol.toStringTag, { __proto__: null, value: "DOMException", configurable: true });
    defineProperty(DOMException, "prototype", { __proto__: null, writable: false });
    defineProperty(globalThis, "DOMException", {
      __proto__: null, value: DOMException, writable: true, configurable: true, enumerable: false,
    });
  }
})();
