//! `input_json`: the guest's input reader against `JSON.parse` semantics, through the real
//! sandbox (one engine per process). A script echoes its input back. A document serde_json
//! reads must reach the script as the same value (numbers compared as the doubles
//! `JSON.parse` makes of them); one it refuses must end as `invalid_input`, except the inputs
//! the reader hands to `JSON.parse` instead (docs/architecture.md: nesting past 128 levels,
//! lone surrogates, numbers past the double range), which must either work or be
//! `invalid_input`.

use palisade::{Policy, Script};
use serde_json::Value;
use std::sync::OnceLock;

fn setup() -> &'static (Policy, Script) {
    static SETUP: OnceLock<(Policy, Script)> = OnceLock::new();
    SETUP.get_or_init(|| {
        (
            Policy::builtin_default(),
            Script::new("echo.js", "export default (input) => input"),
        )
    })
}

pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        // The API takes text; the CLI and the server refuse bytes that are not UTF-8 first.
        return;
    };
    let (policy, script) = setup();
    if text.len() as u64 > policy.limits().input.0 {
        return;
    }
    let run = || crate::runtime().block_on(crate::palisade().run(policy, script, text));
    let mut outcome = run();
    if outcome
        .result
        .as_ref()
        .is_err_and(|e| e.code() == "timeout")
    {
        // The call's deadline is wall-clock time: on a machine starved of CPU (or a fuzzer
        // stopped with SIGSTOP mid-call) an input of a few bytes can pass it. Such an input
        // is run once more; a reader that hangs times out both times.
        outcome = run();
    }
    let expected = serde_json::from_str::<Value>(text);
    match (expected, &outcome.result) {
        (Ok(expected), Ok(output)) => {
            let output: Value = serde_json::from_str(output.get())
                .unwrap_or_else(|e| panic!("the output is not JSON: {e}"));
            assert!(
                same(&as_js(&expected), &output),
                "the script saw another value\ninput:  {text}\noutput: {output}"
            );
        }
        (Ok(_), Err(e)) => {
            // A document serde_json reads may still be beyond what the sandbox's own limits
            // take (the output limit, memory): never a refusal as invalid input, never internal.
            assert!(
                e.code() != "invalid_input" && crate::is_documented_code(e.code()),
                "valid JSON ended {}: {e}\ninput: {text}",
                e.code()
            );
        }
        (Err(why), result) => {
            let handed_to_json_parse = why.to_string().contains("recursion limit")
                || why.to_string().contains("number out of range")
                || why.to_string().contains("surrogate")
                || why.to_string().contains("hex escape");
            match result {
                Err(e) if e.code() == "invalid_input" => {}
                Ok(_) if handed_to_json_parse => {}
                Err(e) if handed_to_json_parse => assert!(
                    crate::is_documented_code(e.code()),
                    "input for JSON.parse ended {}: {e}",
                    e.code()
                ),
                other => panic!(
                    "serde_json refuses the input ({why}), the sandbox answered {other:?}\ninput: {text:?}"
                ),
            }
        }
    }
}

/// What `JSON.parse` makes of a document serde_json read: every number a double.
fn as_js(value: &Value) -> Value {
    match value {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(items) => Value::Array(items.iter().map(as_js).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), as_js(v))).collect())
        }
        other => other.clone(),
    }
}

/// Equal as JSON values, numbers compared as doubles (`JSON.stringify` writes `1.0` as `1`,
/// `-0` as `0`).
///
/// Doubles may differ in their last bit or two: serde_json, built here without its
/// `float_roundtrip` feature, rounds some long or far-exponent literals to a neighbour of the
/// correctly rounded double, on the reference's side and when the output is read back.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => close(x, y),
            (x, y) => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Equal, or neighbours within two units in the last place of the same sign.
fn close(x: f64, y: f64) -> bool {
    x == y
        || (x.is_sign_negative() == y.is_sign_negative()
            && x.is_finite()
            && y.is_finite()
            && x.to_bits().abs_diff(y.to_bits()) <= 2)
}
