//! Byte paths move bytes in bulk (issue 22): `fs` reads and writes, `fetch` request and
//! response bodies, `TextEncoder`/`TextDecoder`, `atob`/`btoa`, `crypto.getRandomValues` and
//! `structuredClone` of typed arrays cost at most a few wasm instructions per byte, measured as
//! fuel. Each path runs at 0 and at `N` bytes, less a setup script that makes the same payload
//! without the operation; fuel is deterministic, so this is a guard like `fuel_guard`.

use crate::support::*;
use crate::upstream::Upstream;
use palisade::{Policy, Script};

/// The payload size (`crypto.getRandomValues` takes at most 65,536 bytes a call).
const N: usize = 200_000;
/// The most fuel a path that moves bytes in bulk (typed arrays, array buffers) may use per byte.
const BULK: f64 = 5.0;
/// The most for a path that converts a string once, either way (see the list): the same as
/// `BULK`, since QuickJS finds an ASCII string a word at a time (vendor/README.md).
const ONE_SCAN: f64 = 5.0;

fn byte_policy(port: u16) -> Policy {
    policy(&format!(
        r#"
[limits]
fuel = 2_000_000_000
timeout = "60s"
memory = "256MiB"
[fs.scratch]
guest = "/scratch"
[http]
allow_private = ["127.0.0.1/32", "::1/128"]
[[http.allow]]
url = "http://localhost:{port}/api/"
methods = ["GET", "POST"]
"#
    ))
}

/// Fuel of `setup; op` with `n` bound to the size, run twice (the first call also compiles).
async fn fuel(p: &Policy, setup: &str, op: &str, n: usize) -> u64 {
    let source =
        format!("export default async () => {{ const n = {n}; {setup}; {op}; return 0; }};");
    let script = Script::new("bytes.js", source);
    let _ = PALISADE.run(p, &script, "null").await;
    let outcome = PALISADE.run(p, &script, "null").await;
    assert_eq!(output(&outcome), "0", "{setup}; {op}");
    outcome.receipt.fuel_used
}

#[tokio::test]
async fn byte_paths_fuel_per_byte_stays_bounded() {
    let up = Upstream::start().await;
    let p = byte_policy(up.port());
    let port = up.port();
    let big = format!("`http://localhost:{port}/api/big?bytes=${{n}}`");
    let sink = format!("`http://localhost:{port}/api/big?bytes=0`");
    let echo = format!("`http://localhost:{port}/api/echo`");
    let filled = "const b = new Uint8Array(n).fill(120)";
    let bytes = "const b = new Uint8Array(n)";
    let text = "const s = 'x'.repeat(n)";
    let written = "const s = 'x'.repeat(n); await fs.writeFile('/scratch/f', s)";
    let encoded = "const s = btoa('x'.repeat(n))";
    let post = |body: &str| {
        format!("await (await fetch({sink}, {{ method: 'POST', body: {body} }})).arrayBuffer()")
    };
    let get = |read: &str| format!("await (await fetch({big})).{read}()");
    // (path, setup, operation, size, the most fuel per byte it may use)
    let paths: Vec<(&str, &str, String, usize, f64)> = vec![
        (
            "fs.writeFile(Uint8Array)",
            bytes,
            "await fs.writeFile('/scratch/f', b)".into(),
            N,
            BULK,
        ),
        (
            "structuredClone(Uint8Array)",
            bytes,
            "structuredClone(b)".into(),
            N,
            BULK,
        ),
        (
            "crypto.getRandomValues",
            bytes,
            "crypto.getRandomValues(b)".into(),
            65_536,
            BULK,
        ),
        ("fetch body: ArrayBuffer", bytes, post("b.buffer"), N, BULK),
        ("fetch body: Uint8Array", bytes, post("b"), N, BULK),
        ("response.arrayBuffer()", "", get("arrayBuffer"), N, BULK),
        // One string conversion each (`JS_ToCStringLen`, `JS_NewStringLen`), whose ASCII check
        // reads a word at a time, as the guest's own UTF-8 check does (`globals::text::utf8`).
        (
            "fs.writeFile(string)",
            text,
            "await fs.writeFile('/scratch/f', s)".into(),
            N,
            ONE_SCAN,
        ),
        (
            "fs.readFile",
            written,
            "await fs.readFile('/scratch/f')".into(),
            N,
            ONE_SCAN,
        ),
        (
            "TextEncoder.encode",
            text,
            "new TextEncoder().encode(s)".into(),
            N,
            ONE_SCAN,
        ),
        ("fetch body: string", text, post("s"), N, ONE_SCAN),
        // The body as bytes (`response.arrayBuffer()`, 4.3), then one conversion.
        ("response.text()", "", get("text"), N, 5.5),
        (
            "TextDecoder.decode",
            bytes,
            "new TextDecoder().decode(b)".into(),
            N,
            ONE_SCAN,
        ),
        // The text, then JSON.parse over each character.
        (
            "response.json()",
            filled,
            format!("await (await fetch({echo}, {{ method: 'POST', body: b }})).json()"),
            N,
            35.0,
        ),
        // A scan of the input, the coding in Rust, a scan of the output (4/3 as long for btoa;
        // for atob, Latin-1 output is decoded from UTF-8 by QuickJS).
        ("btoa", text, "btoa(s)".into(), N, 37.0),
        ("atob", encoded, "atob(s)".into(), N, 36.0),
    ];
    let mut report = String::new();
    let mut over = Vec::new();
    for (name, setup, op, n, most) in &paths {
        let with = fuel(&p, setup, op, *n).await as f64 - fuel(&p, setup, op, 0).await as f64;
        let without = fuel(&p, setup, "", *n).await as f64 - fuel(&p, setup, "", 0).await as f64;
        let per_byte = (with - without) / *n as f64;
        report += &format!("{name}: {per_byte:.2} fuel/byte (at most {most})\n");
        if per_byte > *most {
            over.push(*name);
        }
    }
    eprintln!("{report}");
    assert!(over.is_empty(), "over their bound: {over:?}\n{report}");
    assert_next_call_works().await;
}

/// The bulk paths keep their values: a Uint8Array (and a view into a larger buffer) is written
/// byte for byte, `atob`/`btoa` keep the forgiving-base64 rules and their errors, and
/// `TextEncoder`/`TextDecoder` handle a BOM, `fatal`, `ignoreBOM`, views and bad input.
#[tokio::test]
async fn bulk_paths_keep_values_and_errors() {
    let p = policy("[fs.scratch]\nguest = \"/scratch\"\n");
    let source = r#"export default async () => {
      const all = new Uint8Array(256);
      for (let i = 0; i < 256; i++) all[i] = i;
      await fs.writeFile('/scratch/hi', new Uint8Array([104, 105]));
      await fs.writeFile('/scratch/view', new Uint8Array(all.buffer, 104, 2));
      let latin1 = '';
      for (let i = 0; i < 256; i++) latin1 += String.fromCharCode(i);
      const errors = [];
      for (const f of [() => btoa('\u0100'), () => btoa('\ud800'), () => atob('a'), () => atob('aGk=='),
                       () => atob('a\u00e9Gk'), () => atob('a=Gk')]) {
        try { f(); errors.push('none'); } catch (e) { errors.push(e.name + ': ' + e.message); }
      }
      const decoder = new TextDecoder(), fatal = new TextDecoder('utf-8', { fatal: true });
      const keep = new TextDecoder('utf-8', { ignoreBOM: true });
      const bom = new Uint8Array([0xef, 0xbb, 0xbf, 104, 105, 0xff]);
      for (const f of [() => fatal.decode(bom), () => decoder.decode({}), () => new TextDecoder().decode(bom, { stream: true })]) {
        try { f(); errors.push('none'); } catch (e) { errors.push(e.name + ': ' + e.message); }
      }
      const text = [decoder.decode(bom), keep.decode(bom).length, decoder.decode(bom.subarray(3, 5)),
                    decoder.decode(bom.buffer), decoder.decode(), fatal.decode(new TextEncoder().encode('h\u00e9\ud800')),
                    Array.from(new TextEncoder().encode('\u00e9')), new TextEncoder().encode().length];
      return {
        text,
        hi: await fs.readFile('/scratch/hi'), view: await fs.readFile('/scratch/view'),
        all: btoa(latin1).slice(0, 16), back: atob(btoa(latin1)) === latin1,
        forgiving: [atob(' aG\tk\n= '), atob('aGk'), atob('aA=='), atob('aA'), atob(''), btoa('')],
        errors,
      };
    };"#;
    let outcome = PALISADE
        .run(&p, &Script::new("values.js", source), "null")
        .await;
    let got: serde_json::Value = serde_json::from_str(output(&outcome)).unwrap();
    let btoa = "InvalidCharacterError: btoa: the string has characters outside Latin-1";
    let atob = "InvalidCharacterError: atob: not valid base64";
    assert_eq!(
        got,
        serde_json::json!({
            "hi": "hi", "view": "hi", "all": "AAECAwQFBgcICQoL", "back": true,
            "forgiving": ["hi", "hi", "h", "h", "", ""],
            "errors": [btoa, btoa, atob, atob, atob, atob,
                "TypeError: The encoded data was not valid utf-8",
                "TypeError: The provided value is not of type '(ArrayBuffer or ArrayBufferView)'",
                "none"],
            "text": ["hi\u{fffd}", 4, "hi", "hi\u{fffd}", "", "h\u{e9}\u{fffd}", [195, 169], 0],
        })
    );
    assert_next_call_works().await;
}
