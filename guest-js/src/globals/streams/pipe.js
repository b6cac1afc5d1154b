// `ReadableStream.prototype.pipeTo` and `pipeThrough` (WHATWG Streams, ReadableStreamPipeTo),
// over streams.js's internals (`R`) and writable.js's (`W`).
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (R, W) {
  "use strict";

  const { defineProperty } = Object;
  const TypeErrorCtor = TypeError;
  // Internal promises, chained with no lookup a script can reach; a script gets `pub` twins.
  const { then, resolved, markHandled, pub, publicRejected, promise: newPromise } = globalThis.__palisadePromises;
  const own = (list, value) =>
    defineProperty(list, list.length, { __proto__: null, value, writable: true, enumerable: true, configurable: true });
  const isObject = (value) => (typeof value === "object" && value !== null) || typeof value === "function";
  // abort.js's internals (fetch.js takes them later, after this file has).
  const A = AbortSignal[Symbol.for("palisade.internals")];
  const ReadableStreamCtor = R.ReadableStream;

  // StreamPipeOptions, read in WebIDL's order.
  function pipeOptions(options) {
    if (options !== undefined && options !== null && !isObject(options)) throw new TypeErrorCtor("pipeTo: the options are not an object");
    const dict = options === null ? undefined : options;
    const preventAbort = dict === undefined ? false : !!dict.preventAbort;
    const preventCancel = dict === undefined ? false : !!dict.preventCancel;
    const preventClose = dict === undefined ? false : !!dict.preventClose;
    const signal = dict === undefined ? undefined : dict.signal;
    if (signal !== undefined && !A.isAbortSignal(signal)) throw new TypeErrorCtor("pipeTo: signal is not an AbortSignal");
    return { __proto__: null, preventAbort, preventCancel, preventClose, signal };
  }

  // ReadableStreamPipeTo: a promise that settles once the pipe has shut down.
  function pipeTo(source, s, dest, ws, o) {
    const r = R.acquireReader(source);
    const w = W.acquireWriter(dest);
    const readerClosed = r.closed.promise;
    const writerClosed = w.closed.promise;
    s.disturbed = true;
    let shuttingDown = false;
    let currentWrite = resolved(undefined);
    return newPromise((resolve, reject) => {
      const signal = o.signal;
      let abortAlgorithm;

      function finalize(isError, error) {
        W.releaseWriter(w);
        R.release(r);
        if (signal !== undefined) A.forget(signal, abortAlgorithm);
        if (isError) reject(error);
        else resolve(undefined);
      }
      // Call `next` once the last write started (and any started while waiting) has settled.
      function waitForWritesToFinish(next) {
        const old = currentWrite;
        then(currentWrite, () => {
          if (old !== currentWrite) waitForWritesToFinish(next);
          else next();
        });
      }
      const destWritable = () => ws.state === "writable" && !W.closeQueuedOrInFlight(ws);
      function shutdownWithAnAction(action, originalIsError, originalError) {
        if (shuttingDown) return;
        shuttingDown = true;
        const doTheRest = () => {
          then(action(), () => finalize(originalIsError, originalError), (newError) => finalize(true, newError));
        };
        if (destWritable()) waitForWritesToFinish(doTheRest);
        else doTheRest();
      }
      function shutdown(isError, error) {
        if (shuttingDown) return;
        shuttingDown = true;
        if (destWritable()) waitForWritesToFinish(() => finalize(isError, error));
        else finalize(isError, error);
      }

      if (signal !== undefined) {
        abortAlgorithm = () => {
          const error = A.reasonOf(signal);
          shutdownWithAnAction(() => {
            const actions = [];
            if (!o.preventAbort) own(actions, ws.state === "writable" ? W.abortStream(ws, error) : resolved(undefined));
            if (!o.preventCancel) own(actions, s.state === "readable" ? R.cancelStream(s, error) : resolved(undefined));
            // Promise.all over the captured `then`: settled when every action is.
            return newPromise((res, rej) => {
              let left = actions.length;
              if (left === 0) res(undefined);
              for (let i = 0; i < actions.length; i++) {
                then(actions[i], () => {
                  left -= 1;
                  if (left === 0) res(undefined);
                }, rej);
              }
            });
          }, true, error);
        };
        if (A.isAborted(signal)) {
          abortAlgorithm();
          return;
        }
        A.onAbort(signal, abortAlgorithm);
      }

      // The pipe loop: once the writer is ready, read a chunk and start writing it, until the
      // source is done or the pipe shuts down. Chunks arrive through a read request, never
      // through a promise resolved with a result object.
      const noop = () => {};
      const readRequest = {
        __proto__: null,
        resolve: (step) => {
          if (step.done) return;
          // The write starts a microtask later (a chunk enqueued by the source must not run the
          // sink's write synchronously); the pipe counts it as in flight from now on.
          let written;
          currentWrite = newPromise((resolveWrite) => {
            written = resolveWrite;
          });
          then(resolved(undefined), () => {
            then(W.writerWrite(w, step.value), () => written(undefined), () => written(undefined));
            pipeStep();
          });
        },
        reject: noop,
      };
      function pipeStep() {
        if (shuttingDown) return;
        then(w.ready.promise, () => R.readWith(r, readRequest), noop);
      }
      // Errors must be propagated forward.
      const sourceErrored = (storedError) => {
        if (!o.preventAbort) shutdownWithAnAction(() => W.abortStream(ws, storedError), true, storedError);
        else shutdown(true, storedError);
      };
      if (s.state === "errored") sourceErrored(s.storedError);
      else then(readerClosed, undefined, sourceErrored);
      // Errors must be propagated backward.
      const destErrored = (storedError) => {
        if (!o.preventCancel) shutdownWithAnAction(() => R.cancelStream(s, storedError), true, storedError);
        else shutdown(true, storedError);
      };
      if (ws.state === "errored") destErrored(ws.storedError);
      else then(writerClosed, undefined, destErrored);
      // Closing must be propagated forward.
      const sourceClosed = () => {
        if (!o.preventClose) shutdownWithAnAction(() => W.closeWithErrorPropagation(w));
        else shutdown();
      };
      if (s.state === "closed") sourceClosed();
      else then(readerClosed, sourceClosed, noop);
      // Closing must be propagated backward.
      if (W.closeQueuedOrInFlight(ws) || ws.state === "closed") {
        const destClosed = new TypeErrorCtor("the destination writable stream closed before all data could be piped to it");
        if (!o.preventCancel) shutdownWithAnAction(() => R.cancelStream(s, destClosed), true, destClosed);
        else shutdown(true, destClosed);
      }
      pipeStep();
    });
  }

  const proto = ReadableStreamCtor.prototype;
  const methods = {
    pipeTo(destination, options = undefined) {
      const s = R.isStream(this) ? R.slot(this) : undefined;
      if (s === undefined) return publicRejected(new TypeErrorCtor("Illegal invocation"));
      const ws = W.slot(destination);
      if (ws === undefined) return publicRejected(new TypeErrorCtor("pipeTo: the destination is not a WritableStream"));
      let o;
      try {
        o = pipeOptions(options);
      } catch (error) {
        return publicRejected(error);
      }
      if (s.reader !== null) return publicRejected(new TypeErrorCtor("pipeTo: the source is locked"));
      if (ws.writer !== undefined) return publicRejected(new TypeErrorCtor("pipeTo: the destination is locked"));
      return pub(pipeTo(this, s, destination, ws, o));
    },
    pipeThrough(transform, options = undefined) {
      const s = R.isStream(this) ? R.slot(this) : undefined;
      if (s === undefined) throw new TypeErrorCtor("Illegal invocation");
      if (!isObject(transform)) throw new TypeErrorCtor("pipeThrough: the transform is not an object");
      const readable = transform.readable;
      if (!R.isStream(readable)) throw new TypeErrorCtor("pipeThrough: transform.readable is not a ReadableStream");
      const writable = transform.writable;
      const ws = W.slot(writable);
      if (ws === undefined) throw new TypeErrorCtor("pipeThrough: transform.writable is not a WritableStream");
      const o = pipeOptions(options);
      if (s.reader !== null) throw new TypeErrorCtor("pipeThrough: the source is locked");
      if (ws.writer !== undefined) throw new TypeErrorCtor("pipeThrough: the destination is locked");
      markHandled(pipeTo(this, s, writable, ws, o));
      return readable;
    },
  };
  defineProperty(proto, "pipeThrough", { value: methods.pipeThrough, writable: true, enumerable: true, configurable: true });
  defineProperty(proto, "pipeTo", { value: methods.pipeTo, writable: true, enumerable: true, configurable: true });
})
