/**
 * `EventTarget`, `Event`, `AbortController` and `AbortSignal` for Palisade guests, after the DOM
 * standard. Targets are never in a tree, so dispatch runs a target's own listeners only
 * (capturing ones first, as at the target phase). `AbortSignal.timeout` schedules with the
 * guest's `setTimeout`.
 */
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(() => {
  "use strict";

  // Intrinsics, captured before the snapshot.
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  // QuickJS compiles a template literal to a call of `String.prototype.concat`: none here.
  const concat = uncurry(String.prototype.concat);
  const { defineProperty, freeze } = Object;
  const { apply } = Reflect;
  const { isArray } = Array;
  const BooleanCtor = Boolean;
  const NumberCtor = Number;
  const { trunc } = Math;
  const { isFinite, MAX_SAFE_INTEGER } = Number;
  const TypeErrorCtor = TypeError;
  const dateNow = Date.now;
  const performanceNow = globalThis.performance?.now ? uncurry(globalThis.performance.now) : null;
  const performanceObject = globalThis.performance;
  const MapCtor = Map;
  const mapGet = uncurry(Map.prototype.get);
  const mapSet = uncurry(Map.prototype.set);
  const SetCtor = Set;
  const setAdd = uncurry(Set.prototype.add);
  const setForEach = uncurry(Set.prototype.forEach);
  const setClear = uncurry(Set.prototype.clear);
  const splice = uncurry(Array.prototype.splice);
  const push = (list, value) => { defineProperty(list, list.length, { __proto__: null, value, writable: true, enumerable: true, configurable: true }); };
  const copy = (list) => { const out = []; for (let i = 0; i < list.length; i++) push(out, list[i]); return out; };
  const indexOf = (list, value) => { for (let i = 0; i < list.length; i++) if (list[i] === value) return i; return -1; };
  const DOMExceptionCtor = globalThis.DOMException;
  const { getPrototypeOf, hasOwn } = Object;
  const ObjectPrototype = Object.prototype;
  // A dictionary member as Web IDL reads it, except that nothing is taken from
  // `Object.prototype`, where only a script that tampers with it could have put it.
  const member = (dict, key) => {
    for (let o = dict; o !== null && o !== undefined && o !== ObjectPrototype; o = getPrototypeOf(o)) {
      if (hasOwn(o, key)) return dict[key];
    }
    return undefined;
  };
  const setTimeoutFn = globalThis.setTimeout;

  const defineGlobal = (name, value) =>
    defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });


  const requireArgs = (args, count, what) => {
    if (args.length < count) {
      throw new TypeErrorCtor(concat("", what, ": ", count, " argument", count > 1 ? "s" : "", " required, but only ", args.length, " present"));
    }
  };
  const isObject = (value) => (typeof value === "object" && value !== null) || typeof value === "function";

  // An exception from a listener must not stop the dispatch; report it the way the host can.
  const reportError = typeof globalThis.reportError === "function" ? globalThis.reportError : null;
  const consoleError = globalThis.console?.error;
  const reportException = (error) => {
    if (reportError) reportError(error);
    else if (typeof consoleError === "function") consoleError("Uncaught", error);
  };

  const PHASES = { NONE: 0, CAPTURING_PHASE: 1, AT_TARGET: 2, BUBBLING_PHASE: 3 };
  const now = () => (performanceNow ? performanceNow(performanceObject) : dateNow());

  let eventState, isEvent;

  class Event {
    #state;

    constructor(type, eventInitDict = undefined) {
      requireArgs(arguments, 1, "Event");
      if (eventInitDict != null && !isObject(eventInitDict)) throw new TypeErrorCtor("Event: eventInitDict must be an object");
      this.#state = {
        type: concat("", type),
        bubbles: BooleanCtor(member(eventInitDict, "bubbles")),
        cancelable: BooleanCtor(member(eventInitDict, "cancelable")),
        composed: BooleanCtor(member(eventInitDict, "composed")),
        target: null,
        currentTarget: null,
        phase: PHASES.NONE,
        canceled: false,
        stopPropagation: false,
        stopImmediatePropagation: false,
        inPassiveListener: false,
        dispatching: false,
        trusted: false,
        timeStamp: now(),
      };
    }

    get type() { return this.#state.type; }
    get target() { return this.#state.target; }
    get srcElement() { return this.#state.target; }
    get currentTarget() { return this.#state.currentTarget; }
    get eventPhase() { return this.#state.phase; }
    get bubbles() { return this.#state.bubbles; }
    get cancelable() { return this.#state.cancelable; }
    get composed() { return this.#state.composed; }
    get defaultPrevented() { return this.#state.canceled; }
    get isTrusted() { return this.#state.trusted; }
    get timeStamp() { return this.#state.timeStamp; }

    composedPath() {
      return this.#state.currentTarget === null ? [] : [this.#state.currentTarget];
    }

    stopPropagation() {
      this.#state.stopPropagation = true;
    }

    stopImmediatePropagation() {
      this.#state.stopPropagation = this.#state.stopImmediatePropagation = true;
    }

    preventDefault() {
      if (this.#state.cancelable && !this.#state.inPassiveListener) this.#state.canceled = true;
    }

    // The legacy members: `returnValue` is the opposite of `defaultPrevented` (setting it false
    // cancels), `cancelBubble` is `stopPropagation`, and `initEvent` resets an event that is not
    // being dispatched.
    get returnValue() { return !this.#state.canceled; }
    set returnValue(value) { if (!value) this.preventDefault(); }
    get cancelBubble() { return this.#state.stopPropagation; }
    set cancelBubble(value) { if (value) this.#state.stopPropagation = true; }
    initEvent(type, bubbles = false, cancelable = false) {
      requireArgs(arguments, 1, "Event.initEvent");
      const state = this.#state;
      if (state.dispatching) return;
      state.type = concat("", type);
      state.bubbles = BooleanCtor(bubbles);
      state.cancelable = BooleanCtor(cancelable);
      state.canceled = state.stopPropagation = state.stopImmediatePropagation = false;
      state.target = null;
    }

    static {
      eventState = (event) => event.#state;
      isEvent = (value) => isObject(value) && #state in value;
    }
  }

  // Listener options: a boolean means `capture`; `signal` must be an AbortSignal.
  const flattenOptions = (options, withExtras) => {
    if (!isObject(options)) return { capture: BooleanCtor(options), once: false, passive: false, signal: undefined };
    const capture = BooleanCtor(member(options, "capture"));
    if (!withExtras) return { capture };
    const once = BooleanCtor(member(options, "once")), passive = BooleanCtor(member(options, "passive"));
    const signal = member(options, "signal");
    if (signal !== undefined && !isAbortSignal(signal)) throw new TypeErrorCtor("addEventListener: options.signal is not an AbortSignal");
    return { capture, once, passive, signal };
  };

  let addListener, removeListener, dispatch, isAbortSignal, isAborted, onAbort;

  class EventTarget {
    #listeners = new MapCtor();

    #remove(type, listener) {
      const list = mapGet(this.#listeners, type);
      const index = list ? indexOf(list, listener) : -1;
      if (index >= 0) splice(list, index, 1);
      listener.removed = true;
    }

    #add(type, callback, { capture, once, passive, signal }) {
      if (callback === null || (signal !== undefined && isAborted(signal))) return;
      let list = mapGet(this.#listeners, type);
      if (list === undefined) mapSet(this.#listeners, type, (list = []));
      for (let i = 0; i < list.length; i++) if (list[i].callback === callback && list[i].capture === capture) return;
      const listener = { __proto__: null, callback, capture, once, passive, removed: false };
      push(list, listener);
      if (signal) onAbort(signal, () => this.#remove(type, listener));
    }

    addEventListener(type, callback, options = undefined) {
      requireArgs(arguments, 2, "EventTarget.addEventListener");
      if (callback !== null && callback !== undefined && !isObject(callback)) {
        throw new TypeErrorCtor("EventTarget.addEventListener: callback is not an object");
      }
      this.#add(concat("", type), callback ?? null, flattenOptions(options, true));
    }

    #removeMatching(type, callback, capture) {
      const list = mapGet(this.#listeners, type);
      if (list === undefined) return;
      for (let i = 0; i < list.length; i++) {
        if (list[i].callback === callback && list[i].capture === capture) return this.#remove(type, list[i]);
      }
    }

    removeEventListener(type, callback, options = undefined) {
      requireArgs(arguments, 2, "EventTarget.removeEventListener");
      this.#removeMatching(concat("", type), callback, flattenOptions(options, false).capture);
    }

    dispatchEvent(event) {
      requireArgs(arguments, 1, "EventTarget.dispatchEvent");
      if (!isEvent(event)) throw new TypeErrorCtor("EventTarget.dispatchEvent: event is not an Event");
      return dispatch(this, event, false);
    }

    // Run the listeners for one pass: capturing ones, then the rest.
    #invoke(event, state, capture) {
      if (state.stopPropagation) return;
      const list = mapGet(this.#listeners, state.type);
      if (list === undefined) return;
      const listeners = copy(list);
      for (let i = 0; i < listeners.length; i++) {
        const listener = listeners[i];
        if (listener.removed || listener.capture !== capture) continue;
        if (listener.once) this.#remove(state.type, listener);
        state.inPassiveListener = listener.passive;
        try {
          const { callback } = listener;
          if (typeof callback === "function") apply(callback, this, [event]);
          else {
            const handleEvent = callback.handleEvent;
            if (typeof handleEvent !== "function") throw new TypeErrorCtor("EventListener.handleEvent is not a function");
            apply(handleEvent, callback, [event]);
          }
        } catch (error) {
          reportException(error);
        }
        state.inPassiveListener = false;
        if (state.stopImmediatePropagation) return;
      }
    }

    static {
      addListener = (target, type, callback) =>
        target.#add(type, callback, { __proto__: null, capture: false, once: false, passive: false, signal: undefined });
      removeListener = (target, type, callback) => target.#removeMatching(type, callback, false);
      dispatch = (target, event, trusted) => {
        const state = eventState(event);
        if (state.dispatching) throw new DOMExceptionCtor("The event is already being dispatched.", "InvalidStateError");
        state.dispatching = true;
        state.trusted = trusted;
        state.target = state.currentTarget = target;
        state.phase = PHASES.AT_TARGET;
        target.#invoke(event, state, true);
        target.#invoke(event, state, false);
        state.dispatching = false;
        state.currentTarget = null;
        state.phase = PHASES.NONE;
        state.stopPropagation = state.stopImmediatePropagation = false;
        return !state.canceled;
      };
    }
  }

  const abortError = () => new DOMExceptionCtor("This operation was aborted", "AbortError");
  const CONSTRUCT = Symbol("AbortSignal");
  let signalAbort, createSignal, forget, reasonOf;

  class AbortSignal extends EventTarget {
    #reason = undefined;
    #algorithms = [];
    #sources = [];
    #dependents = new SetCtor();
    #dependent = false;
    #onabort = null;
    #handlerListener = null;

    constructor(key = undefined) {
      if (key !== CONSTRUCT) throw new TypeErrorCtor("Illegal constructor");
      super();
    }

    get aborted() {
      return this.#reason !== undefined;
    }

    get reason() {
      return this.#reason;
    }

    throwIfAborted() {
      if (this.#reason !== undefined) throw this.#reason;
    }

    get onabort() {
      return this.#onabort;
    }

    set onabort(handler) {
      this.#onabort = isObject(handler) ? handler : null;
      if (this.#onabort === null && this.#handlerListener !== null) {
        removeListener(this, "abort", this.#handlerListener);
        this.#handlerListener = null;
      } else if (this.#onabort !== null && this.#handlerListener === null) {
        this.#handlerListener = (event) => {
          const current = this.#onabort;
          if (typeof current === "function" && apply(current, this, [event]) === false) {
            const state = eventState(event);
            if (state.cancelable && !state.inPassiveListener) state.canceled = true;
          }
        };
        addListener(this, "abort", this.#handlerListener);
      }
    }

    static abort(reason = undefined) {
      const signal = new AbortSignal(CONSTRUCT);
      signal.#reason = reason === undefined ? abortError() : reason;
      return signal;
    }

    static timeout(milliseconds) {
      requireArgs(arguments, 1, "AbortSignal.timeout");
      const number = NumberCtor(milliseconds);
      const ms = trunc(number);
      if (!isFinite(number) || ms < 0 || ms > MAX_SAFE_INTEGER) {
        throw new TypeErrorCtor("AbortSignal.timeout: milliseconds must be a non-negative safe integer");
      }
      const signal = new AbortSignal(CONSTRUCT);
      setTimeoutFn(() => {
        signal.#abort(new DOMExceptionCtor("The operation timed out.", "TimeoutError"));
      }, ms);
      return signal;
    }

    static any(signals) {
      requireArgs(arguments, 1, "AbortSignal.any");
      const list = isArray(signals) ? copy(signals) : [...signals];
      for (let i = 0; i < list.length; i++) if (!isAbortSignal(list[i])) throw new TypeErrorCtor("AbortSignal.any: every member must be an AbortSignal");
      const result = new AbortSignal(CONSTRUCT);
      for (let i = 0; i < list.length; i++) {
        if (list[i].#reason !== undefined) {
          result.#reason = list[i].#reason;
          return result;
        }
      }
      result.#dependent = true;
      for (let i = 0; i < list.length; i++) {
        const signal = list[i];
        const sources = signal.#dependent ? signal.#sources : [signal];
        for (let j = 0; j < sources.length; j++) {
          const source = sources[j];
          if (indexOf(result.#sources, source) < 0) {
            push(result.#sources, source);
            setAdd(source.#dependents, result);
          }
        }
      }
      return result;
    }

    // "Signal abort": dependents get the reason first, then each runs its abort steps in turn.
    #abort(reason) {
      if (this.#reason !== undefined) return;
      this.#reason = reason === undefined ? abortError() : reason;
      const signals = [this];
      setForEach(this.#dependents, (dependent) => {
        if (dependent.#reason === undefined) {
          dependent.#reason = this.#reason;
          push(signals, dependent);
        }
      });
      setClear(this.#dependents);
      for (let i = 0; i < signals.length; i++) {
        const signal = signals[i];
        signal.#sources = [];
        const algorithms = signal.#algorithms;
        signal.#algorithms = [];
        for (let j = 0; j < algorithms.length; j++) algorithms[j]();
        dispatch(signal, new Event("abort"), true);
      }
    }

    static {
      isAbortSignal = (value) => isObject(value) && #reason in value;
      isAborted = (signal) => signal.#reason !== undefined;
      onAbort = (signal, algorithm) => {
        if (signal.#reason === undefined) push(signal.#algorithms, algorithm);
      };
      // Stop running `algorithm` on abort (fetch.js, once its operation has settled).
      forget = (signal, algorithm) => {
        const index = indexOf(signal.#algorithms, algorithm);
        if (index >= 0) splice(signal.#algorithms, index, 1);
      };
      reasonOf = (signal) => signal.#reason;
      signalAbort = (signal, reason) => signal.#abort(reason);
      createSignal = () => new AbortSignal(CONSTRUCT);
    }
  }

  class AbortController {
    #signal = createSignal();

    get signal() {
      return this.#signal;
    }

    abort(reason = undefined) {
      signalAbort(this.#signal, reason);
    }
  }

  for (const Class of [Event, EventTarget, AbortSignal, AbortController]) {
    for (const key of Object.getOwnPropertyNames(Class.prototype)) {
      if (key !== "constructor") Object.defineProperty(Class.prototype, key, { enumerable: true });
    }
    Object.defineProperty(Class.prototype, Symbol.toStringTag, { value: Class.name, configurable: true });
  }
  for (const [name, value] of Object.entries(PHASES)) {
    for (const target of [Event, Event.prototype]) {
      Object.defineProperty(target, name, { value, enumerable: true, writable: false, configurable: false });
    }
  }

  // What fetch.js uses instead of the public members, which a script can replace. fetch.js takes
  // it and deletes it before the snapshot.
  defineProperty(AbortSignal, Symbol.for("palisade.internals"), {
    value: freeze({ __proto__: null, isAbortSignal, isAborted, reasonOf, onAbort, forget, createSignal }),
    configurable: true,
  });

  defineGlobal("Event", Event);
  defineGlobal("EventTarget", EventTarget);
  defineGlobal("AbortController", AbortController);
  defineGlobal("AbortSignal", AbortSignal);
})();
