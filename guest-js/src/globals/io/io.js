
(function (nativeCancel) {
  "use strict";
  // Host-facing: the maps are the intrinsics captured here, the promise an internal one
  // (promises.js), and a result is handed over in a box without a prototype, so that settling
  // and awaiting it look nothing up (no `then`, no `constructor`).
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const MapCtor = Map;
  const mapGet = uncurry(Map.prototype.get);
  const mapSet = uncurry(Map.prototype.set);
  const mapHas = uncurry(Map.prototype.has);
  const mapDelete = uncurry(Map.prototype.delete);
  const newPromise = globalThis.__palisadePromises.promise;
  const waiting = new MapCtor();
  const arrived = new MapCtor();
  function onReady(id, value) {
    const box = { __proto__: null, value };
    const waiter = mapGet(waiting, id);
    if (waiter) {
      mapDelete(waiting, id);
      waiter(box);
    } else {
      mapSet(arrived, id, box);
    }
  }
  // A promise of `{ value }`, the operation's result.
  function wait(id) {
    if (mapHas(arrived, id)) {
      const box = mapGet(arrived, id);
      mapDelete(arrived, id);
      return newPromise((resolve) => resolve(box));
    }
    return newPromise((resolve) => mapSet(waiting, id, resolve));
  }
  function cancel(id) {
    if (id == null) return;
    nativeCancel(id);
    mapDelete(waiting, id);
    mapDelete(arrived, id);
  }
  return [onReady, wait, cancel];
})
