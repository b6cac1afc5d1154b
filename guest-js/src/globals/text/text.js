(function (encode, decode, encodingFor, openStream, decodeStream, encodeInto) {
  "use strict";
  // Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const { defineProperty, getOwnPropertyDescriptor, getPrototypeOf } = Object;
  const getter = (proto, key) => uncurry(getOwnPropertyDescriptor(proto, key).get);
  // QuickJS compiles a template literal to a call of `String.prototype.concat`: none here.
  const concat = uncurry(String.prototype.concat);
  const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype);
  const typedArrayName = getter(TypedArrayPrototype, Symbol.toStringTag);
  const typedArrayBuffer = getter(TypedArrayPrototype, "buffer");
  const typedArrayOffset = getter(TypedArrayPrototype, "byteOffset");
  const typedArrayLength = getter(TypedArrayPrototype, "byteLength");
  const dataViewBuffer = getter(DataView.prototype, "buffer");
  const dataViewOffset = getter(DataView.prototype, "byteOffset");
  const dataViewLength = getter(DataView.prototype, "byteLength");
  const arrayBufferLength = getter(ArrayBuffer.prototype, "byteLength");
  const { isView } = ArrayBuffer;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const EMPTY = new ArrayBuffer(0);

  // WebIDL's conversion of a dictionary argument: undefined and null are empty.
  const dictionary = (value, what) => {
    if (value === undefined || value === null) return { __proto__: null };
    if (typeof value !== "object" && typeof value !== "function") {
      throw new TypeErrorCtor(concat("The provided value is not of type '", what, "'"));
    }
    return value;
  };
  const attribute = (proto, name, get) =>
    defineProperty(proto, name, { __proto__: null, get, enumerable: true, configurable: true });
  const tag = (proto, name) =>
    defineProperty(proto, Symbol.toStringTag, { __proto__: null, value: name, configurable: true });

  // A BufferSource as [buffer, byteOffset, byteLength], read through the intrinsic getters.
  let sourceBuffer, sourceOffset, sourceLength;
  const bufferSource = (input) => {
    if (isView(input)) {
      if (typedArrayName(input) !== undefined) {
        sourceBuffer = typedArrayBuffer(input);
        sourceOffset = typedArrayOffset(input);
        sourceLength = typedArrayLength(input);
      } else {
        sourceBuffer = dataViewBuffer(input);
        sourceOffset = dataViewOffset(input);
        sourceLength = dataViewLength(input);
      }
      return;
    }
    let length;
    try {
      length = arrayBufferLength(input);
    } catch {
      throw new TypeErrorCtor("The provided value is not of type '(ArrayBuffer or ArrayBufferView)'");
    }
    sourceBuffer = input;
    sourceOffset = 0;
    sourceLength = length;
  };

  class TextDecoder {
    #encoding;
    #fatal;
    #ignoreBOM;
    // The handle of the decoder of a `{stream: true}` decode in progress, else 0.
    #stream = 0;

    constructor(label = "utf-8", options = undefined) {
      label = concat("", label);
      options = dictionary(options, "TextDecoderOptions");
      const fatal = !!options.fatal;
      const ignoreBOM = !!options.ignoreBOM;
      const encoding = encodingFor(label);
      if (encoding == null) {
        throw new RangeErrorCtor(concat("The encoding label provided ('", label, "') is invalid."));
      }
      this.#encoding = encoding;
      this.#fatal = fatal;
      this.#ignoreBOM = ignoreBOM;
    }

    decode(input = undefined, options = undefined) {
      if (!(#fatal in this)) throw new TypeErrorCtor("Illegal invocation");
      if (input === undefined) {
        sourceBuffer = EMPTY;
        sourceOffset = sourceLength = 0;
      } else {
        bufferSource(input);
      }
      const buffer = sourceBuffer, offset = sourceOffset, length = sourceLength;
      sourceBuffer = undefined;
      const stream = !!dictionary(options, "TextDecodeOptions").stream;
      if (this.#stream === 0) {
        if (!stream) return decode(this.#encoding, buffer, offset, length, this.#fatal, this.#ignoreBOM);
        this.#stream = openStream(this.#encoding, this.#ignoreBOM);
      }
      const handle = this.#stream;
      if (!stream) this.#stream = 0;
      return decodeStream(handle, buffer, offset, length, this.#fatal, !stream);
    }

    static {
      const proto = TextDecoder.prototype;
      attribute(proto, "encoding", function encoding() {
        if (!(#fatal in this)) throw new TypeErrorCtor("Illegal invocation");
        return this.#encoding;
      });
      attribute(proto, "fatal", function fatal() {
        if (!(#fatal in this)) throw new TypeErrorCtor("Illegal invocation");
        return this.#fatal;
      });
      attribute(proto, "ignoreBOM", function ignoreBOM() {
        if (!(#fatal in this)) throw new TypeErrorCtor("Illegal invocation");
        return this.#ignoreBOM;
      });
      tag(proto, "TextDecoder");
    }
  }

  class TextEncoder {
    #brand = true;

    encode(input = "") {
      if (!(#brand in this)) throw new TypeErrorCtor("Illegal invocation");
      return encode(concat("", input));
    }

    encodeInto(source, destination) {
      if (!(#brand in this)) throw new TypeErrorCtor("Illegal invocation");
      source = concat("", source);
      if (!isView(destination) || typedArrayName(destination) !== "Uint8Array") {
        throw new TypeErrorCtor("The provided value is not of type 'Uint8Array'");
      }
      const length = typedArrayLength(destination);
      // Nothing fits in no room, a detached buffer's included.
      if (length === 0) return { read: 0, written: 0 };
      const counts = encodeInto(source, typedArrayBuffer(destination), typedArrayOffset(destination), length);
      return { read: counts[0], written: counts[1] };
    }

    static {
      attribute(TextEncoder.prototype, "encoding", function encoding() {
        if (!(#brand in this)) throw new TypeErrorCtor("Illegal invocation");
        return "utf-8";
      });
      tag(TextEncoder.prototype, "TextEncoder");
    }
  }

  for (const [name, value] of [["TextDecoder", TextDecoder], ["TextEncoder", TextEncoder]]) {
    defineProperty(globalThis, name, { __proto__: null, value, writable: true, enumerable: false, configurable: true });
  }
})
