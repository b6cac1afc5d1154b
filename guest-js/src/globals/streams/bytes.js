// Byte streams (WHATWG Streams): `ReadableByteStreamController` and `ReadableStreamBYOBRequest`,
// over streams.js's internals (`R`), whose `bytes` hooks it fills in; the BYOB reader and the
// byte-stream `tee` are in byob.js, `ReadableStream.from` and the streams made from a pull
// function in from.js, each a function of `R` and of the internals (`B`) this file returns. A
// byte stream's slot is streams.js's slot with `isBytes` set; its queue holds `{ buffer,
// byteOffset, byteLength }` entries. Buffers handed to the stream are transferred (the caller's
// is detached), as the standard says, with `ArrayBuffer.prototype.transfer` captured here.
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (R) {
  "use strict";

  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const concat = uncurry(String.prototype.concat);
  const { defineProperty, getOwnPropertyDescriptor, getOwnPropertyNames, getPrototypeOf } = Object;
  const { apply } = Reflect;
  const { toStringTag, iterator, asyncIterator } = Symbol;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const WeakMapCtor = WeakMap;
  const weakGet = uncurry(WeakMap.prototype.get);
  const weakSet = uncurry(WeakMap.prototype.set);
  const { min: mathMin } = Math;
  const ArrayBufferCtor = ArrayBuffer;
  const { isView } = ArrayBuffer;
  const getter = (proto, key) => uncurry(getOwnPropertyDescriptor(proto, key).get);
  const bufferLength = getter(ArrayBuffer.prototype, "byteLength");
  const bufferDetached = getter(ArrayBuffer.prototype, "detached");
  const bufferTransfer = uncurry(ArrayBuffer.prototype.transfer);
  const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype);
  const typedArrayName = getter(TypedArrayPrototype, toStringTag);
  const typedArrayBuffer = getter(TypedArrayPrototype, "buffer");
  const typedArrayOffset = getter(TypedArrayPrototype, "byteOffset");
  const typedArrayByteLength = getter(TypedArrayPrototype, "byteLength");
  const typedArrayLength = getter(TypedArrayPrototype, "length");
  const typedArraySet = uncurry(TypedArrayPrototype.set);
  const DataViewCtor = DataView;
  const dataViewBuffer = getter(DataView.prototype, "buffer");
  const dataViewOffset = getter(DataView.prototype, "byteOffset");
  const dataViewLength = getter(DataView.prototype, "byteLength");
  const Uint8ArrayCtor = Uint8Array;
  // Each typed array's constructor and element size, by name.
  const viewTypes = { __proto__: null };
  const typeNames = ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array",
    "Uint32Array", "Float16Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"];
  for (let i = 0; i < typeNames.length; i++) {
    const ctor = globalThis[typeNames[i]];
    if (typeof ctor === "function") viewTypes[typeNames[i]] = { __proto__: null, ctor, size: ctor.BYTES_PER_ELEMENT };
  }
  // Internal promises (promises.js) among the streams; a script is handed `pub` twins,
  // `publicRejected` early failures and `publicDeferred` read requests.
  const { then, takeFirst, own, result, resolved, rejected, deferred, markHandled, closeStream, clearPullIntos } = R;
  const { internal, pub, publicRejected, publicDeferred } = R;

  // A view's buffer, offset, length and kind, or null for anything that is not a view.
  // A view over a SharedArrayBuffer is not one either (WebIDL's ArrayBufferView without
  // [AllowShared]). A DataView's getters throw once its buffer is detached: it reads as empty.
  function viewParts(view) {
    if (!isView(view)) return null;
    const name = typedArrayName(view);
    let parts;
    if (name === undefined) {
      const buffer = dataViewBuffer(view);
      const detached = isDetached(buffer);
      const byteLength = detached ? 0 : dataViewLength(view);
      parts = { __proto__: null, buffer, byteOffset: detached ? 0 : dataViewOffset(view), byteLength, ctor: DataViewCtor, size: 1, length: byteLength };
    } else {
      const type = viewTypes[name];
      parts = { __proto__: null, buffer: typedArrayBuffer(view), byteOffset: typedArrayOffset(view), byteLength: typedArrayByteLength(view), ctor: type.ctor, size: type.size, length: typedArrayLength(view) };
    }
    try {
      bufferLength(parts.buffer);
    } catch {
      return null;
    }
    return parts;
  }
  // IsDetachedBuffer (a SharedArrayBuffer never is).
  const isDetached = (buffer) => {
    try {
      return bufferDetached(buffer);
    } catch {
      return false;
    }
  };
  // TransferArrayBuffer: a new buffer with the bytes; the old one is detached. A TypeError for
  // a buffer that cannot be transferred (a SharedArrayBuffer, a detached one).
  const transfer = (buffer) => {
    if (isDetached(buffer)) throw new TypeErrorCtor("the buffer is detached");
    return bufferTransfer(buffer);
  };
  const copy = (dest, destOffset, src, srcOffset, n) =>
    typedArraySet(new Uint8ArrayCtor(dest, destOffset, n), new Uint8ArrayCtor(src, srcOffset, n));
  // CloneArrayBuffer into a new ArrayBuffer (never `slice`, which asks for a species).
  const cloneBuffer = (buffer, offset, n) => {
    const clone = new ArrayBufferCtor(n);
    copy(clone, 0, buffer, offset, n);
    return clone;
  };
  // CloneAsUint8Array.
  const cloneAsUint8Array = (view) => {
    const parts = viewParts(view);
    return new Uint8ArrayCtor(cloneBuffer(parts.buffer, parts.byteOffset, parts.byteLength));
  };

  const controllers = new WeakMapCtor();
  const byobReaders = new WeakMapCtor();
  const requests = new WeakMapCtor();
  let constructing = false;
  const controllerSlot = (value) => {
    const s = weakGet(controllers, value);
    if (!s) throw new TypeErrorCtor("Illegal invocation");
    return s;
  };

  class ReadableByteStreamController {
    constructor() {
      if (!constructing) throw new TypeErrorCtor("Illegal constructor");
    }
    get byobRequest() {
      return getBYOBRequest(controllerSlot(this));
    }
    get desiredSize() {
      const s = controllerSlot(this);
      if (s.state === "errored") return null;
      if (s.state === "closed") return 0;
      return s.hwm - s.queueSize;
    }
    close() {
      const s = controllerSlot(this);
      if (s.closeRequested) throw new TypeErrorCtor("the stream is already closing");
      if (s.state !== "readable") throw new TypeErrorCtor("the stream cannot be closed");
      close(s);
    }
    enqueue(chunk) {
      const s = controllerSlot(this);
      const parts = viewParts(chunk);
      if (parts === null) throw new TypeErrorCtor("enqueue: the chunk is not an ArrayBufferView");
      if (parts.byteLength === 0) throw new TypeErrorCtor("enqueue: the chunk is empty");
      if (bufferLength(parts.buffer) === 0) throw new TypeErrorCtor("enqueue: the chunk's buffer is empty or detached");
      if (s.closeRequested) throw new TypeErrorCtor("enqueue: the stream is closing");
      if (s.state !== "readable") throw new TypeErrorCtor("enqueue: the stream is not readable");
      enqueue(s, parts);
    }
    error(e = undefined) {
      R.errorStream(controllerSlot(this), e);
    }
  }

  class ReadableStreamBYOBRequest {
    constructor() {
      if (!constructing) throw new TypeErrorCtor("Illegal constructor");
    }
    get view() {
      const q = weakGet(requests, this);
      if (!q) throw new TypeErrorCtor("Illegal invocation");
      return q.view;
    }
    respond(bytesWritten) {
      const q = weakGet(requests, this);
      if (!q) throw new TypeErrorCtor("Illegal invocation");
      const n = R.enforceRange(bytesWritten, "bytesWritten");
      if (q.controller === null) throw new TypeErrorCtor("respond: the request was already answered");
      if (isDetached(typedArrayBuffer(q.view))) throw new TypeErrorCtor("respond: the view's buffer is detached");
      respond(q.controller, n);
    }
    respondWithNewView(view) {
      const q = weakGet(requests, this);
      if (!q) throw new TypeErrorCtor("Illegal invocation");
      const parts = viewParts(view);
      if (parts === null) throw new TypeErrorCtor("respondWithNewView: not an ArrayBufferView");
      if (q.controller === null) throw new TypeErrorCtor("respondWithNewView: the request was already answered");
      if (isDetached(parts.buffer)) throw new TypeErrorCtor("respondWithNewView: the view's buffer is detached");
      respondWithNewView(q.controller, parts);
    }
  }

  // ReadableByteStreamControllerGetBYOBRequest.
  function getBYOBRequest(s) {
    if (s.byobRequest === null && s.pendingPullIntos.length > 0) {
      const first = s.pendingPullIntos[0];
      const view = new Uint8ArrayCtor(first.buffer, first.byteOffset + first.bytesFilled, first.byteLength - first.bytesFilled);
      constructing = true;
      let request;
      try {
        request = new ReadableStreamBYOBRequest();
      } finally {
        constructing = false;
      }
      const q = { __proto__: null, controller: s, view, object: request };
      weakSet(requests, request, q);
      s.byobRequest = q;
    }
    return s.byobRequest === null ? null : s.byobRequest.object;
  }
  const invalidate = (s) => {
    if (s.byobRequest === null) return;
    s.byobRequest.controller = null;
    s.byobRequest.view = null;
    s.byobRequest = null;
  };
  const error = (s, e) => R.errorStream(s, e);

  function shouldCallPull(s) {
    if (s.state !== "readable" || s.closeRequested || !s.started) return false;
    if (s.reader !== null && s.reader.requests.length > 0) return true;
    return s.hwm - s.queueSize > 0;
  }
  function callPullIfNeeded(s) {
    if (!shouldCallPull(s)) return;
    if (s.pulling) {
      s.pullAgain = true;
      return;
    }
    s.pulling = true;
    then(s.pull === undefined ? resolved(undefined) : s.pull(), () => {
      s.pulling = false;
      if (s.pullAgain) {
        s.pullAgain = false;
        callPullIfNeeded(s);
      }
    }, (e) => error(s, e));
  }
  function handleQueueDrain(s) {
    if (s.queueSize === 0 && s.closeRequested) {
      s.pull = s.cancel = undefined;
      closeStream(s);
    } else callPullIfNeeded(s);
  }
  // ReadableByteStreamControllerClose.
  function close(s) {
    if (s.closeRequested || s.state !== "readable") return;
    if (s.queueSize > 0) {
      s.closeRequested = true;
      return;
    }
    if (s.pendingPullIntos.length > 0) {
      const first = s.pendingPullIntos[0];
      if (first.bytesFilled % first.elementSize !== 0) {
        const e = new TypeErrorCtor("close: a partial element is left in the BYOB request");
        error(s, e);
        throw e;
      }
    }
    s.closeRequested = true;
    s.pull = s.cancel = undefined;
    closeStream(s);
  }
  const enqueueChunk = (s, buffer, byteOffset, byteLength) => {
    own(s.queue, { __proto__: null, buffer, byteOffset, byteLength });
    s.queueSize += byteLength;
  };
  const enqueueCloned = (s, buffer, byteOffset, byteLength) => {
    let clone;
    try {
      clone = cloneBuffer(buffer, byteOffset, byteLength);
    } catch (e) {
      error(s, e);
      throw e;
    }
    enqueueChunk(s, clone, 0, byteLength);
  };
  const enqueueDetachedPullInto = (s, pullInto) => {
    if (pullInto.bytesFilled > 0) enqueueCloned(s, pullInto.buffer, pullInto.byteOffset, pullInto.bytesFilled);
    takeFirst(s.pendingPullIntos);
  };
  const hasBYOBReader = (s) => s.reader !== null && s.reader.byob === true;
  const hasDefaultReader = (s) => s.reader !== null && !s.reader.byob;
  function fillReadRequestFromQueue(s, request) {
    const entry = takeFirst(s.queue);
    s.queueSize -= entry.byteLength;
    handleQueueDrain(s);
    request.resolve(result(new Uint8ArrayCtor(entry.buffer, entry.byteOffset, entry.byteLength), false));
  }
  // ReadableByteStreamControllerEnqueue, with the chunk's parts.
  function enqueue(s, parts) {
    if (s.closeRequested || s.state !== "readable") return;
    const { byteOffset, byteLength } = parts;
    if (isDetached(parts.buffer)) throw new TypeErrorCtor("enqueue: the chunk's buffer is detached");
    const buffer = transfer(parts.buffer);
    if (s.pendingPullIntos.length > 0) {
      const first = s.pendingPullIntos[0];
      if (isDetached(first.buffer)) throw new TypeErrorCtor("enqueue: the BYOB request's buffer is detached");
      invalidate(s);
      first.buffer = transfer(first.buffer);
      if (first.readerType === "none") enqueueDetachedPullInto(s, first);
    }
    if (hasDefaultReader(s)) {
      const reader = s.reader;
      while (reader.requests.length > 0 && s.queueSize > 0) fillReadRequestFromQueue(s, takeFirst(reader.requests));
      if (reader.requests.length === 0) enqueueChunk(s, buffer, byteOffset, byteLength);
      else {
        if (s.pendingPullIntos.length > 0) takeFirst(s.pendingPullIntos);
        takeFirst(reader.requests).resolve(result(new Uint8ArrayCtor(buffer, byteOffset, byteLength), false));
      }
    } else if (hasBYOBReader(s)) {
      enqueueChunk(s, buffer, byteOffset, byteLength);
      const filled = processPullIntosUsingQueue(s);
      for (let i = 0; i < filled.length; i++) commitPullInto(s, filled[i]);
    } else enqueueChunk(s, buffer, byteOffset, byteLength);
    callPullIfNeeded(s);
  }
  function processPullIntosUsingQueue(s) {
    const filled = [];
    while (s.pendingPullIntos.length > 0) {
      if (s.queueSize === 0) break;
      const pullInto = s.pendingPullIntos[0];
      if (fillPullIntoFromQueue(s, pullInto)) {
        takeFirst(s.pendingPullIntos);
        own(filled, pullInto);
      }
    }
    return filled;
  }
  // ReadableByteStreamControllerFillPullIntoDescriptorFromQueue.
  function fillPullIntoFromQueue(s, pullInto) {
    const maxBytesToCopy = mathMin(s.queueSize, pullInto.byteLength - pullInto.bytesFilled);
    const maxBytesFilled = pullInto.bytesFilled + maxBytesToCopy;
    let remaining = maxBytesToCopy;
    let ready = false;
    const maxAlignedBytes = maxBytesFilled - (maxBytesFilled % pullInto.elementSize);
    if (maxAlignedBytes >= pullInto.minimumFill) {
      remaining = maxAlignedBytes - pullInto.bytesFilled;
      ready = true;
    }
    while (remaining > 0) {
      const head = s.queue[0];
      const n = mathMin(remaining, head.byteLength);
      copy(pullInto.buffer, pullInto.byteOffset + pullInto.bytesFilled, head.buffer, head.byteOffset, n);
      if (head.byteLength === n) takeFirst(s.queue);
      else {
        head.byteOffset += n;
        head.byteLength -= n;
      }
      s.queueSize -= n;
      pullInto.bytesFilled += n;
      remaining -= n;
    }
    return ready;
  }
  // ReadableByteStreamControllerConvertPullIntoDescriptor.
  function convert(pullInto) {
    const buffer = transfer(pullInto.buffer);
    return new pullInto.ctor(buffer, pullInto.byteOffset, pullInto.bytesFilled / pullInto.elementSize);
  }
  function commitPullInto(s, pullInto) {
    const done = s.state === "closed";
    const view = convert(pullInto);
    const request = takeFirst(s.reader.requests);
    if (pullInto.readerType === "default") request.resolve(done ? result(undefined, true) : result(view, false));
    else request.resolve(result(view, done));
  }
  // The byte controller's pull steps, for a default reader's read.
  function pullSteps(s, request) {
    if (s.queueSize > 0) {
      fillReadRequestFromQueue(s, request);
      return;
    }
    const size = s.autoAllocateChunkSize;
    if (size !== undefined) {
      let buffer;
      try {
        buffer = new ArrayBufferCtor(size);
      } catch (e) {
        request.reject(e);
        return;
      }
      own(s.pendingPullIntos, {
        __proto__: null, buffer, bufferByteLength: size, byteOffset: 0, byteLength: size, bytesFilled: 0,
        minimumFill: 1, elementSize: 1, ctor: Uint8ArrayCtor, readerType: "default",
      });
    }
    own(s.reader.requests, request);
    callPullIfNeeded(s);
  }
  // ReadableByteStreamControllerPullInto.
  function pullInto(s, parts, minimum, request) {
    const minimumFill = minimum * parts.size;
    let buffer;
    try {
      buffer = transfer(parts.buffer);
    } catch (e) {
      request.reject(e);
      return;
    }
    const descriptor = {
      __proto__: null, buffer, bufferByteLength: bufferLength(buffer), byteOffset: parts.byteOffset,
      byteLength: parts.byteLength, bytesFilled: 0, minimumFill, elementSize: parts.size, ctor: parts.ctor,
      readerType: "byob",
    };
    if (s.pendingPullIntos.length > 0) {
      own(s.pendingPullIntos, descriptor);
      own(s.reader.requests, request);
      return;
    }
    if (s.state === "closed") {
      request.resolve(result(new descriptor.ctor(descriptor.buffer, descriptor.byteOffset, 0), true));
      return;
    }
    if (s.queueSize > 0) {
      if (fillPullIntoFromQueue(s, descriptor)) {
        const view = convert(descriptor);
        handleQueueDrain(s);
        request.resolve(result(view, false));
        return;
      }
      if (s.closeRequested) {
        const e = new TypeErrorCtor("the stream closed with a partial element left");
        error(s, e);
        request.reject(e);
        return;
      }
    }
    own(s.pendingPullIntos, descriptor);
    own(s.reader.requests, request);
    callPullIfNeeded(s);
  }
  // ReadableByteStreamControllerRespond.
  function respond(s, bytesWritten) {
    const first = s.pendingPullIntos[0];
    if (s.state === "closed") {
      if (bytesWritten !== 0) throw new TypeErrorCtor("respond: the stream is closed; only 0 bytes can be written");
    } else {
      if (bytesWritten === 0) throw new TypeErrorCtor("respond: bytesWritten must be greater than 0");
      if (first.bytesFilled + bytesWritten > first.byteLength) throw new RangeErrorCtor("respond: bytesWritten is larger than the view");
    }
    first.buffer = transfer(first.buffer);
    respondInternal(s, bytesWritten);
  }
  function respondWithNewView(s, parts) {
    const first = s.pendingPullIntos[0];
    if (s.state === "closed") {
      if (parts.byteLength !== 0) throw new TypeErrorCtor("respondWithNewView: the stream is closed; the view must be empty");
    } else if (parts.byteLength === 0) throw new TypeErrorCtor("respondWithNewView: the view is empty");
    if (first.byteOffset + first.bytesFilled !== parts.byteOffset) throw new RangeErrorCtor("respondWithNewView: the view's offset does not match the request's");
    if (first.bufferByteLength !== bufferLength(parts.buffer)) throw new RangeErrorCtor("respondWithNewView: the view's buffer is not the request's size");
    if (first.bytesFilled + parts.byteLength > first.byteLength) throw new RangeErrorCtor("respondWithNewView: the view is larger than the request's");
    first.buffer = transfer(parts.buffer);
    respondInternal(s, parts.byteLength);
  }
  function respondInternal(s, bytesWritten) {
    const first = s.pendingPullIntos[0];
    invalidate(s);
    if (s.state === "closed") {
      if (first.readerType === "none") takeFirst(s.pendingPullIntos);
      if (hasBYOBReader(s)) {
        const filled = [];
        while (filled.length < s.reader.requests.length) own(filled, takeFirst(s.pendingPullIntos));
        for (let i = 0; i < filled.length; i++) commitPullInto(s, filled[i]);
      }
    } else respondInReadableState(s, bytesWritten, first);
    callPullIfNeeded(s);
  }
  function respondInReadableState(s, bytesWritten, pullInto) {
    pullInto.bytesFilled += bytesWritten;
    if (pullInto.readerType === "none") {
      enqueueDetachedPullInto(s, pullInto);
      const filled = processPullIntosUsingQueue(s);
      for (let i = 0; i < filled.length; i++) commitPullInto(s, filled[i]);
      return;
    }
    if (pullInto.bytesFilled < pullInto.minimumFill) return;
    takeFirst(s.pendingPullIntos);
    const remainder = pullInto.bytesFilled % pullInto.elementSize;
    if (remainder > 0) {
      const end = pullInto.byteOffset + pullInto.bytesFilled;
      enqueueCloned(s, pullInto.buffer, end - remainder, remainder);
    }
    pullInto.bytesFilled -= remainder;
    const filled = processPullIntosUsingQueue(s);
    commitPullInto(s, pullInto);
    for (let i = 0; i < filled.length; i++) commitPullInto(s, filled[i]);
  }

  // SetUpReadableByteStreamController, with the source given as functions (`pull`, `cancel`:
  // each returns a promise); `start` runs at once and its exception propagates.
  function makeByteStream(stream, start, pull, cancel, hwm, autoAllocateChunkSize) {
    const s = {
      __proto__: null, state: "readable", queue: [], queueSize: 0, reader: null, disturbed: false,
      storedError: undefined, started: false, pulling: false, pullAgain: false, closeRequested: false,
      hwm, pull, cancel, controller: null, isBytes: true, pendingPullIntos: [], byobRequest: null,
      autoAllocateChunkSize,
    };
    constructing = true;
    let controller;
    try {
      controller = new ReadableByteStreamController();
    } finally {
      constructing = false;
    }
    s.controller = controller;
    weakSet(controllers, controller, s);
    weakSet(R.streams, stream, s);
    then(start(controller), () => {
      s.started = true;
      callPullIfNeeded(s);
    }, (e) => error(s, e));
    return s;
  }
  R.bytes.construct = (stream, source, startMethod, pullMethod, cancelMethod, hwm, autoAllocateChunkSize) => {
    let s;
    const pull = pullMethod === undefined ? undefined : () => R.promiseCall(pullMethod, source, [s.controller]);
    const cancel = cancelMethod === undefined ? undefined : (reason) => R.promiseCall(cancelMethod, source, [reason]);
    s = makeByteStream(stream, (controller) => resolved(startMethod === undefined ? undefined : apply(startMethod, source, [controller])),
      pull, cancel, hwm, autoAllocateChunkSize);
  };
  R.bytes.pullSteps = pullSteps;

  // Each class's methods enumerable, its tag, and the class as a global (byob.js adds the
  // reader, so that the globals come in the standard's order).
  const defineClasses = (classes) => {
    for (let i = 0; i < classes.length; i++) {
      const proto = classes[i][0].prototype;
      const keys = getOwnPropertyNames(proto);
      for (let k = 0; k < keys.length; k++) if (keys[k] !== "constructor") defineProperty(proto, keys[k], { enumerable: true });
      defineProperty(proto, toStringTag, { value: classes[i][1], configurable: true });
      defineProperty(globalThis, classes[i][1], { value: classes[i][0], writable: true, configurable: true, enumerable: false });
    }
  };

  // What byob.js and from.js use.
  return {
    __proto__: null,
    ReadableByteStreamController, ReadableStreamBYOBRequest, RangeErrorCtor, TypeErrorCtor,
    apply, asyncIterator, bufferLength, byobReaders, cloneAsUint8Array, close, defineClasses,
    defineProperty, enqueue, error, getBYOBRequest, isDetached, iterator, makeByteStream,
    pullInto, requests, respond, respondWithNewView, viewParts, weakGet, weakSet,
  };
})
