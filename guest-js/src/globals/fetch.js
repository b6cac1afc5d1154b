// `fetch`, `Request` and `Response` over wasi:http/outgoing-handler (fetch.rs, io.rs). Every
// request, and every redirect hop, goes through the host's gate; a refusal arrives here as a
// `PolicyDeniedError` naming the rule and the fix, and upstream failures as typed errors.
(function (native, wait, cancel) {
  "use strict";

  class NetworkError extends TypeError {
    constructor(message, code) {
      super(message);
      this.name = "NetworkError";
      this.code = code;
    }
  }
  const kinds = {};
  const errorClass = (name, code, what) => {
    const C = { [name]: class extends NetworkError {
      constructor(message) { super(message, code); this.name = name; }
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
      const denial = native.denial(target);
      if (denial) return new PolicyDeniedError(denial);
    }
    const [C, what] = kinds[kind] ?? [NetworkError, "the request failed"];
    const error = new C(`fetch ${target}: ${what} (${detail})`);
    if (C === NetworkError) error.code = kind;
    return error;
  }

  const encoder = new TextEncoder();
  const slots = new WeakMap();
  const slot = (object) => {
    const s = slots.get(object);
    if (!s) throw new TypeError("Illegal invocation");
    return s;
  };

  // A body init as bytes and the content type it implies.
  function extract(body) {
    if (body == null) return [null, null];
    if (typeof body === "string") return [encoder.encode(body), "text/plain;charset=UTF-8"];
    if (body instanceof URLSearchParams) {
      return [encoder.encode(body.toString()), "application/x-www-form-urlencoded;charset=UTF-8"];
    }
    if (body instanceof ArrayBuffer) return [new Uint8Array(body.slice(0)), null];
    if (ArrayBuffer.isView(body)) {
      return [new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength)), null];
    }
    return [encoder.encode(String(body)), "text/plain;charset=UTF-8"];
  }

  async function consume(object) {
    const s = slot(object);
    if (s.used) throw new TypeError("Body has already been consumed");
    s.used = true;
    if (s.bodyId != null) {
      const result = await abortable(wait(s.bodyId), s.signal, s.bodyId);
      if (result[0] === 1) throw failure(result[1], result[2], s.url);
      return result[1];
    }
    return s.bytes ?? new Uint8Array(0);
  }

  const bodyMethods = {
    get bodyUsed() { return slot(this).used; },
    async arrayBuffer() {
      const bytes = await consume(this);
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    },
    async bytes() { return new Uint8Array(await this.arrayBuffer()); },
    async text() { return new TextDecoder().decode(await consume(this)); },
    async json() { return JSON.parse(await this.text()); },
  };

  const guard = Headers[Symbol.for("palisade.headers.guard")];
  const REDIRECTS = [301, 302, 303, 307, 308];

  class Response {
    constructor(body = null, init = {}) {
      const status = init.status ?? 200;
      if (!Number.isInteger(status) || status < 200 || status > 599) {
        throw new RangeError(`status ${status} is not in 200..599`);
      }
      const [bytes, type] = extract(body);
      const headers = new Headers(init.headers);
      if (type && !headers.has("content-type")) headers.set("content-type", type);
      slots.set(this, {
        status, statusText: String(init.statusText ?? ""), headers, bytes, bodyId: null,
        used: false, url: "", redirected: false, type: "default", signal: null,
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
      if (s.used) throw new TypeError("Body has already been consumed");
      if (s.bodyId != null) throw new TypeError("a network response cannot be cloned before its body is read");
      const copy = new Response(null, { status: s.status === 0 ? 200 : s.status });
      Object.assign(slot(copy), s, { headers: new Headers(s.headers) });
      return copy;
    }
    static json(data, init = {}) {
      const text = JSON.stringify(data);
      if (text === undefined) throw new TypeError("the value has no JSON form");
      const headers = new Headers(init.headers);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
      return new Response(text, { ...init, headers });
    }
    static error() {
      const r = new Response(null);
      Object.assign(slot(r), { status: 0, type: "error" });
      return r;
    }
    static redirect(url, status = 302) {
      if (!REDIRECTS.includes(status)) throw new RangeError(`${status} is not a redirect status`);
      return new Response(null, { status, headers: { location: new URL(url).href } });
    }
  }
  Object.defineProperties(Response.prototype, Object.getOwnPropertyDescriptors(bodyMethods));

  class Request {
    constructor(input, init = {}) {
      const from = input instanceof Request ? slot(input) : null;
      const url = from ? from.url : new URL(String(input)).href;
      const method = String(init.method ?? from?.method ?? "GET");
      const upper = method.toUpperCase();
      const normal = ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"].includes(upper) ? upper : method;
      if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(normal)) throw new TypeError(`${method} is not a method`);
      const headers = new Headers(init.headers ?? from?.headers);
      let bytes = from?.bytes ?? null;
      if (init.body !== undefined) {
        let type;
        [bytes, type] = extract(init.body);
        if (type && !headers.has("content-type")) headers.set("content-type", type);
      }
      if (bytes && (normal === "GET" || normal === "HEAD")) {
        throw new TypeError(`a ${normal} request cannot have a body`);
      }
      const redirect = init.redirect ?? from?.redirect ?? "follow";
      if (!["follow", "manual", "error"].includes(redirect)) throw new TypeError(`redirect ${redirect} is not follow, manual or error`);
      slots.set(this, {
        url, method: normal, headers, bytes, bodyId: null, used: false,
        signal: init.signal ?? from?.signal ?? new AbortController().signal, redirect,
      });
    }
    get url() { return slot(this).url; }
    get method() { return slot(this).method; }
    get headers() { return slot(this).headers; }
    get signal() { return slot(this).signal; }
    get redirect() { return slot(this).redirect; }
    clone() {
      const s = slot(this);
      if (s.used) throw new TypeError("Body has already been consumed");
      return new Request(this);
    }
  }
  Object.defineProperties(Request.prototype, Object.getOwnPropertyDescriptors(bodyMethods));

  function abortable(promise, signal, id) {
    if (!signal) return promise;
    if (signal.aborted) {
      cancel(id);
      return Promise.reject(signal.reason);
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        cancel(id);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
  }

  const BODY_HEADERS = ["content-type", "content-length", "content-encoding", "content-language", "content-location"];

  async function fetch(input, init = undefined) {
    const request = new Request(input, init);
    const s = slot(request);
    const signal = s.signal;
    if (signal.aborted) throw signal.reason;
    let url = s.url;
    let method = s.method;
    let bytes = s.bytes;
    let headers = [...s.headers];
    for (let hop = 0; ; hop++) {
      const u = new URL(url);
      if (u.protocol !== "http:" && u.protocol !== "https:") {
        throw new TypeError(`fetch supports http: and https:, not ${u.protocol}`);
      }
      const scheme = u.protocol.slice(0, -1);
      const userinfo = u.username || u.password ? `${u.username}${u.password ? `:${u.password}` : ""}@` : "";
      const authority = userinfo + u.host;
      const path = (u.pathname || "/") + u.search;
      const target = `${scheme}://${authority}${path}`;
      const sent = native.send(method, scheme, authority, path, headers, bytes);
      if (sent[0] === 1) throw failure(sent[1], sent[2], target);
      const head = await abortable(wait(sent[1]), signal, sent[1]);
      if (head[0] === 1) throw failure(head[1], head[2], target);
      const [, status, list, bodyId] = head;
      const responseHeaders = new Headers(list);
      guard(responseHeaders, "immutable");
      const location = responseHeaders.get("location");
      if (REDIRECTS.includes(status) && location !== null && s.redirect !== "manual") {
        cancel(bodyId);
        if (s.redirect === "error") throw new TypeError(`fetch ${target}: redirected, and redirect is "error"`);
        if (hop >= 20) throw new TypeError(`fetch ${s.url}: more than 20 redirects`);
        const next = new URL(location, url);
        if ((status === 303 && method !== "HEAD") || ((status === 301 || status === 302) && method === "POST")) {
          method = "GET";
          bytes = null;
          headers = headers.filter(([name]) => !BODY_HEADERS.includes(name));
        }
        if (next.origin !== u.origin) {
          headers = headers.filter(([name]) => name !== "authorization" && name !== "cookie");
        }
        url = next.href;
        continue;
      }
      const response = new Response(null, { status: 200 });
      Object.assign(slot(response), {
        status, statusText: "", headers: responseHeaders, bytes: null, bodyId: bodyId ?? null,
        url, redirected: hop > 0, type: "basic", signal,
      });
      return response;
    }
  }

  const define = (name, value) =>
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
  define("fetch", fetch);
  define("Request", Request);
  define("Response", Response);
  define("NetworkError", NetworkError);
  for (const C of classes) define(C.name, C);
})
