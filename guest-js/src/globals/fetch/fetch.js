// `fetch`, `Request` and `Response` over wasi:http/outgoing-handler (fetch.rs, io.rs). Every
// request, and every redirect hop, goes through the host's gate; a refusal arrives here as a
// `PolicyDeniedError` naming the rule and the fix, and upstream failures as typed errors.
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
(function (native, wait, cancel, mime) {
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
  // Internal promises: awaiting one looks up nothing a script can reach (promises.js).
  const { internal, rejected, markHandled, promise: newPromise } = globalThis.__palisadePromises;
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
  const { send, denial: refusal, encode, decode, decodeKeepBom, dataLimit, bodyWrite, bodyFinish, bodyAbort } = native;
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
  const B = take(Blob);
  const S = take(ReadableStream);
  const F = take(FormData);
  const URLSearchParamsCtor = URLSearchParams;
  const paramsEntries = uncurry(URLSearchParams.prototype.entries);
  const paramsNext = uncurry(getPrototypeOf(new URLSearchParams().entries()).next);
  const atobIntrinsic = atob;
  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const toLowerCase = uncurry(String.prototype.toLowerCase);
  const indexOf = uncurry(String.prototype.indexOf);
  const stringTrim = uncurry(String.prototype.trim);

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
    if (B.isBlob(body)) return [B.bytesOf(body), B.typeOf(body) || null];
    if (F.isFormData(body)) return F.serialize(body);
    if (S.isStream(body)) {
      if (S.disturbed(body) || S.locked(body)) throw new TypeErrorCtor("the body stream is locked or was read");
      return [null, null, body];
    }
    if (isArrayBuffer(body)) return [copyBytes(body, 0, bufferLength(body)), null];
    if (isView(body)) return [viewBytes(body), null];
    return [encode(StringCtor(body)), TEXT];
  }

  // The body's bytes, in a box: settling a promise with a bare Uint8Array would look `then` up.
  // The stream an extracted body carries (a third element only a stream body has: reading a
  // missing index would reach `Array.prototype`).
  const streamOf = (extracted) => (extracted.length > 2 ? extracted[2] : null);
  // A body stream's chunks as one Uint8Array, in a box; each chunk must be one.
  async function streamBytes(stream) {
    const chunks = (await S.readAll(stream)).value;
    for (let i = 0; i < chunks.length; i++) {
      if (!isView(chunks[i]) || typedArrayName(chunks[i]) !== "Uint8Array") {
        throw new TypeErrorCtor("a body stream's chunks must be Uint8Arrays");
      }
    }
    return { __proto__: null, value: B.join(chunks) };
  }
  // The body's stream, made on first use: its bytes, or the network body as it arrives.
  function bodyStream(s) {
    if (s.stream !== null) return s.stream;
    if (s.bodyId == null && s.bytes === null) return null;
    let done = false;
    const id = s.bodyId;
    s.stream = S.fromPull(async () => {
      if (done) return null;
      done = true;
      if (id == null) return { __proto__: null, value: copyOf(s.bytes) };
      const result = (await abortable(wait(id), s.signal, id)).value;
      if (result[0] === 1) throw failure(result[1], result[2], s.url);
      return { __proto__: null, value: result[1] };
    }, () => {
      if (!done && id != null) cancel(id);
    });
    if (s.used) {
      // Read already (by `text()` and the like): its stream is empty and disturbed.
      done = true;
      S.readAll(s.stream);
    }
    return s.stream;
  }

  async function consume(object) {
    const s = slot(object);
    if (s.used) throw new TypeErrorCtor("Body has already been consumed");
    if (s.stream !== null) {
      if (S.disturbed(s.stream) || S.locked(s.stream)) throw new TypeErrorCtor("Body has already been consumed");
      s.used = true;
      return await internal(streamBytes(s.stream));
    }
    // A null body reads as empty and is not used up by it (Fetch: "consume body").
    if (s.bodyId == null && s.bytes === null) return { __proto__: null, value: new Uint8ArrayCtor(0) };
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
    get bodyUsed() {
      const s = slot(this);
      return s.used || (s.stream !== null && S.disturbed(s.stream));
    },
    get body() { return bodyStream(slot(this)); },
    async arrayBuffer() { return typedArrayBuffer(copyOf((await internal(consume(this))).value)); },
    async bytes() { return copyOf((await internal(consume(this))).value); },
    async text() { return decode((await internal(consume(this))).value); },
    async json() { return jsonParse(decode((await internal(consume(this))).value)); },
    async blob() {
      const s = slot(this);
      const bytes = (await internal(consume(this))).value;
      const type = H.get(s.headers, "content-type");
      return B.make(copyOf(bytes), type === null ? "" : mediaType(type));
    },
    async formData() {
      const s = slot(this);
      const bytes = (await internal(consume(this))).value;
      const type = H.get(s.headers, "content-type") ?? "";
      const essence = toLowerCase(stringTrim(stringSlice(type, 0, indexOf(type, ";") < 0 ? type.length : indexOf(type, ";"))));
      if (essence === "multipart/form-data") {
        const parsed = F.parse(bytes, type);
        if (parsed === null) throw new TypeErrorCtor("the body is not valid multipart/form-data");
        return parsed;
      }
      if (essence === "application/x-www-form-urlencoded") {
        const out = new FormDataCtor();
        // The urlencoded parser keeps a leading "?" (URLSearchParams' constructor drops one: the
        // added "?" is the one it drops) and a byte order mark.
        const entries = paramsEntries(new URLSearchParamsCtor(concat("?", decodeKeepBom(bytes))));
        for (let step = paramsNext(entries); !step.done; step = paramsNext(entries)) {
          F.append(out, step.value[0], step.value[1]);
        }
        return out;
      }
      throw new TypeErrorCtor(concat("a body of type \"", type, "\" cannot be read as FormData"));
    },
  };
  // A media type as a Blob keeps it: lower-cased, or "" with a character outside U+0020..U+007E.
  const mediaType = (text) => {
    for (let i = 0; i < text.length; i++) {
      const c = charCodeAt(text, i);
      if (c < 0x20 || c > 0x7e) return "";
    }
    return toLowerCase(text);
  };
  const FormDataCtor = FormData;

  // reason-phrase (RFC 9112): HTAB, SP, VCHAR, obs-text.
  const REASON_PHRASE = /^[\t\x20-\x7e\x80-\xff]*$/;
  const NULL_BODY_STATUS = { __proto__: null, 101: true, 103: true, 204: true, 205: true, 304: true };
  const isRedirect = (status) => status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
  const METHOD = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  const NORMAL_METHODS = { __proto__: null, DELETE: true, GET: true, HEAD: true, OPTIONS: true, POST: true, PUT: true, PATCH: true };

  class Response {
    constructor(body = null, init = {}) {
      if (init !== undefined && init !== null && typeof init !== "object" && typeof init !== "function") {
        throw new TypeErrorCtor("Response: init is not an object");
      }
      const status = member(init, "status") ?? 200;
      if (!isInteger(status) || status < 200 || status > 599) {
        throw new RangeErrorCtor(concat("status ", status, " is not in 200..599"));
      }
      const statusText = member(init, "statusText");
      if (statusText !== undefined && exec(REASON_PHRASE, StringCtor(statusText)) === null) {
        throw new TypeErrorCtor(concat("Response: \"", StringCtor(statusText), "\" is not a valid status text"));
      }
      if (body !== null && body !== undefined && NULL_BODY_STATUS[status] === true) {
        throw new TypeErrorCtor(concat("Response: a response with status ", status, " cannot have a body"));
      }
      const extracted = extract(body);
      const headers = new HeadersCtor(member(init, "headers"));
      if (extracted[1] && !H.has(headers, "content-type")) H.append(headers, "content-type", extracted[1]);
      weakSet(slots, this, {
        __proto__: null, request: false, status, statusText: statusText === undefined ? "" : StringCtor(statusText),
        headers, bytes: extracted[0], bodyId: null, used: false, url: "", redirected: false, type: "default",
        signal: null, stream: streamOf(extracted),
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
      if (s.used || (s.stream !== null && (S.disturbed(s.stream) || S.locked(s.stream)))) {
        throw new TypeErrorCtor("Body has already been consumed");
      }
      const copy = new Response(null, { __proto__: null, status: s.status === 0 ? 200 : s.status });
      assign(slot(copy), s, { __proto__: null, headers: H.copy(s.headers) });
      if (s.bodyId != null || s.stream !== null) {
        // A stream body (or a network body, as a stream) is split in two: each gets every chunk.
        const branches = S.tee(bodyStream(s));
        s.stream = branches[0];
        slot(copy).stream = branches[1];
        slot(copy).bodyId = null;
      }
      return copy;
    }
    static json(data, init = {}) {
      const text = jsonStringify(data);
      if (text === undefined) throw new TypeErrorCtor("the value has no JSON form");
      const headers = new HeadersCtor(member(init, "headers"));
      if (!H.has(headers, "content-type")) H.append(headers, "content-type", "application/json");
      const response = new Response(text, {
        __proto__: null, status: member(init, "status"), statusText: member(init, "statusText"),
      });
      slot(response).headers = headers;
      return response;
    }
    static error() {
      const r = new Response(null);
      const s = slot(r);
      assign(s, { __proto__: null, status: 0, type: "error" });
      H.guard(s.headers, "immutable");
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
      if (!from) {
        const parts = U.parse(url, undefined);
        if (parts[3] !== "" || parts[4] !== "") throw new TypeErrorCtor(concat("Request: ", url, " has credentials in it"));
      }
      const method = StringCtor(member(init, "method") ?? from?.method ?? "GET");
      const upper = toUpperCase(method);
      const normal = NORMAL_METHODS[upper] === true ? upper : method;
      if (exec(METHOD, normal) === null) throw new TypeErrorCtor(concat("", method, " is not a method"));
      const given = member(init, "headers");
      const headers = given === undefined && from ? H.copy(from.headers) : new HeadersCtor(given);
      let bytes = from?.bytes ?? null;
      let stream = from?.stream ?? null;
      const body = member(init, "body");
      // RequestDuplex has one value; a stream body must name it (Fetch, the Request
      // constructor), as Node and the browsers require.
      const duplex = member(init, "duplex");
      if (duplex !== undefined && StringCtor(duplex) !== "half") {
        throw new TypeErrorCtor(concat("duplex ", StringCtor(duplex), " is not \"half\""));
      }
      if (body !== undefined) {
        const extracted = extract(body);
        bytes = extracted[0];
        stream = streamOf(extracted);
        if (stream !== null && duplex === undefined) {
          throw new TypeErrorCtor("a request whose body is a stream needs duplex: \"half\"");
        }
        if (extracted[1] && !H.has(headers, "content-type")) H.append(headers, "content-type", extracted[1]);
      }
      if ((bytes || stream) && (normal === "GET" || normal === "HEAD")) {
        throw new TypeErrorCtor(concat("a ", normal, " request cannot have a body"));
      }
      const redirect = member(init, "redirect") ?? from?.redirect ?? "follow";
      if (redirect !== "follow" && redirect !== "manual" && redirect !== "error") {
        throw new TypeErrorCtor(concat("redirect ", redirect, " is not follow, manual or error"));
      }
      weakSet(slots, this, {
        __proto__: null, request: true, url, method: normal, headers, bytes, bodyId: null, used: false, stream,
        signal: member(init, "signal") ?? from?.signal ?? A.createSignal(), redirect,
      });
    }
    get url() { return slot(this).url; }
    get method() { return slot(this).method; }
    get headers() { return slot(this).headers; }
    get signal() { return slot(this).signal; }
    get redirect() { return slot(this).redirect; }
    get duplex() { slot(this); return "half"; }
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
  // Hand internal `promise`'s outcome to `resolve` or `reject`, then run `done`.
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
    return newPromise((resolve, reject) => {
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

  // A `data:` URL's response (Fetch, "data: URL processor"), made here without the network: its
  // bytes are already in the script's memory, as the URL. Its `Content-Type` is the URL's MIME
  // type parsed and serialized (mime.js), `text/plain;charset=US-ASCII` when it is not one.
  const hexValue = (c) => (c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x41 && c <= 0x46 ? c - 0x37 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1);
  const BASE64_SUFFIX = /;[\x20]*base64$/i;
  // The bytes `data:` URL bodies have taken so far this call, held to the policy's
  // `http.max_response_body` (each call starts from the snapshot, at zero).
  let dataBytes = 0;
  const tooLarge = () => {
    const C = kinds["response-too-large"][0];
    return new C(concat("fetch of a data: URL: ", kinds["response-too-large"][1], " (http.max_response_body, ", StringCtor(dataLimit()), " bytes per call)"));
  };
  function dataResponse(url, head) {
    let rest = stringSlice(url, 5);
    const hash = indexOf(rest, "#");
    if (hash >= 0) rest = stringSlice(rest, 0, hash);
    const comma = indexOf(rest, ",");
    if (comma < 0) throw new TypeErrorCtor("fetch: a data: URL needs a comma before its data");
    let type = stringTrim(stringSlice(rest, 0, comma));
    const data = stringSlice(rest, comma + 1);
    let bytes = new Uint8ArrayCtor(data.length);
    let n = 0;
    for (let i = 0; i < data.length; i++) {
      const c = charCodeAt(data, i);
      if (c === 0x25 && hexValue(charCodeAt(data, i + 1)) >= 0 && hexValue(charCodeAt(data, i + 2)) >= 0) {
        bytes[n++] = hexValue(charCodeAt(data, i + 1)) * 16 + hexValue(charCodeAt(data, i + 2));
        i += 2;
      } else {
        bytes[n++] = c;
      }
    }
    bytes = B.copy(bytes, 0, n);
    const base64 = exec(BASE64_SUFFIX, type);
    if (base64 !== null) {
      type = stringSlice(type, 0, type.length - base64[0].length);
      let binary;
      try {
        binary = atobIntrinsic(B.latin1(bytes));
      } catch {
        throw new TypeErrorCtor("fetch: a data: URL's base64 is not valid");
      }
      bytes = new Uint8ArrayCtor(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = charCodeAt(binary, i);
    }
    if (!head) {
      if (dataBytes + bytes.length > dataLimit()) throw tooLarge();
      dataBytes += bytes.length;
    }
    if (stringSlice(type, 0, 1) === ";") type = concat("text/plain", type);
    const headers = H.fromPairs([["content-type", mime.serialize(type) ?? "text/plain;charset=US-ASCII"]]);
    H.guard(headers, "immutable");
    const response = new Response(null, { __proto__: null, status: 200 });
    // A HEAD request's response has no body (Fetch, "main fetch").
    assign(slot(response), {
      __proto__: null, statusText: "OK", headers, bytes: head ? null : bytes, url, type: "basic",
    });
    return response;
  }

  // A stream body, sent as it is read: each chunk goes to the host as the stream yields it (the
  // request has no length ahead, so it goes out chunked), and the body is finished at the
  // stream's end. A chunk that is not a Uint8Array, or the stream's own error, breaks the request
  // off and is what `fetch` rejects with (`failed.error`); a body the host takes no more of (over
  // `http.max_request_body`, or the request failed) cancels the stream, and the response says why.
  async function pump(stream, id, failed) {
    let reader = null;
    try {
      reader = S.acquireReader(stream);
      for (;;) {
        const step = await S.read(reader);
        if (step.done) {
          bodyFinish(id);
          return;
        }
        const chunk = step.value;
        if (!isView(chunk) || typedArrayName(chunk) !== "Uint8Array") {
          throw new TypeErrorCtor("a body stream's chunks must be Uint8Arrays");
        }
        if (!bodyWrite(id, chunk)) {
          bodyAbort(id);
          markHandled(S.cancel(reader, undefined));
          return;
        }
      }
    } catch (error) {
      failed.error = error;
      bodyAbort(id);
      if (reader !== null) markHandled(S.cancel(reader, error));
    }
  }

  async function fetch(input, init = undefined) {
    const request = new Request(input, init);
    const s = slot(request);
    const signal = s.signal;
    if (isAborted(signal)) throw reasonOf(signal);
    if (stringSlice(s.url, 0, 5) === "data:") return dataResponse(s.url, s.method === "HEAD");
    let url = s.url;
    let method = s.method;
    // A stream body is sent as it is read (`pump`); every other body with its length.
    let stream = s.stream;
    if (stream !== null) {
      if (s.used || S.disturbed(stream) || S.locked(stream)) throw new TypeErrorCtor("Body has already been consumed");
      s.used = true;
    }
    let bytes = stream !== null ? true : s.bytes;
    const failed = { __proto__: null, error: null };
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
      if (sent.length > 2) {
        pump(stream, sent[2], failed);
        stream = null;
      }
      const head = (await abortable(wait(sent[1]), signal, sent[1])).value;
      if (failed.error !== null) throw failed.error;
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
        // A stream body was sent once and cannot be sent again (Fetch: a redirect that keeps a
        // body whose source is null is a network error).
        if (bytes === true) throw new TypeErrorCtor(concat("fetch ", target, ": redirected, and a stream body cannot be sent again"));
        if (next[1] !== u[1]) {
          headers = kept(headers, (name) => name !== "authorization" && name !== "cookie");
        }
        url = next[0];
        continue;
      }
      const response = new Response(null, { __proto__: null, status: 200 });
      assign(slot(response), {
        __proto__: null, status, statusText: "", headers: responseHeaders, bytes: null,
        bodyId: bodyId ?? null, url, redirected: hop > 0, type: "basic", signal, stream: null,
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
