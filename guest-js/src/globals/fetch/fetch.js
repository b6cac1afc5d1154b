// `fetch`, `Request` and `Response` over wasi:http/outgoing-handler (fetch.rs, io.rs). Every
// request, and every redirect hop, goes through the host's gate; a refusal arrives here as a
// `PolicyDeniedError` naming the rule and the fix, and upstream failures as typed errors.
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (native, wait, cancel) {
  "use strict";

  // Intrinsics and the other globals' internals, captured before the snapshot: nothing below
  // looks up a global, a prototype method or an iterator when a script calls it.
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  // QuickJS compiles a template literal to a call of `String.prototype.concat`: none here.
  const concat = uncurry(String.prototype.concat);
  const {
    assign, defineProperty, defineProperties, freeze, getOwnPropertyDescriptor,
    getOwnPropertyDescriptors, getPrototypeOf, hasOwn,
  } = Object;
  const ObjectPrototype = Object.prototype;
  const { parse: jsonParse, stringify: jsonStringify } = JSON;
  const StringCtor = String;
  const { isInteger } = Number;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const PromiseCtor = Promise;
  const WeakMapCtor = WeakMap;
  const weakGet = uncurry(WeakMap.prototype.get);
  const weakSet = uncurry(WeakMap.prototype.set);
  const exec = uncurry(RegExp.prototype.exec);
  const toUpperCase = uncurry(String.prototype.toUpperCase);
  const stringSlice = uncurry(String.prototype.slice);
  const Uint8ArrayCtor = Uint8Array;
  const { isView } = ArrayBuffer;
  const getter = (proto, key) => uncurry(getOwnPropertyDescriptor(proto, key).get);
  const bufferLength = getter(ArrayBuffer.prototype, "byteLength");
  const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype);
  const typedArrayName = getter(TypedArrayPrototype, Symbol.toStringTag);
  const typedArrayBuffer = getter(TypedArrayPrototype, "buffer");
  const typedArrayOffset = getter(TypedArrayPrototype, "byteOffset");
  const typedArrayLength = getter(TypedArrayPrototype, "byteLength");
  const dataViewBuffer = getter(DataView.prototype, "buffer");
  const dataViewOffset = getter(DataView.prototype, "byteOffset");
  const dataViewLength = getter(DataView.prototype, "byteLength");
  const typedArraySet = uncurry(TypedArrayPrototype.set);
  // A copy of `length` bytes of `buffer` from `offset`, in a new buffer of its own. (Not
  // `ArrayBuffer.prototype.slice`, which asks the buffer's constructor for its species.)
  const copyBytes = (buffer, offset, length) => {
    const copy = new Uint8ArrayCtor(length);
    typedArraySet(copy, new Uint8ArrayCtor(buffer, offset, length));
    return copy;
  };
  const PolicyDeniedErrorCtor = PolicyDeniedError;
  const HeadersCtor = Headers;
  const { send, denial: refusal, encode, decode } = native;
  const INTERNALS = Symbol.for("palisade.internals");
  const take = (owner) => {
    const internals = owner[INTERNALS];
    delete owner[INTERNALS];
    return internals;
  };
  const H = take(Headers);
  const U = take(URL);
  const A = take(AbortSignal);
  const P = take(URLSearchParams);

  // Own data properties, as assignments made them, defined so that a frozen or poisoned
  // `Error.prototype` or `Object.prototype` cannot refuse or intercept them.
  const own = (object, key, value) =>
    defineProperty(object, key, { __proto__: null, value, writable: true, enumerable: true, configurable: true });
  // A dictionary member as Web IDL reads it, except that nothing is taken from
  // `Object.prototype`, where only a script that tampers with it could have put it.
  const member = (dict, key) => {
    for (let o = dict; o !== null && o !== undefined && o !== ObjectPrototype; o = getPrototypeOf(o)) {
      if (hasOwn(o, key)) return dict[key];
    }
    return undefined;
  };
  // The href of `url`, as `new URL(url).href` gives it.
  const href = (url) => {
    const parts = U.parse(url, undefined);
    if (!parts) throw new TypeErrorCtor(concat("Invalid URL: ", url));
    return parts[0];
  };

  class NetworkError extends TypeError {
    constructor(message, code) {
      super(message);
      own(this, "name", "NetworkError");
      own(this, "code", code);
    }
  }
  const kinds = { __proto__: null };
  const errorClass = (name, code, what) => {
    const C = { [name]: class extends NetworkError {
      constructor(message) { super(message, code); own(this, "name", name); }
    } }[name];
    kinds[code] = [C, what];
    return C;
  };
  const classes = [
    errorClass("DnsError", "dns", "the host name did not resolve"),
    errorClass("ConnectionRefusedError", "refused", "the connection was refused"),
    errorClass("ConnectionResetError", "reset", "the connection was closed early"),
    errorClass("UpstreamTimeoutError", "timeout", "the request timed out"),
    errorClass("ResponseTooLargeError", "response-too-large", "the response is over the policy's byte budget"),
    errorClass("RequestTooLargeError", "request-too-large", "the request body is over the policy's byte budget"),
  ];

  function failure(kind, detail, target) {
    if (kind === "denied") {
      const denial = refusal(target);
      if (denial) return new PolicyDeniedErrorCtor(denial);
    }
    const known = kinds[kind];
    const C = known === undefined ? NetworkError : known[0];
    const what = known === undefined ? "the request failed" : known[1];
    const error = new C(concat("fetch ", target, ": ", what, " (", detail, ")"));
    if (C === NetworkError) own(error, "code", kind);
    return error;
  }

  const slots = new WeakMapCtor();
  const slot = (object) => {
    const s = weakGet(slots, object);
    if (!s) throw new TypeErrorCtor("Illegal invocation");
    return s;
  };
  const requestSlot = (value) => {
    const s = weakGet(slots, value);
    return s && s.request ? s : null;
  };

  const isArrayBuffer = (value) => {
    try {
      bufferLength(value);
      return true;
    } catch {
      return false;
    }
  };
  // A copy of the bytes a typed array or DataView covers.
  const viewBytes = (view) => {
    const typed = typedArrayName(view) !== undefined;
    const buffer = typed ? typedArrayBuffer(view) : dataViewBuffer(view);
    const offset = typed ? typedArrayOffset(view) : dataViewOffset(view);
    const length = typed ? typedArrayLength(view) : dataViewLength(view);
    return copyBytes(buffer, offset, length);
  };
  const TEXT = "text/plain;charset=UTF-8";

  // A body init as bytes and the content type it implies.
  function extract(body) {
    if (body == null) return [null, null];
    if (typeof body === "string") return [encode(body), TEXT];
    if (P.isParams(body)) return [encode(P.serialize(body)), "application/x-www-form-urlencoded;charset=UTF-8"];
    if (isArrayBuffer(body)) return [copyBytes(body, 0, bufferLength(body)), null];
    if (isView(body)) return [viewBytes(body), null];
    return [encode(StringCtor(body)), TEXT];
  }

  // The body's bytes, in a box: settling a promise with a bare Uint8Array would look `then` up.
  async function consume(object) {
    const s = slot(object);
    if (s.used) throw new TypeErrorCtor("Body has already been consumed");
    s.used = true;
    if (s.bodyId != null) {
      const result = (await abortable(wait(s.bodyId), s.signal, s.bodyId)).value;
      if (result[0] === 1) throw failure(result[1], result[2], s.url);
      return { __proto__: null, value: result[1] };
    }
    return { __proto__: null, value: s.bytes ?? new Uint8ArrayCtor(0) };
  }
  const copyOf = (bytes) => copyBytes(typedArrayBuffer(bytes), typedArrayOffset(bytes), typedArrayLength(bytes));

  const bodyMethods = {
    get bodyUsed() { return slot(this).used; },
    async arrayBuffer() { return typedArrayBuffer(copyOf((await consume(this)).value)); },
    async bytes() { return copyOf((await consume(this)).value); },
    async text() { return decode((await consume(this)).value); },
    async json() { return jsonParse(decode((await consume(this)).value)); },
  };

  const isRedirect = (status) => status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
  const METHOD = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  const NORMAL_METHODS = { __proto__: null, DELETE: true, GET: true, HEAD: true, OPTIONS: true, POST: true, PUT: true, PATCH: true };

  class Response {
    constructor(body = null, init = {}) {
      const status = member(init, "status") ?? 200;
      if (!isInteger(status) || status < 200 || status > 599) {
        throw new RangeErrorCtor(concat("status ", status, " is not in 200..599"));
      }
      const extracted = extract(body);
      const headers = new HeadersCtor(member(init, "headers"));
      if (extracted[1] && !H.has(headers, "content-type")) H.append(headers, "content-type", extracted[1]);
      weakSet(slots, this, {
        __proto__: null, request: false, status, statusText: StringCtor(member(init, "statusText") ?? ""),
        headers, bytes: extracted[0], bodyId: null, used: false, url: "", redirected: false, type: "default",
        signal: null,
      });
    }
    get status() { return slot(this).status; }
    get ok() { const s = slot(this).status; return s >= 200 && s < 300; }
    get statusText() { return slot(this).statusText; }
    get headers() { return slot(this).headers; }
    get url() { return slot(this).url; }
    get redirected() { return slot(this).redirected; }
    get type() { return slot(this).type; }
    clone() {
      const s = slot(this);
      if (s.used) throw new TypeErrorCtor("Body has already been consumed");
      if (s.bodyId != null) throw new TypeErrorCtor("a network response cannot be cloned before its body is read");
      const copy = new Response(null, { __proto__: null, status: s.status === 0 ? 200 : s.status });
      assign(slot(copy), s, { __proto__: null, headers: new HeadersCtor(s.headers) });
      return copy;
    }
    static json(data, init = {}) {
      const text = jsonStringify(data);
      if (text === undefined) throw new TypeErrorCtor("the value has no JSON form");
      const headers = new HeadersCtor(member(init, "headers"));
      if (!H.has(headers, "content-type")) H.append(headers, "content-type", "application/json");
      return new Response(text, { ...init, headers });
    }
    static error() {
      const r = new Response(null);
      assign(slot(r), { __proto__: null, status: 0, type: "error" });
      return r;
    }
    static redirect(url, status = 302) {
      if (!isRedirect(status)) throw new RangeErrorCtor(concat("", status, " is not a redirect status"));
      const location = href(StringCtor(url));
      return new Response(null, { __proto__: null, status, headers: { __proto__: null, location } });
    }
  }
  defineProperties(Response.prototype, getOwnPropertyDescriptors(bodyMethods));

  class Request {
    constructor(input, init = {}) {
      const from = requestSlot(input);
      const url = from ? from.url : href(StringCtor(input));
      const method = StringCtor(member(init, "method") ?? from?.method ?? "GET");
      const upper = toUpperCase(method);
      const normal = NORMAL_METHODS[upper] === true ? upper : method;
      if (exec(METHOD, normal) === null) throw new TypeErrorCtor(concat("", method, " is not a method"));
      const headers = new HeadersCtor(member(init, "headers") ?? from?.headers);
      let bytes = from?.bytes ?? null;
      const body = member(init, "body");
      if (body !== undefined) {
        const extracted = extract(body);
        bytes = extracted[0];
        if (extracted[1] && !H.has(headers, "content-type")) H.append(headers, "content-type", extracted[1]);
      }
      if (bytes && (normal === "GET" || normal === "HEAD")) {
        throw new TypeErrorCtor(concat("a ", normal, " request cannot have a body"));
      }
      const redirect = member(init, "redirect") ?? from?.redirect ?? "follow";
      if (redirect !== "follow" && redirect !== "manual" && redirect !== "error") {
        throw new TypeErrorCtor(concat("redirect ", redirect, " is not follow, manual or error"));
      }
      weakSet(slots, this, {
        __proto__: null, request: true, url, method: normal, headers, bytes, bodyId: null, used: false,
        signal: member(init, "signal") ?? from?.signal ?? A.createSignal(), redirect,
      });
    }
    get url() { return slot(this).url; }
    get method() { return slot(this).method; }
    get headers() { return slot(this).headers; }
    get signal() { return slot(this).signal; }
    get redirect() { return slot(this).redirect; }
    clone() {
      const s = slot(this);
      if (s.used) throw new TypeErrorCtor("Body has already been consumed");
      return new Request(this);
    }
  }
  defineProperties(Request.prototype, getOwnPropertyDescriptors(bodyMethods));

  // An AbortSignal's state through abort.js's internals; a signal-like object of the script's
  // own through its own members.
  const isAborted = (signal) => (A.isAbortSignal(signal) ? A.isAborted(signal) : signal.aborted);
  const reasonOf = (signal) => (A.isAbortSignal(signal) ? A.reasonOf(signal) : signal.reason);
  const rejected = (reason) => new PromiseCtor((_, reject) => reject(reason));
  // Hand `promise`'s outcome to `resolve` or `reject`, then run `done`; `await` takes the
  // outcome, where `promise.then` would be the script's.
  const forward = async (promise, resolve, reject, done) => {
    try {
      resolve(await promise);
    } catch (error) {
      reject(error);
    }
    done();
  };

  // `promise`, or the signal's reason once it aborts first (which cancels operation `id`).
  function abortable(promise, signal, id) {
    if (!signal) return promise;
    if (isAborted(signal)) {
      cancel(id);
      return rejected(reasonOf(signal));
    }
    return new PromiseCtor((resolve, reject) => {
      const onAbort = () => {
        cancel(id);
        reject(reasonOf(signal));
      };
      if (A.isAbortSignal(signal)) {
        A.onAbort(signal, onAbort);
        forward(promise, resolve, reject, () => A.forget(signal, onAbort));
      } else {
        signal.addEventListener("abort", onAbort, { once: true });
        forward(promise, resolve, reject, () => signal.removeEventListener("abort", onAbort));
      }
    });
  }

  const BODY_HEADERS = { __proto__: null, "content-type": true, "content-length": true, "content-encoding": true, "content-language": true, "content-location": true };
  // The pairs of `headers` that `keep(name)` keeps.
  const kept = (headers, keep) => {
    const out = [];
    for (let i = 0; i < headers.length; i++) if (keep(headers[i][0])) own(out, out.length, headers[i]);
    return out;
  };

  async function fetch(input, init = undefined) {
    const request = new Request(input, init);
    const s = slot(request);
    const signal = s.signal;
    if (isAborted(signal)) throw reasonOf(signal);
    let url = s.url;
    let method = s.method;
    let bytes = s.bytes;
    let headers = H.sent(s.headers);
    for (let hop = 0; ; hop++) {
      // [href, origin, protocol, username, password, host, hostname, port, pathname, search, hash]
      const u = U.parse(url, undefined);
      if (!u) throw new TypeErrorCtor(concat("Invalid URL: ", url));
      const protocol = u[2], username = u[3], password = u[4];
      if (protocol !== "http:" && protocol !== "https:") {
        throw new TypeErrorCtor(concat("fetch supports http: and https:, not ", protocol));
      }
      const scheme = stringSlice(protocol, 0, -1);
      const userinfo = username || password ? concat("", username, password ? concat(":", password) : "", "@") : "";
      const authority = userinfo + u[5];
      const path = (u[8] || "/") + u[9];
      const target = concat("", scheme, "://", authority, path);
      const sent = send(method, scheme, authority, path, headers, bytes);
      if (sent[0] === 1) throw failure(sent[1], sent[2], target);
      const head = (await abortable(wait(sent[1]), signal, sent[1])).value;
      if (head[0] === 1) throw failure(head[1], head[2], target);
      const status = head[1], bodyId = head[3];
      const responseHeaders = H.fromPairs(head[2]);
      H.guard(responseHeaders, "immutable");
      const location = H.get(responseHeaders, "location");
      if (isRedirect(status) && location !== null && s.redirect !== "manual") {
        cancel(bodyId);
        if (s.redirect === "error") throw new TypeErrorCtor(concat("fetch ", target, ": redirected, and redirect is \"error\""));
        if (hop >= 20) throw new TypeErrorCtor(concat("fetch ", s.url, ": more than 20 redirects"));
        const next = U.parse(location, url);
        if (!next) throw new TypeErrorCtor(concat("Invalid URL: ", location));
        if ((status === 303 && method !== "HEAD") || ((status === 301 || status === 302) && method === "POST")) {
          method = "GET";
          bytes = null;
          headers = kept(headers, (name) => BODY_HEADERS[name] !== true);
        }
        if (next[1] !== u[1]) {
          headers = kept(headers, (name) => name !== "authorization" && name !== "cookie");
        }
        url = next[0];
        continue;
      }
      const response = new Response(null, { __proto__: null, status: 200 });
      assign(slot(response), {
        __proto__: null, status, statusText: "", headers: responseHeaders, bytes: null,
        bodyId: bodyId ?? null, url, redirected: hop > 0, type: "basic", signal,
      });
      return response;
    }
  }

  const define = (name, value) =>
    defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
  define("fetch", fetch);
  define("Request", Request);
  define("Response", Response);
  define("NetworkError", NetworkError);
  for (let i = 0; i < classes.length; i++) define(classes[i].name, classes[i]);
  freeze(kinds);
})
