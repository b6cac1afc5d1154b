// `TransformStream` (WHATWG Streams) and its default controller, following the standard's
// abstract operations (the names in the comments are the standard's), over the readable side of
// streams.js (`R`) and the writable side of writable.js (`W`).
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (R, W) {
  "use strict";

  const { defineProperty, getOwnPropertyNames } = Object;
  const { apply } = Reflect;
  const { toStringTag } = Symbol;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const concat = uncurry(String.prototype.concat);
  // Internal promises, chained with no lookup a script can reach.
  const { then, resolved, rejected } = globalThis.__palisadePromises;
  const WeakMapCtor = WeakMap;
  const weakGet = uncurry(WeakMap.prototype.get);
  const weakSet = uncurry(WeakMap.prototype.set);
  const { deferred, promiseCall, strategyOf } = W;
  const isObject = (value) => (typeof value === "object" && value !== null) || typeof value === "function";

  const transforms = new WeakMapCtor();
  const controllers = new WeakMapCtor();
  let constructing = false;
  const slotOf = (map, value) => {
    const t = isObject(value) ? weakGet(map, value) : undefined;
    if (t === undefined) throw new TypeErrorCtor("Illegal invocation");
    return t;
  };
  const member = (dict, name) => {
    const value = dict === undefined ? undefined : dict[name];
    if (value !== undefined && typeof value !== "function") throw new TypeErrorCtor(concat("TransformStream: ", name, " is not a function"));
    return value;
  };

  class TransformStream {
    constructor(transformer = undefined, writableStrategy = undefined, readableStrategy = undefined) {
      if (transformer !== undefined && !isObject(transformer)) throw new TypeErrorCtor("TransformStream: the transformer is not an object");
      // The strategies are converted at the IDL layer, before the transformer (read in prose).
      const writableStrategyRecord = strategyOf(writableStrategy, 1, "TransformStream: the writable strategy");
      const readableStrategyRecord = strategyOf(readableStrategy, 0, "TransformStream: the readable strategy");
      const dict = transformer === null ? undefined : transformer;
      const cancel = member(dict, "cancel");
      const flush = member(dict, "flush");
      const readableType = dict === undefined ? undefined : dict.readableType;
      const start = member(dict, "start");
      const transform = member(dict, "transform");
      const writableType = dict === undefined ? undefined : dict.writableType;
      if (readableType !== undefined) throw new RangeErrorCtor("TransformStream: readableType must be undefined");
      if (writableType !== undefined) throw new RangeErrorCtor("TransformStream: writableType must be undefined");
      const startPromise = deferred();
      const t = initialize(this, startPromise.promise, writableStrategyRecord.hwm, writableStrategyRecord.size,
        readableStrategyRecord.hwm, readableStrategyRecord.size);
      // SetUpTransformStreamDefaultControllerFromTransformer.
      const controller = setUpController(t,
        transform === undefined
          ? (chunk) => {
            try {
              enqueue(t, chunk);
              return resolved(undefined);
            } catch (error) {
              return rejected(error);
            }
          }
          : (chunk) => promiseCall(transform, dict, [chunk, t.controller]),
        (c) => promiseCall(flush, dict, [c]),
        (reason) => promiseCall(cancel, dict, [reason]));
      startPromise.resolve(start === undefined ? undefined : apply(start, dict, [controller]));
    }
    get readable() {
      return slotOf(transforms, this).readable;
    }
    get writable() {
      return slotOf(transforms, this).writable;
    }
  }

  // InitializeTransformStream.
  function initialize(stream, startPromise, writableHwm, writableSize, readableHwm, readableSize) {
    const t = {
      __proto__: null, readable: undefined, writable: undefined, readableSlot: undefined, writableSlot: undefined,
      backpressure: undefined, backpressureChange: undefined, controller: undefined,
      transformAlgorithm: undefined, flushAlgorithm: undefined, cancelAlgorithm: undefined, finish: undefined,
    };
    weakSet(transforms, stream, t);
    t.writable = W.create(() => startPromise, (chunk) => sinkWrite(t, chunk), () => sinkClose(t),
      (reason) => sinkAbort(t, reason), writableHwm, writableSize);
    t.writableSlot = W.slot(t.writable);
    t.readable = R.create();
    t.readableSlot = R.makeStream(t.readable, () => startPromise, () => sourcePull(t), (reason) => sourceCancel(t, reason),
      readableHwm, readableSize);
    setBackpressure(t, true);
    return t;
  }

  function transformStreamError(t, e) {
    R.errorStream(t.readableSlot, e);
    errorWritableAndUnblockWrite(t, e);
  }
  function errorWritableAndUnblockWrite(t, e) {
    clearAlgorithms(t);
    W.errorIfNeeded(t.writableSlot, e);
    unblockWrite(t);
  }
  function unblockWrite(t) {
    if (t.backpressure) setBackpressure(t, false);
  }
  function setBackpressure(t, backpressure) {
    if (t.backpressureChange !== undefined) t.backpressureChange.resolve(undefined);
    t.backpressureChange = deferred();
    t.backpressure = backpressure;
  }

  class TransformStreamDefaultController {
    constructor() {
      if (!constructing) throw new TypeErrorCtor("Illegal constructor");
    }
    get desiredSize() {
      return R.desiredSize(slotOf(controllers, this).readableSlot);
    }
    enqueue(chunk = undefined) {
      enqueue(slotOf(controllers, this), chunk);
    }
    error(reason = undefined) {
      transformStreamError(slotOf(controllers, this), reason);
    }
    terminate() {
      terminate(slotOf(controllers, this));
    }
  }

  function setUpController(t, transform, flush, cancel) {
    constructing = true;
    let controller;
    try {
      controller = new TransformStreamDefaultController();
    } finally {
      constructing = false;
    }
    weakSet(controllers, controller, t);
    t.controller = controller;
    t.transformAlgorithm = transform;
    t.flushAlgorithm = () => flush(controller);
    t.cancelAlgorithm = cancel;
    return controller;
  }
  function clearAlgorithms(t) {
    t.transformAlgorithm = t.flushAlgorithm = t.cancelAlgorithm = undefined;
  }
  // TransformStreamDefaultControllerEnqueue.
  function enqueue(t, chunk) {
    const rs = t.readableSlot;
    if (!R.canCloseOrEnqueue(rs)) throw new TypeErrorCtor("the readable side cannot take more chunks");
    try {
      R.enqueue(rs, chunk);
    } catch (error) {
      errorWritableAndUnblockWrite(t, error);
      throw rs.storedError;
    }
    const backpressure = R.hasBackpressure(rs);
    if (backpressure !== t.backpressure) setBackpressure(t, true);
  }
  function terminate(t) {
    const rs = t.readableSlot;
    if (R.canCloseOrEnqueue(rs)) R.closeController(rs);
    errorWritableAndUnblockWrite(t, new TypeErrorCtor("the transform stream was terminated"));
  }
  function performTransform(t, chunk) {
    return then(t.transformAlgorithm(chunk), undefined, (r) => {
      transformStreamError(t, r);
      throw r;
    });
  }

  // TransformStreamDefaultSinkWriteAlgorithm.
  function sinkWrite(t, chunk) {
    if (t.backpressure) {
      return then(t.backpressureChange.promise, () => {
        const ws = t.writableSlot;
        if (ws.state === "erroring") throw ws.storedError;
        return performTransform(t, chunk);
      });
    }
    return performTransform(t, chunk);
  }
  // TransformStreamDefaultSinkAbortAlgorithm.
  function sinkAbort(t, reason) {
    if (t.finish !== undefined) return t.finish.promise;
    const rs = t.readableSlot;
    const finish = (t.finish = deferred());
    const cancelPromise = t.cancelAlgorithm(reason);
    clearAlgorithms(t);
    then(cancelPromise, () => {
      if (rs.state === "errored") finish.reject(rs.storedError);
      else {
        R.errorStream(rs, reason);
        finish.resolve(undefined);
      }
    }, (r) => {
      R.errorStream(rs, r);
      finish.reject(r);
    });
    return finish.promise;
  }
  // TransformStreamDefaultSinkCloseAlgorithm.
  function sinkClose(t) {
    if (t.finish !== undefined) return t.finish.promise;
    const rs = t.readableSlot;
    const finish = (t.finish = deferred());
    const flushPromise = t.flushAlgorithm();
    clearAlgorithms(t);
    then(flushPromise, () => {
      if (rs.state === "errored") finish.reject(rs.storedError);
      else {
        if (R.canCloseOrEnqueue(rs)) R.closeController(rs);
        finish.resolve(undefined);
      }
    }, (r) => {
      R.errorStream(rs, r);
      finish.reject(r);
    });
    return finish.promise;
  }
  // TransformStreamDefaultSourcePullAlgorithm.
  function sourcePull(t) {
    setBackpressure(t, false);
    return t.backpressureChange.promise;
  }
  // TransformStreamDefaultSourceCancelAlgorithm.
  function sourceCancel(t, reason) {
    if (t.finish !== undefined) return t.finish.promise;
    const ws = t.writableSlot;
    const finish = (t.finish = deferred());
    const cancelPromise = t.cancelAlgorithm(reason);
    clearAlgorithms(t);
    then(cancelPromise, () => {
      if (ws.state === "errored") finish.reject(ws.storedError);
      else {
        W.errorIfNeeded(ws, reason);
        unblockWrite(t);
        finish.resolve(undefined);
      }
    }, (r) => {
      W.errorIfNeeded(ws, r);
      unblockWrite(t);
      finish.reject(r);
    });
    return finish.promise;
  }

  const classes = [
    [TransformStream, "TransformStream"],
    [TransformStreamDefaultController, "TransformStreamDefaultController"],
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
    // A TransformStream over `transform(chunk, enqueue)` and `flush(enqueue)` (each may throw,
    // which errors both sides): [the stream, its readable, its writable].
    create: (transform, flush) => {
      const stream = { __proto__: TransformStream.prototype };
      const t = initialize(stream, resolved(undefined), 1, () => 1, 0, () => 1);
      const push = (chunk) => enqueue(t, chunk);
      const guard = (fn) => {
        try {
          fn();
          return resolved(undefined);
        } catch (error) {
          return rejected(error);
        }
      };
      setUpController(t, (chunk) => guard(() => transform(chunk, push)), () => guard(() => flush(push)), () => resolved(undefined));
      return stream;
    },
    readableOf: (stream) => slotOf(transforms, stream).readable,
    writableOf: (stream) => slotOf(transforms, stream).writable,
  };
})
