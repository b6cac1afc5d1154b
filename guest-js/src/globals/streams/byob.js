// The BYOB reader (`ReadableStreamBYOBReader`) and the byte-stream `tee` (WHATWG Streams), over
// streams.js's internals (`R`) and bytes.js's (`B`); the `byobReader` and `tee` hooks of `R.bytes`.
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (R, B) {
  "use strict";

  const { deferred, markHandled, pub, publicDeferred, publicRejected, resolved, then } = R;
  const {
    ReadableByteStreamController, ReadableStreamBYOBRequest, RangeErrorCtor, TypeErrorCtor,
    bufferLength, byobReaders, cloneAsUint8Array, close, defineClasses, enqueue, error,
    getBYOBRequest, isDetached, makeByteStream, pullInto, requests, respond, respondWithNewView,
    viewParts, weakGet, weakSet,
  } = B;

  class ReadableStreamBYOBReader {
    constructor(stream) {
      const s = weakGet(R.streams, stream);
      if (!s) throw new TypeErrorCtor("ReadableStreamBYOBReader: not a ReadableStream");
      if (s.reader !== null) throw new TypeErrorCtor("the stream is locked to a reader");
      if (!s.isBytes) throw new TypeErrorCtor("ReadableStreamBYOBReader: the stream is not a byte stream");
      const r = { __proto__: null, stream: s, requests: [], closed: deferred(), byob: true };
      s.reader = r;
      weakSet(byobReaders, this, r);
      if (s.state === "closed") r.closed.resolve(undefined);
      else if (s.state === "errored") {
        r.closed.reject(s.storedError);
        markHandled(r.closed.promise);
      }
    }
    get closed() {
      const r = weakGet(byobReaders, this);
      if (!r) return publicRejected(new TypeErrorCtor("Illegal invocation"));
      return pub(r.closed.promise);
    }
    read(view, options = undefined) {
      const r = weakGet(byobReaders, this);
      if (!r) return publicRejected(new TypeErrorCtor("Illegal invocation"));
      const parts = viewParts(view);
      if (parts === null) return publicRejected(new TypeErrorCtor("read: the view is not an ArrayBufferView"));
      let minimum = 1;
      try {
        if (options !== undefined && options !== null && typeof options !== "object" && typeof options !== "function") throw new TypeErrorCtor("read: the options are not an object");
        const raw = options === undefined || options === null ? undefined : options.min;
        if (raw !== undefined) minimum = R.enforceRange(raw, "min");
      } catch (e) {
        return publicRejected(e);
      }
      if (parts.byteLength === 0) return publicRejected(new TypeErrorCtor("read: the view is empty"));
      if (bufferLength(parts.buffer) === 0) return publicRejected(new TypeErrorCtor("read: the view's buffer is empty or detached"));
      if (isDetached(parts.buffer)) return publicRejected(new TypeErrorCtor("read: the view's buffer is detached"));
      if (minimum === 0) return publicRejected(new TypeErrorCtor("read: min must be greater than 0"));
      if (minimum > parts.length) return publicRejected(new RangeErrorCtor("read: min is larger than the view"));
      if (r.stream === null) return publicRejected(new TypeErrorCtor("the reader is released"));
      // The script's promise is settled with the `{ value, done }` result, as the spec's read-into request.
      const request = publicDeferred();
      readInto(r, parts, minimum, request);
      return request.promise;
    }
    releaseLock() {
      const r = weakGet(byobReaders, this);
      if (!r) throw new TypeErrorCtor("Illegal invocation");
      R.release(r);
    }
    cancel(reason = undefined) {
      const r = weakGet(byobReaders, this);
      if (!r) return publicRejected(new TypeErrorCtor("Illegal invocation"));
      if (r.stream === null) return publicRejected(new TypeErrorCtor("the reader is released"));
      return pub(R.cancelStream(r.stream, reason));
    }
  }
  // ReadableStreamBYOBReaderRead.
  function readInto(r, parts, minimum, request) {
    const s = r.stream;
    s.disturbed = true;
    if (s.state === "errored") request.reject(s.storedError);
    else pullInto(s, parts, minimum, request);
  }
  const acquireBYOBReader = (stream) => weakGet(byobReaders, new ReadableStreamBYOBReader(stream));
  R.bytes.byobReader = (stream) => new ReadableStreamBYOBReader(stream);

  // ReadableByteStreamTee: the second branch gets copies of the chunks; a branch read with a
  // BYOB reader reads into its own view.
  R.bytes.tee = (stream, source) => {
    let reader = R.acquireReader(stream);
    let reading = false, readAgain1 = false, readAgain2 = false, canceled1 = false, canceled2 = false;
    let reason1, reason2, branch1, branch2;
    const cancelled = deferred();
    const settleCancel = (promise) => then(promise, (v) => cancelled.resolve(v), (e) => cancelled.reject(e));
    const forwardReaderError = (thisReader) => {
      then(thisReader.closed.promise, undefined, (e) => {
        if (thisReader !== reader) return;
        error(branch1, e);
        error(branch2, e);
        if (!canceled1 || !canceled2) cancelled.resolve(undefined);
      });
    };
    const pullAgain = () => {
      if (readAgain1) pull1();
      else if (readAgain2) pull2();
    };
    const pullWithDefaultReader = () => {
      if (reader.byob) {
        R.release(reader);
        reader = R.acquireReader(stream);
        forwardReaderError(reader);
      }
      R.readWith(reader, {
        __proto__: null,
        resolve: (step) => {
          if (step.done) {
            reading = false;
            if (!canceled1) close(branch1);
            if (!canceled2) close(branch2);
            if (branch1.pendingPullIntos.length > 0) respond(branch1, 0);
            if (branch2.pendingPullIntos.length > 0) respond(branch2, 0);
            if (!canceled1 || !canceled2) cancelled.resolve(undefined);
            return;
          }
          const chunk = step.value;
          then(resolved(undefined), () => {
            readAgain1 = readAgain2 = false;
            let chunk2 = chunk;
            if (!canceled1 && !canceled2) {
              try {
                chunk2 = cloneAsUint8Array(chunk);
              } catch (e) {
                error(branch1, e);
                error(branch2, e);
                settleCancel(R.cancelStream(source, e));
                return;
              }
            }
            if (!canceled1) enqueue(branch1, viewParts(chunk));
            if (!canceled2) enqueue(branch2, viewParts(chunk2));
            reading = false;
            pullAgain();
          });
        },
        reject: () => {
          reading = false;
        },
      });
    };
    const pullWithBYOBReader = (view, forBranch2) => {
      if (!reader.byob) {
        R.release(reader);
        reader = acquireBYOBReader(stream);
        forwardReaderError(reader);
      }
      const byobBranch = forBranch2 ? branch2 : branch1;
      const otherBranch = forBranch2 ? branch1 : branch2;
      readInto(reader, viewParts(view), 1, {
        __proto__: null,
        resolve: (step) => {
          const chunk = step.value;
          if (step.done) {
            reading = false;
            const byobCanceled = forBranch2 ? canceled2 : canceled1;
            const otherCanceled = forBranch2 ? canceled1 : canceled2;
            if (!byobCanceled) close(byobBranch);
            if (!otherCanceled) close(otherBranch);
            if (chunk !== undefined) {
              if (!byobCanceled) respondWithNewView(byobBranch, viewParts(chunk));
              if (!otherCanceled && otherBranch.pendingPullIntos.length > 0) respond(otherBranch, 0);
            }
            if (!byobCanceled || !otherCanceled) cancelled.resolve(undefined);
            return;
          }
          then(resolved(undefined), () => {
            readAgain1 = readAgain2 = false;
            const byobCanceled = forBranch2 ? canceled2 : canceled1;
            const otherCanceled = forBranch2 ? canceled1 : canceled2;
            if (!otherCanceled) {
              let cloned;
              try {
                cloned = cloneAsUint8Array(chunk);
              } catch (e) {
                error(byobBranch, e);
                error(otherBranch, e);
                settleCancel(R.cancelStream(source, e));
                return;
              }
              if (!byobCanceled) respondWithNewView(byobBranch, viewParts(chunk));
              enqueue(otherBranch, viewParts(cloned));
            } else if (!byobCanceled) respondWithNewView(byobBranch, viewParts(chunk));
            reading = false;
            pullAgain();
          });
        },
        reject: () => {
          reading = false;
        },
      });
    };
    const pullBranch = (branch, forBranch2) => {
      if (reading) {
        if (forBranch2) readAgain2 = true;
        else readAgain1 = true;
        return resolved(undefined);
      }
      reading = true;
      const request = getBYOBRequest(branch);
      if (request === null) pullWithDefaultReader();
      else pullWithBYOBReader(weakGet(requests, request).view, forBranch2);
      return resolved(undefined);
    };
    const pull1 = () => pullBranch(branch1, false);
    const pull2 = () => pullBranch(branch2, true);
    const a = R.create(), b = R.create();
    const start = () => resolved(undefined);
    branch1 = makeByteStream(a, start, pull1, (reason) => {
      canceled1 = true;
      reason1 = reason;
      if (canceled2) settleCancel(R.cancelStream(source, [reason1, reason2]));
      return cancelled.promise;
    }, 0, undefined);
    branch2 = makeByteStream(b, start, pull2, (reason) => {
      canceled2 = true;
      reason2 = reason;
      if (canceled1) settleCancel(R.cancelStream(source, [reason1, reason2]));
      return cancelled.promise;
    }, 0, undefined);
    forwardReaderError(reader);
    return [a, b];
  };

  defineClasses([
    [ReadableByteStreamController, "ReadableByteStreamController"],
    [ReadableStreamBYOBReader, "ReadableStreamBYOBReader"],
    [ReadableStreamBYOBRequest, "ReadableStreamBYOBRequest"],
  ]);
})
