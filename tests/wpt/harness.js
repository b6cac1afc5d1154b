// A minimal testharness.js-compatible shim: enough of the API that web-platform-tests' .any.js
// files use (test, async_test, promise_test, the assert_* family, setup, done, step_func…) to
// run one file per call and report each subtest's status. The runner appends the WPT file (after
// the scripts its `// META: script=` lines name) and an `export default` that awaits
// `__wpt.finish()`. The same text runs in Palisade and in Node, so the two columns compare.
//
// Statuses: PASS, FAIL, TIMEOUT (an async or promise test that never finished within
// TEST_TIMEOUT_MS), NOTRUN. A file whose top level throws is reported with `harness` set.

const __wpt = (() => {
  const TEST_TIMEOUT_MS = 5000;
  const FILE_TIMEOUT_MS = 30000;
  const MESSAGE_MAX = 240;
  const results = [];
  const names = new Map();
  let pending = 0;
  let explicitDone = false;
  let doneCalled = false;
  let loaded = false;
  let harness = null;
  let finishResolve = null;
  const promiseQueue = [];
  let promiseRunning = false;
  let setupPromise = null;
  let singleTest = null;
  const resources = Object.create(null);

  // Names and messages leave as JSON, whose readers may refuse a lone surrogate: write one as
  // its escape instead.
  const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
  function wellFormed(text) {
    return String(text).replace(LONE_SURROGATE, (c) => "\\u" + c.charCodeAt(0).toString(16));
  }

  function uniqueName(name) {
    name = wellFormed(name);
    const n = (names.get(name) || 0) + 1;
    names.set(name, n);
    return n === 1 ? name : `${name} (${n})`;
  }

  function message(e) {
    let m;
    try {
      m = e && typeof e === "object" && "message" in e ? `${e.name}: ${e.message}` : String(e);
    } catch {
      m = "(unprintable error)";
    }
    m = wellFormed(m);
    return m.length > MESSAGE_MAX ? wellFormed(m.slice(0, MESSAGE_MAX)) + "…" : m;
  }

  function maybeFinish() {
    if (!loaded || !finishResolve) return;
    if (pending > 0 || promiseRunning || promiseQueue.length > 0) return;
    if (explicitDone && !doneCalled) return;
    const resolve = finishResolve;
    finishResolve = null;
    resolve();
  }

  class AssertionError extends Error {
    constructor(m) {
      super(m);
      this.name = "AssertionError";
    }
  }

  class Test {
    constructor(name, kind) {
      this.name = uniqueName(name || "Untitled");
      this.kind = kind;
      this.status = null;
      this.msg = null;
      this.cleanups = [];
      this.timer = null;
      this.record = { name: this.name, status: "NOTRUN" };
      results.push(this.record);
      pending++;
    }
    startTimer() {
      this.timer = setTimeout(() => {
        this.finish("TIMEOUT", "test timed out");
      }, TEST_TIMEOUT_MS);
    }
    finish(status, msg) {
      if (this.status !== null) return;
      this.status = status;
      if (this.timer !== null) clearTimeout(this.timer);
      for (const c of this.cleanups) {
        try {
          c();
        } catch (e) {
          if (status === "PASS") {
            status = "FAIL";
            msg = "cleanup failed: " + message(e);
          }
        }
      }
      this.record.status = status;
      if (msg) this.record.message = msg;
      pending--;
      if (this.onFinish) this.onFinish();
      maybeFinish();
    }
    step(fn, thisObj, ...args) {
      if (this.status !== null) return undefined;
      try {
        return fn.apply(thisObj === undefined ? this : thisObj, args);
      } catch (e) {
        this.finish("FAIL", message(e));
        return undefined;
      }
    }
    step_func(fn, thisObj) {
      const t = this;
      return function (...args) {
        return t.step(fn, thisObj === undefined ? this : thisObj, ...args);
      };
    }
    step_func_done(fn, thisObj) {
      const t = this;
      return function (...args) {
        const r = fn ? t.step(fn, thisObj === undefined ? this : thisObj, ...args) : undefined;
        t.done();
        return r;
      };
    }
    unreached_func(description) {
      return this.step_func(() => {
        throw new AssertionError("unreached_func reached: " + (description || ""));
      });
    }
    step_timeout(fn, ms, ...args) {
      return setTimeout(this.step_func(() => fn(...args)), ms);
    }
    add_cleanup(fn) {
      this.cleanups.push(fn);
    }
    done() {
      this.finish("PASS");
    }
  }

  function test(fn, name, props) {
    const t = new Test(name, "sync");
    const r = t.step(fn, t, t);
    if (r && typeof r.then === "function") {
      t.finish("FAIL", "test returned a thenable; use promise_test");
      return;
    }
    t.finish("PASS");
  }

  function async_test(fn, name, props) {
    if (typeof fn === "string") {
      props = name;
      name = fn;
      fn = null;
    }
    const t = new Test(name, "async");
    t.startTimer();
    if (fn) t.step(fn, t, t);
    return t;
  }

  function runPromiseQueue() {
    if (promiseRunning) return;
    if (setupPromise) {
      const p = setupPromise;
      setupPromise = null;
      promiseRunning = true;
      p.then(() => {
        promiseRunning = false;
        runPromiseQueue();
      });
      return;
    }
    const next = promiseQueue.shift();
    if (!next) {
      maybeFinish();
      return;
    }
    promiseRunning = true;
    const { t, fn } = next;
    t.onFinish = () => {
      promiseRunning = false;
      Promise.resolve().then(runPromiseQueue);
    };
    t.startTimer();
    let p;
    try {
      p = fn.call(t, t);
    } catch (e) {
      t.finish("FAIL", message(e));
      return;
    }
    if (!p || typeof p.then !== "function") {
      t.finish("FAIL", "promise_test function did not return a promise");
      return;
    }
    p.then(
      () => t.finish("PASS"),
      (e) => t.finish("FAIL", message(e)),
    );
  }

  function promise_test(fn, name, props) {
    const t = new Test(name, "promise");
    promiseQueue.push({ t, fn });
    Promise.resolve().then(runPromiseQueue);
    return t;
  }

  // ---- formatting and assertions ----

  function format_value(v) {
    try {
      if (typeof v === "string") return JSON.stringify(v);
      if (typeof v === "number" && Object.is(v, -0)) return "-0";
      if (typeof v === "bigint") return `${v}n`;
      if (typeof v === "symbol") return v.toString();
      if (Array.isArray(v)) return `[${v.map(format_value).join(", ")}]`;
      if (v && typeof v === "object") {
        const s = String(v);
        return s.length > 80 ? s.slice(0, 80) + "…" : s;
      }
      return String(v);
    } catch {
      return "(value)";
    }
  }

  function fail(description, text) {
    throw new AssertionError((description ? description + ": " : "") + text);
  }

  function same_value(a, b) {
    return Object.is(a, b);
  }

  function assert(ok, description, text) {
    if (!ok) fail(description, text);
  }

  const asserts = {
    assert_true(v, d) {
      assert(v === true, d, `expected true got ${format_value(v)}`);
    },
    assert_false(v, d) {
      assert(v === false, d, `expected false got ${format_value(v)}`);
    },
    assert_equals(a, e, d) {
      assert(typeof a === typeof e, d, `expected (${typeof e}) ${format_value(e)} but got (${typeof a}) ${format_value(a)}`);
      assert(same_value(a, e), d, `expected ${format_value(e)} but got ${format_value(a)}`);
    },
    assert_not_equals(a, e, d) {
      assert(!same_value(a, e), d, `got disallowed value ${format_value(a)}`);
    },
    assert_in_array(a, arr, d) {
      assert(arr.indexOf(a) !== -1, d, `value ${format_value(a)} not in array ${format_value(arr)}`);
    },
    assert_array_equals(a, e, d) {
      assert(typeof a === "object" && a !== null && "length" in a, d, `value is ${format_value(a)}, expected array`);
      assert(a.length === e.length, d, `lengths differ, expected array ${format_value(e)} length ${e.length}, got ${format_value(a)} length ${a.length}`);
      for (let i = 0; i < a.length; i++) {
        assert(a.hasOwnProperty(i) === e.hasOwnProperty(i), d, `expected property ${i} to be ${e.hasOwnProperty(i) ? "present" : "missing"}`);
        assert(same_value(e[i], a[i]), d, `expected property ${i} to be ${format_value(e[i])} but got ${format_value(a[i])}`);
      }
    },
    assert_array_approx_equals(a, e, eps, d) {
      assert(a.length === e.length, d, "lengths differ");
      for (let i = 0; i < a.length; i++) {
        assert(typeof a[i] === "number" && Math.abs(a[i] - e[i]) <= eps, d, `property ${i}: expected ${e[i]} +/- ${eps} got ${a[i]}`);
      }
    },
    assert_approx_equals(a, e, eps, d) {
      assert(typeof a === "number", d, `expected a number got ${typeof a}`);
      assert(a === e || Math.abs(a - e) <= eps, d, `expected ${e} +/- ${eps} but got ${a}`);
    },
    assert_less_than(a, e, d) {
      assert(typeof a === "number" && a < e, d, `expected a number less than ${e} but got ${format_value(a)}`);
    },
    assert_greater_than(a, e, d) {
      assert(typeof a === "number" && a > e, d, `expected a number greater than ${e} but got ${format_value(a)}`);
    },
    assert_less_than_equal(a, e, d) {
      assert(typeof a === "number" && a <= e, d, `expected a number less than or equal to ${e} but got ${format_value(a)}`);
    },
    assert_greater_than_equal(a, e, d) {
      assert(typeof a === "number" && a >= e, d, `expected a number greater than or equal to ${e} but got ${format_value(a)}`);
    },
    assert_between_exclusive(a, lo, hi, d) {
      assert(typeof a === "number" && a > lo && a < hi, d, `expected a number between ${lo} and ${hi} got ${format_value(a)}`);
    },
    assert_between_inclusive(a, lo, hi, d) {
      assert(typeof a === "number" && a >= lo && a <= hi, d, `expected a number between ${lo} and ${hi} got ${format_value(a)}`);
    },
    assert_regexp_match(a, re, d) {
      assert(re.test(a), d, `expected ${format_value(a)} to match ${re}`);
    },
    assert_class_string(o, cls, d) {
      const s = Object.prototype.toString.call(o);
      assert(s === `[object ${cls}]`, d, `expected [object ${cls}] got ${s}`);
    },
    assert_own_property(o, p, d) {
      assert(Object.prototype.hasOwnProperty.call(o, p), d, `expected own property ${format_value(p)}`);
    },
    assert_not_own_property(o, p, d) {
      assert(!Object.prototype.hasOwnProperty.call(o, p), d, `unexpected own property ${format_value(p)}`);
    },
    assert_inherits(o, p, d) {
      assert(typeof o === "object" || typeof o === "function", d, "not an object");
      assert(!Object.prototype.hasOwnProperty.call(o, p), d, `property ${format_value(p)} is own, not inherited`);
      assert(p in o, d, `property ${format_value(p)} not found in the prototype chain`);
    },
    assert_idl_attribute(o, p, d) {
      asserts.assert_inherits(o, p, d);
    },
    assert_readonly(o, p, d) {
      const initial = o[p];
      try {
        o[p] = initial + "a";
      } catch {}
      assert(same_value(o[p], initial), d, `changing property ${format_value(p)} succeeded`);
    },
    assert_object_equals(a, e, d) {
      const seen = [];
      function check(x, y, path) {
        assert(typeof x === "object" && x !== null, d, `value at ${path} is not an object`);
        for (const k of Object.keys(y)) {
          assert(Object.prototype.hasOwnProperty.call(x, k), d, `expected property ${path}.${k} missing`);
          if (typeof y[k] === "object" && y[k] !== null) {
            if (seen.indexOf(y[k]) === -1) {
              seen.push(y[k]);
              check(x[k], y[k], `${path}.${k}`);
            }
          } else {
            assert(same_value(x[k], y[k]), d, `property ${path}.${k} expected ${format_value(y[k])} got ${format_value(x[k])}`);
          }
        }
        for (const k of Object.keys(x)) {
          assert(Object.prototype.hasOwnProperty.call(y, k), d, `unexpected property ${path}.${k}`);
        }
      }
      check(a, e, "");
    },
    assert_unreached(d) {
      fail(d, "reached unreachable code");
    },
    assert_implements(cond, d) {
      assert(!!cond, d, "not implemented");
    },
    assert_implements_optional(cond, d) {
      assert(!!cond, d, "optional feature not implemented");
    },
    assert_throws_js(ctor, fn, d) {
      let threw = false;
      try {
        fn();
      } catch (e) {
        threw = true;
        checkJsError(e, ctor, d);
      }
      assert(threw, d, `${fn} did not throw`);
    },
    assert_throws_dom(type, ctorOrFn, fnOrD, maybeD) {
      let ctor = globalThis.DOMException;
      let fn = ctorOrFn;
      let d = fnOrD;
      if (typeof fnOrD === "function") {
        ctor = ctorOrFn;
        fn = fnOrD;
        d = maybeD;
      }
      let threw = false;
      try {
        fn();
      } catch (e) {
        threw = true;
        checkDomError(e, type, ctor, d);
      }
      assert(threw, d, `${fn} did not throw`);
    },
    assert_throws_quotaexceedederror(fn, requested, quota, d) {
      let threw = false;
      try {
        fn();
      } catch (e) {
        threw = true;
        assert(typeof e === "object" && e !== null, d, `threw ${format_value(e)}, not an object`);
        assert(e.name === "QuotaExceededError", d, `threw ${message(e)}, expected QuotaExceededError`);
        assert(e instanceof globalThis.DOMException, d, "not a DOMException");
        if (requested !== null) assert(e.requested === requested, d, `requested is ${e.requested}`);
        if (quota !== null) assert(e.quota === quota, d, `quota is ${e.quota}`);
      }
      assert(threw, d, `${fn} did not throw`);
    },
    // The legacy form older WPT files still call: `code` is an error object whose `name` the
    // thrown error must have, or a DOMException name.
    assert_throws(code, fn, d) {
      let threw = false;
      try {
        fn();
      } catch (e) {
        threw = true;
        if (typeof code === "string") {
          checkDomError(e, code, globalThis.DOMException, d);
        } else {
          assert(typeof e === "object" && e !== null, d, `threw ${format_value(e)}, not an object`);
          assert(e.name === code.name, d, `threw an error named ${e.name}, expected ${code.name}`);
        }
      }
      assert(threw, d, `${fn} did not throw`);
    },
    assert_throws_exactly(expected, fn, d) {
      let threw = false;
      try {
        fn();
      } catch (e) {
        threw = true;
        assert(same_value(e, expected), d, `threw ${format_value(e)}, expected ${format_value(expected)}`);
      }
      assert(threw, d, `${fn} did not throw`);
    },
  };

  function checkJsError(e, ctor, d) {
    assert(typeof e === "object" && e !== null, d, `threw ${format_value(e)}, not an object`);
    assert(e.constructor === ctor, d, `threw ${message(e)}, expected ${ctor && ctor.name}`);
    assert(e.name === ctor.name, d, `threw an error named ${e.name}, expected ${ctor.name}`);
  }

  const DOM_CODES = {
    IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
    NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InUseAttributeError: 10,
    InvalidStateError: 11, SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14,
    InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18, NetworkError: 19,
    AbortError: 20, URLMismatchError: 21, QuotaExceededError: 22, TimeoutError: 23,
    InvalidNodeTypeError: 24, DataCloneError: 25,
    EncodingError: 0, NotReadableError: 0, UnknownError: 0, ConstraintError: 0, DataError: 0,
    TransactionInactiveError: 0, ReadOnlyError: 0, VersionError: 0, OperationError: 0,
    NotAllowedError: 0, OptOutError: 0,
  };
  const LEGACY_NAMES = {
    INDEX_SIZE_ERR: "IndexSizeError", HIERARCHY_REQUEST_ERR: "HierarchyRequestError",
    WRONG_DOCUMENT_ERR: "WrongDocumentError", INVALID_CHARACTER_ERR: "InvalidCharacterError",
    NO_MODIFICATION_ALLOWED_ERR: "NoModificationAllowedError", NOT_FOUND_ERR: "NotFoundError",
    NOT_SUPPORTED_ERR: "NotSupportedError", INUSE_ATTRIBUTE_ERR: "InUseAttributeError",
    INVALID_STATE_ERR: "InvalidStateError", SYNTAX_ERR: "SyntaxError",
    INVALID_MODIFICATION_ERR: "InvalidModificationError", NAMESPACE_ERR: "NamespaceError",
    INVALID_ACCESS_ERR: "InvalidAccessError", TYPE_MISMATCH_ERR: "TypeMismatchError",
    SECURITY_ERR: "SecurityError", NETWORK_ERR: "NetworkError", ABORT_ERR: "AbortError",
    URL_MISMATCH_ERR: "URLMismatchError", QUOTA_EXCEEDED_ERR: "QuotaExceededError",
    TIMEOUT_ERR: "TimeoutError", INVALID_NODE_TYPE_ERR: "InvalidNodeTypeError",
    DATA_CLONE_ERR: "DataCloneError",
  };

  function checkDomError(e, type, ctor, d) {
    let name = type;
    if (typeof type === "number") {
      name = Object.keys(DOM_CODES).find((k) => DOM_CODES[k] === type);
    } else if (LEGACY_NAMES[type]) {
      name = LEGACY_NAMES[type];
    }
    assert(typeof e === "object" && e !== null, d, `threw ${format_value(e)}, not an object`);
    assert(e.name === name, d, `threw ${message(e)}, expected DOMException ${name}`);
    assert(e.code === (DOM_CODES[name] || 0), d, `code is ${e.code}, expected ${DOM_CODES[name] || 0}`);
    assert(e.constructor === ctor, d, `constructor is ${e.constructor && e.constructor.name}, expected DOMException`);
  }

  function rejects(t, check, promise, d) {
    return Promise.resolve(promise).then(
      () => fail(d, "promise should have rejected"),
      (e) => check(e),
    );
  }

  function promise_rejects_js(t, ctor, promise, d) {
    return rejects(t, (e) => checkJsError(e, ctor, d), promise, d);
  }
  function promise_rejects_dom(t, type, ctorOrPromise, promiseOrD, maybeD) {
    if (typeof ctorOrPromise === "function" && ctorOrPromise !== undefined && promiseOrD && typeof promiseOrD.then === "function") {
      return rejects(t, (e) => checkDomError(e, type, ctorOrPromise, maybeD), promiseOrD, maybeD);
    }
    return rejects(t, (e) => checkDomError(e, type, globalThis.DOMException, promiseOrD), ctorOrPromise, promiseOrD);
  }
  function promise_rejects_exactly(t, expected, promise, d) {
    return rejects(t, (e) => asserts.assert_equals(e, expected, d), promise, d);
  }
  // The legacy form older WPT files still call, read as the legacy `assert_throws` reads `code`.
  function promise_rejects(t, code, promise, d) {
    return rejects(t, (e) => asserts.assert_throws(code, () => { throw e; }, d), promise, d);
  }

  function setup(fnOrProps, maybeProps) {
    let props = fnOrProps;
    if (typeof fnOrProps === "function") {
      props = maybeProps;
      try {
        fnOrProps();
      } catch (e) {
        harness = "setup failed: " + message(e);
      }
    }
    if (props && props.explicit_done) explicitDone = true;
    // One test for the whole file, passed by `done()` and failed by an uncaught assertion.
    if (props && props.single_test && singleTest === null) {
      explicitDone = true;
      singleTest = new Test("(single test)", "async");
      singleTest.startTimer();
    }
  }

  function promise_setup(fn, props) {
    setup(props);
    setupPromise = Promise.resolve()
      .then(fn)
      .catch((e) => {
        harness = "promise_setup failed: " + message(e);
      });
  }

  function generate_tests(fn, cases, props) {
    for (const c of cases) {
      const [name, ...args] = c;
      test(() => fn(...args), name, props);
    }
  }

  // Resources the runner inlines (JSON and text a test would fetch): `fetch` answers relative
  // URLs from them and passes anything else to the platform's own.
  const platformFetch = globalThis.fetch;
  function resourceFetch(input, init) {
    const url = typeof input === "string" ? input : input && input.url;
    if (typeof url === "string") {
      // Relative to the file's folder, or (after `../` segments) to WPT's root.
      const key = url.replace(/^\.\//, "").replace(/^(\.\.\/)+/, "");
      if (key in resources) {
        const text = resources[key];
        return Promise.resolve({
          ok: true,
          status: 200,
          json: () => Promise.resolve(JSON.parse(text)),
          text: () => Promise.resolve(text),
        });
      }
    }
    return platformFetch(input, init);
  }

  const api = {
    test, async_test, promise_test, setup, promise_setup, generate_tests,
    promise_rejects_js, promise_rejects_dom, promise_rejects_exactly, promise_rejects, format_value,
    // testharness.js's `fetch_json`: the URL files load their data with it.
    fetch_json(resource) {
      return globalThis.fetch(resource).then((response) => response.json());
    },
    done() {
      doneCalled = true;
      if (singleTest !== null) singleTest.done();
      maybeFinish();
    },
    step_timeout(fn, ms, ...args) {
      return setTimeout(() => fn(...args), ms);
    },
    // WPT's /common/subset-tests.js and subset-tests-by-key.js: every subtest runs.
    subsetTest(testFunc, ...args) {
      return testFunc(...args);
    },
    subsetTestByKey(key, testFunc, ...args) {
      return testFunc(...args);
    },
    shouldRunSubTest() {
      return true;
    },
    // WPT's /common/sab.js, whose shared buffers come from a shared `WebAssembly.Memory`.
    createBuffer(type, length) {
      if (type === "ArrayBuffer") return new ArrayBuffer(length);
      if (type === "SharedArrayBuffer") return new SharedArrayBuffer(length);
      throw new Error("type has to be ArrayBuffer or SharedArrayBuffer");
    },
    GLOBAL: {
      isWindow: () => false,
      isWorker: () => false,
      isShadowRealm: () => false,
    },
    ...asserts,
  };
  for (const k of Object.keys(api)) globalThis[k] = api[k];
  if (typeof globalThis.self === "undefined") globalThis.self = globalThis;
  // WPT's helpers are classic scripts, and some assign a global they never declare; here they
  // run as module code, which is strict: declare those globals first.
  for (const name of ["structuredCloneBatteryOfTests"]) {
    if (!(name in globalThis)) globalThis[name] = undefined;
  }
  if (typeof platformFetch === "function") globalThis.fetch = resourceFetch;

  return {
    resource(path, text) {
      resources[path] = text;
    },
    loadError(e) {
      harness = "file threw: " + message(e);
    },
    finish() {
      loaded = true;
      return new Promise((resolve) => {
        const guard = setTimeout(() => {
          if (finishResolve) {
            finishResolve = null;
            if (!harness) harness = "file timed out";
            resolve();
          }
        }, FILE_TIMEOUT_MS);
        finishResolve = () => {
          clearTimeout(guard);
          resolve();
        };
        Promise.resolve().then(maybeFinish);
      }).then(() => ({ harness, results }));
    },
  };
})();
