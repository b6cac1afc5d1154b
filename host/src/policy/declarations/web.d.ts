// ---- The web globals every script has, whatever its policy ----

type BufferSource = ArrayBuffer | ArrayBufferView;
type BlobPart = BufferSource | Blob | string;
type HeadersInit = [string, string][] | Record<string, string> | Headers;
type BodyInit = ReadableStream<Uint8Array> | Blob | BufferSource | FormData | URLSearchParams | string;
type RequestInfo = Request | string;
type FormDataEntryValue = File | string;
type RequestRedirect = "error" | "follow" | "manual";
type ResponseType = "basic" | "cors" | "default" | "error" | "opaque" | "opaqueredirect";
type KeyUsage = "decrypt" | "deriveBits" | "deriveKey" | "encrypt" | "sign" | "unwrapKey" | "verify" | "wrapKey";
type KeyFormat = "jwk" | "pkcs8" | "raw" | "spki";
type AlgorithmIdentifier = string | { name: string; [key: string]: unknown };
type CompressionFormat = "deflate" | "deflate-raw" | "gzip";

interface JsonWebKey {
  alg?: string; crv?: string; d?: string; dp?: string; dq?: string; e?: string; ext?: boolean;
  k?: string; key_ops?: string[]; kty?: string; n?: string; p?: string; q?: string; qi?: string;
  use?: string; x?: string; y?: string;
}

interface RequestInit {
  method?: string;
  headers?: HeadersInit;
  body?: BodyInit | null;
  redirect?: RequestRedirect;
  signal?: AbortSignal | null;
  /** Needed with a `ReadableStream` body. */
  duplex?: "half";
}

interface ResponseInit {
  status?: number;
  statusText?: string;
  headers?: HeadersInit;
}

/** Console lines are captured with the call's result (capped by `limits.console`). */
interface Console {
  debug(...data: unknown[]): void;
  info(...data: unknown[]): void;
  log(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
  count(label?: string): void;
  countReset(label?: string): void;
  time(label?: string): void;
  timeLog(label?: string, ...data: unknown[]): void;
  timeEnd(label?: string): void;
}
declare var console: Console;

declare function atob(data: string): string;
declare function btoa(data: string): string;
declare function setTimeout(handler: (...args: any[]) => void, timeout?: number, ...args: any[]): number;
declare function setInterval(handler: (...args: any[]) => void, timeout?: number, ...args: any[]): number;
declare function clearTimeout(id: number | undefined): void;
declare function clearInterval(id: number | undefined): void;
declare function queueMicrotask(callback: () => void): void;
declare function structuredClone<T = any>(value: T, options?: { transfer?: any[] }): T;

declare class DOMException extends Error {
  constructor(message?: string, name?: string);
  readonly code: number;
}

interface EventInit { bubbles?: boolean; cancelable?: boolean; composed?: boolean }
declare class Event {
  constructor(type: string, init?: EventInit);
  readonly type: string;
  readonly target: EventTarget | null;
  readonly currentTarget: EventTarget | null;
  readonly eventPhase: number;
  readonly bubbles: boolean;
  readonly cancelable: boolean;
  readonly composed: boolean;
  readonly defaultPrevented: boolean;
  readonly isTrusted: boolean;
  readonly timeStamp: number;
  composedPath(): EventTarget[];
  preventDefault(): void;
  stopPropagation(): void;
  stopImmediatePropagation(): void;
  static readonly NONE: 0;
  static readonly CAPTURING_PHASE: 1;
  static readonly AT_TARGET: 2;
  static readonly BUBBLING_PHASE: 3;
}
declare class CustomEvent<T = any> extends Event {
  constructor(type: string, init?: EventInit & { detail?: T });
  readonly detail: T;
}
type EventListenerOrObject = ((event: Event) => void) | { handleEvent(event: Event): void };
declare class EventTarget {
  constructor();
  addEventListener(type: string, listener: EventListenerOrObject | null,
    options?: boolean | { capture?: boolean; once?: boolean; passive?: boolean; signal?: AbortSignal }): void;
  removeEventListener(type: string, listener: EventListenerOrObject | null,
    options?: boolean | { capture?: boolean }): void;
  dispatchEvent(event: Event): boolean;
}

declare class AbortSignal extends EventTarget {
  readonly aborted: boolean;
  readonly reason: any;
  onabort: ((event: Event) => void) | null;
  throwIfAborted(): void;
  static abort(reason?: any): AbortSignal;
  static timeout(milliseconds: number): AbortSignal;
  static any(signals: AbortSignal[]): AbortSignal;
}
declare class AbortController {
  constructor();
  readonly signal: AbortSignal;
  abort(reason?: any): void;
}

declare class MessageEvent<T = any> extends Event {
  constructor(type: string, init?: EventInit & { data?: T; origin?: string; lastEventId?: string; ports?: MessagePort[] });
  readonly data: T;
  readonly origin: string;
  readonly lastEventId: string;
  readonly source: MessagePort | null;
  readonly ports: ReadonlyArray<MessagePort>;
}
declare class MessagePort extends EventTarget {
  postMessage(message: any, transfer?: any[]): void;
  start(): void;
  close(): void;
  onmessage: ((event: MessageEvent) => void) | null;
  onmessageerror: ((event: MessageEvent) => void) | null;
}
declare class MessageChannel {
  constructor();
  readonly port1: MessagePort;
  readonly port2: MessagePort;
}

declare class TextEncoder {
  constructor();
  readonly encoding: "utf-8";
  encode(input?: string): Uint8Array;
  encodeInto(source: string, destination: Uint8Array): { read: number; written: number };
}
declare class TextDecoder {
  /** Every WHATWG encoding. */
  constructor(label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean });
  readonly encoding: string;
  readonly fatal: boolean;
  readonly ignoreBOM: boolean;
  decode(input?: BufferSource, options?: { stream?: boolean }): string;
}

declare class URLSearchParams {
  constructor(init?: string[][] | Record<string, string> | string | URLSearchParams);
  readonly size: number;
  append(name: string, value: string): void;
  delete(name: string, value?: string): void;
  get(name: string): string | null;
  getAll(name: string): string[];
  has(name: string, value?: string): boolean;
  set(name: string, value: string): void;
  sort(): void;
  forEach(callback: (value: string, key: string, parent: URLSearchParams) => void): void;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
  entries(): IterableIterator<[string, string]>;
  [Symbol.iterator](): IterableIterator<[string, string]>;
  toString(): string;
}
declare class URL {
  /** The WHATWG URL parser. */
  constructor(url: string | URL, base?: string | URL);
  static canParse(url: string | URL, base?: string | URL): boolean;
  static parse(url: string | URL, base?: string | URL): URL | null;
  href: string;
  readonly origin: string;
  protocol: string;
  username: string;
  password: string;
  host: string;
  hostname: string;
  port: string;
  pathname: string;
  search: string;
  readonly searchParams: URLSearchParams;
  hash: string;
  toString(): string;
  toJSON(): string;
}

declare class Headers {
  constructor(init?: HeadersInit);
  append(name: string, value: string): void;
  delete(name: string): void;
  get(name: string): string | null;
  getSetCookie(): string[];
  has(name: string): boolean;
  set(name: string, value: string): void;
  forEach(callback: (value: string, key: string, parent: Headers) => void): void;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
  entries(): IterableIterator<[string, string]>;
  [Symbol.iterator](): IterableIterator<[string, string]>;
}

interface Body {
  readonly body: ReadableStream<Uint8Array> | null;
  readonly bodyUsed: boolean;
  arrayBuffer(): Promise<ArrayBuffer>;
  bytes(): Promise<Uint8Array>;
  blob(): Promise<Blob>;
  formData(): Promise<FormData>;
  json(): Promise<any>;
  text(): Promise<string>;
}
interface Request extends Body {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly signal: AbortSignal;
  readonly redirect: RequestRedirect;
  readonly duplex: "half";
  clone(): Request;
}
declare var Request: { prototype: Request; new (input: RequestInfo | URL, init?: RequestInit): Request };
interface Response extends Body {
  readonly status: number;
  readonly ok: boolean;
  readonly statusText: string;
  readonly headers: Headers;
  readonly url: string;
  readonly redirected: boolean;
  readonly type: ResponseType;
  clone(): Response;
}
declare var Response: {
  prototype: Response;
  new (body?: BodyInit | null, init?: ResponseInit): Response;
  json(data: any, init?: ResponseInit): Response;
  error(): Response;
  redirect(url: string | URL, status?: number): Response;
};

declare class Blob {
  constructor(parts?: BlobPart[], options?: { type?: string; endings?: "native" | "transparent" });
  readonly size: number;
  readonly type: string;
  slice(start?: number, end?: number, contentType?: string): Blob;
  text(): Promise<string>;
  arrayBuffer(): Promise<ArrayBuffer>;
  bytes(): Promise<Uint8Array>;
  stream(): ReadableStream<Uint8Array>;
}
declare class File extends Blob {
  constructor(parts: BlobPart[], name: string, options?: { type?: string; lastModified?: number });
  readonly name: string;
  readonly lastModified: number;
}
declare class FormData {
  constructor();
  append(name: string, value: string | Blob, fileName?: string): void;
  delete(name: string): void;
  get(name: string): FormDataEntryValue | null;
  getAll(name: string): FormDataEntryValue[];
  has(name: string): boolean;
  set(name: string, value: string | Blob, fileName?: string): void;
  forEach(callback: (value: FormDataEntryValue, key: string, parent: FormData) => void): void;
  keys(): IterableIterator<string>;
  values(): IterableIterator<FormDataEntryValue>;
  entries(): IterableIterator<[string, FormDataEntryValue]>;
  [Symbol.iterator](): IterableIterator<[string, FormDataEntryValue]>;
}

interface QueuingStrategy<T = any> { highWaterMark?: number; size?: (chunk: T) => number }
declare class CountQueuingStrategy implements QueuingStrategy {
  constructor(init: { highWaterMark: number });
  readonly highWaterMark: number;
  readonly size: (chunk: any) => 1;
}
declare class ByteLengthQueuingStrategy implements QueuingStrategy<ArrayBufferView> {
  constructor(init: { highWaterMark: number });
  readonly highWaterMark: number;
  readonly size: (chunk: ArrayBufferView) => number;
}
type ReadableStreamReadResult<T> = { done: false; value: T } | { done: true; value?: undefined };
interface UnderlyingSource<R = any> {
  type?: "bytes";
  autoAllocateChunkSize?: number;
  start?(controller: any): any;
  pull?(controller: any): void | PromiseLike<void>;
  cancel?(reason?: any): void | PromiseLike<void>;
}
declare class ReadableStreamDefaultController<R = any> {
  readonly desiredSize: number | null;
  close(): void;
  enqueue(chunk?: R): void;
  error(e?: any): void;
}
declare class ReadableByteStreamController {
  readonly byobRequest: ReadableStreamBYOBRequest | null;
  readonly desiredSize: number | null;
  close(): void;
  enqueue(chunk: ArrayBufferView): void;
  error(e?: any): void;
}
declare class ReadableStreamBYOBRequest {
  readonly view: ArrayBufferView | null;
  respond(bytesWritten: number): void;
  respondWithNewView(view: ArrayBufferView): void;
}
declare class ReadableStreamDefaultReader<R = any> {
  constructor(stream: ReadableStream<R>);
  readonly closed: Promise<undefined>;
  read(): Promise<ReadableStreamReadResult<R>>;
  releaseLock(): void;
  cancel(reason?: any): Promise<void>;
}
declare class ReadableStreamBYOBReader {
  constructor(stream: ReadableStream<Uint8Array>);
  readonly closed: Promise<undefined>;
  read<T extends ArrayBufferView>(view: T, options?: { min?: number }): Promise<ReadableStreamReadResult<T>>;
  releaseLock(): void;
  cancel(reason?: any): Promise<void>;
}
declare class ReadableStream<R = any> {
  constructor(source?: UnderlyingSource<R>, strategy?: QueuingStrategy<R>);
  static from<R>(iterable: Iterable<R> | AsyncIterable<R>): ReadableStream<R>;
  readonly locked: boolean;
  cancel(reason?: any): Promise<void>;
  getReader(options: { mode: "byob" }): ReadableStreamBYOBReader;
  getReader(): ReadableStreamDefaultReader<R>;
  tee(): [ReadableStream<R>, ReadableStream<R>];
  pipeThrough<T>(transform: { writable: WritableStream<R>; readable: ReadableStream<T> },
    options?: { preventClose?: boolean; preventAbort?: boolean; preventCancel?: boolean; signal?: AbortSignal }): ReadableStream<T>;
  pipeTo(destination: WritableStream<R>,
    options?: { preventClose?: boolean; preventAbort?: boolean; preventCancel?: boolean; signal?: AbortSignal }): Promise<void>;
  values(options?: { preventCancel?: boolean }): AsyncIterableIterator<R>;
  [Symbol.asyncIterator](options?: { preventCancel?: boolean }): AsyncIterableIterator<R>;
}
declare class WritableStreamDefaultController {
  readonly signal: AbortSignal;
  error(e?: any): void;
}
declare class WritableStreamDefaultWriter<W = any> {
  constructor(stream: WritableStream<W>);
  readonly closed: Promise<undefined>;
  readonly desiredSize: number | null;
  readonly ready: Promise<undefined>;
  abort(reason?: any): Promise<void>;
  close(): Promise<void>;
  releaseLock(): void;
  write(chunk?: W): Promise<void>;
}
declare class WritableStream<W = any> {
  constructor(sink?: {
    start?(controller: WritableStreamDefaultController): any;
    write?(chunk: W, controller: WritableStreamDefaultController): void | PromiseLike<void>;
    close?(): void | PromiseLike<void>;
    abort?(reason?: any): void | PromiseLike<void>;
  }, strategy?: QueuingStrategy<W>);
  readonly locked: boolean;
  abort(reason?: any): Promise<void>;
  close(): Promise<void>;
  getWriter(): WritableStreamDefaultWriter<W>;
}
declare class TransformStreamDefaultController<O = any> {
  readonly desiredSize: number | null;
  enqueue(chunk?: O): void;
  error(reason?: any): void;
  terminate(): void;
}
declare class TransformStream<I = any, O = any> {
  constructor(transformer?: {
    start?(controller: TransformStreamDefaultController<O>): any;
    transform?(chunk: I, controller: TransformStreamDefaultController<O>): void | PromiseLike<void>;
    flush?(controller: TransformStreamDefaultController<O>): void | PromiseLike<void>;
  }, writableStrategy?: QueuingStrategy<I>, readableStrategy?: QueuingStrategy<O>);
  readonly readable: ReadableStream<O>;
  readonly writable: WritableStream<I>;
}
declare class TextEncoderStream {
  constructor();
  readonly encoding: "utf-8";
  readonly readable: ReadableStream<Uint8Array>;
  readonly writable: WritableStream<string>;
}
declare class TextDecoderStream {
  constructor(label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean });
  readonly encoding: string;
  readonly fatal: boolean;
  readonly ignoreBOM: boolean;
  readonly readable: ReadableStream<string>;
  readonly writable: WritableStream<BufferSource>;
}
declare class CompressionStream {
  constructor(format: CompressionFormat);
  readonly readable: ReadableStream<Uint8Array>;
  readonly writable: WritableStream<BufferSource>;
}
declare class DecompressionStream {
  constructor(format: CompressionFormat);
  readonly readable: ReadableStream<Uint8Array>;
  readonly writable: WritableStream<BufferSource>;
}

declare class CryptoKey {
  readonly type: "private" | "public" | "secret";
  readonly extractable: boolean;
  readonly algorithm: { name: string; [key: string]: unknown };
  readonly usages: KeyUsage[];
}
/** SHA digests, HMAC, AES-GCM/CBC/CTR/KW, ECDSA, Ed25519, ECDH, X25519, HKDF, PBKDF2; RSA rejects with `NotSupportedError`. */
declare class SubtleCrypto {
  digest(algorithm: AlgorithmIdentifier, data: BufferSource): Promise<ArrayBuffer>;
  importKey(format: "jwk", key: JsonWebKey, algorithm: AlgorithmIdentifier, extractable: boolean, usages: KeyUsage[]): Promise<CryptoKey>;
  importKey(format: Exclude<KeyFormat, "jwk">, key: BufferSource, algorithm: AlgorithmIdentifier, extractable: boolean, usages: KeyUsage[]): Promise<CryptoKey>;
  exportKey(format: "jwk", key: CryptoKey): Promise<JsonWebKey>;
  exportKey(format: Exclude<KeyFormat, "jwk">, key: CryptoKey): Promise<ArrayBuffer>;
  generateKey(algorithm: AlgorithmIdentifier, extractable: boolean, usages: KeyUsage[]): Promise<CryptoKey | { privateKey: CryptoKey; publicKey: CryptoKey }>;
  sign(algorithm: AlgorithmIdentifier, key: CryptoKey, data: BufferSource): Promise<ArrayBuffer>;
  verify(algorithm: AlgorithmIdentifier, key: CryptoKey, signature: BufferSource, data: BufferSource): Promise<boolean>;
  encrypt(algorithm: AlgorithmIdentifier, key: CryptoKey, data: BufferSource): Promise<ArrayBuffer>;
  decrypt(algorithm: AlgorithmIdentifier, key: CryptoKey, data: BufferSource): Promise<ArrayBuffer>;
  deriveBits(algorithm: AlgorithmIdentifier, baseKey: CryptoKey, length?: number | null): Promise<ArrayBuffer>;
  deriveKey(algorithm: AlgorithmIdentifier, baseKey: CryptoKey, derivedKeyType: AlgorithmIdentifier, extractable: boolean, usages: KeyUsage[]): Promise<CryptoKey>;
  wrapKey(format: KeyFormat, key: CryptoKey, wrappingKey: CryptoKey, algorithm: AlgorithmIdentifier): Promise<ArrayBuffer>;
  unwrapKey(format: KeyFormat, wrappedKey: BufferSource, unwrappingKey: CryptoKey, unwrapAlgorithm: AlgorithmIdentifier,
    unwrappedKeyAlgorithm: AlgorithmIdentifier, extractable: boolean, usages: KeyUsage[]): Promise<CryptoKey>;
}
/** Random values are seeded under the policy's `[determinism]`. */
declare var crypto: {
  readonly subtle: SubtleCrypto;
  getRandomValues<T extends ArrayBufferView | null>(array: T): T;
  randomUUID(): `${string}-${string}-${string}-${string}-${string}`;
};

/** Time since the call began, in 5 µs steps. */
declare class Performance extends EventTarget {
  readonly timeOrigin: number;
  now(): number;
  toJSON(): { timeOrigin: number };
}
declare var performance: Performance;
declare class Navigator {
  /** `Palisade/VERSION`. */
  readonly userAgent: string;
}
declare var navigator: Navigator;

/** A refusal by the policy: `rule` is the policy key that decided, `fix` the change that would allow it. */
declare class PolicyDeniedError extends Error {
  readonly capability: string;
  readonly rule: string;
  readonly fix: string | null;
}
/** A host capability's own failure (`code` such as `not_found`, `handler_error`, `no_handler`). */
declare class CapabilityError extends Error {
  readonly capability: string;
  readonly code: string;
  readonly retryable: boolean;
}
/** A key-value store failure that is not a policy refusal. */
declare class KvError extends Error {}
/** A `fetch` failure that is not a policy decision. */
declare class NetworkError extends TypeError {
  readonly code: string;
}
declare class DnsError extends NetworkError {}
declare class ConnectionRefusedError extends NetworkError {}
declare class ConnectionResetError extends NetworkError {}
declare class UpstreamTimeoutError extends NetworkError {}
declare class ResponseTooLargeError extends NetworkError {}
declare class RequestTooLargeError extends NetworkError {}
/** QuickJS's own error class (thrown for some engine limits). */
declare class InternalError extends Error {}
