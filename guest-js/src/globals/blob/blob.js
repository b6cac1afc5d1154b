// `Blob` and `File` (W3C File API): immutable bytes with a media type, and a name and a
// modification time on a `File`. The bytes are kept in a slot no script can reach; `fetch` and
// `FormData` read them through the internals the constructor carries until they take them.
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (native) {
  "use strict";

  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const concat = uncurry(String.prototype.concat);
  const { defineProperty, freeze, getOwnPropertyDescriptor, getPrototypeOf } = Object;
  const { iterator, toStringTag } = Symbol;
  const { apply, ownKeys } = Reflect;
  const TypeErrorCtor = TypeError;
  const PromiseCtor = Promise;
  const WeakMapCtor = WeakMap;
  const weakGet = uncurry(WeakMap.prototype.get);
  const weakSet = uncurry(WeakMap.prototype.set);
  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const toLowerCase = uncurry(String.prototype.toLowerCase);
  const { fromCharCode } = String;
  const stringReplace = uncurry(String.prototype.replace);
  const { floor, trunc } = Math;
  const { now } = Date;
  const NumberCtor = Number;
  const Uint8ArrayCtor = Uint8Array;
  const { isView } = ArrayBuffer;
  const getter = (proto, key) => uncurry(getOwnPropertyDescriptor(proto, key).get);
  const bufferLength = getter(ArrayBuffer.prototype, "byteLength");
  const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype);
  const typedArrayName = getter(TypedArrayPrototype, toStringTag);
  const typedArrayBuffer = getter(TypedArrayPrototype, "buffer");
  const typedArrayOffset = getter(TypedArrayPrototype, "byteOffset");
  const typedArrayLength = getter(TypedArrayPrototype, "byteLength");
  const dataViewBuffer = getter(DataView.prototype, "buffer");
  const dataViewOffset = getter(DataView.prototype, "byteOffset");
  const dataViewLength = getter(DataView.prototype, "byteLength");
  const typedArraySet = uncurry(TypedArrayPrototype.set);
  const typedArraySubarray = uncurry(TypedArrayPrototype.subarray);
  const { encode, decode } = native;
  const S = ReadableStream[Symbol.for("palisade.internals")];

  const isArrayBuffer = (value) => {
    try {
      bufferLength(value);
      return true;
    } catch {
      return false;
    }
  };
  const copyBytes = (buffer, offset, length) => {
    const copy = new Uint8ArrayCtor(length);
    typedArraySet(copy, new Uint8ArrayCtor(buffer, offset, length));
    return copy;
  };
  const viewBytes = (view) => {
    const typed = typedArrayName(view) !== undefined;
    return copyBytes(
      typed ? typedArrayBuffer(view) : dataViewBuffer(view),
      typed ? typedArrayOffset(view) : dataViewOffset(view),
      typed ? typedArrayLength(view) : dataViewLength(view),
    );
  };
  const lengthOf = (bytes) => typedArrayLength(bytes);
  // One array of the bytes of each of `chunks`, in order.
  const join = (chunks) => {
    let total = 0;
    for (let i = 0; i < chunks.length; i++) total += lengthOf(chunks[i]);
    const out = new Uint8ArrayCtor(total);
    let at = 0;
    for (let i = 0; i < chunks.length; i++) {
      typedArraySet(out, chunks[i], at);
      at += lengthOf(chunks[i]);
    }
    return out;
  };
  const own = (list, value) =>
    defineProperty(list, list.length, { __proto__: null, value, writable: true, enumerable: true, configurable: true });

  // A dictionary member, read as Web IDL reads it (through the prototype chain).
  const member = (dict, key) => (dict === undefined || dict === null ? undefined : dict[key]);
  const dictionary = (value, what) => {
    if (value !== undefined && value !== null && typeof value !== "object" && typeof value !== "function") {
      throw new TypeErrorCtor(concat(what, ": the options are not an object"));
    }
    return value;
  };
  // A media type as the File API keeps it: lower-cased, or "" if any character is outside
  // U+0020..U+007E.
  const mediaType = (value) => {
    const text = concat("", value);
    for (let i = 0; i < text.length; i++) {
      const c = charCodeAt(text, i);
      if (c < 0x20 || c > 0x7e) return "";
    }
    return toLowerCase(text);
  };
  const NEWLINES = /\r\n|\r|\n/g;

  const slots = new WeakMapCtor();
  const slot = (object) => {
    const s = weakGet(slots, object);
    if (!s) throw new TypeErrorCtor("Illegal invocation");
    return s;
  };
  const isBlob = (value) => (typeof value === "object" || typeof value === "function") && value !== null && weakGet(slots, value) !== undefined;

  // The bytes of a sequence of blob parts (Web IDL: iterated with the sequence's own iterator).
  function partsBytes(parts, native_endings, what) {
    if (parts === undefined) return new Uint8ArrayCtor(0);
    if ((typeof parts !== "object" && typeof parts !== "function") || parts === null) {
      throw new TypeErrorCtor(concat(what, ": the parts are not a sequence"));
    }
    const method = parts[iterator];
    if (typeof method !== "function") throw new TypeErrorCtor(concat(what, ": the parts are not iterable"));
    // Web IDL converts each part as the sequence is read (a part's `toString` runs before the
    // next part is asked for); a buffer's bytes are read once every part is converted.
    const items = [];
    for (const item of { [iterator]: () => apply(method, parts, []) }) {
      own(items, isBlob(item) || isArrayBuffer(item) || isView(item) ? item : concat("", item));
    }
    const chunks = [];
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (typeof item === "string") {
        own(chunks, encode(native_endings ? stringReplace(item, NEWLINES, "\n") : item));
      } else if (isBlob(item)) own(chunks, slot(item).bytes);
      else if (isArrayBuffer(item)) own(chunks, copyBytes(item, 0, bufferLength(item)));
      else own(chunks, viewBytes(item));
    }
    return join(chunks);
  }

  function blobOptions(options, what) {
    options = dictionary(options, what);
    const endings = member(options, "endings");
    let native_endings = false;
    if (endings !== undefined) {
      const e = concat("", endings);
      if (e === "native") native_endings = true;
      else if (e !== "transparent") throw new TypeErrorCtor(concat(what, ": endings \"", e, "\" is not transparent or native"));
    }
    const type = member(options, "type");
    return [native_endings, type === undefined ? "" : mediaType(type)];
  }

  // A relative index as `slice` reads it: a `[Clamp] long long` (NaN is 0, a fraction is rounded
  // to the nearest integer, a half to the even one), negative from the end, clamped to 0..size.
  const relative = (value, size) => {
    const x = NumberCtor(value);
    let n = 0;
    if (x === x) {
      const whole = floor(x), fraction = x - whole;
      // For ±Infinity the fraction is NaN and `n` stays infinite.
      n = fraction < 0.5 || (fraction === 0.5 && whole % 2 === 0) ? whole : whole + 1;
    }
    return n < 0 ? (size + n > 0 ? size + n : 0) : n < size ? n : size;
  };

  // Promises of the intrinsic `Promise`, not through its `resolve`/`reject`, which a script
  // can replace.
  const settled = (value) => new PromiseCtor((resolve) => resolve(value));
  const failed = (error) => new PromiseCtor((_, reject) => reject(error));

  let make;
  class Blob {
    constructor(blobParts = undefined, options = undefined) {
      const read = blobOptions(options, "Blob");
      weakSet(slots, this, { __proto__: null, bytes: partsBytes(blobParts, read[0], "Blob"), type: read[1] });
    }
    get size() { return lengthOf(slot(this).bytes); }
    get type() { return slot(this).type; }
    slice(start = undefined, end = undefined, contentType = undefined) {
      const s = slot(this);
      const size = lengthOf(s.bytes);
      const from = start === undefined ? 0 : relative(start, size);
      const to = end === undefined ? size : relative(end, size);
      const bytes = typedArraySubarray(s.bytes, from, to > from ? to : from);
      return make(bytes, contentType === undefined ? "" : mediaType(contentType));
    }
    text() {
      try {
        return settled(decode(slot(this).bytes));
      } catch (error) {
        return failed(error);
      }
    }
    arrayBuffer() {
      try {
        const s = slot(this);
        return settled(typedArrayBuffer(copyBytes(typedArrayBuffer(s.bytes), typedArrayOffset(s.bytes), lengthOf(s.bytes))));
      } catch (error) {
        return failed(error);
      }
    }
    stream() {
      const s = slot(this);
      let sent = false;
      return S.fromPull(() => {
        if (sent) return settled(null);
        sent = true;
        return settled({ __proto__: null, value: copyBytes(typedArrayBuffer(s.bytes), typedArrayOffset(s.bytes), lengthOf(s.bytes)) });
      }, undefined);
    }
    bytes() {
      try {
        const s = slot(this);
        return settled(copyBytes(typedArrayBuffer(s.bytes), typedArrayOffset(s.bytes), lengthOf(s.bytes)));
      } catch (error) {
        return failed(error);
      }
    }
  }
  class File extends Blob {
    constructor(fileBits, fileName, options = undefined) {
      if (arguments.length < 2) {
        throw new TypeErrorCtor(concat("File: 2 arguments required, but only ", arguments.length, " present"));
      }
      const opts = dictionary(options, "File");
      const lastModified = member(opts, "lastModified");
      super(fileBits, opts);
      const s = slot(this);
      s.name = concat("", fileName);
      s.lastModified = lastModified === undefined ? now() : trunc(NumberCtor(lastModified)) || 0;
    }
    get name() {
      const s = slot(this);
      if (s.name === undefined) throw new TypeErrorCtor("Illegal invocation");
      return s.name;
    }
    get lastModified() {
      const s = slot(this);
      if (s.name === undefined) throw new TypeErrorCtor("Illegal invocation");
      return s.lastModified;
    }
  }

  make = (bytes, type) => {
    const blob = new Blob();
    const s = slot(blob);
    s.bytes = bytes;
    s.type = type;
    return blob;
  };
  const makeFile = (bytes, name, type, lastModified) => {
    const file = new File(undefined, name, { __proto__: null, lastModified });
    const s = slot(file);
    s.bytes = bytes;
    s.type = type;
    return file;
  };

  for (const [C, name] of [[Blob, "Blob"], [File, "File"]]) {
    const proto = C.prototype;
    for (const key of ownKeys(proto)) {
      if (key !== "constructor") defineProperty(proto, key, { enumerable: true });
    }
    defineProperty(proto, toStringTag, { value: name, configurable: true });
    defineProperty(globalThis, name, { value: C, writable: true, configurable: true, enumerable: false });
  }
  // Blobs and Files are serializable: a clone is a new Blob (or File, for a File or a subclass
  // of it) over the same bytes, which no Blob ever changes.
  const cloning = Symbol.for("palisade.internals");
  const SC = structuredClone[cloning];
  delete structuredClone[cloning];
  SC.serializable(isBlob, (blob) => {
    const s = slot(blob);
    return s.name === undefined ? make(s.bytes, s.type) : makeFile(s.bytes, s.name, s.type, s.lastModified);
  });
  // What fetch.js and form_data.js use: they read it before the snapshot, and fetch.js deletes it.
  defineProperty(Blob, Symbol.for("palisade.internals"), {
    value: freeze({
      __proto__: null,
      isBlob,
      isFile: (value) => isBlob(value) && weakGet(slots, value).name !== undefined,
      bytesOf: (blob) => slot(blob).bytes,
      typeOf: (blob) => slot(blob).type,
      nameOf: (blob) => slot(blob).name,
      lastModifiedOf: (blob) => slot(blob).lastModified,
      make,
      makeFile,
      join,
      encode,
      decode,
      // A copy of `bytes` from `from` to `to`, in a buffer of its own.
      copy: (bytes, from, to) => copyBytes(typedArrayBuffer(bytes), typedArrayOffset(bytes) + from, to - from),
      // Bytes as Latin-1 text: one character per byte, so offsets in it are offsets in `bytes`.
      latin1: (bytes) => {
        let out = "";
        for (let i = 0; i < lengthOf(bytes); i += 4096) {
          out = concat(out, apply(fromCharCode, null, typedArraySubarray(bytes, i, i + 4096)));
        }
        return out;
      },
    }),
    configurable: true,
  });
})
