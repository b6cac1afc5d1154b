
(function (nativeCancel) {
  "use strict";
  // Host-facing: the maps and the promise are the intrinsics captured here, and a result is
  // handed over in a box without a prototype, so that settling it looks nothing up (no `then`).
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const MapCtor = Map;
  const mapGet = uncurry(Map.prototype.get);
  const mapSet = uncurry(Map.prototype.set);
  const mapHas = uncurry(Map.prototype.has);
  const mapDelete = uncurry(Map.prototype.delete);
  const PromiseCtor = Promise;
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
      return new PromiseCtor((resolve) => resolve(box));
    }
    return new PromiseCtor((resolve) => mapSet(waiting, id, resolve));
  }
  function cancel(id) {
    if (id == null) return;
    nativeCancel(id);
    mapDelete(waiting, id);
    mapDelete(arrived, id);
  }
  return [onReady, wait, cancel];
})
