//! The call's JSON input reaches the script as the values `JSON.parse` gives, with whole
//! numbers stored as integers (the interpreter's fast paths) rather than doubles.

use crate::support::*;
use serde_json::{Value, json};

/// Compares the input the script was handed with `JSON.parse` of the same text, deeply:
/// `Object.is` on every leaf, own keys in order, prototypes and property attributes.
const COMPARE: &str = r#"
function same(a, b, path, diffs) {
  if (typeof a !== typeof b || (typeof a !== "object" && !Object.is(a, b)) || (a === null) !== (b === null)) {
    diffs.push(path);
    return;
  }
  if (typeof a !== "object" || a === null) return;
  if (Array.isArray(a) !== Array.isArray(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) {
    diffs.push(path + " (kind)");
    return;
  }
  const ka = Reflect.ownKeys(a), kb = Reflect.ownKeys(b);
  if (JSON.stringify(ka) !== JSON.stringify(kb)) {
    diffs.push(path + " keys " + JSON.stringify(ka) + " vs " + JSON.stringify(kb));
    return;
  }
  for (const k of ka) {
    const da = Object.getOwnPropertyDescriptor(a, k), db = Object.getOwnPropertyDescriptor(b, k);
    if (da.writable !== db.writable || da.enumerable !== db.enumerable || da.configurable !== db.configurable) {
      diffs.push(path + "." + k + " (attributes)");
    }
    same(a[k], b[k], path + "." + k, diffs);
  }
}
export default (input) => {
  const diffs = [];
  same(input.value, JSON.parse(input.text), "$", diffs);
  return diffs;
};
"#;

/// Runs COMPARE on `text` and returns the paths where the two readings differ.
async fn differences(text: &str) -> Value {
    let input = format!(
        r#"{{"text":{},"value":{text}}}"#,
        serde_json::to_string(text).unwrap()
    );
    let outcome = run_source(COMPARE, &input).await;
    serde_json::from_str(output(&outcome)).unwrap()
}

#[tokio::test]
async fn input_reads_exactly_as_json_parse() {
    let deep = format!("{}1{}", "[".repeat(250), "]".repeat(250));
    // More distinct key sequences than the reader keeps shapes for.
    let sequences = (0..40)
        .map(|i| format!(r#"{{"p{i}":{i},"q{i}":[{i}],"r":{{"p{i}":{i},"s":-{i}}}}}"#))
        .collect::<Vec<_>>()
        .join(",");
    let sequences = format!("[{sequences}]");
    // Arrays longer than the reader gathers before making the array (4,096), at the top and
    // nested, with objects, doubles and -0 among the appended elements.
    let long = |n: usize| {
        let items: Vec<String> = (0..n)
            .map(|i| match i % 4 {
                0 => format!(r#"{{"i":{i}}}"#),
                1 => format!("{i}.5"),
                2 => "-0".to_owned(),
                _ => i.to_string(),
            })
            .collect();
        format!("[{}]", items.join(","))
    };
    let long = format!(r#"{{"top":{},"nested":[{}]}}"#, long(5000), long(4097));
    // More distinct keys than the reader's key cache has entries, in rows that repeat them in
    // order and in reverse, so that entries are evicted and taken again.
    let keys: Vec<String> = (0..70).map(|i| format!(r#""c{i}x":{i}"#)).collect();
    let reversed: Vec<String> = keys.iter().rev().cloned().collect();
    let evicting = format!(
        "[{{{}}},{{{}}},{{{}}}]",
        keys.join(","),
        reversed.join(","),
        keys.join(",")
    );
    // Rows that repeat a key order, wider than the reader holds shapes for (16 keys), and more
    // repeated orders than it holds (8), each three times in a row.
    let wide: Vec<String> = (0..20).map(|i| format!(r#""w{i}":{i}"#)).collect();
    let wide = format!("{{{}}}", wide.join(","));
    let orders = (0..12)
        .map(|i| format!(r#"{{"o{i}":{i},"id":{i},"v":[{{"x":{i},"y":{i}}}]}}"#).repeat(3))
        .collect::<Vec<_>>()
        .join("")
        .replace("}{", "},{");
    let repeated = format!("[{wide},{wide},{wide},{orders}]");
    let cases = [
        repeated.as_str(),
        r#"{"a":1,"b":-2,"c":2147483647,"d":-2147483648,"e":2147483648,"f":-2147483649}"#,
        r#"{"negzero":-0,"negzerof":-0.0,"zerof":0.0,"whole":25.0,"exp":1e3,"neg":-1E-2}"#,
        r#"[9007199254740993, 18446744073709551615, 18446744073709551616, 123456789012345678901234567890]"#,
        r#"[0.1, 0.30000000000000004, 5e-324, 1.7976931348623157e308, 2.2250738585072011e-308]"#,
        r#"[1e400, -1e400, 1e-400]"#,
        r#"{"b":1,"2":2,"1":3,"a":4,"01":5,"4294967295":6,"4294967294":7}"#,
        r#"{"a":1,"b":2,"a":3}"#,
        // Keys that are not ASCII, beside Latin-1 keys whose UTF-8 bytes they share.
        r#"{"Ã©":1,"é":2,"\u00c3\u00a9x":3,"éx":4,"ÿ":5,"ğ":6,"😀":7}"#,
        // Rows that share key sequences, with the sequences' prefixes, a duplicate key, a
        // reordering and a row wider than the shapes kept alive.
        r#"[{"a":1,"b":2,"c":3},{"a":4,"b":5,"c":6},{"a":7},{"a":8,"b":9},{"a":1,"b":2,"a":3},{"c":1,"b":2,"a":3},{"a":{"a":1,"b":2},"b":[{"a":1,"b":2}]},{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9},{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9}]"#,
        // Keys that share the key cache's entry (same length, first and last byte), a key
        // written with escapes beside its plain spelling, keys at the cached length limit (23
        // bytes) and past it, numeric keys, and keys whose entry is taken by a key inside their
        // value, before they are defined (also by the same key, again and again).
        // (The cache is set up after the first 16 keys.)
        r#"[{"w0":0,"w1":1,"w2":2,"w3":3,"w4":4,"w5":5,"w6":6,"w7":7,"w8":8,"w9":9,"w10":10,"w11":11,"w12":12,"w13":13,"w14":14,"w15":15,"w16":16},{"a1b":{"a2b":{"a3b":1}},"a4b":[{"a5b":[{"a6b":2}]}]},{"a7b":[{"a7b":0,"a8b":0},{"a7b":1,"a8b":1},{"a8b":2,"a7b":2}],"a8b":{"a7b":{"a8b":3}}},{"axb":1,"ayb":2,"azb":3},{"ayb":4,"axb":5},{"\u0061xb":6,"a\u0078b":7},{"k23_________________xyz":1,"k24__________________xyz":2},{"k23_________________xyz":3,"k24__________________xyz":4},{"1":1,"01":2,"10":3},{"01":4,"1":5}]"#,
        evicting.as_str(),
        r#"{"__proto__":{"polluted":true},"constructor":1,"toString":2}"#,
        r#"["\u0000","\ud83d\ude00","é","\"\\\/\b\f\n\r\t","\u2028\u2029",""]"#,
        r#"["\ud800", "\udc00x", "a\ud83d"]"#,
        // Input serde_json gives up on (a lone surrogate) after rows whose shapes were held.
        r#"[{"a":1,"b":2},{"a":1,"b":2},{"a":1,"b":2},{"a":1,"b":2},"\ud800"]"#,
        r#"{"":{"":[[],{}]},"nested":[{"x":[1,[2,[3,{"y":null}]]]}],"t":true,"f":false}"#,
        deep.as_str(),
        sequences.as_str(),
        long.as_str(),
        "  \n\t 42 \r\n ",
        r#""just a string""#,
        "null",
    ];
    for text in cases {
        assert_eq!(differences(text).await, json!([]), "input {text}");
    }
}

/// The reader holds QuickJS's shapes along the key orders its rows repeat, for as long as the
/// script runs. Objects the script makes with those keys, and rows it changes, come out as
/// they would from `JSON.parse`'s rows.
#[tokio::test]
async fn rows_whose_shapes_are_held_behave_as_json_parse_rows() {
    let changes = COMPARE.replace(
        "same(input.value, JSON.parse(input.text), \"$\", diffs);",
        r#"const change = (rows) => {
            const made = rows.map((r) => ({ id: r.id, name: r.name, extra: 1 }));
            const prefix = rows.map((r) => ({ id: r.id }));
            rows[0].added = true;
            delete rows[1].name;
            Object.freeze(rows[2]);
            Object.defineProperty(rows[3], "id", { enumerable: false });
            rows[4].price = undefined;
            delete rows[5].id;
            rows[5].id = "last";
            return { rows, made, prefix, literal: { id: 1, name: 2, price: 3 }, empty: {} };
          };
          same(change(input.value), change(JSON.parse(input.text)), "$", diffs);
          diffs.push(Object.isFrozen(input.value[2]), Object.keys(input.value[5]).join());"#,
    );
    assert_ne!(changes, COMPARE);
    let rows = (0..8)
        .map(|i| format!(r#"{{"id":{i},"name":"n{i}","price":{i}.5}}"#))
        .collect::<Vec<_>>()
        .join(",");
    let input = format!(
        r#"{{"text":{},"value":[{rows}]}}"#,
        serde_json::to_string(&format!("[{rows}]")).unwrap()
    );
    let outcome = run_source(&changes, &input).await;
    assert_eq!(
        serde_json::from_str::<Value>(output(&outcome)).unwrap(),
        json!([true, "name,price,id"])
    );
}

#[tokio::test]
async fn input_ignores_setters_a_script_put_on_the_prototypes() {
    let outcome = run_source(
        r#"globalThis.hits = "";
        Object.defineProperty(Object.prototype, "x", { set(v) { hits += "x=" + v; }, configurable: true });
        Object.defineProperty(Array.prototype, "0", { set(v) { hits += "0=" + v; }, configurable: true });
        export default (input) => ({
          hits,
          ownX: Object.hasOwn(input.o, "x") && input.o.x,
          own0: Object.hasOwn(input.a, 0) && input.a[0],
          proto: Object.getPrototypeOf(input.p) === Object.prototype && Object.hasOwn(input.p, "__proto__"),
        });"#,
        r#"{"o":{"x":1},"a":[7],"p":{"__proto__":null}}"#,
    )
    .await;
    assert_eq!(
        serde_json::from_str::<Value>(output(&outcome)).unwrap(),
        json!({"hits": "", "ownX": 1, "own0": 7, "proto": true})
    );
}

/// Whole numbers arrive as integers: `fib(input.n)` costs what `fib(20)` with a literal costs.
/// Read as doubles (what QuickJS's own `JSON.parse` gives), every `n - 1` and `n < 2` takes
/// the interpreter's slow path and the same call used 1.55× the fuel.
#[tokio::test]
async fn whole_numbers_in_the_input_run_on_the_integer_fast_path() {
    let fib = "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }";
    let from_input = run_source(
        &format!("{fib} export default (input) => fib(input.n);"),
        r#"{"n":20}"#,
    )
    .await;
    let literal = run_source(&format!("{fib} export default () => fib(20);"), "null").await;
    assert_eq!(output(&from_input), "6765");
    assert_eq!(output(&literal), "6765");
    let (a, b) = (
        from_input.receipt.fuel_used as f64,
        literal.receipt.fuel_used as f64,
    );
    assert!(
        (a / b - 1.0).abs() < 0.02,
        "fuel from the input {a}, from a literal {b}"
    );
}
