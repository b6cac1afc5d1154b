/**
 * `structuredClone` for Palisade guests: the HTML structured clone algorithm over the types
 * QuickJS has. Objects are walked with an explicit stack, so deep nesting cannot overflow the
 * engine's call stack. `transfer` moves `ArrayBuffer`s (the clone gets their contents and the
 * originals are detached) and the transferable platform objects registered here (`MessagePort`:
 * the clone takes over the port's entanglement and queued messages, and the original is
 * detached). An error's own `cause` is cloned with it. `Blob` and `File` clone as new objects
 * over the same (immutable) bytes.
 */
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(() => {
  "use strict";

  const defineGlobal = (name, value) =>
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });


  const DOMExceptionCtor = globalThis.DOMException;
  const dataCloneError = (message) => new DOMExceptionCtor(message, "DataCloneError");

  // Intrinsics captured at load, so guest changes to prototypes cannot steer a clone.
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  // QuickJS compiles a template literal to a call of `String.prototype.concat`: none here.
  const concat = uncurry(String.prototype.concat);
  const getter = (proto, key) => {
    const desc = Object.getOwnPropertyDescriptor(proto, key);
    return desc?.get ? uncurry(desc.get) : () => undefined;
  };
  const is = (check, value) => {
    try {
      check(value);
      return true;
    } catch {
      return false;
    }
  };
  const { defineProperty, getOwnPropertyDescriptor, hasOwn, keys: ownKeys } = Object;
  const { isArray } = Array;
  const { isView } = ArrayBuffer;
  const objectTag = uncurry(Object.prototype.toString);
  const TypedArray = Object.getPrototypeOf(Uint8Array);
  const typedArrayName = getter(TypedArray.prototype, Symbol.toStringTag);
  const typedArrayBuffer = getter(TypedArray.prototype, "buffer");
  const typedArrayOffset = getter(TypedArray.prototype, "byteOffset");
  const typedArrayLength = getter(TypedArray.prototype, "length");
  const dataViewBuffer = getter(DataView.prototype, "buffer");
  const dataViewOffset = getter(DataView.prototype, "byteOffset");
  const dataViewLength = getter(DataView.prototype, "byteLength");
  const bufferLength = getter(ArrayBuffer.prototype, "byteLength");
  const bufferDetached = getter(ArrayBuffer.prototype, "detached");
  const bufferResizable = getter(ArrayBuffer.prototype, "resizable");
  const bufferMaxLength = getter(ArrayBuffer.prototype, "maxByteLength");
  const bufferResize = uncurry(ArrayBuffer.prototype.resize);
  const typedArrayAt = uncurry(TypedArray.prototype.at);
  const mapSize = getter(Map.prototype, "size");
  const mapForEach = uncurry(Map.prototype.forEach);
  const mapSet = uncurry(Map.prototype.set);
  const mapGet = uncurry(Map.prototype.get);
  const MapCtor = Map;
  const SetCtor = Set;
  const ObjectCtor = Object;
  const stringSlice = uncurry(String.prototype.slice);
  const push = (list, value) => {
    defineProperty(list, list.length, { __proto__: null, value, writable: true, enumerable: true, configurable: true });
  };
  const pop = uncurry(Array.prototype.pop);
  const setSize = getter(Set.prototype, "size");
  const setForEach = uncurry(Set.prototype.forEach);
  const setAdd = uncurry(Set.prototype.add);
  const setHas = uncurry(Set.prototype.has);
  const dateValue = uncurry(Date.prototype.getTime);
  const DateCtor = Date;
  const ArrayCtor = Array;
  const ArrayBufferCtor = ArrayBuffer;
  const DataViewCtor = DataView;
  const Uint8ArrayCtor = Uint8Array;
  const TypeErrorCtor = TypeError;
  const typedArraySet = uncurry(Object.getPrototypeOf(Uint8Array.prototype).set);
  const RegExpCtor = RegExp;
  const regExpSource = getter(RegExp.prototype, "source");
  const REGEXP_FLAGS = [["d", "hasIndices"], ["g", "global"], ["i", "ignoreCase"], ["m", "multiline"],
    ["s", "dotAll"], ["u", "unicode"], ["v", "unicodeSets"], ["y", "sticky"]]
    .filter(([, name]) => getOwnPropertyDescriptor(RegExp.prototype, name))
    .map(([flag, name]) => [flag, getter(RegExp.prototype, name)]);
  const isError = Error.isError ?? ((value) => objectTag(value) === "[object Error]");
  const WRAPPERS = { __proto__: null };
  for (const Type of [Boolean, Number, String, BigInt]) WRAPPERS[Type.name] = uncurry(Type.prototype.valueOf);
  const TYPED_ARRAYS = { __proto__: null };
  for (const name of ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
    "Int32Array", "Uint32Array", "Float16Array", "Float32Array", "Float64Array", "BigInt64Array",
    "BigUint64Array"]) {
    if (typeof globalThis[name] === "function") TYPED_ARRAYS[name] = globalThis[name];
  }
  const ERRORS = { __proto__: null };
  for (const Type of [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError]) {
    ERRORS[Type.name] = Type;
  }
  // Objects with internal state that has no serialization, and Palisade's web API objects,
  // which are platform objects in the web platform and just as uncloneable there.
  const UNCLONEABLE = new Set(["Arguments", "Symbol", "WeakMap", "WeakSet", "WeakRef", "FinalizationRegistry",
    "Promise", "Generator", "AsyncGenerator", "Array Iterator", "Map Iterator", "Set Iterator",
    "String Iterator", "RegExp String Iterator", "Iterator Helper", "DisposableStack",
    "AsyncDisposableStack", "Module", "SharedArrayBuffer", "Headers", "Headers Iterator", "URLSearchParams",
    "URLSearchParams Iterator", "URL", "Request", "Response", "EventTarget", "Event",
    "AbortController", "AbortSignal", "TextEncoder", "TextDecoder", "CustomEvent", "MessageEvent",
    "MessageChannel", "MessagePort"]);

  // Serializable platform objects (`Blob`, `File`) registered by the globals that define them,
  // which load after this file: `[is, copy]` pairs, tried before an object is cloned as plain.
  const PLATFORM = [];
  // Transferable platform objects (`MessagePort`), registered likewise: `{ is, detached,
  // receive, ship }`. `receive(value)` makes the object the clone gets, with no effect on
  // `value`; `ship(value, copy)` runs the transfer steps once the whole value has cloned.
  const TRANSFERABLE = [];
  const transferableKind = (value) => {
    for (let i = 0; i < TRANSFERABLE.length; i++) if (TRANSFERABLE[i].is(value)) return TRANSFERABLE[i];
    return null;
  };

  // CreateDataProperty on a fresh object: plain assignment is the same unless the key is
  // inherited (`__proto__`, or something a guest put on a prototype), which could hit a setter.
  const defineData = (target, key, value) => {
    if (key in target) defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
    else target[key] = value;
  };

  // The `length` bytes from `offset` of `buffer`, in a new ArrayBuffer.
  const cloneBytes = (buffer, offset, length) => {
    const copy = new ArrayBufferCtor(length);
    typedArraySet(new Uint8ArrayCtor(copy), new Uint8ArrayCtor(buffer, offset, length));
    return copy;
  };
  const cloneBuffer = (buffer) => {
    if (bufferDetached(buffer)) throw dataCloneError("A detached ArrayBuffer could not be cloned.");
    const length = bufferLength(buffer);
    const copy = bufferResizable(buffer)
      ? new ArrayBufferCtor(length, { __proto__: null, maxByteLength: bufferMaxLength(buffer) })
      : new ArrayBufferCtor(length);
    typedArraySet(new Uint8ArrayCtor(copy), new Uint8ArrayCtor(buffer, 0, length));
    return copy;
  };

  // Whether a view over a resizable buffer tracks the buffer's length (it was made without a
  // length, HTML's [[ArrayLength]] "auto"): the buffer is resized by `size` bytes (one element),
  // the view's length read, and the buffer put back as it was, bytes included; no script code
  // runs in between. Only a view that ends at the buffer's end can track it.
  const tracksLength = (view, buffer, size, end, lengthOf) => {
    const length = bufferLength(buffer);
    if (end + size <= length) return false;
    const grow = length + size <= bufferMaxLength(buffer);
    if (!grow && length < size) return false;
    const tail = grow ? null : new Uint8ArrayCtor(cloneBytes(buffer, length - size, size));
    const before = lengthOf(view);
    let after = before;
    try {
      bufferResize(buffer, grow ? length + size : length - size);
      after = lengthOf(view);
    } catch {
      // A view that the shrink put out of bounds (its length getter or `validLength` threw),
      // or a buffer that could not grow: not tracking.
    } finally {
      bufferResize(buffer, length);
      if (tail !== null) typedArraySet(new Uint8ArrayCtor(buffer, length - size, size), tail);
    }
    return after !== before;
  };
  // A typed array's length, or a TypeError when it is out of bounds (which `length` reads as 0).
  const validLength = (view) => {
    typedArrayAt(view, 0);
    return typedArrayLength(view);
  };
  const outOfBounds = () => dataCloneError("An ArrayBuffer view that is out of bounds could not be cloned.");
  // A typed array or DataView: a DataCloneError when it is out of bounds of its (resized)
  // buffer, as HTML's IsArrayBufferViewOutOfBounds check says; a length-tracking view clones as
  // a length-tracking view of the clone of its buffer.
  const cloneView = (value, clone) => {
    const name = typedArrayName(value);
    if (name === undefined) {
      let offset, length;
      try {
        offset = dataViewOffset(value);
        length = dataViewLength(value);
      } catch {
        // The getters throw for a view out of bounds of its buffer, or over a detached one.
        throw outOfBounds();
      }
      const source = dataViewBuffer(value);
      const tracks = bufferResizable(source) && tracksLength(value, source, 1, offset + length, dataViewLength);
      const buffer = clone(source);
      return tracks ? new DataViewCtor(buffer, offset) : new DataViewCtor(buffer, offset, length);
    }
    // `at` validates the typed array: a TypeError when it is out of bounds or detached.
    if (!is(typedArrayAt, value)) throw outOfBounds();
    const Type = TYPED_ARRAYS[name];
    const source = typedArrayBuffer(value);
    const offset = typedArrayOffset(value);
    const length = typedArrayLength(value);
    const size = Type.BYTES_PER_ELEMENT;
    const tracks = bufferResizable(source) && tracksLength(value, source, size, offset + length * size, validLength);
    const buffer = clone(source);
    return tracks ? new Type(buffer, offset) : new Type(buffer, offset, length);
  };

  const cloneError = (error, Type, message, name) => {
    const copy = Type === DOMExceptionCtor ? new Type(message, name) : new Type(message);
    const { stack } = error;
    if (typeof stack === "string") {
      defineProperty(copy, "stack", { value: stack, writable: true, configurable: true, enumerable: false });
    }
    return copy;
  };

  // A clone of one object. Containers come back empty, with a frame on `frames` to fill them.
  const cloneObject = (value, clone, frames) => {
    if (typeof value === "function") throw dataCloneError("A function could not be cloned.");
    if (value === globalThis) throw dataCloneError("The global object could not be cloned.");
    if (isView(value)) return cloneView(value, clone);
    if (isArray(value)) {
      const copy = new ArrayCtor(value.length);
      push(frames, { __proto__: null, kind: "object", source: value, target: copy, items: ownKeys(value), index: 0 });
      return copy;
    }
    for (let i = 0; i < PLATFORM.length; i++) if (PLATFORM[i][0](value)) return PLATFORM[i][1](value);
    const tag = stringSlice(objectTag(value), 8, -1);
    switch (tag) {
      case "Boolean": case "Number": case "String": case "BigInt":
        if (is(WRAPPERS[tag], value)) return ObjectCtor(WRAPPERS[tag](value));
        break;
      case "Date":
        if (is(dateValue, value)) return new DateCtor(dateValue(value));
        break;
      case "RegExp":
        if (value !== RegExp.prototype && is(regExpSource, value)) {
          let flags = "";
          for (let i = 0; i < REGEXP_FLAGS.length; i++) if (REGEXP_FLAGS[i][1](value)) flags += REGEXP_FLAGS[i][0];
          return new RegExpCtor(regExpSource(value), flags);
        }
        break;
      case "ArrayBuffer":
        if (is(bufferLength, value)) return cloneBuffer(value);
        break;
      case "Map":
        if (is(mapSize, value)) {
          const items = [];
          mapForEach(value, (entryValue, entryKey) => {
            push(items, entryKey);
            push(items, entryValue);
          });
          const copy = new MapCtor();
          push(frames, { __proto__: null, kind: "map", target: copy, items, index: 0, key: undefined });
          return copy;
        }
        break;
      case "Set":
        if (is(setSize, value)) {
          const items = [];
          setForEach(value, (entry) => push(items, entry));
          const copy = new SetCtor();
          push(frames, { __proto__: null, kind: "set", target: copy, items, index: 0 });
          return copy;
        }
        break;
      case "DOMException":
        if (typeof DOMExceptionCtor === "function" && value instanceof DOMExceptionCtor) {
          return cloneError(value, DOMExceptionCtor, concat("", value.message), concat("", value.name));
        }
        break;
    }
    if (setHas(UNCLONEABLE, tag)) throw dataCloneError(concat("", tag, " object could not be cloned."));
    if (isError(value)) {
      const { name } = value;
      const desc = getOwnPropertyDescriptor(value, "message");
      const message = desc && "value" in desc ? concat("", desc.value) : undefined;
      const Type = typeof name === "string" && ERRORS[name] ? ERRORS[name] : Error;
      const copy = cloneError(value, Type, message);
      const cause = getOwnPropertyDescriptor(value, "cause");
      if (cause && "value" in cause) {
        push(frames, { __proto__: null, kind: "cause", source: value, target: copy, items: ["cause"], index: 0 });
      }
      return copy;
    }
    const copy = {};
    push(frames, { __proto__: null, kind: "object", source: value, target: copy, items: ownKeys(value), index: 0 });
    return copy;
  };

  const transferBuffer = uncurry(ArrayBuffer.prototype.transfer);
  // The transfer list, checked: ArrayBuffers (no SharedArrayBuffer) and the registered
  // transferables, each once, none detached, and not `forbidden` (the port a message is posted
  // from). Returns the list.
  function transferList(options, forbidden) {
    if (options === undefined || options === null) return [];
    if (typeof options !== "object" && typeof options !== "function") {
      throw new TypeErrorCtor("structuredClone: options must be an object");
    }
    const { transfer } = options;
    if (transfer === undefined) return [];
    if (Object(transfer) !== transfer || typeof transfer[Symbol.iterator] !== "function") {
      throw new TypeErrorCtor("structuredClone: options.transfer must be a sequence of objects");
    }
    const list = [...transfer];
    const seen = new SetCtor();
    for (let i = 0; i < list.length; i++) {
      const item = list[i];
      if (Object(item) !== item) {
        throw new TypeErrorCtor("structuredClone: options.transfer must be a sequence of objects");
      }
      if (setHas(seen, item)) throw dataCloneError("An object is listed twice in the transfer list.");
      setAdd(seen, item);
      const kind = transferableKind(item);
      if (kind !== null) {
        if (item === forbidden) throw dataCloneError("A port cannot transfer itself.");
        if (kind.detached(item)) throw dataCloneError(concat("A detached ", kind.name, " cannot be transferred."));
        continue;
      }
      if (stringSlice(objectTag(item), 8, -1) !== "ArrayBuffer" || !is(bufferLength, item)) {
        throw dataCloneError("Only ArrayBuffers and MessagePorts can be transferred.");
      }
      if (bufferDetached(item)) throw dataCloneError("A detached ArrayBuffer cannot be transferred.");
    }
    return list;
  }

  // StructuredSerializeWithTransfer and StructuredDeserializeWithTransfer in one pass: the clone
  // of `value`, and what each entry of the transfer list became (`received`, in list order).
  function cloneTransfer(value, options, forbidden) {
    const transfer = transferList(options, forbidden);
    const memory = new MapCtor();
    // A transferred object's counterpart is made up front, so that views of a buffer clone onto
    // the new buffer and a port met in the value is its new port; the originals are detached (a
    // port's transfer steps run) once the whole value is cloned, and not if it fails.
    const kinds = [];
    const received = [];
    for (let i = 0; i < transfer.length; i++) {
      const kind = transferableKind(transfer[i]);
      push(kinds, kind);
      push(received, kind === null ? cloneBuffer(transfer[i]) : kind.receive(transfer[i]));
      mapSet(memory, transfer[i], received[i]);
    }
    const frames = [];
    const clone = (input) => {
      if (typeof input === "symbol") throw dataCloneError("A symbol could not be cloned.");
      if ((typeof input !== "object" || input === null) && typeof input !== "function") return input;
      let copy = mapGet(memory, input);
      if (copy === undefined) {
        copy = cloneObject(input, clone, frames);
        mapSet(memory, input, copy);
      }
      return copy;
    };
    const result = clone(value);
    // Depth-first, one member at a time, so getters run in the order the spec's recursion would.
    while (frames.length > 0) {
      const frame = frames[frames.length - 1];
      if (frame.index === frame.items.length) {
        pop(frames);
        continue;
      }
      const item = frame.items[frame.index++];
      if (frame.kind === "object") {
        if (hasOwn(frame.source, item)) defineData(frame.target, item, clone(frame.source[item]));
      } else if (frame.kind === "cause") {
        const desc = getOwnPropertyDescriptor(frame.source, "cause");
        const value = desc && "value" in desc ? clone(desc.value) : undefined;
        defineProperty(frame.target, "cause", { __proto__: null, value, writable: true, enumerable: false, configurable: true });
      } else if (frame.kind === "set") {
        setAdd(frame.target, clone(item));
      } else if (frame.index % 2 === 1) {
        frame.key = clone(item);
      } else {
        mapSet(frame.target, frame.key, clone(item));
      }
    }
    for (let i = 0; i < transfer.length; i++) {
      if (kinds[i] === null) transferBuffer(transfer[i]);
      else kinds[i].ship(transfer[i], received[i]);
    }
    return { __proto__: null, value: result, received };
  }

  function structuredClone(value, options = undefined) {
    if (arguments.length === 0) throw new TypeErrorCtor("structuredClone: 1 argument required, but only 0 present");
    return cloneTransfer(value, options, undefined).value;
  }

  defineGlobal("structuredClone", structuredClone);
  // Read by messaging.js and taken (and deleted) by blob.js before the snapshot:
  // `serializable(is, copy)` makes the objects `is` accepts clone as `copy` returns them,
  // `transferable(kind)` makes the objects `kind.is` accepts transferable, and
  // `cloneTransfer(value, options, forbidden)` is `postMessage`'s clone (with what each
  // transferred object became).
  defineProperty(structuredClone, Symbol.for("palisade.internals"), {
    value: Object.freeze({
      __proto__: null,
      serializable: (check, copy) => push(PLATFORM, [check, copy]),
      transferable: (kind) => push(TRANSFERABLE, kind),
      cloneTransfer,
    }),
    configurable: true,
  });
})();
