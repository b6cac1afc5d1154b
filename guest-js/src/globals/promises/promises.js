// The promise plumbing every guest global chains its own promises with. The WHATWG specs settle
// and chain internal promises with PerformPromiseThen, which looks nothing up; `promise.then(…)`,
// `await` and `Promise.prototype.then` read `then`, `constructor` and `Symbol.species`, which a
// script can replace. An internal promise here is a genuine promise whose prototype is a frozen
// object without a prototype: its `then` is the intrinsic one, its `constructor` is
// `InternalPromise`, whose `Symbol.species` is itself, all frozen. So chaining one, awaiting one
// and resolving a promise with one read only those frozen values, and what `then` returns is
// internal again. A script is handed a public twin (`pub`), made with the intrinsic `Promise`
// and settled from the internal one; the guest never chains on a promise a script was handed.
// Evaluated once while the guest is built; the globals take it before the snapshot.
(function () {
  "use strict";
  const PromiseCtor = Promise;
  const intrinsicThen = PromiseCtor.prototype.then;
  const callThen = Function.prototype.call.bind(intrinsicThen);
  const { defineProperty, freeze, setPrototypeOf } = Object;
  const WeakMapCtor = WeakMap;
  const weakGet = Function.prototype.call.bind(WeakMap.prototype.get);
  const weakSet = Function.prototype.call.bind(WeakMap.prototype.set);

  class InternalPromise extends PromiseCtor {
    constructor(executor) {
      super(executor);
    }
  }
  const proto = InternalPromise.prototype;
  setPrototypeOf(proto, null);
  defineProperty(proto, "then", { __proto__: null, value: intrinsicThen });
  freeze(proto);
  defineProperty(InternalPromise, Symbol.species, { __proto__: null, value: InternalPromise });
  freeze(InternalPromise);

  const noop = () => {};
  // `onFulfilled`/`onRejected` on an internal promise; the result is internal.
  const then = (promise, onFulfilled, onRejected) => callThen(promise, onFulfilled, onRejected);
  const promise = (executor) => new InternalPromise(executor);
  const markHandled = (p) => {
    callThen(p, undefined, noop);
  };
  // Made an internal promise: a promise just made by the guest (an async function's, one a native
  // returned) that no script has seen yet.
  const internal = (p) => {
    setPrototypeOf(p, proto);
    return p;
  };

  // The public twin of each internal promise that has one; a deferred's twin is settled together
  // with it (in the same turn, as the spec settles the one promise), any other's adopts it.
  const twins = new WeakMapCtor();
  // A promise with its settle functions.
  const deferred = () => {
    const d = { __proto__: null, promise: null, resolve: null, reject: null };
    const twin = { __proto__: null, state: 0, value: undefined, public: null, resolve: null, reject: null };
    let resolveInternal, rejectInternal;
    d.promise = new InternalPromise((resolve, reject) => {
      resolveInternal = resolve;
      rejectInternal = reject;
    });
    d.resolve = (value) => {
      if (twin.state !== 0) return;
      twin.state = 1;
      twin.value = value;
      resolveInternal(value);
      if (twin.public !== null) twin.resolve(value);
    };
    d.reject = (reason) => {
      if (twin.state !== 0) return;
      twin.state = 2;
      twin.value = reason;
      rejectInternal(reason);
      if (twin.public !== null) twin.reject(reason);
    };
    weakSet(twins, d.promise, twin);
    return d;
  };
  // A settled internal promise whose outcome is known now: its public twin is settled at once
  // (as a promise the spec makes already settled), not a turn later by adopting it.
  const settledTwin = (p, state, value) => {
    weakSet(twins, p, { __proto__: null, state, value, public: null, resolve: null, reject: null });
    return p;
  };
  // The spec's "a promise resolved with `value`": a thenable `value` (a script's) is adopted.
  const resolved = (value) => {
    const p = new InternalPromise((resolve) => resolve(value));
    return (typeof value === "object" && value !== null) || typeof value === "function" ? p : settledTwin(p, 1, value);
  };
  // Handled: a script sees only its twin, and only the twin may go unhandled.
  const rejected = (reason) => {
    const p = settledTwin(new InternalPromise((_, reject) => reject(reason)), 2, reason);
    markHandled(p);
    return p;
  };
  // The promise a script gets for internal promise `p`: always the same one for the same `p`.
  const pub = (p) => {
    let twin = weakGet(twins, p);
    if (twin === undefined) {
      twin = { __proto__: null, state: 0, value: undefined, public: null, resolve: null, reject: null };
      weakSet(twins, p, twin);
      twin.public = new PromiseCtor((resolve) => resolve(p));
      return twin.public;
    }
    if (twin.public === null) {
      twin.public = new PromiseCtor((resolve, reject) => {
        twin.resolve = resolve;
        twin.reject = reject;
      });
      if (twin.state === 1) twin.resolve(twin.value);
      else if (twin.state === 2) twin.reject(twin.value);
    }
    return twin.public;
  };
  // A public promise with its settle functions, for a result only a script waits for.
  const publicDeferred = () => {
    const d = { __proto__: null, promise: null, resolve: null, reject: null };
    d.promise = new PromiseCtor((resolve, reject) => {
      d.resolve = resolve;
      d.reject = reject;
    });
    return d;
  };
  // A public promise rejected with `reason` (a method's early failure).
  const publicRejected = (reason) => new PromiseCtor((_, reject) => reject(reason));

  return freeze({
    __proto__: null, InternalPromise, then, promise, resolved, rejected, deferred, markHandled,
    internal, pub, publicRejected, publicDeferred,
  });
})
