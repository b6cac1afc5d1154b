
(function (admit) {
  "use strict";
  // Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const MapCtor = Map;
  const mapSet = uncurry(Map.prototype.set);
  const mapDelete = uncurry(Map.prototype.delete);
  const mapForEach = uncurry(Map.prototype.forEach);
  const mapClear = uncurry(Map.prototype.clear);
  const { apply } = Reflect;
  const dateNow = Date.now;
  const { max } = Math;
  const TypeErrorCtor = TypeError;
  const PromiseCtor = Promise;
  const timers = new MapCtor();
  let nextId = 1;
  // The due time of the timer that fired last, and the nesting level of the callback running
  // now (HTML's timer nesting level: 0 outside any timer callback).
  let lastDue = -Infinity;
  let nesting = 0;
  // The time timers count from: the clock, or under a fixed clock (which does not move) the due
  // time of the timer that fired last, so that timers and intervals still fire in due order.
  const now = () => max(dateNow(), lastDue);
  // HTML's timer initialization steps for the delay: WebIDL `long` (ToInt32: 2 ** 32 is 0),
  // negative as 0, and at least 4 ms once timers nest more than five deep, so that an interval
  // or a chain of timeouts cannot spin the event loop (each turn waits, under the deadline).
  const delayOf = (delay, level) => {
    let ms = delay | 0;
    if (ms < 0) ms = 0;
    if (level > 5 && ms < 4) ms = 4;
    return ms;
  };
  // `admit` (Rust) refuses every timer function, through the host, when the call's policy
  // turns timers off (an action app under `[apps] timers = false`): here, where the global
  // functions and every alias a prelude captured (`AbortSignal.timeout`, a `MessagePort`'s
  // delivery) schedule, and again in the event loop (timers/mod.rs), which runs no timer then.
  const schedule = (callback, delay, args, repeat) => {
    admit(repeat ? "setInterval" : "setTimeout");
    if (typeof callback !== "function") {
      throw new TypeErrorCtor(repeat ? "setInterval needs a function" : "setTimeout needs a function");
    }
    const id = nextId++;
    const level = nesting + 1;
    const ms = delayOf(delay, level);
    mapSet(timers, id, { __proto__: null, due: now() + ms, callback, args, repeat, ms, level });
    return id;
  };
  globalThis.setTimeout = function setTimeout(callback, delay = 0, ...args) {
    return schedule(callback, delay, args, false);
  };
  globalThis.setInterval = function setInterval(callback, delay = 0, ...args) {
    return schedule(callback, delay, args, true);
  };
  // Timeouts and intervals share one list of ids, as in HTML: either function clears either.
  globalThis.clearTimeout = function clearTimeout(id = 0) {
    admit("clearTimeout");
    mapDelete(timers, id);
  };
  globalThis.clearInterval = function clearInterval(id = 0) {
    admit("clearInterval");
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
    lastDue = timer.due;
    if (timer.repeat) {
      // Scheduled again before the callback runs, so that the callback can clear it; each
      // repetition nests one level deeper (HTML), which brings the 4 ms floor after five.
      timer.level++;
      timer.ms = delayOf(timer.ms, timer.level);
      timer.due = now() + timer.ms;
      mapSet(timers, nextKey, timer);
    }
    const outer = nesting;
    nesting = timer.level;
    try {
      apply(timer.callback, globalThis, timer.args);
    } finally {
      nesting = outer;
    }
  };
  // Drop every timer and interval (a live session's call ends with its result).
  const clearAll = () => {
    mapClear(timers);
    next = undefined;
  };
  return [nextWait, runNext, clearAll];
})
