// `WritableStream` (WHATWG Streams) with its default controller and writer, following the
// standard's abstract operations (the names in the comments are the standard's). Called with
// streams.js's internals; returns its own to `transform.js` and `pipe.js`.
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (R) {
  "use strict";

  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const concat = uncurry(String.prototype.concat);
  const { defineProperty, getOwnPropertyNames, getOwnPropertyDescriptor } = Object;
  const { apply } = Reflect;
  const { toStringTag } = Symbol;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  // Internal promises, chained with no lookup a script can reach; a script gets `pub` twins.
  const P = globalThis.__palisadePromises;
  const { then, resolved, rejected, markHandled, pub, publicRejected } = P;
  const WeakMapCtor = WeakMap;
  const weakGet = uncurry(WeakMap.prototype.get);
  const weakSet = uncurry(WeakMap.prototype.set);
  const NumberCtor = Number;
  const { isNaN } = Number;
  const AbortControllerCtor = AbortController;
  const abortControllerAbort = uncurry(AbortController.prototype.abort);
  const abortControllerSignal = uncurry(getOwnPropertyDescriptor(AbortController.prototype, "signal").get);
  const own = (list, value) =>
    defineProperty(list, list.length, { __proto__: null, value, writable: true, enumerable: true, configurable: true });
  const takeFirst = (list) => {
    const first = list[0];
    for (let i = 0; i + 1 < list.length; i++) list[i] = list[i + 1];
    list.length = list.length - 1;
    return first;
  };
  // A promise with its settle functions and whether it is still pending.
  const deferred = () => {
    const inner = P.deferred();
    const d = { __proto__: null, promise: inner.promise, resolve: null, reject: null, pending: true };
    d.resolve = (value) => {
      d.pending = false;
      inner.resolve(value);
    };
    d.reject = (reason) => {
      d.pending = false;
      inner.reject(reason);
    };
    return d;
  };
  // A deferred settled already: fulfilled with `value`, or rejected with it.
  const settled = (fulfilled, value) => {
    const d = deferred();
    if (fulfilled) d.resolve(value);
    else d.reject(value);
    return d;
  };
  const isObject = (value) => (typeof value === "object" && value !== null) || typeof value === "function";

  // WebIDL's conversion of a dictionary argument: undefined and null are empty, else an object.
  const dictionary = (value, what) => {
    if (value === undefined || value === null) return undefined;
    if (!isObject(value)) throw new TypeErrorCtor(concat(what, " is not an object"));
    return value;
  };
  // A callback member of a dictionary: undefined, or a function.
  const callback = (dict, name, what) => {
    const value = dict === undefined ? undefined : dict[name];
    if (value !== undefined && typeof value !== "function") throw new TypeErrorCtor(concat(what, ": ", name, " is not a function"));
    return value;
  };
  // A QueuingStrategy dictionary, read in WebIDL's order (highWaterMark, size), then
  // ExtractHighWaterMark and ExtractSizeAlgorithm: { hwm, size } (not an array, whose
  // destructuring would call an iterator a script can replace).
  const strategyOf = (strategy, fallback, what) => {
    const dict = dictionary(strategy, what);
    let hwm = dict === undefined ? undefined : dict.highWaterMark;
    if (hwm !== undefined) hwm = NumberCtor(hwm);
    const size = callback(dict, "size", what);
    if (hwm === undefined) hwm = fallback;
    else if (isNaN(hwm) || hwm < 0) throw new RangeErrorCtor(concat(what, ": highWaterMark must be a non-negative number"));
    const sizeAlgorithm = size === undefined ? () => 1 : (chunk) => NumberCtor(apply(size, undefined, [chunk]));
    return { __proto__: null, hwm, size: sizeAlgorithm };
  };
  // Call `method` (a member read earlier) on `object` as a promise of its result.
  const promiseCall = (method, object, args) => {
    if (method === undefined) return resolved(undefined);
    try {
      return resolved(apply(method, object, args));
    } catch (error) {
      return rejected(error);
    }
  };

  const streams = new WeakMapCtor();
  const writers = new WeakMapCtor();
  const controllers = new WeakMapCtor();
  const CLOSE = { __proto__: null };
  let constructing = false;
  const slotOf = (map, value) => {
    const s = isObject(value) ? weakGet(map, value) : undefined;
    if (s === undefined) throw new TypeErrorCtor("Illegal invocation");
    return s;
  };

  class WritableStream {
    constructor(underlyingSink = undefined, strategy = undefined) {
      if (underlyingSink !== undefined && !isObject(underlyingSink)) throw new TypeErrorCtor("WritableStream: the sink is not an object");
      // The strategy is converted at the IDL layer, before the sink (which is read in prose).
      const strategyRecord = strategyOf(strategy, 1, "WritableStream: the strategy");
      const sink = underlyingSink === null ? undefined : underlyingSink;
      const abort = callback(sink, "abort", "WritableStream");
      const close = callback(sink, "close", "WritableStream");
      const start = callback(sink, "start", "WritableStream");
      const type = sink === undefined ? undefined : sink.type;
      const write = callback(sink, "write", "WritableStream");
      if (type !== undefined) throw new RangeErrorCtor("WritableStream: type must be undefined");
      const s = initialize(this);
      setUpController(s, (controller) => (start === undefined ? undefined : apply(start, sink, [controller])),
        (chunk) => promiseCall(write, sink, [chunk, s.controller]),
        () => promiseCall(close, sink, []),
        (reason) => promiseCall(abort, sink, [reason]), strategyRecord.hwm, strategyRecord.size);
    }
    get locked() {
      return slotOf(streams, this).writer !== undefined;
    }
    abort(reason = undefined) {
      let s;
      try {
        s = slotOf(streams, this);
      } catch (error) {
        return publicRejected(error);
      }
      if (s.writer !== undefined) return publicRejected(new TypeErrorCtor("the stream is locked to a writer"));
      return pub(abortStream(s, reason));
    }
    close() {
      let s;
      try {
        s = slotOf(streams, this);
      } catch (error) {
        return publicRejected(error);
      }
      if (s.writer !== undefined) return publicRejected(new TypeErrorCtor("the stream is locked to a writer"));
      if (closeQueuedOrInFlight(s)) return publicRejected(new TypeErrorCtor("the stream is already closing"));
      return pub(closeStream(s));
    }
    getWriter() {
      return new WritableStreamDefaultWriter(this);
    }
  }

  // InitializeWritableStream.
  function initialize(stream) {
    const s = {
      __proto__: null, stream, state: "writable", storedError: undefined, writer: undefined, controller: undefined,
      inFlightWriteRequest: undefined, closeRequest: undefined, inFlightCloseRequest: undefined,
      pendingAbortRequest: undefined, writeRequests: [], backpressure: false,
      // The controller's slots.
      queue: [], queueSize: 0, started: false, hwm: 0, size: undefined, writeAlgorithm: undefined,
      closeAlgorithm: undefined, abortAlgorithm: undefined, abortController: undefined,
    };
    weakSet(streams, stream, s);
    return s;
  }

  // SetUpWritableStreamDefaultController. `start` runs at once; its exception propagates.
  function setUpController(s, start, write, close, abort, hwm, size) {
    constructing = true;
    let controller;
    try {
      controller = new WritableStreamDefaultController();
    } finally {
      constructing = false;
    }
    weakSet(controllers, controller, s);
    s.controller = controller;
    s.queue = [];
    s.queueSize = 0;
    s.abortController = new AbortControllerCtor();
    s.started = false;
    s.size = size;
    s.hwm = hwm;
    s.writeAlgorithm = write;
    s.closeAlgorithm = close;
    s.abortAlgorithm = abort;
    updateBackpressure(s, getBackpressure(s));
    const startResult = start(controller);
    then(resolved(startResult), () => {
      s.started = true;
      advanceQueueIfNeeded(s);
    }, (r) => {
      s.started = true;
      dealWithRejection(s, r);
    });
  }

  // WritableStreamAbort.
  function abortStream(s, reason) {
    if (s.state === "closed" || s.state === "errored") return resolved(undefined);
    abortControllerAbort(s.abortController, reason);
    const state = s.state;
    if (state === "closed" || state === "errored") return resolved(undefined);
    if (s.pendingAbortRequest !== undefined) return s.pendingAbortRequest.promise.promise;
    let wasAlreadyErroring = false;
    if (state === "erroring") {
      wasAlreadyErroring = true;
      reason = undefined;
    }
    const promise = deferred();
    s.pendingAbortRequest = { __proto__: null, promise, reason, wasAlreadyErroring };
    if (!wasAlreadyErroring) startErroring(s, reason);
    return promise.promise;
  }

  // WritableStreamClose.
  function closeStream(s) {
    const state = s.state;
    if (state === "closed" || state === "errored") return rejected(new TypeErrorCtor("the stream is closed or errored"));
    const promise = deferred();
    s.closeRequest = promise;
    const writer = s.writer;
    if (writer !== undefined && s.backpressure && state === "writable") writer.ready.resolve(undefined);
    // WritableStreamDefaultControllerClose.
    own(s.queue, [CLOSE, 0]);
    advanceQueueIfNeeded(s);
    return promise.promise;
  }

  function dealWithRejection(s, error) {
    if (s.state === "writable") {
      startErroring(s, error);
      return;
    }
    finishErroring(s);
  }

  function startErroring(s, reason) {
    s.state = "erroring";
    s.storedError = reason;
    if (s.writer !== undefined) ensureReadyRejected(s.writer, reason);
    if (!hasOperationMarkedInFlight(s) && s.started) finishErroring(s);
  }

  function finishErroring(s) {
    s.state = "errored";
    s.queue = [];
    s.queueSize = 0;
    const storedError = s.storedError;
    while (s.writeRequests.length > 0) takeFirst(s.writeRequests).reject(storedError);
    const abortRequest = s.pendingAbortRequest;
    if (abortRequest === undefined) {
      rejectCloseAndClosedIfNeeded(s);
      return;
    }
    s.pendingAbortRequest = undefined;
    if (abortRequest.wasAlreadyErroring) {
      abortRequest.promise.reject(storedError);
      rejectCloseAndClosedIfNeeded(s);
      return;
    }
    const abortAlgorithm = s.abortAlgorithm;
    clearAlgorithms(s);
    then(abortAlgorithm === undefined ? resolved(undefined) : abortAlgorithm(abortRequest.reason), () => {
      abortRequest.promise.resolve(undefined);
      rejectCloseAndClosedIfNeeded(s);
    }, (r) => {
      abortRequest.promise.reject(r);
      rejectCloseAndClosedIfNeeded(s);
    });
  }

  function finishInFlightWrite(s) {
    s.inFlightWriteRequest.resolve(undefined);
    s.inFlightWriteRequest = undefined;
  }
  function finishInFlightWriteWithError(s, error) {
    s.inFlightWriteRequest.reject(error);
    s.inFlightWriteRequest = undefined;
    dealWithRejection(s, error);
  }
  function finishInFlightClose(s) {
    s.inFlightCloseRequest.resolve(undefined);
    s.inFlightCloseRequest = undefined;
    if (s.state === "erroring") {
      s.storedError = undefined;
      if (s.pendingAbortRequest !== undefined) {
        s.pendingAbortRequest.promise.resolve(undefined);
        s.pendingAbortRequest = undefined;
      }
    }
    s.state = "closed";
    if (s.writer !== undefined) s.writer.closed.resolve(undefined);
  }
  function finishInFlightCloseWithError(s, error) {
    s.inFlightCloseRequest.reject(error);
    s.inFlightCloseRequest = undefined;
    if (s.pendingAbortRequest !== undefined) {
      s.pendingAbortRequest.promise.reject(error);
      s.pendingAbortRequest = undefined;
    }
    dealWithRejection(s, error);
  }
  const closeQueuedOrInFlight = (s) => s.closeRequest !== undefined || s.inFlightCloseRequest !== undefined;
  const hasOperationMarkedInFlight = (s) => s.inFlightWriteRequest !== undefined || s.inFlightCloseRequest !== undefined;

  function rejectCloseAndClosedIfNeeded(s) {
    if (s.closeRequest !== undefined) {
      s.closeRequest.reject(s.storedError);
      s.closeRequest = undefined;
    }
    const writer = s.writer;
    if (writer !== undefined) {
      writer.closed.reject(s.storedError);
      markHandled(writer.closed.promise);
    }
  }

  function updateBackpressure(s, backpressure) {
    const writer = s.writer;
    if (writer !== undefined && backpressure !== s.backpressure) {
      if (backpressure) writer.ready = deferred();
      else writer.ready.resolve(undefined);
    }
    s.backpressure = backpressure;
  }

  class WritableStreamDefaultWriter {
    constructor(stream) {
      const s = slotOf(streams, stream);
      if (s.writer !== undefined) throw new TypeErrorCtor("the stream is locked to a writer");
      const w = { __proto__: null, stream: s, ready: undefined, closed: undefined };
      s.writer = w;
      weakSet(writers, this, w);
      const state = s.state;
      if (state === "writable") {
        w.ready = !closeQueuedOrInFlight(s) && s.backpressure ? deferred() : settled(true, undefined);
        w.closed = deferred();
      } else if (state === "erroring") {
        w.ready = settled(false, s.storedError);
        markHandled(w.ready.promise);
        w.closed = deferred();
      } else if (state === "closed") {
        w.ready = settled(true, undefined);
        w.closed = settled(true, undefined);
      } else {
        w.ready = settled(false, s.storedError);
        markHandled(w.ready.promise);
        w.closed = settled(false, s.storedError);
        markHandled(w.closed.promise);
      }
    }
    get closed() {
      const w = weakGet(writers, this);
      if (w === undefined) return publicRejected(new TypeErrorCtor("Illegal invocation"));
      return pub(w.closed.promise);
    }
    get desiredSize() {
      const w = slotOf(writers, this);
      if (w.stream === undefined) throw new TypeErrorCtor("the writer is released");
      return writerDesiredSize(w);
    }
    get ready() {
      const w = weakGet(writers, this);
      if (w === undefined) return publicRejected(new TypeErrorCtor("Illegal invocation"));
      return pub(w.ready.promise);
    }
    abort(reason = undefined) {
      const w = weakGet(writers, this);
      if (w === undefined) return publicRejected(new TypeErrorCtor("Illegal invocation"));
      if (w.stream === undefined) return publicRejected(new TypeErrorCtor("the writer is released"));
      return pub(abortStream(w.stream, reason));
    }
    close() {
      const w = weakGet(writers, this);
      if (w === undefined) return publicRejected(new TypeErrorCtor("Illegal invocation"));
      const s = w.stream;
      if (s === undefined) return publicRejected(new TypeErrorCtor("the writer is released"));
      if (closeQueuedOrInFlight(s)) return publicRejected(new TypeErrorCtor("the stream is already closing"));
      return pub(closeStream(s));
    }
    releaseLock() {
      const w = slotOf(writers, this);
      if (w.stream === undefined) return;
      releaseWriter(w);
    }
    write(chunk = undefined) {
      const w = weakGet(writers, this);
      if (w === undefined) return publicRejected(new TypeErrorCtor("Illegal invocation"));
      if (w.stream === undefined) return publicRejected(new TypeErrorCtor("the writer is released"));
      return pub(writerWrite(w, chunk));
    }
  }

  function ensureClosedRejected(w, error) {
    if (w.closed.pending) w.closed.reject(error);
    else w.closed = settled(false, error);
    markHandled(w.closed.promise);
  }
  function ensureReadyRejected(w, error) {
    if (w.ready.pending) w.ready.reject(error);
    else w.ready = settled(false, error);
    markHandled(w.ready.promise);
  }
  function writerDesiredSize(w) {
    const state = w.stream.state;
    if (state === "errored" || state === "erroring") return null;
    if (state === "closed") return 0;
    return w.stream.hwm - w.stream.queueSize;
  }
  function releaseWriter(w) {
    const s = w.stream;
    const error = new TypeErrorCtor("the writer was released");
    ensureReadyRejected(w, error);
    ensureClosedRejected(w, error);
    s.writer = undefined;
    w.stream = undefined;
  }
  // WritableStreamDefaultWriterWrite.
  function writerWrite(w, chunk) {
    const s = w.stream;
    const chunkSize = chunkSizeOf(s, chunk);
    if (s !== w.stream) return rejected(new TypeErrorCtor("the writer was released"));
    const state = s.state;
    if (state === "errored") return rejected(s.storedError);
    if (closeQueuedOrInFlight(s) || state === "closed") return rejected(new TypeErrorCtor("the stream is closing or closed"));
    if (state === "erroring") return rejected(s.storedError);
    const promise = deferred();
    own(s.writeRequests, promise);
    // WritableStreamDefaultControllerWrite.
    if (typeof chunkSize !== "number" || isNaN(chunkSize) || chunkSize < 0 || chunkSize === Infinity) {
      errorIfNeeded(s, new RangeErrorCtor("a chunk's size must be a finite, non-negative number"));
      return promise.promise;
    }
    own(s.queue, [chunk, chunkSize]);
    s.queueSize += chunkSize;
    if (!closeQueuedOrInFlight(s) && s.state === "writable") updateBackpressure(s, getBackpressure(s));
    advanceQueueIfNeeded(s);
    return promise.promise;
  }
  // WritableStreamDefaultWriterCloseWithErrorPropagation.
  function closeWithErrorPropagation(w) {
    const s = w.stream;
    const state = s.state;
    if (closeQueuedOrInFlight(s) || state === "closed") return resolved(undefined);
    if (state === "errored") return rejected(s.storedError);
    return closeStream(s);
  }

  class WritableStreamDefaultController {
    constructor() {
      if (!constructing) throw new TypeErrorCtor("Illegal constructor");
    }
    get signal() {
      return abortControllerSignal(slotOf(controllers, this).abortController);
    }
    error(e = undefined) {
      const s = slotOf(controllers, this);
      if (s.state !== "writable") return;
      controllerError(s, e);
    }
  }

  function clearAlgorithms(s) {
    s.writeAlgorithm = s.closeAlgorithm = s.abortAlgorithm = s.size = undefined;
  }
  function chunkSizeOf(s, chunk) {
    if (s.size === undefined) return 1;
    try {
      return s.size(chunk);
    } catch (error) {
      errorIfNeeded(s, error);
      return 1;
    }
  }
  const getBackpressure = (s) => s.hwm - s.queueSize <= 0;
  function advanceQueueIfNeeded(s) {
    if (!s.started || s.inFlightWriteRequest !== undefined) return;
    if (s.state === "erroring") {
      finishErroring(s);
      return;
    }
    if (s.queue.length === 0) return;
    const value = s.queue[0][0];
    if (value === CLOSE) processClose(s);
    else processWrite(s, value);
  }
  function errorIfNeeded(s, error) {
    if (s.state === "writable") controllerError(s, error);
  }
  function dequeue(s) {
    const entry = takeFirst(s.queue);
    s.queueSize -= entry[1];
    if (s.queueSize < 0) s.queueSize = 0;
  }
  function processClose(s) {
    s.inFlightCloseRequest = s.closeRequest;
    s.closeRequest = undefined;
    dequeue(s);
    const closeAlgorithm = s.closeAlgorithm;
    clearAlgorithms(s);
    then(closeAlgorithm(), () => finishInFlightClose(s), (r) => finishInFlightCloseWithError(s, r));
  }
  function processWrite(s, chunk) {
    s.inFlightWriteRequest = takeFirst(s.writeRequests);
    then(s.writeAlgorithm(chunk), () => {
      finishInFlightWrite(s);
      dequeue(s);
      if (!closeQueuedOrInFlight(s) && s.state === "writable") updateBackpressure(s, getBackpressure(s));
      advanceQueueIfNeeded(s);
    }, (reason) => {
      if (s.state === "writable") clearAlgorithms(s);
      finishInFlightWriteWithError(s, reason);
    });
  }
  function controllerError(s, error) {
    clearAlgorithms(s);
    startErroring(s, error);
  }

  const classes = [
    [WritableStream, "WritableStream"],
    [WritableStreamDefaultWriter, "WritableStreamDefaultWriter"],
    [WritableStreamDefaultController, "WritableStreamDefaultController"],
  ];
  for (let i = 0; i < classes.length; i++) {
    const proto = classes[i][0].prototype;
    const keys = getOwnPropertyNames(proto);
    for (let k = 0; k < keys.length; k++) if (keys[k] !== "constructor") defineProperty(proto, keys[k], { enumerable: true });
    defineProperty(proto, toStringTag, { value: classes[i][1], configurable: true });
    defineProperty(globalThis, classes[i][1], { value: classes[i][0], writable: true, configurable: true, enumerable: false });
  }

  return {
    __proto__: null,
    WritableStream,
    slot: (stream) => (isObject(stream) ? weakGet(streams, stream) : undefined),
    strategyOf,
    promiseCall,
    deferred,
    // CreateWritableStream: a stream over the algorithms (`start` returns a promise).
    create: (start, write, close, abort, hwm, size) => {
      const stream = { __proto__: WritableStream.prototype };
      const s = initialize(stream);
      setUpController(s, start, write, close, abort, hwm, size);
      return stream;
    },
    // The writer's record for `stream` (which must be unlocked), as `getWriter()` makes it.
    acquireWriter: (stream) => weakGet(writers, new WritableStreamDefaultWriter(stream)),
    writerWrite,
    releaseWriter,
    closeWithErrorPropagation,
    abortStream,
    closeQueuedOrInFlight,
    errorIfNeeded,
  };
})
