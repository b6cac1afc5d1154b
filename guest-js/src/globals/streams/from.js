// `ReadableStream.from` (WHATWG Streams) and the byte streams fetch.js and blob.js make from a
// pull function (`R.bytes.fromPull`), over streams.js's internals (`R`) and bytes.js's (`B`).
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (R, B) {
  "use strict";

  const { internal, rejected, resolved, then } = R;
  const {
    TypeErrorCtor, apply, asyncIterator, close, defineProperty, enqueue, iterator,
    makeByteStream, respond, viewParts,
  } = B;

  // A byte stream of the chunks `next()` gives (a promise of `{ value }`, a box without a
  // prototype, or of null at the end); each chunk is a Uint8Array the stream takes over.
  R.bytes.fromPull = (next, cancel) => {
    const stream = R.create();
    let s;
    const pull = () => then(internal(next()), (box) => {
      if (box === null) {
        if (s.state === "readable" && !s.closeRequested) {
          close(s);
          if (s.pendingPullIntos.length > 0) respond(s, 0);
        }
        return undefined;
      }
      const parts = viewParts(box.value);
      if (parts === null) throw new TypeErrorCtor("a body chunk is not a Uint8Array");
      // An empty chunk carries nothing: ask for the next one.
      if (parts.byteLength === 0) return pull();
      if (s.state === "readable" && !s.closeRequested) enqueue(s, parts);
      return undefined;
    });
    s = makeByteStream(stream, () => resolved(undefined), pull,
      cancel === undefined ? undefined : (reason) => resolved(cancel(reason)), 0, undefined);
    return stream;
  };

  // ReadableStream.from: a stream of what an async (or sync) iterable gives.
  const getMethod = (value, key) => {
    const method = value[key];
    if (method === undefined || method === null) return undefined;
    if (typeof method !== "function") throw new TypeErrorCtor("ReadableStream.from: the iterator method is not callable");
    return method;
  };
  const isObject = (value) => (typeof value === "object" && value !== null) || typeof value === "function";
  function from(asyncIterable) {
    if (!isObject(asyncIterable)) throw new TypeErrorCtor("ReadableStream.from: the argument is not an iterable object");
    let method = getMethod(asyncIterable, asyncIterator);
    const sync = method === undefined;
    if (sync) method = getMethod(asyncIterable, iterator);
    if (method === undefined) throw new TypeErrorCtor("ReadableStream.from: the argument is not iterable");
    const it = apply(method, asyncIterable, []);
    if (!isObject(it)) throw new TypeErrorCtor("ReadableStream.from: the iterator is not an object");
    const nextMethod = it.next;
    // IteratorNext, as a promise of the iterator result; a sync iterator's value is awaited
    // (CreateAsyncFromSyncIterator, which closes the iterator when that value rejects).
    const nextResult = () => {
      const next = apply(nextMethod, it, []);
      if (!sync) return resolved(next);
      if (!isObject(next)) throw new TypeErrorCtor("ReadableStream.from: the iterator result is not an object");
      const done = !!next.done;
      return then(resolved(next.value), (value) => ({ __proto__: null, value, done }), (e) => {
        if (!done) {
          const ret = it.return;
          if (ret !== undefined && ret !== null) apply(ret, it, []);
        }
        throw e;
      });
    };
    const stream = R.create();
    let s;
    const pull = () => {
      let promise;
      try {
        promise = nextResult();
      } catch (e) {
        return rejected(e);
      }
      return then(promise, (iterResult) => {
        if (!isObject(iterResult)) throw new TypeErrorCtor("ReadableStream.from: the iterator result is not an object");
        if (iterResult.done) R.closeController(s);
        else R.enqueue(s, iterResult.value);
      });
    };
    const cancel = (reason) => {
      let returned;
      try {
        const ret = it.return;
        if (ret === undefined || ret === null) return resolved(undefined);
        if (typeof ret !== "function") throw new TypeErrorCtor("ReadableStream.from: return is not a function");
        returned = apply(ret, it, [reason]);
      } catch (e) {
        return rejected(e);
      }
      return then(resolved(returned), (v) => {
        if (!isObject(v)) throw new TypeErrorCtor("ReadableStream.from: return() did not give an object");
        return undefined;
      });
    };
    s = R.makeStream(stream, () => resolved(undefined), pull, cancel, 0, () => 1);
    return stream;
  }
  R.bytes.from = from;

  defineProperty(R.ReadableStream, "from", {
    value: { from(asyncIterable) { return from(asyncIterable); } }.from,
    writable: true, configurable: true, enumerable: true,
  });
})
