// `ReadableStream` (WHATWG Streams) with its default controller and reader, `tee`, async
// iteration and the two queuing strategies; `fetch.js` and `blob.js` make the bodies' streams
// through the internals the constructor carries until fetch.js takes them. The function returns
// the same internals (and more) to `writable.js`, `transform.js` and `pipe.js`, which build
// `WritableStream`, `TransformStream`, `pipeTo` and `pipeThrough` on them, and to `bytes.js`, which
// adds byte streams (`type: "bytes"`, BYOB readers) through the `bytes` hooks below.
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function () {
  "use strict";

  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const concat = uncurry(String.prototype.concat);
  const { defineProperty, freeze, getPrototypeOf, setPrototypeOf, getOwnPropertyNames } = Object;
  const { apply } = Reflect;
  const { asyncIterator, toStringTag } = Symbol;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  // Internal promises, chained with no lookup a script can reach; a script gets `pub` twins.
  const { then, resolved, rejected, deferred, markHandled, internal, pub, publicRejected, publicDeferred } = globalThis.__palisadePromises;
  const WeakMapCtor = WeakMap;
  const weakGet = uncurry(WeakMap.prototype.get);
  const weakSet = uncurry(WeakMap.prototype.set);
  const NumberCtor = Number;
  const { isNaN } = Number;
  const { floor } = Math;
  const own = (list, value) =>
    defineProperty(list, list.length, { __proto__: null, value, writable: true, enumerable: true, configurable: true });
  // Remove and return the first element of `list` (not `shift`, which a script can replace).
  const takeFirst = (list) => {
    const first = list[0];
    for (let i = 0; i + 1 < list.length; i++) list[i] = list[i + 1];
    list.length = list.length - 1;
    return first;
  };
  const result = (value, done) => ({ value, done });

  // WebIDL's [EnforceRange] unsigned long long.
  // A promise of `method`'s result (rejected with what it throws).
  const promiseCall = (method, self, args) => {
    try {
      return resolved(apply(method, self, args));
    } catch (error) {
      return rejected(error);
    }
  };
  function enforceRange(value, name) {
    let n = NumberCtor(value);
    if (isNaN(n) || n === Infinity || n === -Infinity) throw new TypeErrorCtor(concat(name, " is not a finite number"));
    n = n < 0 ? -floor(-n) : floor(n);
    if (n < 0 || n > 9007199254740991) throw new TypeErrorCtor(concat(name, " is out of range"));
    return n + 0;
  }

  const streams = new WeakMapCtor();
  const controllers = new WeakMapCtor();
  const readers = new WeakMapCtor();
  const streamSlot = (value) => {
    const s = weakGet(streams, value);
    if (!s) throw new TypeErrorCtor("Illegal invocation");
    return s;
  };
  let constructing = false;
  // Filled in by bytes.js: a byte stream's slot has `isBytes`, and these run its controller's
  // steps where the default controller's would.
  const bytes = { __proto__: null, construct: null, pullSteps: null, byobReader: null, tee: null, from: null };
  // ReadableByteStreamControllerInvalidateBYOBRequest and ClearPendingPullIntos.
  const clearPullIntos = (s) => {
    if (s.byobRequest !== null) {
      s.byobRequest.controller = null;
      s.byobRequest.view = null;
      s.byobRequest = null;
    }
    s.pendingPullIntos = [];
  };

  class ReadableStreamDefaultController {
    constructor() {
      if (!constructing) throw new TypeErrorCtor("Illegal constructor");
    }
    get desiredSize() {
      const s = controllerSlot(this);
      if (s.state === "errored") return null;
      if (s.state === "closed") return 0;
      return s.hwm - s.queueSize;
    }
    close() {
      const s = controllerSlot(this);
      if (s.closeRequested || s.state !== "readable") throw new TypeErrorCtor("the stream cannot be closed");
      closeController(s);
    }
    enqueue(chunk = undefined) {
      const s = controllerSlot(this);
      if (s.closeRequested || s.state !== "readable") throw new TypeErrorCtor("the stream cannot take more chunks");
      enqueue(s, chunk);
    }
    error(e = undefined) {
      errorStream(controllerSlot(this), e);
    }
  }
  const controllerSlot = (value) => {
    const s = weakGet(controllers, value);
    if (!s) throw new TypeErrorCtor("Illegal invocation");
    return s;
  };

  function enqueue(s, chunk) {
    if (s.state !== "readable") return;
    if (s.reader !== null && s.reader.requests.length > 0) {
      takeFirst(s.reader.requests).resolve(result(chunk, false));
    } else {
      let size;
      try {
        size = NumberCtor(s.size(chunk));
        if (isNaN(size) || size < 0 || size === Infinity) throw new RangeErrorCtor("a chunk's size must be a finite, non-negative number");
      } catch (error) {
        errorStream(s, error);
        throw error;
      }
      own(s.queue, [chunk, size]);
      s.queueSize += size;
    }
    pullIfNeeded(s);
  }
  function closeController(s) {
    s.closeRequested = true;
    if (s.queue.length === 0) closeStream(s);
  }
  function closeStream(s) {
    if (s.state !== "readable") return;
    s.state = "closed";
    s.pull = s.cancel = undefined;
    const reader = s.reader;
    if (reader === null) return;
    reader.closed.resolve(undefined);
    // A BYOB reader's requests wait for the controller's `respond(0)` (or are cancelled).
    if (!reader.byob) while (reader.requests.length > 0) takeFirst(reader.requests).resolve(result(undefined, true));
  }
  function errorStream(s, e) {
    if (s.state !== "readable") return;
    if (s.isBytes) clearPullIntos(s);
    s.state = "errored";
    s.storedError = e;
    s.queue = [];
    s.queueSize = 0;
    s.pull = s.cancel = undefined;
    const reader = s.reader;
    if (reader === null) return;
    reader.closed.reject(e);
    markHandled(reader.closed.promise);
    while (reader.requests.length > 0) takeFirst(reader.requests).reject(e);
  }
  function pullIfNeeded(s) {
    if (!s.started || s.state !== "readable" || s.closeRequested || s.pull === undefined) return;
    const wanted = (s.reader !== null && s.reader.requests.length > 0) || s.hwm - s.queueSize > 0;
    if (!wanted) return;
    if (s.pulling) {
      s.pullAgain = true;
      return;
    }
    s.pulling = true;
    then(s.pull(), () => {
      s.pulling = false;
      if (s.pullAgain) {
        s.pullAgain = false;
        pullIfNeeded(s);
      }
    }, (e) => errorStream(s, e));
  }
  function cancelStream(s, reason) {
    s.disturbed = true;
    if (s.state === "closed") return resolved(undefined);
    if (s.state === "errored") return rejected(s.storedError);
    const cancel = s.cancel;
    s.queue = [];
    s.queueSize = 0;
    closeStream(s);
    const reader = s.reader;
    if (reader !== null && reader.byob) while (reader.requests.length > 0) takeFirst(reader.requests).resolve(result(undefined, true));
    if (s.isBytes) clearPullIntos(s);
    return then(cancel === undefined ? resolved(undefined) : cancel(reason), () => undefined);
  }

  // A stream whose source is given as functions (`pull`, `cancel`: each returns a promise or
  // nothing); `start` runs at once.
  function makeStream(stream, start, pull, cancel, hwm, size) {
    const s = {
      __proto__: null, state: "readable", queue: [], queueSize: 0, reader: null, disturbed: false,
      storedError: undefined, started: false, pulling: false, pullAgain: false, closeRequested: false,
      hwm, size, pull, cancel, controller: null,
    };
    constructing = true;
    let controller;
    try {
      controller = new ReadableStreamDefaultController();
    } finally {
      constructing = false;
    }
    s.controller = controller;
    weakSet(controllers, controller, s);
    weakSet(streams, stream, s);
    then(start(controller), () => {
      s.started = true;
      pullIfNeeded(s);
    }, (e) => errorStream(s, e));
    return s;
  }

  // A WebIDL dictionary argument (getReader's and values' options) is undefined, null or an
  // object; anything else is a TypeError before any member is read.
  const checkDictionary = (value, what) => {
    if (value !== undefined && value !== null && typeof value !== "object" && typeof value !== "function") {
      throw new TypeErrorCtor(concat(what, ": the options are not an object"));
    }
  };

  class ReadableStream {
    constructor(underlyingSource = undefined, strategy = undefined) {
      if (underlyingSource === null) throw new TypeErrorCtor("ReadableStream: the source is null");
      const source = underlyingSource;
      if (source !== undefined && typeof source !== "object" && typeof source !== "function") throw new TypeErrorCtor("ReadableStream: the source is not an object");
      if (strategy !== undefined && strategy !== null && typeof strategy !== "object" && typeof strategy !== "function") throw new TypeErrorCtor("ReadableStream: the strategy is not an object");
      // WebIDL reads the strategy first (`highWaterMark`, then `size`), then the source's members
      // in the order of their names.
      const hwmRaw = strategy === undefined || strategy === null ? undefined : strategy.highWaterMark;
      const hwmNumber = hwmRaw === undefined ? undefined : NumberCtor(hwmRaw);
      const sizeRaw = strategy === undefined || strategy === null ? undefined : strategy.size;
      if (sizeRaw !== undefined && typeof sizeRaw !== "function") throw new TypeErrorCtor("ReadableStream: size is not a function");
      const method = (name) => {
        const m = source === undefined ? undefined : source[name];
        if (m !== undefined && typeof m !== "function") throw new TypeErrorCtor(concat("ReadableStream: ", name, " is not a function"));
        return m;
      };
      const autoAllocate = source === undefined ? undefined : source.autoAllocateChunkSize;
      const autoAllocateChunkSize = autoAllocate === undefined ? undefined : enforceRange(autoAllocate, "autoAllocateChunkSize");
      const cancelMethod = method("cancel"), pullMethod = method("pull"), startMethod = method("start");
      const type = source === undefined ? undefined : source.type;
      const hwmOf = (fallback) => {
        if (hwmNumber === undefined) return fallback;
        if (isNaN(hwmNumber) || hwmNumber < 0) throw new RangeErrorCtor("highWaterMark must be a non-negative number");
        return hwmNumber;
      };
      if (type !== undefined) {
        if (concat("", type) !== "bytes") throw new TypeErrorCtor(concat("ReadableStream: \"", type, "\" is not a stream type"));
        if (sizeRaw !== undefined) throw new RangeErrorCtor("ReadableStream: a byte stream's strategy cannot have a size");
        const byteHwm = hwmOf(0);
        if (autoAllocateChunkSize === 0) throw new TypeErrorCtor("ReadableStream: autoAllocateChunkSize must be greater than 0");
        bytes.construct(this, source, startMethod, pullMethod, cancelMethod, byteHwm, autoAllocateChunkSize);
        return;
      }
      const size = sizeRaw === undefined ? () => 1 : (chunk) => apply(sizeRaw, undefined, [chunk]);
      const hwm = hwmOf(1);
      // The methods as read once here (a getter is not asked again).
      const pull = pullMethod !== undefined ? () => promiseCall(pullMethod, source, [s.controller]) : undefined;
      const cancel = cancelMethod !== undefined ? (reason) => promiseCall(cancelMethod, source, [reason]) : undefined;
      // `start` runs synchronously in the constructor and its exception propagates.
      const s = makeStream(this, (controller) => {
        const started = startMethod === undefined ? undefined : apply(startMethod, source, [controller]);
        return resolved(started);
      }, pull, cancel, hwm, size);
    }
    get locked() {
      return streamSlot(this).reader !== null;
    }
    cancel(reason = undefined) {
      let s;
      try {
        s = streamSlot(this);
      } catch (error) {
        return publicRejected(error);
      }
      if (s.reader !== null) return publicRejected(new TypeErrorCtor("the stream is locked to a reader"));
      return pub(cancelStream(s, reason));
    }
    getReader(options = undefined) {
      const s = streamSlot(this);
      checkDictionary(options, "ReadableStream.getReader");
      const mode = options === undefined || options === null ? undefined : options.mode;
      if (mode !== undefined) {
        if (concat("", mode) === "byob") return bytes.byobReader(this);
        throw new TypeErrorCtor(concat("ReadableStream: \"", mode, "\" is not a reader mode"));
      }
      return new ReadableStreamDefaultReader(this);
    }
    tee() {
      const s = streamSlot(this);
      return s.isBytes ? bytes.tee(this, s) : tee(this, s);
    }
    values(options = undefined) {
      const s = streamSlot(this);
      checkDictionary(options, "ReadableStream.values");
      const preventCancel = options === undefined || options === null ? false : !!options.preventCancel;
      // The iterator keeps the reader's record, not the reader, whose methods a script can replace.
      const reader = weakGet(readers, new ReadableStreamDefaultReader(this));
      const it = new ReadableStreamAsyncIterator();
      weakSet(iterators, it, { __proto__: null, reader, preventCancel, done: false, ongoing: null, calls: 0 });
      return it;
    }
  }

  class ReadableStreamDefaultReader {
    constructor(stream) {
      const s = streamSlot(stream);
      if (s.reader !== null) throw new TypeErrorCtor("the stream is locked to a reader");
      const r = { __proto__: null, stream: s, requests: [], closed: deferred() };
      s.reader = r;
      weakSet(readers, this, r);
      if (s.state === "closed") r.closed.resolve(undefined);
      else if (s.state === "errored") {
        r.closed.reject(s.storedError);
        markHandled(r.closed.promise);
      }
    }
    get closed() {
      const r = weakGet(readers, this);
      if (!r) return publicRejected(new TypeErrorCtor("Illegal invocation"));
      return pub(r.closed.promise);
    }
    read() {
      const r = weakGet(readers, this);
      if (!r) return publicRejected(new TypeErrorCtor("Illegal invocation"));
      if (r.stream === null) return publicRejected(new TypeErrorCtor("the reader is released"));
      // The script's promise is settled with the result directly, as the spec's read request.
      const request = publicDeferred();
      readWith(r, request);
      return request.promise;
    }
    releaseLock() {
      const r = weakGet(readers, this);
      if (!r) throw new TypeErrorCtor("Illegal invocation");
      release(r);
    }
    cancel(reason = undefined) {
      const r = weakGet(readers, this);
      if (!r) return publicRejected(new TypeErrorCtor("Illegal invocation"));
      if (r.stream === null) return publicRejected(new TypeErrorCtor("the reader is released"));
      return pub(cancelStream(r.stream, reason));
    }
  }

  // An internal promise of the next `{ value, done }` (without a prototype, so that settling
  // the promise with it looks up no `then`).
  function read(r) {
    const request = deferred();
    readWith(r, {
      __proto__: null,
      resolve: (step) => request.resolve({ __proto__: null, value: step.value, done: step.done }),
      reject: request.reject,
    });
    return request.promise;
  }
  // ReadableStreamDefaultReaderRead with a read request of the caller's: `request.resolve` gets
  // the `{ value, done }` result (at once when a chunk is queued), `request.reject` the error.
  // Nothing is resolved through a promise, so no `then` a script put on a prototype is looked up.
  function readWith(r, request) {
    const s = r.stream;
    s.disturbed = true;
    if (s.state === "closed") request.resolve(result(undefined, true));
    else if (s.state === "errored") request.reject(s.storedError);
    else if (s.isBytes) bytes.pullSteps(s, request);
    else if (s.queue.length > 0) {
      const entry = takeFirst(s.queue);
      s.queueSize -= entry[1];
      if (s.queueSize < 0) s.queueSize = 0;
      if (s.closeRequested && s.queue.length === 0) closeStream(s);
      else pullIfNeeded(s);
      request.resolve(result(entry[0], false));
    } else {
      own(r.requests, request);
      pullIfNeeded(s);
    }
  }
  function release(r) {
    const s = r.stream;
    if (s === null) return;
    const error = new TypeErrorCtor("the reader was released");
    if (s.state === "readable") r.closed.reject(error);
    else {
      r.closed = deferred();
      r.closed.reject(error);
    }
    markHandled(r.closed.promise);
    // ReadableByteStreamController's release steps: a pending pull-into outlives its reader.
    if (s.isBytes && s.pendingPullIntos.length > 0) {
      const first = s.pendingPullIntos[0];
      first.readerType = "none";
      s.pendingPullIntos = [first];
    }
    while (r.requests.length > 0) takeFirst(r.requests).reject(error);
    s.reader = null;
    r.stream = null;
  }

  // Two streams that each get every chunk of the one stream (chunks are shared, not cloned).
  function tee(stream, s) {
    const reader = new ReadableStreamDefaultReader(stream);
    const r = weakGet(readers, reader);
    let reading = false, readAgain = false, canceled1 = false, canceled2 = false, reason1, reason2, branch1, branch2;
    const cancelled = deferred();
    const pull = () => {
      if (reading) {
        readAgain = true;
        return resolved(undefined);
      }
      reading = true;
      readWith(r, {
        __proto__: null,
        resolve: (step) => {
          if (step.done) {
            reading = false;
            if (!canceled1) closeController(branch1);
            if (!canceled2) closeController(branch2);
            if (!canceled1 || !canceled2) cancelled.resolve(undefined);
            return;
          }
          // As the standard's chunk steps, a microtask later (an error found meanwhile wins);
          // the read is not over until then.
          then(resolved(undefined), () => {
            readAgain = false;
            if (!canceled1) enqueue(branch1, step.value);
            if (!canceled2) enqueue(branch2, step.value);
            reading = false;
            if (readAgain) pull();
          });
        },
        reject: () => {
          reading = false;
        },
      });
      return resolved(undefined);
    };
    const cancelBoth = () => then(cancelStream(s, [reason1, reason2]), (v) => cancelled.resolve(v), (e) => cancelled.reject(e));
    const a = create(), b = create();
    branch1 = makeStream(a, () => resolved(undefined), pull, (reason) => {
      canceled1 = true;
      reason1 = reason;
      if (canceled2) cancelBoth();
      return cancelled.promise;
    }, 1, () => 1);
    branch2 = makeStream(b, () => resolved(undefined), pull, (reason) => {
      canceled2 = true;
      reason2 = reason;
      if (canceled1) cancelBoth();
      return cancelled.promise;
    }, 1, () => 1);
    then(r.closed.promise, undefined, (e) => {
      errorStream(branch1, e);
      errorStream(branch2, e);
      if (!canceled1 || !canceled2) cancelled.resolve(undefined);
    });
    return [a, b];
  }
  // A ReadableStream object without running its constructor.
  const create = () => {
    const stream = { __proto__: ReadableStream.prototype };
    return stream;
  };

  const iterators = new WeakMapCtor();
  // An iterator's steps travel as `{ value, done }` without a prototype (settling an internal
  // promise with one looks up no `then`); the script's promise gets the iterator result.
  const iterStep = (value, done) => ({ __proto__: null, value, done });
  const iterResult = (ongoing) => {
    const out = publicDeferred();
    then(ongoing, (r) => out.resolve(result(r.value, r.done)), out.reject);
    return out.promise;
  };
  class ReadableStreamAsyncIterator {
    next() {
      const it = weakGet(iterators, this);
      if (!it) return publicRejected(new TypeErrorCtor("Illegal invocation"));
      const mine = ++it.calls;
      const step = () => {
        if (it.done) return resolved(iterStep(undefined, true));
        // As WebIDL's asynchronous iterators: once a read settles there is no ongoing promise,
        // so a `return()` after it runs at once (and releases the lock before it resolves).
        return then(read(it.reader), (r) => {
          if (it.calls === mine) it.ongoing = null;
          if (r.done) {
            it.done = true;
            release(it.reader);
          }
          return r;
        }, (e) => {
          if (it.calls === mine) it.ongoing = null;
          it.done = true;
          release(it.reader);
          throw e;
        });
      };
      it.ongoing = it.ongoing === null ? step() : then(it.ongoing, step, step);
      return iterResult(it.ongoing);
    }
    return(value) {
      const it = weakGet(iterators, this);
      if (!it) return publicRejected(new TypeErrorCtor("Illegal invocation"));
      it.calls++;
      const finish = () => {
        if (it.done) return resolved(iterStep(value, true));
        it.done = true;
        const s = it.reader.stream;
        if (s === null) return resolved(iterStep(value, true));
        if (!it.preventCancel) {
          const cancelled = cancelStream(s, value);
          release(it.reader);
          return then(cancelled, () => iterStep(value, true));
        }
        release(it.reader);
        return resolved(iterStep(value, true));
      };
      it.ongoing = it.ongoing === null ? finish() : then(it.ongoing, finish, finish);
      return iterResult(it.ongoing);
    }
  }
  const AsyncIteratorPrototype = getPrototypeOf(getPrototypeOf((async function* () {}).prototype));
  setPrototypeOf(ReadableStreamAsyncIterator.prototype, AsyncIteratorPrototype);
  delete ReadableStreamAsyncIterator.prototype.constructor;
  defineProperty(ReadableStreamAsyncIterator.prototype, "next", { enumerable: true });
  defineProperty(ReadableStreamAsyncIterator.prototype, "return", { enumerable: true });

  class CountQueuingStrategy {
    #hwm;
    constructor(init) {
      if (init === null || (typeof init !== "object" && typeof init !== "function")) throw new TypeErrorCtor("CountQueuingStrategy: init is not an object");
      if (init.highWaterMark === undefined) throw new TypeErrorCtor("CountQueuingStrategy: highWaterMark is required");
      this.#hwm = NumberCtor(init.highWaterMark);
    }
    get highWaterMark() { return this.#hwm; }
    get size() { return countSize; }
  }
  const countSize = { size() { return 1; } }.size;
  class ByteLengthQueuingStrategy {
    #hwm;
    constructor(init) {
      if (init === null || (typeof init !== "object" && typeof init !== "function")) throw new TypeErrorCtor("ByteLengthQueuingStrategy: init is not an object");
      if (init.highWaterMark === undefined) throw new TypeErrorCtor("ByteLengthQueuingStrategy: highWaterMark is required");
      this.#hwm = NumberCtor(init.highWaterMark);
    }
    get highWaterMark() { return this.#hwm; }
    get size() { return byteSize; }
  }
  const byteSize = { size(chunk) { return chunk.byteLength; } }.size;

  const classes = [
    [ReadableStream, "ReadableStream"],
    [ReadableStreamDefaultReader, "ReadableStreamDefaultReader"],
    [ReadableStreamDefaultController, "ReadableStreamDefaultController"],
    [CountQueuingStrategy, "CountQueuingStrategy"],
    [ByteLengthQueuingStrategy, "ByteLengthQueuingStrategy"],
  ];
  for (let i = 0; i < classes.length; i++) {
    const proto = classes[i][0].prototype;
    const keys = getOwnPropertyNames(proto);
    for (let k = 0; k < keys.length; k++) if (keys[k] !== "constructor") defineProperty(proto, keys[k], { enumerable: true });
    defineProperty(proto, toStringTag, { value: classes[i][1], configurable: true });
    defineProperty(globalThis, classes[i][1], { value: classes[i][0], writable: true, configurable: true, enumerable: false });
  }
  const RSProto = ReadableStream.prototype;
  defineProperty(RSProto, asyncIterator, { value: RSProto.values, writable: true, configurable: true });

  // What fetch.js and blob.js use: a stream of `bytes` as one chunk (or of the chunks a
  // function gives), whether a stream was read from, and a way to read one to its end.
  defineProperty(ReadableStream, Symbol.for("palisade.internals"), {
    value: freeze({
      __proto__: null,
      isStream: (value) => (typeof value === "object" && value !== null) && weakGet(streams, value) !== undefined,
      // A byte stream (as Fetch and the File API make bodies) of the chunks `next()` gives: a
      // promise of `{ value }` (a box without a prototype, so that settling it looks nothing
      // up) holding a Uint8Array the stream takes over, or of null at the end.
      fromPull: (next, cancel) => bytes.fromPull(next, cancel),
      tee: (stream) => {
        const s = streamSlot(stream);
        return s.isBytes ? bytes.tee(stream, s) : tee(stream, s);
      },
      disturbed: (stream) => streamSlot(stream).disturbed,
      locked: (stream) => streamSlot(stream).reader !== null,
      // A reader's record for unlocked `stream`, an internal promise of its next `{ value, done }`
      // (a box), and its cancel: `fetch`'s stream request body reads through these, never
      // through a reader's methods or a promise a script could have touched.
      acquireReader: (stream) => weakGet(readers, new ReadableStreamDefaultReader(stream)),
      read,
      cancel: (r, reason) => (r.stream === null ? rejected(new TypeErrorCtor("the reader is released")) : cancelStream(r.stream, reason)),
      // Every chunk of `stream`, read to its end through a reader of its own.
      readAll: (stream) => {
        const reader = new ReadableStreamDefaultReader(stream);
        const r = weakGet(readers, reader);
        const chunks = [];
        const loop = () => then(read(r), (step) => {
          if (step.done) return { __proto__: null, value: chunks };
          own(chunks, step.value);
          return loop();
        });
        return loop();
      },
    }),
    configurable: true,
  });
  // What the other stream files use (never seen by a script).
  return {
    __proto__: null,
    ReadableStream,
    bytes,
    clearPullIntos,
    closeStream,
    enforceRange,
    takeFirst,
    own,
    result,
    resolved,
    rejected,
    deferred,
    markHandled,
    internal,
    pub,
    publicRejected,
    publicDeferred,
    promiseCall,
    then,
    readers,
    controllerSlot,
    setConstructing: (value) => {
      constructing = value;
    },
    controllers,
    streams,
    pullIfNeeded,
    isStream: (value) => (typeof value === "object" && value !== null) && weakGet(streams, value) !== undefined,
    slot: (stream) => weakGet(streams, stream),
    // A reader's record for `stream` (which must be unlocked), as `getReader()` makes it.
    acquireReader: (stream) => weakGet(readers, new ReadableStreamDefaultReader(stream)),
    read,
    readWith,
    release,
    cancelStream,
    create,
    makeStream,
    enqueue,
    closeController,
    errorStream,
    // ReadableStreamDefaultControllerCanCloseOrEnqueue.
    canCloseOrEnqueue: (s) => !s.closeRequested && s.state === "readable",
    // ReadableStreamDefaultControllerGetDesiredSize.
    desiredSize: (s) => (s.state === "errored" ? null : s.state === "closed" ? 0 : s.hwm - s.queueSize),
    // ReadableStreamDefaultControllerHasBackpressure (the negation of ShouldCallPull).
    hasBackpressure: (s) => {
      if (s.closeRequested || s.state !== "readable" || !s.started) return true;
      if (s.reader !== null && s.reader.requests.length > 0) return false;
      return !(s.hwm - s.queueSize > 0);
    },
  };
})
