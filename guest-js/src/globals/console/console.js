// The `console` namespace (Console Standard): an object whose prototype is an empty object
// over `Object.prototype`, tagged "console", a non-enumerable global; its logging methods are
// mod.rs's (`methods`), and the counting and timing methods are here, over the call's
// monotonic clock in milliseconds (`now`, the one `performance.now()` reads). A label is
// converted with ToString when the method is called (a symbol is a TypeError, an exception of a
// `toString` propagates). Counts and timers belong to the call: each call starts from the
// snapshot, where there are none.
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (methods, now) {
  "use strict";

  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const { create, defineProperty } = Object;
  const { apply } = Reflect;
  const concat = uncurry(String.prototype.concat);
  const toFixed = uncurry(Number.prototype.toFixed);
  const MapCtor = Map;
  const mapGet = uncurry(Map.prototype.get);
  const mapSet = uncurry(Map.prototype.set);
  const mapHas = uncurry(Map.prototype.has);
  const mapDelete = uncurry(Map.prototype.delete);
  const { info, warn } = methods;
  // An element stored past the end without the setters a script may put on Array.prototype.
  const own = (list, value) =>
    defineProperty(list, list.length, { __proto__: null, value, writable: true, enumerable: true, configurable: true });

  const console = create(create(Object.prototype));
  const define = (fn) =>
    defineProperty(console, fn.name, { __proto__: null, value: fn, writable: true, enumerable: true, configurable: true });
  for (const name of ["debug", "info", "log", "warn", "error"]) define(methods[name]);

  const counts = new MapCtor();
  const timers = new MapCtor();
  const label = (value) => (value === undefined ? "default" : concat("", value));
  const elapsed = (name) => concat(name, ": ", toFixed(now() - mapGet(timers, name), 3), "ms");

  define({
    count(name = undefined) {
      name = label(name);
      const count = (mapHas(counts, name) ? mapGet(counts, name) : 0) + 1;
      mapSet(counts, name, count);
      info(concat(name, ": ", count));
    },
  }.count);
  define({
    countReset(name = undefined) {
      name = label(name);
      if (mapHas(counts, name)) mapSet(counts, name, 0);
      else warn(concat("Count for '", name, "' does not exist"));
    },
  }.countReset);
  define({
    time(name = undefined) {
      name = label(name);
      if (mapHas(timers, name)) warn(concat("Timer '", name, "' already exists"));
      else mapSet(timers, name, now());
    },
  }.time);
  define({
    timeLog(name = undefined, ...data) {
      name = label(name);
      if (!mapHas(timers, name)) warn(concat("Timer '", name, "' does not exist"));
      else {
        const args = [elapsed(name)];
        for (let i = 0; i < data.length; i++) own(args, data[i]);
        apply(info, undefined, args);
      }
    },
  }.timeLog);
  define({
    timeEnd(name = undefined) {
      name = label(name);
      if (!mapHas(timers, name)) warn(concat("Timer '", name, "' does not exist"));
      else {
        info(elapsed(name));
        mapDelete(timers, name);
      }
    },
  }.timeEnd);

  defineProperty(console, Symbol.toStringTag, { __proto__: null, value: "console", writable: false, enumerable: false, configurable: true });
  defineProperty(globalThis, "console", { __proto__: null, value: console, writable: true, enumerable: false, configurable: true });
})
