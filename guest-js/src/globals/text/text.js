
(function (encode, decode) {
  "use strict";
  // Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
  const { defineProperty } = Object;
  const { isView } = ArrayBuffer;
  const ArrayBufferCtor = ArrayBuffer;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const method = (proto, fn) =>
    defineProperty(proto, fn.name, { __proto__: null, value: fn, writable: true, enumerable: false, configurable: true });
  method(TextDecoder.prototype, {
    decode(input, options = {}) {
      if (input === undefined) return "";
      if (options.stream) throw new ErrorCtor("Streaming decode is not supported");
      const byteOffset = input.byteOffset || 0;
      const byteLength = input.byteLength;
      if (isView(input)) input = input.buffer;
      if (!(input instanceof ArrayBufferCtor)) {
        throw new TypeErrorCtor("The provided value is not of type '(ArrayBuffer or ArrayBufferView)'");
      }
      return decode(input, byteOffset, byteLength, this.fatal, this.ignoreBOM);
    },
  }.decode);
  method(TextEncoder.prototype, {
    encode(input = "") {
      return encode(input.toString());
    },
  }.encode);
})
