// `TextEncoderStream` and `TextDecoderStream` (Encoding standard), each a TransformStream built
// through the stream internals (`T`) over the `TextEncoder` and `TextDecoder` of text.js.
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (T) {
  "use strict";

  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const { defineProperty, getOwnPropertyDescriptor, getPrototypeOf } = Object;
  const getter = (proto, key) => uncurry(getOwnPropertyDescriptor(proto, key).get);
  const concat = uncurry(String.prototype.concat);
  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const slice = uncurry(String.prototype.slice);
  const typedArrayLength = getter(getPrototypeOf(Uint8Array.prototype), "byteLength");
  const TypeErrorCtor = TypeError;
  const TextDecoderCtor = TextDecoder;
  const decode = uncurry(TextDecoder.prototype.decode);
  const decoderEncoding = getter(TextDecoder.prototype, "encoding");
  const decoderFatal = getter(TextDecoder.prototype, "fatal");
  const decoderIgnoreBOM = getter(TextDecoder.prototype, "ignoreBOM");
  const encoder = new TextEncoder();
  const encode = uncurry(TextEncoder.prototype.encode);
  const STREAM = { __proto__: null, stream: true };

  const attribute = (proto, name, get) =>
    defineProperty(proto, name, { __proto__: null, get, enumerable: true, configurable: true });
  const tag = (proto, name) =>
    defineProperty(proto, Symbol.toStringTag, { __proto__: null, value: name, configurable: true });

  class TextEncoderStream {
    #transform;

    constructor() {
      // A high surrogate that ended the last chunk, waiting for the low one the next begins with.
      let pending = "";
      this.#transform = T.create((chunk, enqueue) => {
        let text = concat(pending, concat("", chunk));
        pending = "";
        const last = text.length === 0 ? 0 : charCodeAt(text, text.length - 1);
        if (last >= 0xd800 && last <= 0xdbff) {
          pending = slice(text, text.length - 1);
          text = slice(text, 0, text.length - 1);
        }
        if (text.length === 0) return;
        enqueue(encode(encoder, text));
      }, (enqueue) => {
        // A lone high surrogate at the end is U+FFFD.
        if (pending !== "") enqueue(encode(encoder, pending));
      });
    }

    static {
      const proto = TextEncoderStream.prototype;
      attribute(proto, "encoding", function encoding() {
        if (!(#transform in this)) throw new TypeErrorCtor("Illegal invocation");
        return "utf-8";
      });
      attribute(proto, "readable", function readable() {
        if (!(#transform in this)) throw new TypeErrorCtor("Illegal invocation");
        return T.readableOf(this.#transform);
      });
      attribute(proto, "writable", function writable() {
        if (!(#transform in this)) throw new TypeErrorCtor("Illegal invocation");
        return T.writableOf(this.#transform);
      });
      tag(proto, "TextEncoderStream");
    }
  }

  class TextDecoderStream {
    #decoder;
    #transform;

    constructor(label = "utf-8", options = undefined) {
      const decoder = new TextDecoderCtor(label, options);
      this.#decoder = decoder;
      this.#transform = T.create((chunk, enqueue) => {
        if (chunk === undefined) throw new TypeErrorCtor("The provided value is not of type '(ArrayBuffer or ArrayBufferView)'");
        const text = decode(decoder, chunk, STREAM);
        if (text.length > 0) enqueue(text);
      }, (enqueue) => {
        const text = decode(decoder);
        if (text.length > 0) enqueue(text);
      });
    }

    static {
      const proto = TextDecoderStream.prototype;
      attribute(proto, "encoding", function encoding() {
        if (!(#decoder in this)) throw new TypeErrorCtor("Illegal invocation");
        return decoderEncoding(this.#decoder);
      });
      attribute(proto, "fatal", function fatal() {
        if (!(#decoder in this)) throw new TypeErrorCtor("Illegal invocation");
        return decoderFatal(this.#decoder);
      });
      attribute(proto, "ignoreBOM", function ignoreBOM() {
        if (!(#decoder in this)) throw new TypeErrorCtor("Illegal invocation");
        return decoderIgnoreBOM(this.#decoder);
      });
      attribute(proto, "readable", function readable() {
        if (!(#decoder in this)) throw new TypeErrorCtor("Illegal invocation");
        return T.readableOf(this.#transform);
      });
      attribute(proto, "writable", function writable() {
        if (!(#decoder in this)) throw new TypeErrorCtor("Illegal invocation");
        return T.writableOf(this.#transform);
      });
      tag(proto, "TextDecoderStream");
    }
  }

  defineProperty(globalThis, "TextEncoderStream", { __proto__: null, value: TextEncoderStream, writable: true, enumerable: false, configurable: true });
  defineProperty(globalThis, "TextDecoderStream", { __proto__: null, value: TextDecoderStream, writable: true, enumerable: false, configurable: true });
})
