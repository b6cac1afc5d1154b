/**
 * `EventTarget`, `Event`, `AbortController` and `AbortSignal` for Palisade guests, after the DOM
 * standard. Targets are never in a tree, so dispatch runs a target's own listeners only
 * (capturing ones first, as at the target phase). `AbortSignal.timeout` schedules with the
 * guest's `setTimeout`.
 */
(() => {
  "use strict";

  const defineGlobal = (name, value) =>
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });


  const requireArgs = (args, count, what) => {
    if (args.length < count) {
      throw new TypeError(`${what}: ${count} argument${count > 1 ? "s" : ""} required, but only ${args.length} present`);
    }
  };
  const isObject = (value) => (typeof value === "object" && value !== null) || typeof value === "function";

  // An exception from a listener must not stop the dispatch; report it the way the host can.
  const reportException = (error) => {
    if (typeof globalThis.reportError === "function") globalThis.reportError(error);
    else globalThis.console?.error?.("Uncaught", error);
  };

  const PHASES = { NONE: 0, CAPTURING_PHASE: 1, AT_TARGET: 2, BUBBLING_PHASE: 3 };
  const now = () => globalThis.performance?.now?.() ?? Date.now();

  let eventState, isEvent;

  class Event {
    #state;

    constructor(type, eventInitDict = undefined) {
      requireArgs(arguments, 1, "Event");
      if (eventInitDict != null && !isObject(eventInitDict)) throw new TypeError("Event: eventInitDict must be an object");
      this.#state = {
        type: `${type}`,
        bubbles: Boolean(eventInitDict?.bubbles),
        cancelable: Boolean(eventInitDict?.cancelable),
        composed: Boolean(eventInitDict?.composed),
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

    static {
      eventState = (event) => event.#state;
      isEvent = (value) => isObject(value) && #state in value;
    }
  }

  // Listener options: a boolean means `capture`; `signal` must be an AbortSignal.
  const flattenOptions = (options, withExtras) => {
    if (!isObject(options)) return { capture: Boolean(options), once: false, passive: false, signal: undefined };
    const capture = Boolean(options.capture);
    if (!withExtras) return { capture };
    const once = Boolean(options.once), passive = Boolean(options.passive), { signal } = options;
    if (signal !== undefined && !isAbortSignal(signal)) throw new TypeError("addEventListener: options.signal is not an AbortSignal");
    return { capture, once, passive, signal };
  };

  let addListener, removeListener, dispatch, isAbortSignal, isAborted, onAbort;

  class EventTarget {
    #listeners = new Map();

    #remove(type, listener) {
      const list = this.#listeners.get(type);
      const index = list ? list.indexOf(listener) : -1;
      if (index >= 0) list.splice(index, 1);
      listener.removed = true;
    }

    #add(type, callback, { capture, once, passive, signal }) {
      if (callback === null || (signal !== undefined && isAborted(signal))) return;
      let list = this.#listeners.get(type);
      if (list === undefined) this.#listeners.set(type, (list = []));
      if (list.some((l) => l.callback === callback && l.capture === capture)) return;
      const listener = { callback, capture, once, passive, removed: false };
      list.push(listener);
      if (signal) onAbort(signal, () => this.#remove(type, listener));
    }

    addEventListener(type, callback, options = undefined) {
      requireArgs(arguments, 2, "EventTarget.addEventListener");
      if (callback !== null && callback !== undefined && !isObject(callback)) {
        throw new TypeError("EventTarget.addEventListener: callback is not an object");
      }
      this.#add(`${type}`, callback ?? null, flattenOptions(options, true));
    }

    #removeMatching(type, callback, capture) {
      const listener = this.#listeners.get(type)?.find((l) => l.callback === callback && l.capture === capture);
      if (listener) this.#remove(type, listener);
    }

    removeEventListener(type, callback, options = undefined) {
      requireArgs(arguments, 2, "EventTarget.removeEventListener");
      this.#removeMatching(`${type}`, callback, flattenOptions(options, false).capture);
    }

    dispatchEvent(event) {
      requireArgs(arguments, 1, "EventTarget.dispatchEvent");
      if (!isEvent(event)) throw new TypeError("EventTarget.dispatchEvent: event is not an Event");
      return dispatch(this, event, false);
    }

    // Run the listeners for one pass: capturing ones, then the rest.
    #invoke(event, state, capture) {
      if (state.stopPropagation) return;
      const list = this.#listeners.get(state.type);
      if (list === undefined) return;
      for (const listener of [...list]) {
        if (listener.removed || listener.capture !== capture) continue;
        if (listener.once) this.#remove(state.type, listener);
        state.inPassiveListener = listener.passive;
        try {
          const { callback } = listener;
          if (typeof callback === "function") callback.call(this, event);
          else {
            const handleEvent = callback.handleEvent;
            if (typeof handleEvent !== "function") throw new TypeError("EventListener.handleEvent is not a function");
            handleEvent.call(callback, event);
          }
        } catch (error) {
          reportException(error);
        }
        state.inPassiveListener = false;
        if (state.stopImmediatePropagation) return;
      }
    }

    static {
      addListener = (target, type, callback) => target.#add(type, callback, { capture: false });
      removeListener = (target, type, callback) => target.#removeMatching(type, callback, false);
      dispatch = (target, event, trusted) => {
        const state = eventState(event);
        if (state.dispatching) throw new globalThis.DOMException("The event is already being dispatched.", "InvalidStateError");
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

  const abortError = () => new globalThis.DOMException("This operation was aborted", "AbortError");
  const CONSTRUCT = Symbol("AbortSignal");
  let signalAbort, createSignal;

  class AbortSignal extends EventTarget {
    #reason = undefined;
    #algorithms = [];
    #sources = [];
    #dependents = new Set();
    #dependent = false;
    #onabort = null;
    #handlerListener = null;

    constructor(key = undefined) {
      if (key !== CONSTRUCT) throw new TypeError("Illegal constructor");
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
          if (typeof current === "function" && current.call(this, event) === false) event.preventDefault();
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
      const number = Number(milliseconds);
      const ms = Math.trunc(number);
      if (!Number.isFinite(number) || ms < 0 || ms > Number.MAX_SAFE_INTEGER) {
        throw new TypeError("AbortSignal.timeout: milliseconds must be a non-negative safe integer");
      }
      const signal = new AbortSignal(CONSTRUCT);
      globalThis.setTimeout(() => {
        signal.#abort(new globalThis.DOMException("The operation timed out.", "TimeoutError"));
      }, ms);
      return signal;
    }

    static any(signals) {
      requireArgs(arguments, 1, "AbortSignal.any");
      const list = [...signals];
      if (!list.every(isAbortSignal)) throw new TypeError("AbortSignal.any: every member must be an AbortSignal");
      const result = new AbortSignal(CONSTRUCT);
      const aborted = list.find((signal) => signal.#reason !== undefined);
      if (aborted) {
        result.#reason = aborted.#reason;
        return result;
      }
      result.#dependent = true;
      for (const signal of list) {
        for (const source of signal.#dependent ? signal.#sources : [signal]) {
          if (!result.#sources.includes(source)) {
            result.#sources.push(source);
            source.#dependents.add(result);
          }
        }
      }
      return result;
    }

    // "Signal abort": dependents get the reason first, then each runs its abort steps in turn.
    #abort(reason) {
      if (this.#reason !== undefined) return;
      this.#reason = reason === undefined ? abortError() : reason;
      const dependents = [];
      for (const dependent of this.#dependents) {
        if (dependent.#reason === undefined) {
          dependent.#reason = this.#reason;
          dependents.push(dependent);
        }
      }
      this.#dependents.clear();
      for (const signal of [this, ...dependents]) {
        signal.#sources = [];
        const algorithms = signal.#algorithms;
        signal.#algorithms = [];
        for (const algorithm of algorithms) algorithm();
        dispatch(signal, new Event("abort"), true);
      }
    }

    static {
      isAbortSignal = (value) => isObject(value) && #reason in value;
      isAborted = (signal) => signal.#reason !== undefined;
      onAbort = (signal, algorithm) => {
        if (signal.#reason === undefined) signal.#algorithms.push(algorithm);
      };
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

  defineGlobal("Event", Event);
  defineGlobal("EventTarget", EventTarget);
  defineGlobal("AbortController", AbortController);
  defineGlobal("AbortSignal", AbortSignal);
})();
