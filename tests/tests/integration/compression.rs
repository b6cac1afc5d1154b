//! `CompressionStream` and `DecompressionStream`: every format round-trips and decodes the
//! standard's vectors, bad input errors the stream with a `TypeError`, and a decompression bomb
//! ends in the script's catchable error or `memory_limit`, within the call's memory.

use crate::support::*;
use palisade::Script;
use serde_json::{Value, json};

async fn eval(source: &str) -> Value {
    let outcome = run_source(source, "null").await;
    serde_json::from_str(output(&outcome)).unwrap()
}

/// The helpers every script below uses: all of a stream's output as one array of bytes.
const HELPERS: &str = r#"
  const drain = async (readable) => {
    const parts = [];
    for await (const part of readable) for (const byte of part) parts.push(byte);
    return parts;
  };
  const through = (stream, chunks) => {
    const writer = stream.writable.getWriter();
    for (const chunk of chunks) writer.write(chunk).catch(() => {});
    writer.close().catch(() => {});
    return drain(stream.readable);
  };
"#;

#[tokio::test]
async fn compression_streams_round_trip_and_decode_the_standard_vectors() {
    // Zlib, raw deflate and gzip of "expected output", as WPT's
    // compression/resources/decompression-input.js has them (made by zlib).
    let got = eval(&format!(
        r#"{HELPERS}
        const VECTORS = {{
          deflate: [120, 156, 75, 173, 40, 72, 77, 46, 73, 77, 81, 200, 47, 45, 41, 40, 45, 1, 0, 48, 173, 6, 36],
          "deflate-raw": [75, 173, 40, 72, 77, 46, 73, 77, 81, 200, 47, 45, 41, 40, 45, 1, 0],
          gzip: [31, 139, 8, 0, 0, 0, 0, 0, 0, 3, 75, 173, 40, 72, 77, 46, 73, 77, 81, 200, 47, 45, 41, 40, 45, 1, 0, 176, 1, 57, 179, 15, 0, 0, 0],
        }};
        export default async () => {{
          const text = "the quick brown fox ".repeat(5000);
          const bytes = new TextEncoder().encode(text);
          const out = {{}};
          for (const format of ["deflate", "deflate-raw", "gzip"]) {{
            const vector = new Uint8Array(VECTORS[format]);
            // One byte at a time, as a DataView, through the decoder.
            const pieces = [...vector].map((_, i) => new DataView(vector.buffer, i, 1));
            const decoded = new TextDecoder().decode(new Uint8Array(await through(new DecompressionStream(format), pieces)));
            const compressed = await through(new CompressionStream(format), [bytes.subarray(0, 7), bytes.buffer.slice(7)]);
            const back = await through(new DecompressionStream(format), [new Uint8Array(compressed)]);
            out[format] = {{
              decoded,
              smaller: compressed.length < bytes.length / 20,
              roundTrip: back.length === bytes.length && back.every((b, i) => b === bytes[i]),
              empty: (await through(new DecompressionStream(format), [new Uint8Array(await through(new CompressionStream(format), []))])).length,
            }};
          }}
          out.gzipHeader = (await through(new CompressionStream("gzip"), [bytes])).slice(0, 3);
          out.tags = [String(new CompressionStream("gzip")), String(new DecompressionStream("deflate"))];
          out.badFormat = (() => {{ try {{ new CompressionStream("brotli"); }} catch (e) {{ return e.name; }} }})();
          return out;
        }};"#
    ))
    .await;
    let each =
        json!({"decoded": "expected output", "smaller": true, "roundTrip": true, "empty": 0});
    assert_eq!(
        got,
        json!({
            "deflate": each, "deflate-raw": each, "gzip": each,
            "gzipHeader": [31, 139, 8],
            "tags": ["[object CompressionStream]", "[object DecompressionStream]"],
            "badFormat": "TypeError",
        })
    );
}

#[tokio::test]
async fn bad_compressed_input_errors_the_stream_with_a_type_error() {
    let got = eval(&format!(
        r#"{HELPERS}
        const fail = (promise) => promise.then(() => "ok", (e) => e.name + ": " + e.message);
        const gzip = [31, 139, 8, 0, 0, 0, 0, 0, 0, 3, 75, 173, 40, 72, 77, 46, 73, 77, 81, 200, 47, 45, 41, 40, 45, 1, 0, 176, 1, 57, 179, 15, 0, 0, 0];
        export default async () => ({{
          truncated: await fail(through(new DecompressionStream("gzip"), [new Uint8Array(gzip.slice(0, -1))])),
          junk: await fail(through(new DecompressionStream("gzip"), [new Uint8Array([...gzip, 0])])),
          badCrc: await fail(through(new DecompressionStream("gzip"), [new Uint8Array(gzip.map((b, i) => i === gzip.length - 8 ? 0 : b))])),
          notDeflate: await fail(through(new DecompressionStream("deflate"), [new Uint8Array([1, 2, 3, 4])])),
          empty: await fail(through(new DecompressionStream("deflate-raw"), [])),
          notBytes: await fail(through(new CompressionStream("deflate"), ["text"])),
        }});"#
    ))
    .await;
    assert_eq!(
        got,
        json!({
            "truncated": "TypeError: The compressed data is not valid: corrupt gzip stream does not have a matching checksum",
            "junk": "TypeError: Junk found after end of compressed data",
            "badCrc": "TypeError: The compressed data is not valid: corrupt gzip stream does not have a matching checksum",
            "notDeflate": "TypeError: The compressed data is not valid: corrupt deflate stream",
            "empty": "TypeError: The compressed data is not valid: incomplete deflate stream",
            "notBytes": "TypeError: The provided value is not of type '(ArrayBuffer or ArrayBufferView)'",
        })
    );
}

/// 64 KiB of gzip that inflates to 64 MiB, decoded under a 32 MiB memory limit: caught, the
/// stream's error is QuickJS's out-of-memory `InternalError`; uncaught, the call ends as
/// `memory_limit` with its peak under the limit. Then a normal call works.
#[tokio::test]
async fn a_decompression_bomb_ends_within_the_call_memory() {
    let p = policy("[limits]\nmemory = \"32MiB\"\nfuel = 40_000_000_000\ntimeout = \"20s\"\n");
    let bomb = |body: &str| {
        format!(
            r#"{HELPERS}
            export default async () => {{
              const zeros = new Uint8Array(1 << 20);
              const cs = new CompressionStream("gzip");
              const writer = cs.writable.getWriter();
              for (let i = 0; i < 64; i++) writer.write(zeros);
              writer.close();
              const bomb = new Uint8Array(await drain(cs.readable));
              {body}
            }};"#
        )
    };
    let caught = bomb(
        r#"try { await through(new DecompressionStream("gzip"), [bomb]); return "inflated"; }
           catch (e) { return [bomb.length < 100000, e.name, e.message]; }"#,
    );
    let outcome = PALISADE
        .run(&p, &Script::new("bomb.js", caught), "null")
        .await;
    assert_eq!(
        output(&outcome),
        json!([true, "InternalError", "out of memory"]).to_string()
    );
    let uncaught =
        bomb(r#"return (await through(new DecompressionStream("gzip"), [bomb])).length;"#);
    let outcome = PALISADE
        .run(&p, &Script::new("bomb.js", uncaught), "null")
        .await;
    assert_eq!(code(&outcome), "memory_limit");
    assert!(
        outcome.receipt.peak_memory_bytes <= 32 << 20,
        "{:?}",
        outcome.receipt
    );
    assert_next_call_works().await;
}
