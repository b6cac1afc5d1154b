// `CompressionStream` and `DecompressionStream` (Compression Standard), each a TransformStream
// built through the stream internals (`T`) over the natives of mod.rs (`native`): a chunk is a
// BufferSource whose bytes go through the codec, and each piece of output is a `Uint8Array`. A
// chunk that is not a BufferSource, and compressed data that is not valid, error the stream with
// a `TypeError`. The codec is made with the first chunk (or at the end), so a stream that is
// never written costs no codec.
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (T, native) {
  "use strict";

  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const { defineProperty, getOwnPropertyDescriptor, getPrototypeOf } = Object;
  const { isView } = ArrayBuffer;
  const getter = (proto, key) => uncurry(getOwnPropertyDescriptor(proto, key).get);
  const concat = uncurry(String.prototype.concat);
  const bufferLength = getter(ArrayBuffer.prototype, "byteLength");
  const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype);
  const typedArrayName = getter(TypedArrayPrototype, Symbol.toStringTag);
  const typedArrayBuffer = getter(TypedArrayPrototype, "buffer");
  const typedArrayOffset = getter(TypedArrayPrototype, "byteOffset");
  const typedArrayLength = getter(TypedArrayPrototype, "byteLength");
  const dataViewBuffer = getter(DataView.prototype, "buffer");
  const dataViewOffset = getter(DataView.prototype, "byteOffset");
  const dataViewLength = getter(DataView.prototype, "byteLength");
  const TypeErrorCtor = TypeError;
  const Uint8ArrayCtor = Uint8Array;
  const WeakMapCtor = WeakMap;
  const weakGet = uncurry(WeakMap.prototype.get);
  const weakSet = uncurry(WeakMap.prototype.set);
  const { open, write, finish } = native;
  // The CompressionFormat enum, with the natives' codes.
  const FORMATS = { __proto__: null, deflate: 0, "deflate-raw": 1, gzip: 2 };

  // A BufferSource chunk as [buffer, offset, length] (an ArrayBuffer, a typed array or a
  // DataView, none over a SharedArrayBuffer), or the TypeError the standard names.
  const bytesOf = (chunk) => {
    let parts = null;
    try {
      if (isView(chunk)) {
        parts = typedArrayName(chunk) === undefined
          ? [dataViewBuffer(chunk), dataViewOffset(chunk), dataViewLength(chunk)]
          : [typedArrayBuffer(chunk), typedArrayOffset(chunk), typedArrayLength(chunk)];
        // A view over a SharedArrayBuffer: its buffer has no ArrayBuffer byteLength.
        bufferLength(parts[0]);
      } else {
        parts = [chunk, 0, bufferLength(chunk)];
      }
    } catch {
      parts = null;
    }
    if (parts === null) throw new TypeErrorCtor("The provided value is not of type '(ArrayBuffer or ArrayBufferView)'");
    return parts;
  };

  const format = (value, what) => {
    const code = FORMATS[concat("", value)];
    if (code === undefined) {
      throw new TypeErrorCtor(concat(what, ": '", concat("", value), "' is not a valid CompressionFormat"));
    }
    return code;
  };

  // The TransformStream of one codec.
  const codecStream = (code, compress) => {
    let handle = 0;
    const codec = () => (handle === 0 ? (handle = open(code, compress)) : handle);
    // Each piece as a chunk; a `null` after the pieces says the input went on past the end of
    // the compressed data, which errors the stream once they are enqueued.
    const emit = (pieces, enqueue) => {
      for (let i = 0; i < pieces.length; i++) {
        if (pieces[i] === null) throw new TypeErrorCtor("Junk found after end of compressed data");
        enqueue(new Uint8ArrayCtor(pieces[i]));
      }
    };
    return T.create((chunk, enqueue) => {
      const parts = bytesOf(chunk);
      emit(write(codec(), parts[0], parts[1], parts[2]), enqueue);
    }, (enqueue) => emit(finish(codec()), enqueue));
  };

  // Each stream's TransformStream, by the CompressionStream or DecompressionStream it is.
  const transforms = new WeakMapCtor();
  const transformOf = (self) => {
    const transform = weakGet(transforms, self);
    if (transform === undefined) throw new TypeErrorCtor("Illegal invocation");
    return transform;
  };
  const define = (Class, name) => {
    const proto = Class.prototype;
    const attribute = (key, get) =>
      defineProperty(proto, key, { __proto__: null, get, enumerable: true, configurable: true });
    attribute("readable", function readable() {
      return T.readableOf(transformOf(this));
    });
    attribute("writable", function writable() {
      return T.writableOf(transformOf(this));
    });
    defineProperty(proto, Symbol.toStringTag, { __proto__: null, value: name, configurable: true });
    defineProperty(globalThis, name, { __proto__: null, value: Class, writable: true, enumerable: false, configurable: true });
  };

  class CompressionStream {
    constructor(compressionFormat) {
      if (arguments.length === 0) throw new TypeErrorCtor("CompressionStream: 1 argument required, but only 0 present");
      weakSet(transforms, this, codecStream(format(compressionFormat, "CompressionStream"), true));
    }
  }
  class DecompressionStream {
    constructor(compressionFormat) {
      if (arguments.length === 0) throw new TypeErrorCtor("DecompressionStream: 1 argument required, but only 0 present");
      weakSet(transforms, this, codecStream(format(compressionFormat, "DecompressionStream"), false));
    }
  }
  define(CompressionStream, "CompressionStream");
  define(DecompressionStream, "DecompressionStream");
})
