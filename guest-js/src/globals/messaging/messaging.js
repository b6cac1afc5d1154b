/**
 * `CustomEvent`, `MessageEvent`, `MessageChannel` and `MessagePort` for Palisade guests, after
 * the DOM and HTML standards. Both ends of a channel are in the same sandbox: `postMessage`
 * clones the message (`structuredClone`, with its transfer list) and queues it on the other
 * port, which delivers its queue one message per task once it is started (`start()`, or
 * setting `onmessage`). A closed port neither sends nor receives, and is detached: it can no
 * longer be transferred. A port is transferable
 * (`structuredClone(port, { transfer: [port] })`, or in a message's transfer list), after
 * HTML's transfer steps: the new port is entangled with the old one's other end and takes its
 * queued messages (delivered once the new port is started); the old one is detached, and
 * neither sends nor receives.
 */
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(() => {
  "use strict";
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  // QuickJS compiles a template literal to a call of `String.prototype.concat`: none here.
  const concat = uncurry(String.prototype.concat);
  const { defineProperty, freeze, getPrototypeOf, hasOwn } = Object;
  const ObjectPrototype = Object.prototype;
  const TypeErrorCtor = TypeError;
  const EventCtor = globalThis.Event;
  const EventTargetCtor = globalThis.EventTarget;
  const dispatchEvent = uncurry(EventTargetCtor.prototype.dispatchEvent);
  const addEventListener = uncurry(EventTargetCtor.prototype.addEventListener);
  const removeEventListener = uncurry(EventTargetCtor.prototype.removeEventListener);
  const C = globalThis.structuredClone[Symbol.for("palisade.internals")];
  const { cloneTransfer } = C;
  const setTimeoutFn = globalThis.setTimeout;
  const shift = uncurry(Array.prototype.shift);
  const push = (list, value) => {
    defineProperty(list, list.length, { __proto__: null, value, writable: true, enumerable: true, configurable: true });
  };
  const isObject = (value) => (typeof value === "object" && value !== null) || typeof value === "function";
  // A dictionary member as Web IDL reads it, except that nothing is taken from
  // `Object.prototype`, where only a script that tampers with it could have put it.
  const member = (dict, key) => {
    for (let o = dict; o !== null && o !== undefined && o !== ObjectPrototype; o = getPrototypeOf(o)) {
      if (hasOwn(o, key)) return dict[key];
    }
    return undefined;
  };
  const requireArgs = (args, count, what) => {
    if (args.length < count) {
      throw new TypeErrorCtor(concat("", what, ": ", count, " argument", count > 1 ? "s" : "", " required, but only ", args.length, " present"));
    }
  };
  const dictionary = (value, what) => {
    if (value !== undefined && value !== null && !isObject(value)) {
      throw new TypeErrorCtor(concat("", what, ": the dictionary argument must be an object"));
    }
    return value;
  };

  class CustomEvent extends EventCtor {
    #detail;

    constructor(type, eventInitDict = undefined) {
      requireArgs(arguments, 1, "CustomEvent");
      super(type, dictionary(eventInitDict, "CustomEvent"));
      const detail = member(eventInitDict, "detail");
      this.#detail = detail === undefined ? null : detail;
    }

    get detail() {
      if (!(#detail in this)) throw new TypeErrorCtor("Illegal invocation");
      return this.#detail;
    }
  }

  let setPorts;

  class MessageEvent extends EventCtor {
    #data;
    #origin;
    #lastEventId;
    #source;
    #ports;

    constructor(type, eventInitDict = undefined) {
      requireArgs(arguments, 1, "MessageEvent");
      super(type, dictionary(eventInitDict, "MessageEvent"));
      const data = member(eventInitDict, "data");
      const origin = member(eventInitDict, "origin");
      const lastEventId = member(eventInitDict, "lastEventId");
      const source = member(eventInitDict, "source");
      const ports = member(eventInitDict, "ports");
      this.#data = data === undefined ? null : data;
      this.#origin = origin === undefined ? "" : concat("", origin);
      this.#lastEventId = lastEventId === undefined ? "" : concat("", lastEventId);
      if (source !== undefined && source !== null && !isPort(source)) {
        throw new TypeErrorCtor("MessageEvent: source must be a MessagePort or null");
      }
      this.#source = source ?? null;
      const list = [];
      if (ports !== undefined) {
        if (!isObject(ports) || typeof ports[Symbol.iterator] !== "function") {
          throw new TypeErrorCtor("MessageEvent: ports must be a sequence of MessagePorts");
        }
        for (const port of ports) {
          if (!isPort(port)) throw new TypeErrorCtor("MessageEvent: ports must be a sequence of MessagePorts");
          push(list, port);
        }
      }
      this.#ports = freeze(list);
    }

    get data() {
      if (!(#data in this)) throw new TypeErrorCtor("Illegal invocation");
      return this.#data;
    }
    get origin() {
      if (!(#data in this)) throw new TypeErrorCtor("Illegal invocation");
      return this.#origin;
    }
    get lastEventId() {
      if (!(#data in this)) throw new TypeErrorCtor("Illegal invocation");
      return this.#lastEventId;
    }
    get source() {
      if (!(#data in this)) throw new TypeErrorCtor("Illegal invocation");
      return this.#source;
    }
    get ports() {
      if (!(#data in this)) throw new TypeErrorCtor("Illegal invocation");
      return this.#ports;
    }

    static {
      // The ports a message transferred, set without iterating anything a script can replace.
      setPorts = (event, ports) => {
        event.#ports = freeze(ports);
      };
    }
  }

  const CONSTRUCT = Symbol("MessagePort");
  let isPort, entangle, detached, ship;

  class MessagePort extends EventTargetCtor {
    #other = null;
    #queue = [];
    #started = false;
    #scheduled = false;
    #closed = false;
    #detached = false;
    #onmessage = null;
    #onmessageerror = null;

    constructor(key = undefined) {
      if (key !== CONSTRUCT) throw new TypeErrorCtor("Illegal constructor");
      super();
    }

    postMessage(message, transfer = undefined) {
      requireArgs(arguments, 1, "MessagePort.postMessage");
      if (!(#queue in this)) throw new TypeErrorCtor("Illegal invocation");
      // `transfer` is a sequence, or a `StructuredSerializeOptions` dictionary.
      let options;
      if (transfer === undefined || transfer === null) options = undefined;
      else if (isObject(transfer) && typeof transfer[Symbol.iterator] === "function") options = { __proto__: null, transfer };
      else options = dictionary(transfer, "MessagePort.postMessage");
      // HTML's message port post message steps: the port cannot transfer itself, and a message
      // that transfers its own target is dropped (the target is doomed).
      const target = this.#other;
      const sent = cloneTransfer(message, options, this);
      if (target === null || this.#closed || target.#closed || target.#detached) return;
      const ports = [];
      for (let i = 0; i < sent.received.length; i++) if (isPort(sent.received[i])) push(ports, sent.received[i]);
      push(target.#queue, { __proto__: null, data: sent.value, ports });
      target.#schedule();
    }

    // Deliver the next queued message in a task of its own, when the port is started.
    #schedule() {
      if (!this.#started || this.#scheduled || this.#queue.length === 0) return;
      this.#scheduled = true;
      setTimeoutFn(() => {
        this.#scheduled = false;
        if (this.#closed || this.#queue.length === 0) return;
        const message = shift(this.#queue);
        this.#schedule();
        const event = new MessageEvent("message", { __proto__: null, data: message.data });
        setPorts(event, message.ports);
        dispatchEvent(this, event);
      }, 0);
    }

    start() {
      if (!(#queue in this)) throw new TypeErrorCtor("Illegal invocation");
      this.#started = true;
      this.#schedule();
    }

    // HTML's close(): the port is detached (it can no longer be transferred) and disentangled.
    close() {
      if (!(#queue in this)) throw new TypeErrorCtor("Illegal invocation");
      this.#closed = true;
      this.#detached = true;
      this.#queue = [];
      const other = this.#other;
      this.#other = null;
      if (other !== null) other.#other = null;
    }

    get onmessage() {
      if (!(#queue in this)) throw new TypeErrorCtor("Illegal invocation");
      return this.#onmessage;
    }
    set onmessage(value) {
      if (!(#queue in this)) throw new TypeErrorCtor("Illegal invocation");
      if (this.#onmessage !== null) removeEventListener(this, "message", this.#onmessage);
      this.#onmessage = typeof value === "function" ? value : null;
      if (this.#onmessage !== null) addEventListener(this, "message", this.#onmessage);
      // Setting `onmessage` starts the port, as in HTML.
      this.#started = true;
      this.#schedule();
    }
    get onmessageerror() {
      if (!(#queue in this)) throw new TypeErrorCtor("Illegal invocation");
      return this.#onmessageerror;
    }
    set onmessageerror(value) {
      if (!(#queue in this)) throw new TypeErrorCtor("Illegal invocation");
      if (this.#onmessageerror !== null) removeEventListener(this, "messageerror", this.#onmessageerror);
      this.#onmessageerror = typeof value === "function" ? value : null;
      if (this.#onmessageerror !== null) addEventListener(this, "messageerror", this.#onmessageerror);
    }

    static {
      isPort = (value) => isObject(value) && #queue in value;
      entangle = (a, b) => {
        a.#other = b;
        b.#other = a;
      };
      detached = (port) => port.#detached;
      // HTML's transfer steps and transfer-receiving steps together: `copy` (a new port) takes
      // the entanglement of `port` and its queued messages, its own queue disabled until it is
      // started; `port` is detached and entangled with nothing.
      ship = (port, copy) => {
        const remote = port.#other;
        copy.#queue = port.#queue;
        port.#queue = [];
        port.#other = null;
        port.#detached = true;
        if (remote !== null) entangle(copy, remote);
      };
    }
  }
  C.transferable(freeze({
    __proto__: null,
    name: "MessagePort",
    is: (value) => isPort(value),
    detached: (port) => detached(port),
    receive: () => new MessagePort(CONSTRUCT),
    ship: (port, copy) => ship(port, copy),
  }));

  class MessageChannel {
    #port1;
    #port2;

    constructor() {
      this.#port1 = new MessagePort(CONSTRUCT);
      this.#port2 = new MessagePort(CONSTRUCT);
      entangle(this.#port1, this.#port2);
    }

    get port1() {
      if (!(#port1 in this)) throw new TypeErrorCtor("Illegal invocation");
      return this.#port1;
    }
    get port2() {
      if (!(#port1 in this)) throw new TypeErrorCtor("Illegal invocation");
      return this.#port2;
    }
  }

  for (const Class of [CustomEvent, MessageEvent, MessagePort, MessageChannel]) {
    for (const key of Object.getOwnPropertyNames(Class.prototype)) {
      if (key !== "constructor") defineProperty(Class.prototype, key, { enumerable: true });
    }
    defineProperty(Class.prototype, Symbol.toStringTag, { value: Class.name, configurable: true });
    defineProperty(globalThis, Class.name, { value: Class, writable: true, configurable: true, enumerable: false });
  }
})();
