
(function () {
  "use strict";
  // Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const MapCtor = Map;
  const mapSet = uncurry(Map.prototype.set);
  const mapDelete = uncurry(Map.prototype.delete);
  const mapForEach = uncurry(Map.prototype.forEach);
  const { apply } = Reflect;
  const dateNow = Date.now;
  const { max } = Math;
  const NumberCtor = Number;
  const TypeErrorCtor = TypeError;
  const PromiseCtor = Promise;
  const timers = new MapCtor();
  let nextId = 1;
  globalThis.setTimeout = function setTimeout(callback, delay = 0, ...args) {
    if (typeof callback !== "function") throw new TypeErrorCtor("setTimeout needs a function");
    const id = nextId++;
    mapSet(timers, id, { __proto__: null, due: dateNow() + max(0, NumberCtor(delay) || 0), callback, args });
    return id;
  };
  globalThis.clearTimeout = function clearTimeout(id) {
    mapDelete(timers, id);
  };
  globalThis.queueMicrotask = function queueMicrotask(callback) {
    if (typeof callback !== "function") throw new TypeErrorCtor("queueMicrotask needs a function");
    (async () => {
      await undefined;
      callback();
    })();
  };
  let nextKey, next;
  const earlier = (timer, key) => {
    if (next === undefined || timer.due < next.due) { nextKey = key; next = timer; }
  };
  // The earliest timer (ties in creation order), in `nextKey` and `next`.
  const earliest = () => {
    nextKey = next = undefined;
    mapForEach(timers, earlier);
  };
  // Milliseconds until the earliest timer is due, or -1 when there is none.
  const nextWait = () => {
    earliest();
    return next === undefined ? -1 : max(0, next.due - dateNow());
  };
  // Run the earliest timer (ties in creation order).
  const runNext = () => {
    earliest();
    const timer = next;
    if (timer === undefined) return;
    mapDelete(timers, nextKey);
    next = undefined;
    apply(timer.callback, timer, timer.args);
  };
  return [nextWait, runNext];
})
