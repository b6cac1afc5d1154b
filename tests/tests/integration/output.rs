//! A call's result is the text `JSON.stringify` gives, whether the guest writes it itself
//! (plain data) or leaves it to `JSON.stringify` (everything else), and writing it never runs
//! more of the script than `JSON.stringify` would.

use crate::support::*;
use palisade::Policy;

/// Each case makes a fresh value. `value(i)` returns case `i` as the call's result; `text(i)`
/// returns `JSON.stringify` of it, which the call's result must equal.
const CASES: &str = r#"
function doubles() {
  // Bit patterns from a fixed generator, read as doubles: every exponent, subnormals included.
  const view = new DataView(new ArrayBuffer(8));
  let x = 0x2545f4914f6cdd1dn;
  const out = [];
  for (let i = 0; i < 3000; i++) {
    x ^= (x << 13n) & 0xffffffffffffffffn;
    x ^= x >> 7n;
    x ^= (x << 17n) & 0xffffffffffffffffn;
    view.setBigUint64(0, x);
    out.push(view.getFloat64(0));
  }
  for (let i = -30; i < 30; i++) out.push(10 ** i, 1.5 * 10 ** i, i / 7, i * 1e-5);
  // Every power of two: QuickJS writes some of them with a digit more than the shortest.
  for (let e = -1074; e <= 1023; e++) out.push(2 ** e, -(2 ** e));
  return out;
}
const cases = [
  () => null,
  () => [true, false, 0, -0, 1.5, 2147483647, -2147483648, 2147483648, -2147483649],
  () => [0.1, 0.30000000000000004, 5e-324, 1.7976931348623157e308, 1e21, 1e20, 1e-7, 1e-6, 123456789012345680000, 9007199254740993],
  () => [NaN, Infinity, -Infinity, 45000, 89.39999999999999, 76.2],
  doubles,
  () => "",
  () => "plain",
  () => ["\u0000\u0001\u001f\u007f", "\"\\/\b\f\n\r\t", "\u2028\u2029", "é ÿ\u0080\u00ff"],
  () => ["😀", "\ud800", "\udc00x", "a\ud83d", "\ud83d\ude00\ud800", "\udbff\udfff", "x\udfffy\ud7ff\ue000"],
  () => ({}),
  () => ({ a: 1 }),
  () => ({ b: 1, 2: 2, 1: 3, a: 4, "01": 5, 4294967295: 6, 4294967294: 7 }),
  () => ({ "a\"b": 1, "\n": 2, "\ud800": 3, "é": 4, "😀": 5, "": 6 }),
  () => ({ u: undefined, s: Symbol("s"), n: null, [Symbol("k")]: 1, last: 2 }),
  () => ({ u: undefined }),
  () => [undefined, Symbol("s"), null],
  () => { const o = { a: 1 }; Object.defineProperty(o, "hidden", { value: 2, enumerable: false }); return o; },
  () => { const o = Object.create(null); o.x = [1, { y: 2 }]; return o; },
  () => JSON.parse('{"__proto__":1,"constructor":2,"toString":3}'),
  () => { const a = [1, 2]; a.extra = 3; return a; },
  () => Object.freeze([1, { a: 2 }]),
  () => { const o = { a: 1, b: 2, c: 3 }; delete o.b; o.d = 4; return o; },
  () => Array.from({ length: 5000 }, (_, i) => (i % 3 ? { i, s: "r" + i, f: i / 4 } : [i, -i])),
  () => { let v = 1; for (let i = 0; i < 100; i++) v = i % 2 ? [v] : { v }; return v; },
  () => { let v = 1; for (let i = 0; i < 200; i++) v = i % 2 ? [v] : { v }; return v; },
  // Left to JSON.stringify.
  () => [1, , 3],
  () => { const a = [1, 2]; a.length = 4; return a; },
  () => ({ a: 1, f() {}, g: () => 2 }),
  () => [() => 1, 2],
  () => ({ when: new Date(0) }),
  () => ({ a: 1, toJSON() { return "own"; } }),
  () => { const a = [1]; a.toJSON = () => "array"; return a; },
  () => { Object.prototype.toJSON = function () { return "object proto"; }; return { a: 1 }; },
  () => { Array.prototype.toJSON = function () { return "array proto"; }; return { a: [1] }; },
  () => { Object.setPrototypeOf(Array.prototype, { toJSON() { return "between"; } }); return [1]; },
  () => { Object.defineProperty(Object.prototype, "toJSON", { get() { return undefined; } }); return { a: 1 }; },
  () => { let n = 0; return { x: 1, get a() { return ++n; }, get b() { return n; }, c: 3 }; },
  () => { let n = 0; Object.defineProperty(Array.prototype, 1, { get() { return ++n; } }); return [0, , 2, n]; },
  () => { const a = [0, 1]; let n = 0; Object.defineProperty(a, 0, { get() { return ++n; } }); return [a, a]; },
  () => { class P { constructor() { this.x = 1; } } return [new P(), { p: new P() }]; },
  () => { class A extends Array {} return A.from([1, 2]); },
  () => new Proxy({ a: 1 }, {}),
  () => new Proxy([1, 2], {}),
  () => [new Number(3), new String("s"), new Boolean(false), Object(Symbol("s"))],
  () => [new Map([[1, 2]]), new Set([1]), new Uint8Array([1, 2]), new Error("e"), /re/g],
  () => [JSON.rawJSON("1e1000"), { r: JSON.rawJSON('"raw"') }],
  () => { const shared = { s: 1 }; return [shared, shared, { shared }]; },
  () => ({ arguments: (function () { return arguments; })(1, 2) }),
];
export const count = cases.length;
export function value(i) { return cases[i](); }
export function text(i) { return JSON.stringify(cases[i]()); }
export default () => count;
"#;

async fn call(entry: &str, input: &str) -> String {
    let script = palisade::Script::new("cases.js", CASES);
    let outcome = PALISADE
        .call(&Policy::builtin_default(), &script, entry, input)
        .await;
    output(&outcome).to_owned()
}

#[tokio::test]
async fn results_are_written_exactly_as_json_stringify_writes_them() {
    let count: usize = call("default", "null").await.parse().unwrap();
    for i in 0..count {
        let written = call("value", &i.to_string()).await;
        let stringified: String = serde_json::from_str(&call("text", &i.to_string()).await)
            .unwrap_or_else(|e| panic!("case {i}: JSON.stringify gave no string: {e}"));
        assert_eq!(written, stringified, "case {i}");
    }
}

#[tokio::test]
async fn results_hold_the_expected_text() {
    let cases = [
        (0, "null"),
        (
            1,
            "[true,false,0,0,1.5,2147483647,-2147483648,2147483648,-2147483649]",
        ),
        (3, "[null,null,null,45000,89.39999999999999,76.2]"),
        (
            7,
            "[\"\\u0000\\u0001\\u001f\u{7f}\",\"\\\"\\\\/\\b\\f\\n\\r\\t\",\"\u{2028}\u{2029}\",\"é ÿ\u{80}\u{ff}\"]",
        ),
        (
            8,
            "[\"😀\",\"\\ud800\",\"\\udc00x\",\"a\\ud83d\",\"😀\\ud800\",\"\u{10ffff}\",\"x\\udfffy\u{d7ff}\u{e000}\"]",
        ),
        (
            11,
            r#"{"1":3,"2":2,"4294967294":7,"b":1,"a":4,"01":5,"4294967295":6}"#,
        ),
        (13, r#"{"n":null,"last":2}"#),
        (14, "{}"),
        (15, "[null,null,null]"),
        (16, r#"{"a":1}"#),
        (21, r#"{"a":1,"c":3,"d":4}"#),
        (25, "[1,null,3]"),
        (26, "[1,2,null,null]"),
        (30, r#""own""#),
        (36, r#"{"x":1,"a":1,"b":1,"c":3}"#),
        (37, "[0,1,2,0]"),
        (38, "[[1,1],[2,1]]"),
        (39, r#"[{"x":1},{"p":{"x":1}}]"#),
        (45, r#"[1e1000,{"r":"raw"}]"#),
    ];
    for (i, expected) in cases {
        assert_eq!(call("value", &i.to_string()).await, expected, "case {i}");
    }
}
