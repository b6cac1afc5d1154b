//! The globals of the WinterTC Minimum Common API that Palisade adds beside `crypto`:
//! `crypto.subtle` (digest, HMAC), `performance` and `navigator`; `Blob`, `File`, `FormData`
//! and the checks `Request` and `Response` make.

use crate::support::*;
use palisade::{Policy, Script};
use serde_json::{Value, json};

async fn eval(source: &str) -> Value {
    let outcome = run_source(source, "null").await;
    serde_json::from_str(output(&outcome)).unwrap()
}

const HEX: &str = r#"
  const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
  const utf8 = (text) => new TextEncoder().encode(text);
  const failure = (promise) => promise.then(() => "resolved", (e) => `${e.constructor.name}:${e.name}`);
"#;

#[tokio::test]
async fn subtle_digest_gives_the_standard_hashes() {
    let got = eval(&format!(
        r#"{HEX}
        export default async () => {{
          const abc = utf8("abc");
          const out = {{}};
          for (const name of ["SHA-1", "sha-256", "Sha-384", {{ name: "SHA-512" }}]) {{
            out[typeof name === "string" ? name : name.name] = hex(await crypto.subtle.digest(name, abc));
          }}
          out.view = hex(await crypto.subtle.digest("SHA-256", new DataView(utf8("xabcx").buffer, 1, 3)));
          out.buffer = hex(await crypto.subtle.digest("SHA-1", new ArrayBuffer(0)));
          out.unknown = await failure(crypto.subtle.digest("MD5", abc));
          out.noName = await failure(crypto.subtle.digest({{}}, abc));
          out.notBytes = await failure(crypto.subtle.digest("SHA-256", "abc"));
          out.tag = Object.prototype.toString.call(crypto.subtle);
          out.isResult = (await crypto.subtle.digest("SHA-1", abc)) instanceof ArrayBuffer;
          return out;
        }};"#
    ))
    .await;
    assert_eq!(
        got,
        json!({
            "SHA-1": "a9993e364706816aba3e25717850c26c9cd0d89d",
            "sha-256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "Sha-384": "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7",
            "SHA-512": "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
            "view": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "buffer": "da39a3ee5e6b4b0d3255bfef95601890afd80709",
            "unknown": "DOMException:NotSupportedError",
            "noName": "TypeError:TypeError",
            "notBytes": "TypeError:TypeError",
            "tag": "[object SubtleCrypto]",
            "isResult": true,
        })
    );
}

/// RFC 4231 test case 2 (key "Jefe"), the webhook-signing shape agent callbacks need.
#[tokio::test]
async fn subtle_hmac_imports_signs_and_verifies() {
    let got = eval(&format!(
        r#"{HEX}
        export default async () => {{
          const {{ subtle }} = crypto;
          const data = utf8("what do ya want for nothing?");
          const key = await subtle.importKey("raw", utf8("Jefe"), {{ name: "HMAC", hash: "SHA-256" }}, true, ["sign", "verify"]);
          const signature = await subtle.sign("HMAC", key, data);
          const k512 = await subtle.importKey("raw", utf8("Jefe"), {{ name: "HMAC", hash: {{ name: "SHA-512" }} }}, false, ["sign"]);
          const tampered = new Uint8Array(signature.slice(0));
          tampered[0] ^= 1;
          const signOnly = await subtle.importKey("raw", utf8("k"), {{ name: "HMAC", hash: "SHA-1" }}, false, ["sign"]);
          return {{
            sha256: hex(signature),
            sha512: hex(await subtle.sign({{ name: "HMAC" }}, k512, data)),
            verifies: await subtle.verify("HMAC", key, signature, data),
            tampered: await subtle.verify("HMAC", key, tampered, data),
            short: await subtle.verify("HMAC", key, signature.slice(1), data),
            exported: hex(await subtle.exportKey("raw", key)),
            key: [key.type, key.extractable, key.algorithm.name, key.algorithm.hash.name, key.algorithm.length, key.usages, String(key)],
            notExtractable: await failure(subtle.exportKey("raw", k512)),
            noVerifyUsage: await failure(subtle.verify("HMAC", signOnly, signature, data)),
            badUsage: await failure(subtle.importKey("raw", utf8("k"), {{ name: "HMAC", hash: "SHA-1" }}, false, ["encrypt"])),
            noHash: await failure(subtle.importKey("raw", utf8("k"), "HMAC", false, ["sign"])),
            emptyKey: await failure(subtle.importKey("raw", new Uint8Array(0), {{ name: "HMAC", hash: "SHA-1" }}, false, ["sign"])),
            jwk: await failure(subtle.importKey("jwk", {{}}, {{ name: "HMAC", hash: "SHA-1" }}, false, ["sign"])),
            aes: await failure(subtle.importKey("raw", utf8("k"), "AES-GCM", false, ["encrypt"])),
            unknown: await failure(subtle.importKey("raw", utf8("k"), "X448", false, ["deriveBits"])),
            notAKey: await failure(subtle.sign("HMAC", {{}}, data)),
            construct: await failure((async () => new CryptoKey())()),
          }};
        }};"#
    ))
    .await;
    assert_eq!(
        got,
        json!({
            "sha256": "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            "sha512": "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737",
            "verifies": true,
            "tampered": false,
            "short": false,
            "exported": "4a656665",
            "key": ["secret", true, "HMAC", "SHA-256", 32, ["sign", "verify"], "[object CryptoKey]"],
            "notExtractable": "DOMException:InvalidAccessError",
            "noVerifyUsage": "DOMException:InvalidAccessError",
            "badUsage": "DOMException:SyntaxError",
            "noHash": "TypeError:TypeError",
            "emptyKey": "DOMException:DataError",
            "jwk": "DOMException:DataError",
            "aes": "DOMException:DataError",
            "unknown": "DOMException:NotSupportedError",
            "notAKey": "TypeError:TypeError",
            "construct": "TypeError:TypeError",
        })
    );
}

/// A script that replaces everything `crypto.subtle` could reach still gets the right hashes
/// and signatures, and an uncaught rejection ends the call with its exact code.
#[tokio::test]
async fn subtle_ignores_tampered_intrinsics() {
    let got = eval(&format!(
        r#"{HEX}
        export default async () => {{
          const digest = crypto.subtle.digest.bind(crypto.subtle);
          const importKey = crypto.subtle.importKey.bind(crypto.subtle);
          const sign = crypto.subtle.sign.bind(crypto.subtle);
          const data = utf8("abc");
          const key = await importKey("raw", utf8("Jefe"), {{ name: "HMAC", hash: "SHA-256" }}, false, ["sign"]);
          ArrayBuffer.prototype.slice = () => {{ throw new Error("slice"); }};
          Object.defineProperty(Uint8Array.prototype, "set", {{ value: () => {{ throw new Error("set"); }} }});
          String.prototype.toLowerCase = () => "md5";
          WeakMap.prototype.get = () => undefined;
          Object.prototype.then = undefined;
          Function.prototype.call = () => {{ throw new Error("call"); }};
          return {{
            sha1: hex(await digest("SHA-1", data)),
            hmac: hex(await sign("HMAC", key, utf8("what do ya want for nothing?"))),
          }};
        }};"#
    ))
    .await;
    assert_eq!(
        got,
        json!({
            "sha1": "a9993e364706816aba3e25717850c26c9cd0d89d",
            "hmac": "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
        })
    );
    let outcome = run_source(
        r#"export default async () => crypto.subtle.digest("SHA-3", new Uint8Array(1));"#,
        "null",
    )
    .await;
    assert_eq!(code(&outcome), "guest_exception");
    assert_next_call_works().await;
}

#[tokio::test]
async fn performance_now_counts_from_the_start_of_the_call() {
    let got = eval(
        r#"export default async () => {
          const a = performance.now();
          await new Promise((resolve) => setTimeout(resolve, 20));
          const b = performance.now();
          return {
            start: a >= 0 && a < 60000,
            waited: b - a >= 18,
            origin: Math.abs(performance.timeOrigin + b - Date.now()) < 1000,
            json: Object.keys(performance.toJSON()),
            tag: String(performance),
            ua: navigator.userAgent,
            illegal: (() => { try { Performance.prototype.now.call({}); } catch (e) { return e.name; } })(),
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "start": true, "waited": true, "origin": true, "json": ["timeOrigin"],
            "tag": "[object Performance]",
            "ua": format!("Palisade/{}", env!("CARGO_PKG_VERSION")),
            "illegal": "TypeError",
        })
    );
}

const CLOCKS: &str = r#"export default async () => {
  const first = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 5));
  return { first, second: performance.now(), origin: performance.timeOrigin };
};"#;

/// Under a fixed clock the monotonic clock stands still: `performance` gives the same answers
/// on every call, and `timeOrigin` is the fixed instant.
#[tokio::test]
async fn performance_is_deterministic_under_a_fixed_clock() {
    let fixed = Policy::from_file(root().join("policies/deterministic-action.toml")).unwrap();
    let script = Script::new("clocks.js", CLOCKS);
    let first = PALISADE.run(&fixed, &script, "null").await;
    let again = PALISADE.run(&fixed, &script, "null").await;
    assert_eq!(
        serde_json::from_str::<Value>(output(&first)).unwrap(),
        json!({ "first": 0, "second": 0, "origin": 1_704_067_200_000u64 })
    );
    assert_eq!(output(&again), output(&first));
}

/// A recorded call replays to the same `performance` readings.
#[tokio::test]
async fn performance_replays_its_recorded_readings() {
    let policy = Policy::builtin_default();
    let script = Script::new("clocks.js", CLOCKS);
    let (first, transcript) = PALISADE.run_recorded(&policy, &script, "null").await;
    let replayed = PALISADE.replay(&policy, &script, &transcript).await;
    assert!(!transcript.monotonic_clock.is_empty());
    assert_eq!(output(&replayed), output(&first));
}

/// Reading the clock at a compiled script's top level would freeze it into every call.
#[tokio::test]
async fn performance_at_the_top_level_is_not_compilable() {
    let policy = Policy::builtin_default();
    let script = Script::new(
        "top.js",
        "const t = performance.now(); export default () => t;",
    );
    let error = PALISADE.compile(&policy, &script).await.unwrap_err();
    assert_eq!(error.code(), "not_compilable");
    assert_next_call_works().await;
}

#[tokio::test]
async fn blob_and_file_hold_bytes_and_a_type() {
    let got = eval(
        r#"export default async () => {
          const bytes = new Uint8Array([104, 105]);
          const b = new Blob(["héllo ", bytes, new Blob([" ", bytes.buffer])], { type: "Text/Plain" });
          const f = new File(["a\r\nb"], "n.txt", { lastModified: 42, endings: "native" });
          return {
            size: b.size, type: b.type, text: await b.text(),
            slice: await b.slice(-4, -1, "X/Y").text(), sliceType: b.slice(0, 1, "X/Y").type,
            bytes: Array.from(await b.slice(7, 9).bytes()),
            buffer: (await b.arrayBuffer()).byteLength,
            badType: new Blob([], { type: "a\u00e9" }).type,
            file: [f.name, f.lastModified, f.size, await f.text(), f instanceof Blob],
            tags: [String(b), String(f)],
            badParts: (() => { try { new Blob("abc"); return "built"; } catch (e) { return e.name; } })(),
            badEndings: (() => { try { new Blob([], { endings: "x" }); return "built"; } catch (e) { return e.name; } })(),
            fileArgs: (() => { try { new File([]); return "built"; } catch (e) { return e.name; } })(),
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "size": 12, "type": "text/plain", "text": "héllo hi hi",
            "slice": "i h", "sliceType": "x/y",
            "bytes": [104, 105], "buffer": 12,
            "badType": "",
            "file": ["n.txt", 42, 3, "a\nb", true],
            "tags": ["[object Blob]", "[object File]"],
            "badParts": "TypeError", "badEndings": "TypeError", "fileArgs": "TypeError",
        })
    );
}

#[tokio::test]
async fn form_data_round_trips_through_multipart_and_urlencoded_bodies() {
    let got = eval(
        r#"export default async () => {
          const fd = new FormData();
          fd.append("a", "1");
          fd.append("a", "2\nline");
          fd.append("file", new Blob(["bytes"], { type: "text/x" }), "f\"1.txt");
          fd.set("b", new Blob(["x"]));
          fd.append("gone", "x");
          fd.delete("gone");
          const request = new Request("https://example.com/", { method: "POST", body: fd });
          const type = request.headers.get("content-type");
          const back = await request.formData();
          const file = back.get("file");
          const urlencoded = await new Response("x=1&y=%C3%A9+z", {
            headers: { "content-type": "application/x-www-form-urlencoded" },
          }).formData();
          let wrongType;
          try { await new Response("x").formData(); } catch (e) { wrongType = e.name; }
          return {
            entries: [...fd.keys()], all: fd.getAll("a"), has: [fd.has("b"), fd.has("gone")],
            blobName: fd.get("b").name, multipart: type.startsWith("multipart/form-data; boundary="),
            back: [back.getAll("a"), file.name, file.type, await file.text(), await back.get("b").text()],
            urlencoded: [...urlencoded], wrongType,
            tag: Object.prototype.toString.call(fd),
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "entries": ["a", "a", "file", "b"], "all": ["1", "2\nline"], "has": [true, false],
            "blobName": "blob", "multipart": true,
            "back": [["1", "2\r\nline"], "f\"1.txt", "text/x", "bytes", "x"],
            "urlencoded": [["x", "1"], ["y", "é z"]], "wrongType": "TypeError",
            "tag": "[object FormData]",
        })
    );
}

#[tokio::test]
async fn request_and_response_reject_what_the_fetch_standard_rejects() {
    let got = eval(
        r#"export default async () => {
          const err = (f) => { try { f(); return "built"; } catch (e) { return e.name; } };
          const empty = new Response(null);
          await empty.text();
          const error = Response.error();
          const data = await fetch("data:text/plain;base64,aMOpbGxv");
          const plain = await fetch("data:,a%20b");
          let badData;
          try { await fetch("data:;base64,%%%"); } catch (e) { badData = e.name; }
          return {
            credentials: err(() => new Request("https://user:pw@example.com/")),
            statusText: err(() => new Response("", { statusText: "\n" })),
            okText: new Response("", { statusText: "Fine \u00ff" }).statusText,
            json204: err(() => Response.json({}, { status: 204 })),
            body204: err(() => new Response("x", { status: 204 })),
            null204: new Response(null, { status: 204 }).status,
            nullBodyUsed: empty.bodyUsed,
            errorHeaders: err(() => error.headers.set("a", "b")),
            errorStatus: [error.status, error.type],
            data: [data.status, data.statusText, data.headers.get("content-type"), await data.text()],
            plain: [plain.headers.get("content-type"), await plain.text()],
            badData,
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "credentials": "TypeError", "statusText": "TypeError", "okText": "Fine \u{ff}",
            "json204": "TypeError", "body204": "TypeError", "null204": 204,
            "nullBodyUsed": false, "errorHeaders": "TypeError", "errorStatus": [0, "error"],
            "data": [200, "OK", "text/plain", "héllo"],
            "plain": ["text/plain;charset=US-ASCII", "a b"],
            "badData": "TypeError",
        })
    );
    // The host is fine afterwards.
    assert_eq!(eval("export default () => 1 + 1;").await, json!(2));
}

/// AES-GCM (the GCM specification's test case 4), Ed25519 (RFC 8032, test 1) and ECDSA P-256
/// with SHA-256 (RFC 6979, A.2.5, whose signature is deterministic), each with a tampered
/// input that must fail, then a normal call.
#[tokio::test]
async fn subtle_aes_gcm_ecdsa_and_ed25519_match_their_standard_vectors() {
    let got = eval(&format!(
        r#"{HEX}
        const unhex = (h) => new Uint8Array(h.match(/../g).map((b) => parseInt(b, 16)));
        const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
        export default async () => {{
          const s = crypto.subtle;
          const out = {{}};
          const aes = await s.importKey("raw", unhex("feffe9928665731c6d6a8f9467308308"), "AES-GCM", false, ["encrypt", "decrypt"]);
          const iv = unhex("cafebabefacedbaddecaf888");
          const additionalData = unhex("feedfacedeadbeeffeedfacedeadbeefabaddad2");
          const plain = unhex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39");
          const sealed = await s.encrypt({{ name: "AES-GCM", iv, additionalData }}, aes, plain);
          out.gcm = hex(sealed);
          out.gcmOpen = hex(await s.decrypt({{ name: "AES-GCM", iv, additionalData }}, aes, sealed));
          const bad = new Uint8Array(sealed); bad[0] ^= 1;
          out.gcmTampered = await failure(s.decrypt({{ name: "AES-GCM", iv, additionalData }}, aes, bad));
          const short = await s.encrypt({{ name: "AES-GCM", iv, additionalData, tagLength: 96 }}, aes, plain);
          out.gcm96 = hex(short).slice(-24);
          out.gcm96Open = hex(await s.decrypt({{ name: "AES-GCM", iv, additionalData, tagLength: 96 }}, aes, short)) === hex(plain);
          out.gcmIv16 = await failure(s.encrypt({{ name: "AES-GCM", iv: new Uint8Array(16) }}, aes, plain));
          out.gcmBadKey = await failure(s.importKey("raw", new Uint8Array(15), "AES-GCM", false, ["encrypt"]));
          out.gcmSign = await failure(s.importKey("raw", new Uint8Array(16), "AES-GCM", false, ["sign"]));

          const edPublic = await s.importKey("raw", unhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"), "Ed25519", true, ["verify"]);
          const edSig = unhex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
          out.edVerify = await s.verify("Ed25519", edPublic, edSig, new Uint8Array(0));
          out.edTampered = await s.verify("Ed25519", edPublic, edSig, new Uint8Array(1));
          const edPrivate = await s.importKey("pkcs8", unhex("302e020100300506032b657004220420" + "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"), "Ed25519", false, ["sign"]);
          out.edSign = hex(await s.sign("Ed25519", edPrivate, new Uint8Array(0)));
          out.edExport = hex(await s.exportKey("raw", edPublic));

          const d = unhex("c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721");
          const x = unhex("60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6");
          const y = unhex("7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299");
          const ecPrivate = await s.importKey("jwk", {{ kty: "EC", crv: "P-256", d: b64url(d), x: b64url(x), y: b64url(y) }}, {{ name: "ECDSA", namedCurve: "P-256" }}, false, ["sign"]);
          const sample = utf8("sample");
          const ecSig = await s.sign({{ name: "ECDSA", hash: "SHA-256" }}, ecPrivate, sample);
          out.ecSign = hex(ecSig);
          const point = new Uint8Array(65); point[0] = 4; point.set(x, 1); point.set(y, 33);
          const ecPublic = await s.importKey("raw", point, {{ name: "ECDSA", namedCurve: "P-256" }}, false, ["verify"]);
          out.ecVerify = await s.verify({{ name: "ECDSA", hash: "SHA-256" }}, ecPublic, ecSig, sample);
          out.ecTampered = await s.verify({{ name: "ECDSA", hash: "SHA-256" }}, ecPublic, ecSig, utf8("samplf"));
          out.ecWrongKind = await failure(s.verify("Ed25519", ecPublic, ecSig, sample));
          out.ecBadPoint = await failure(s.importKey("raw", new Uint8Array(65), {{ name: "ECDSA", namedCurve: "P-256" }}, false, ["verify"]));
          out.ecP521 = await failure(s.importKey("raw", point, {{ name: "ECDSA", namedCurve: "P-521" }}, false, ["verify"]));
          out.algorithm = [aes.algorithm, ecPublic.algorithm, edPrivate.type, ecPrivate.usages];
          return out;
        }};"#
    ))
    .await;
    assert_eq!(
        got,
        json!({
            "gcm": "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e0915bc94fbc3221a5db94fae95ae7121a47",
            "gcmOpen": "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
            "gcmTampered": "DOMException:OperationError",
            "gcm96": "5bc94fbc3221a5db94fae95a",
            "gcm96Open": true,
            "gcmIv16": "DOMException:NotSupportedError",
            "gcmBadKey": "DOMException:DataError",
            "gcmSign": "DOMException:SyntaxError",
            "edVerify": true,
            "edTampered": false,
            "edSign": "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
            "edExport": "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
            "ecSign": "efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8",
            "ecVerify": true,
            "ecTampered": false,
            "ecWrongKind": "DOMException:InvalidAccessError",
            "ecBadPoint": "DOMException:DataError",
            "ecP521": "DOMException:DataError",
            "algorithm": [
                {"name": "AES-GCM", "length": 128},
                {"name": "ECDSA", "namedCurve": "P-256"},
                "private",
                ["sign"]
            ],
        })
    );
    assert_eq!(eval("export default () => 1 + 1;").await, json!(2));
}

#[tokio::test]
async fn readable_streams_read_tee_cancel_and_carry_bodies() {
    let got = eval(
        r#"export default async () => {
          const log = [];
          let n = 0;
          const counted = new ReadableStream({
            pull(c) { n < 3 ? c.enqueue(n++) : c.close(); },
            cancel(reason) { log.push(`cancel ${reason}`); },
          }, new CountQueuingStrategy({ highWaterMark: 0 }));
          const seen = [];
          for await (const chunk of counted) seen.push(chunk);
          const reader = new ReadableStream({ start(c) { c.enqueue("a"); c.enqueue("b"); c.close(); } }).getReader();
          const steps = [await reader.read(), await reader.read(), await reader.read()];
          const [left, right] = new ReadableStream({ start(c) { c.enqueue(1); c.enqueue(2); c.close(); } }).tee();
          const both = [];
          for await (const x of left) both.push(`l${x}`);
          for await (const x of right) both.push(`r${x}`);
          const stopped = new ReadableStream({ pull(c) { c.enqueue("x"); }, cancel(r) { log.push(`cancel ${r}`); } });
          for await (const x of stopped) break;
          const failing = new ReadableStream({ start(c) { c.error(new RangeError("boom")); } });
          let failed;
          try { await failing.getReader().read(); } catch (e) { failed = e.name; }
          const locked = new ReadableStream();
          locked.getReader();
          let lockedError;
          try { locked.getReader(); } catch (e) { lockedError = e.name; }
          const bytes = new TextEncoder().encode("streamed");
          const fromStream = await new Response(new ReadableStream({ start(c) { c.enqueue(bytes); c.close(); } })).text();
          const response = new Response("body text");
          const chunks = [];
          for await (const chunk of response.body) chunks.push(new TextDecoder().decode(chunk));
          const blob = await new Response(new Blob(["blob"]).stream()).text();
          const original = new Response(new ReadableStream({ start(c) { c.enqueue(bytes); c.close(); } }));
          const copy = original.clone();
          const request = await new Request("https://example.com/", { method: "POST", body: new Blob(["r"]).stream(), duplex: "half" }).text();
          const noDuplex = [];
          for (const init of [{ method: "POST", body: new Blob(["r"]).stream() }, { method: "POST", body: "s", duplex: "full" }]) {
            try { new Request("https://example.com/", init); } catch (e) { noDuplex.push(`${e.name}: ${e.message}`); }
          }
          return {
            noDuplex, duplex: new Request("https://example.com/").duplex,
            urlencoded: await Promise.all(["?a=1", "\ufeffb=2"].map(async (body) =>
              [...(await new Response(body, { headers: { "content-type": "application/x-www-form-urlencoded" } }).formData())][0])),
            seen, log, steps, both, failed, lockedError, fromStream, chunks, used: response.bodyUsed,
            nullBody: new Response(null).body, blob, clones: [await original.text(), await copy.text()], request,
            bytes: Object.prototype.toString.call(new ReadableStream({ type: "bytes" }).getReader({ mode: "byob" })),
            tag: Object.prototype.toString.call(counted),
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "seen": [0, 1, 2],
            "log": ["cancel undefined"],
            "steps": [{"value": "a", "done": false}, {"value": "b", "done": false}, {"done": true}],
            "both": ["l1", "l2", "r1", "r2"],
            "failed": "RangeError",
            "lockedError": "TypeError",
            "noDuplex": [
                "TypeError: a request whose body is a stream needs duplex: \"half\"",
                "TypeError: duplex full is not \"half\"",
            ],
            "duplex": "half",
            "urlencoded": [["?a", "1"], ["\u{feff}b", "2"]],
            "fromStream": "streamed",
            "chunks": ["body text"],
            "used": true,
            "nullBody": null,
            "blob": "blob",
            "clones": ["streamed", "streamed"],
            "request": "r",
            "bytes": "[object ReadableStreamBYOBReader]",
            "tag": "[object ReadableStream]",
        })
    );
    assert_eq!(eval("export default () => 1 + 1;").await, json!(2));
}

/// Byte streams: a body is one (Fetch, the File API), so a BYOB reader reads it into the
/// caller's buffer, which is transferred (detached) as the standard says; a source can answer
/// `byobRequest`s, `autoAllocateChunkSize` gives a default reader's reads a buffer, `tee` copies
/// the chunks, and `ReadableStream.from` takes any iterable.
#[tokio::test]
async fn byte_streams_read_bodies_into_the_callers_buffer() {
    let got = eval(
        r#"export default async () => {
          const text = (view) => new TextDecoder().decode(view);
          const reader = new Response("hello world").body.getReader({ mode: "byob" });
          const first = new Uint8Array(4);
          const a = await reader.read(first);
          const b = await reader.read(new Uint8Array(64));
          const end = await reader.read(new Uint8Array(8));
          const blobBody = await new Blob(["abcdef"]).stream().getReader({ mode: "byob" }).read(new Uint16Array(3), { min: 3 });
          let pulls = 0;
          const source = new ReadableStream({
            type: "bytes",
            autoAllocateChunkSize: 16,
            pull(c) {
              const view = c.byobRequest.view;
              view.set([1, 2, 3], 0);
              c.byobRequest.respond(3);
              if (++pulls === 2) c.close();
            },
          });
          const [left, right] = source.tee();
          const chunks = [];
          for await (const chunk of left) chunks.push(Array.from(chunk));
          const copied = [];
          for await (const chunk of right) copied.push(Array.from(chunk));
          const from = [];
          for await (const x of ReadableStream.from((function* () { yield 1; yield 2; })())) from.push(x);
          const min = await new ReadableStream({ type: "bytes", start(c) { c.enqueue(new Uint8Array([1])); } })
            .getReader({ mode: "byob" }).read(new Uint8Array(1), { min: 0 }).then(() => "read", (e) => e.name);
          return {
            a: [text(a.value), a.done], detached: first.buffer.detached, b: [text(b.value), b.done],
            end: [end.value.byteLength, end.done], blobBody: [blobBody.value.constructor.name, blobBody.value.length],
            chunks, copied, from, min,
            classes: [typeof ReadableByteStreamController, typeof ReadableStreamBYOBRequest],
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "a": ["hell", false],
            "detached": true,
            "b": ["o world", false],
            "end": [0, true],
            "blobBody": ["Uint16Array", 3],
            "chunks": [[1, 2, 3], [1, 2, 3]],
            "copied": [[1, 2, 3], [1, 2, 3]],
            "from": [1, 2],
            "min": "TypeError",
            "classes": ["function", "function"],
        })
    );
    assert_eq!(eval("export default () => 1 + 1;").await, json!(2));
}

/// A script that replaces `ArrayBuffer.prototype.transfer`, the `detached` getter, typed
/// arrays' `set` and `Promise.prototype.then` does not bend a body's byte stream: its reads
/// use the intrinsics captured while the guest was built.
#[tokio::test]
async fn byte_streams_ignore_tampered_intrinsics() {
    let got = eval(
        r#"export default async () => {
          const seen = [];
          ArrayBuffer.prototype.transfer = function () { seen.push("transfer"); return new ArrayBuffer(0); };
          Object.defineProperty(ArrayBuffer.prototype, "detached", { get() { seen.push("detached"); return true; } });
          Object.getPrototypeOf(Uint8Array.prototype).set = function () { seen.push("set"); };
          const then = Promise.prototype.then;
          Promise.prototype.then = function (...args) { seen.push("then"); return then.apply(this, args); };
          const reader = new Response("tampered").body.getReader({ mode: "byob" });
          const got = await reader.read(new Uint8Array(16));
          Promise.prototype.then = then;
          return { text: new TextDecoder().decode(got.value), internal: seen.filter((s) => s !== "then").length };
        };"#,
    )
    .await;
    assert_eq!(got, json!({ "text": "tampered", "internal": 0 }));
    assert_eq!(eval("export default () => 1 + 1;").await, json!(2));
}

/// `data:` URL bodies are held to the policy's `http.max_response_body`, all of a call's
/// together, and past it `fetch` fails as a network response past the budget does.
#[tokio::test]
async fn a_data_url_past_max_response_body_is_refused_as_response_too_large() {
    let p = policy(
        r#"
name = "data-url-budget"
[http]
max_response_body = "1KiB"
[[http.allow]]
url = "https://api.example.com/"
"#,
    );
    let source = r#"export default async () => {
      const failure = async (url) => {
        try { const r = await fetch(url); await r.arrayBuffer(); return "no error"; }
        catch (e) { return [e.name, e.code ?? null, e instanceof NetworkError, e instanceof TypeError]; }
      };
      const big = await failure("data:," + "a".repeat(1025));
      const base64 = await failure("data:;base64," + btoa("b".repeat(1500)));
      const fits = (await (await fetch("data:," + "c".repeat(1000))).text()).length;
      // 1000 of the 1024 bytes are used now: the next 100 are past the budget.
      const second = await failure("data:," + "d".repeat(100));
      return { big, base64, fits, second };
    };"#;
    let outcome = PALISADE
        .run(&p, &Script::new("data-budget.js", source), "null")
        .await;
    let over = json!(["ResponseTooLargeError", "response-too-large", true, true]);
    assert_eq!(
        serde_json::from_str::<Value>(output(&outcome)).unwrap(),
        json!({ "big": over, "base64": over, "fits": 1000, "second": over })
    );
    // Uncaught, it ends the call as any uncaught network error does.
    let uncaught =
        r#"export default async () => (await fetch("data:," + "x".repeat(4096))).text();"#;
    let outcome = PALISADE
        .run(&p, &Script::new("data-budget.js", uncaught), "null")
        .await;
    assert_eq!(code(&outcome), "guest_exception");
    let message = outcome.error().unwrap().to_string();
    assert!(message.contains("ResponseTooLargeError"), "{message}");
    // Without an `[http]` table, the default budget (8 MiB) applies: a small body still reads.
    let ok = run_source(
        r#"export default async () => (await fetch("data:,fine")).text();"#,
        "null",
    )
    .await;
    assert_eq!(output(&ok), r#""fine""#);
    assert_next_call_works().await;
}

/// A `Headers` init with an `@@iterator` of its own is read through it, as a Web IDL sequence;
/// a replaced `Headers.prototype[@@iterator]` is never called, neither by `new Headers(headers)`
/// nor by the copies `fetch` makes (`new Request(request)`, `clone()`, `Response.json`).
#[tokio::test]
async fn headers_init_uses_a_replaced_iterator_and_internal_copies_do_not() {
    let got = eval(
        r#"export default async () => {
          const own = new Headers();
          own[Symbol.iterator] = function* () { yield ["test", "yes"]; };
          const viaOwn = new Headers(own).get("test");
          const request = new Request("https://example.com/", { headers: { a: "1" } });
          const response = new Response("x", { headers: { b: "2" } });
          Headers.prototype[Symbol.iterator] = () => { throw new Error("replaced iterator called"); };
          const copied = new Request(request).headers.get("a");
          const cloned = response.clone().headers.get("b");
          const json = Response.json({}, { status: 201, headers: { c: "3" } });
          let proto;
          try { new Headers(new Headers({ d: "4" })); proto = "not called"; } catch (e) { proto = e.message; }
          return { viaOwn, copied, cloned, json: [json.status, json.headers.get("c"), json.headers.get("content-type")], proto };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "viaOwn": "yes", "copied": "1", "cloned": "2",
            "json": [201, "3", "application/json"], "proto": "not called"
        })
    );
}

/// `generateKey` makes HMAC, AES-GCM, ECDSA and Ed25519 keys that work and export in every
/// format their type allows (raw, jwk, spki, pkcs8), and draws their bytes from the call's
/// random source: under a fixed seed two calls make the same keys, another seed other keys.
const GENERATE: &str = r#"
  const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
  const utf8 = (text) => new TextEncoder().encode(text);
  const failure = (promise) => promise.then(() => "resolved", (e) => `${e.constructor.name}:${e.name}`);
  export default async () => {
    const { subtle } = crypto;
    const data = utf8("generated");
    const hmac = await subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, true, ["sign", "verify"]);
    const aes = await subtle.generateKey({ name: "AES-GCM", length: 256 }, true, ["encrypt", "decrypt"]);
    const ec = await subtle.generateKey({ name: "ECDSA", namedCurve: "P-384" }, true, ["sign", "verify"]);
    const ed = await subtle.generateKey("Ed25519", true, ["sign", "verify"]);
    const iv = new Uint8Array(12);
    const sealed = await subtle.encrypt({ name: "AES-GCM", iv }, aes, data);
    const ecSignature = await subtle.sign({ name: "ECDSA", hash: "SHA-384" }, ec.privateKey, data);
    const edSignature = await subtle.sign("Ed25519", ed.privateKey, data);
    // The exported private keys, imported again, sign what the generated public keys verify.
    const ecAgain = await subtle.importKey("pkcs8", await subtle.exportKey("pkcs8", ec.privateKey), { name: "ECDSA", namedCurve: "P-384" }, false, ["sign"]);
    const edAgain = await subtle.importKey("jwk", await subtle.exportKey("jwk", ed.privateKey), "Ed25519", false, ["sign"]);
    const ecSpki = await subtle.importKey("spki", await subtle.exportKey("spki", ec.publicKey), { name: "ECDSA", namedCurve: "P-384" }, true, ["verify"]);
    const edJwk = await subtle.exportKey("jwk", ed.privateKey);
    return {
      keys: [hex(await subtle.exportKey("raw", hmac)), hex(await subtle.exportKey("raw", aes)),
             hex(await subtle.exportKey("raw", ec.publicKey)), hex(await subtle.exportKey("raw", ed.publicKey))],
      hmac: [hmac.algorithm.length, await subtle.verify("HMAC", hmac, await subtle.sign("HMAC", hmac, data), data)],
      aes: new TextDecoder().decode(await subtle.decrypt({ name: "AES-GCM", iv }, aes, sealed)),
      ec: [await subtle.verify({ name: "ECDSA", hash: "SHA-384" }, ec.publicKey, ecSignature, data),
           await subtle.verify({ name: "ECDSA", hash: "SHA-384" }, ecSpki, await subtle.sign({ name: "ECDSA", hash: "SHA-384" }, ecAgain, data), data),
           ec.publicKey.usages, ec.privateKey.usages, ec.publicKey.extractable],
      ed: [await subtle.verify("Ed25519", ed.publicKey, edSignature, data),
           await subtle.verify("Ed25519", ed.publicKey, await subtle.sign("Ed25519", edAgain, data), data),
           Object.keys(edJwk).sort(), edJwk.kty, edJwk.crv, edJwk.d.length, edJwk.x.length],
      pkcs8: [(await subtle.exportKey("pkcs8", ed.privateKey)).byteLength, (await subtle.exportKey("spki", ed.publicKey)).byteLength],
      errors: [
        await failure(subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, true, ["encrypt"])),
        await failure(subtle.generateKey({ name: "AES-GCM", length: 100 }, true, ["encrypt"])),
        await failure(subtle.generateKey({ name: "HMAC", hash: "SHA-1", length: 2 ** 32 - 1 }, true, ["sign"])),
        await failure(subtle.generateKey({ name: "AES-GCM" }, true, ["encrypt"])),
        await failure(subtle.generateKey({ name: "ECDSA", namedCurve: "P-512" }, true, ["sign"])),
        await failure(subtle.generateKey("Ed25519", true, ["verify"])),
        await failure(subtle.generateKey("X448", true, ["deriveBits"])),
        await failure(subtle.exportKey("pkcs8", ec.publicKey)),
        await failure(subtle.exportKey("spki", hmac)),
      ],
    };
  };
"#;

#[tokio::test]
async fn subtle_generate_key_is_deterministic_under_a_fixed_seed() {
    let seeded = |seed: u64| policy(&format!("[determinism]\nseed = {seed}\n"));
    let script = Script::new("generate.js", GENERATE);
    let first = PALISADE.run(&seeded(7), &script, "null").await;
    let again = PALISADE.run(&seeded(7), &script, "null").await;
    let other = PALISADE.run(&seeded(8), &script, "null").await;
    let got: Value = serde_json::from_str(output(&first)).unwrap();
    let keys = got["keys"].as_array().unwrap();
    let lengths: Vec<usize> = keys.iter().map(|k| k.as_str().unwrap().len()).collect();
    // HMAC SHA-256: 512 bits; AES-256; an uncompressed P-384 point; an Ed25519 public key.
    assert_eq!(lengths, [128, 64, 194, 64]);
    assert_eq!(
        got["hmac"],
        json!([512, true]),
        "the generated HMAC key signs and verifies"
    );
    assert_eq!(got["aes"], json!("generated"));
    assert_eq!(got["ec"], json!([true, true, ["verify"], ["sign"], true]));
    assert_eq!(
        got["ed"],
        json!([
            true,
            true,
            // An Ed25519 JWK names its algorithm (`alg`, issue 46).
            ["alg", "crv", "d", "ext", "key_ops", "kty", "x"],
            "OKP",
            "Ed25519",
            43,
            43
        ])
    );
    // PKCS #8 v1 (the seed alone) and SubjectPublicKeyInfo of an Ed25519 key.
    assert_eq!(got["pkcs8"], json!([48, 44]));
    assert_eq!(
        got["errors"],
        json!([
            "DOMException:SyntaxError",
            "DOMException:OperationError",
            "DOMException:OperationError",
            "TypeError:TypeError",
            "DOMException:NotSupportedError",
            "DOMException:SyntaxError",
            "DOMException:NotSupportedError",
            "DOMException:InvalidAccessError",
            "DOMException:NotSupportedError",
        ])
    );
    assert_eq!(
        output(&again),
        output(&first),
        "the same seed, the same keys"
    );
    let other: Value = serde_json::from_str(output(&other)).unwrap();
    for (a, b) in keys.iter().zip(other["keys"].as_array().unwrap()) {
        assert_ne!(a, b, "another seed, other keys");
    }
}

/// Options left out are read as no members at all: members a script put on `Object.prototype`
/// (`stream`, `fatal`, `ignoreBOM`) do not reach `TextDecoder` or `TextDecoderStream`, so a
/// stream's flush still ends an unfinished sequence with U+FFFD.
#[tokio::test]
async fn left_out_text_decoder_options_do_not_read_object_prototype() {
    let got = eval(
        r#"export default async () => {
          Object.prototype.stream = true;
          Object.prototype.fatal = true;
          Object.prototype.ignoreBOM = true;
          const decoder = new TextDecoder();
          const plain = [decoder.fatal, decoder.ignoreBOM, decoder.decode(new Uint8Array([0xEF, 0xBB, 0xBF, 0x68, 0xE2, 0x82]))];
          const stream = new TextDecoderStream();
          const writer = stream.writable.getWriter();
          writer.write(new Uint8Array([0x68, 0xE2, 0x82]));
          writer.close();
          const chunks = [];
          for await (const chunk of stream.readable) chunks.push(chunk);
          return { plain, flags: [stream.fatal, stream.ignoreBOM], chunks };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({ "plain": [false, false, "h\u{FFFD}"], "flags": [false, false], "chunks": ["h", "\u{FFFD}"] })
    );
    assert_next_call_works().await;
}

/// ECDH P-521 (WPT's ec_importKey key with its own public key), X25519 (RFC 7748, 6.1), HKDF
/// (RFC 5869, test 1, through deriveKey), PBKDF2 (HMAC-SHA-256, one round), AES-CBC and AES-CTR
/// (SP 800-38A, F.2.1 and F.5.1; the counter of 8 bits wrapping inside its byte) and AES-KW
/// (RFC 3394, 4.1) give the standard values (the ones the RFCs print, or Node 20's where the
/// RFC has none), each with an input that must fail, then a normal call.
#[tokio::test]
async fn subtle_derive_and_aes_modes_match_their_standard_vectors() {
    let got = eval(&format!(
        r#"{HEX}
        const unhex = (h) => new Uint8Array(h.match(/../g).map((b) => parseInt(b, 16)));
        export default async () => {{
          const s = crypto.subtle;
          const out = {{}};
          const d = "APQIdYNoupMPMPdq4FT-XNLOf9osn3am1DbPddZsRAv-YzHHwXKhJHgZPIJRSHvJEmP6UCF_hf9jb1nNVG46tIO0";
          const x = "AVb0efjfHiCn_8BM5CDD4VSuJRmWvuQvA0uE1Bt0PzTkXzEbgTqc3sjNpZu7vTHUYLMpJSHnwbci5WZ8A9svrnU_";
          const y = "AVAXNs_iRzlDINjkr8L9ObWpMxBhuB4iQSgrnheJGCK1t54FL0WXtZZD_Tk3nFG9USXE9IvD8CXOPNNpUyhsyzj7";
          const ecdh = {{ name: "ECDH", namedCurve: "P-521" }};
          const priv = await s.importKey("jwk", {{ kty: "EC", crv: "P-521", d, x, y }}, ecdh, false, ["deriveBits"]);
          const pub = await s.importKey("jwk", {{ kty: "EC", crv: "P-521", x, y }}, ecdh, true, []);
          out.ecdh = hex(await s.deriveBits({{ name: "ECDH", public: pub }}, priv, null));
          out.ecdh100 = hex(await s.deriveBits({{ name: "ECDH", public: pub }}, priv, 100));
          out.ecdhTooLong = await failure(s.deriveBits({{ name: "ECDH", public: pub }}, priv, 536));
          const p256 = await s.generateKey({{ name: "ECDH", namedCurve: "P-256" }}, false, ["deriveBits"]);
          out.ecdhOtherCurve = await failure(s.deriveBits({{ name: "ECDH", public: p256.publicKey }}, priv, null));
          out.ecdhNoUsage = await failure(s.deriveKey({{ name: "ECDH", public: pub }}, priv, {{ name: "AES-GCM", length: 128 }}, false, ["encrypt"]));

          const alice = await s.importKey("pkcs8", unhex("302e020100300506032b656e04220420" + "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"), "X25519", true, ["deriveBits"]);
          const bob = await s.importKey("raw", unhex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"), "X25519", true, []);
          out.x25519 = hex(await s.deriveBits({{ name: "X25519", public: bob }}, alice, 256));
          out.x25519Public = (await s.exportKey("jwk", alice)).x;
          const zero = await s.importKey("raw", new Uint8Array(32), "X25519", false, []);
          out.x25519SmallOrder = await failure(s.deriveBits({{ name: "X25519", public: zero }}, alice, 256));

          const ikm = await s.importKey("raw", new Uint8Array(22).fill(11), "HKDF", false, ["deriveKey"]);
          const hkdf = {{ name: "HKDF", hash: "SHA-256", salt: unhex("000102030405060708090a0b0c"), info: unhex("f0f1f2f3f4f5f6f7f8f9") }};
          const derived = await s.deriveKey(hkdf, ikm, {{ name: "HMAC", hash: "SHA-1", length: 160 }}, true, ["sign"]);
          out.hkdf = hex(await s.exportKey("raw", derived));
          out.hkdfBits = await failure(s.deriveBits(hkdf, ikm, 256));
          out.hkdfExtractable = await failure(s.importKey("raw", new Uint8Array(22), "HKDF", true, ["deriveKey"]));

          const password = await s.importKey("raw", utf8("password"), "PBKDF2", false, ["deriveBits"]);
          const pbkdf2 = {{ name: "PBKDF2", hash: "SHA-256", salt: utf8("salt"), iterations: 1 }};
          out.pbkdf2 = hex(await s.deriveBits(pbkdf2, password, 256));
          out.pbkdf2NoRounds = await failure(s.deriveBits({{ ...pbkdf2, iterations: 0 }}, password, 256));
          out.pbkdf2Odd = await failure(s.deriveBits(pbkdf2, password, 100));

          const key = unhex("2b7e151628aed2a6abf7158809cf4f3c");
          const block = unhex("6bc1bee22e409f96e93d7e117393172a");
          const cbc = await s.importKey("raw", key, "AES-CBC", false, ["encrypt", "decrypt", "wrapKey", "unwrapKey"]);
          const cbcIv = {{ name: "AES-CBC", iv: unhex("000102030405060708090a0b0c0d0e0f") }};
          const sealed = await s.encrypt(cbcIv, cbc, block);
          out.cbc = hex(sealed);
          out.cbcOpen = hex(await s.decrypt(cbcIv, cbc, sealed));
          out.cbcTruncated = await failure(s.decrypt(cbcIv, cbc, sealed.slice(0, 20)));
          out.cbcShortIv = await failure(s.encrypt({{ name: "AES-CBC", iv: new Uint8Array(12) }}, cbc, block));
          const ctr = await s.importKey("raw", key, "AES-CTR", false, ["encrypt", "decrypt"]);
          const counter = unhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
          out.ctr = hex(await s.encrypt({{ name: "AES-CTR", counter, length: 64 }}, ctr, block));
          out.ctrWrap = hex(await s.encrypt({{ name: "AES-CTR", counter, length: 8 }}, ctr, new Uint8Array(32)));
          out.ctrExhausted = await failure(s.encrypt({{ name: "AES-CTR", counter, length: 1 }}, ctr, new Uint8Array(48)));

          const kek = await s.importKey("raw", unhex("000102030405060708090a0b0c0d0e0f"), "AES-KW", false, ["wrapKey", "unwrapKey"]);
          const inner = await s.importKey("raw", unhex("00112233445566778899aabbccddeeff"), "AES-GCM", true, ["encrypt"]);
          const wrapped = await s.wrapKey("raw", inner, kek, "AES-KW");
          out.kw = hex(wrapped);
          const unwrapped = await s.unwrapKey("raw", wrapped, kek, "AES-KW", "AES-GCM", true, ["decrypt"]);
          out.kwUnwrapped = [hex(await s.exportKey("raw", unwrapped)), unwrapped.usages];
          const bad = new Uint8Array(wrapped); bad[3] ^= 1;
          out.kwTampered = await failure(s.unwrapKey("raw", bad, kek, "AES-KW", "AES-GCM", true, ["decrypt"]));
          out.kwEncrypt = await failure(s.encrypt("AES-KW", kek, block));
          const jwk = await s.wrapKey("jwk", inner, cbc, cbcIv);
          const back = await s.unwrapKey("jwk", jwk, cbc, cbcIv, "AES-GCM", false, ["encrypt"]);
          out.jwkRoundTrip = [back.algorithm, back.extractable];
          const secret = await s.importKey("raw", key, "AES-GCM", false, ["encrypt"]);
          out.wrapNotExtractable = await failure(s.wrapKey("raw", secret, kek, "AES-KW"));
          out.normal = hex(await s.digest("SHA-256", utf8("abc")));
          return out;
        }};"#
    ))
    .await;
    assert_eq!(
        got,
        json!({
            "ecdh": "00f8cecff0424dd94e92b1793acb1bd0a855b04d737fb231adde3b9bb89f038778aeb14f698dbd11e00d0da0c64eb68ca25c1378aef2520518018ebcce3e50a98c94",
            "ecdh100": "00f8cecff0424dd94e92b17930",
            "ecdhTooLong": "DOMException:OperationError",
            "ecdhOtherCurve": "DOMException:InvalidAccessError",
            "ecdhNoUsage": "DOMException:InvalidAccessError",
            "x25519": "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742",
            "x25519Public": "hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo",
            "x25519SmallOrder": "DOMException:OperationError",
            "hkdf": "3cb25f25faacd57a90434f64d0362f2a2d2d0a90",
            "hkdfBits": "DOMException:InvalidAccessError",
            "hkdfExtractable": "DOMException:SyntaxError",
            "pbkdf2": "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b",
            "pbkdf2NoRounds": "DOMException:OperationError",
            "pbkdf2Odd": "DOMException:OperationError",
            "cbc": "7649abac8119b246cee98e9b12e9197d8964e0b149c10b7b682e6e39aaeb731c",
            "cbcOpen": "6bc1bee22e409f96e93d7e117393172a",
            "cbcTruncated": "DOMException:OperationError",
            "cbcShortIv": "DOMException:OperationError",
            "ctr": "874d6191b620e3261bef6864990db6ce",
            "ctrWrap": "ec8cdf7398607cb0f2d21675ea9ea1e44d08ef66db6c78047ad0639a1dd025f7",
            "ctrExhausted": "DOMException:OperationError",
            "kw": "1fa68b0a8112b447aef34bd8fb5a7b829d3e862371d2cfe5",
            "kwUnwrapped": ["00112233445566778899aabbccddeeff", ["decrypt"]],
            "kwTampered": "DOMException:OperationError",
            "kwEncrypt": "DOMException:NotSupportedError",
            "jwkRoundTrip": [{"name": "AES-GCM", "length": 128}, false],
            "wrapNotExtractable": "DOMException:InvalidAccessError",
            "normal": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        })
    );
}

/// RSA keys (RSASSA-PKCS1-v1_5, RSA-PSS, RSA-OAEP) from a JWK that Node 20 generated: the
/// PKCS #1 v1.5 signature is the one Node made (it is deterministic), Node's PSS signature and
/// OAEP ciphertext (with a label) verify and decrypt here, and keys made here round-trip through
/// every format and wrap an AES key; the errors are the ones Web Crypto names.
#[tokio::test]
async fn subtle_rsa_signs_verifies_and_encrypts_as_node_does() {
    let got = eval(&format!(
        r#"{HEX}
        const fromHex = (text) => new Uint8Array(text.match(/../g).map((b) => parseInt(b, 16)));
        const JWK = {{"kty": "RSA", "n": "mFQ9ft0Uiz-WU_bmN6z_JOH2H75XrYSVMf6awpida8BGbLTK2X4O3taAuzWG_OT6zG10OMWORX6_Xp3g5f0dzbeV7ZH-KLTvQ0u4L2dD1xoUoa7qYrYKxflHyePaOOsnMOV8GC0MJizniVZseOXLBufuOLtzJ0cmx1mI2gQ4CT8", "e": "AQAB", "d": "foR5DwVQKteFY_eM_nEQ-PE0GulcqSGVSRDOORHIrdXkqCUA1eN9NleyU8sBcso8A85k2UI8CDxddZhrUpoIRawwiFvaOp36_vrpk7atswhJkifGgH1J5taXRIdVFGDtrIxpsngRDQgw9a9yLTImf5kq08YvL-89ooqvZFvHNAE", "p": "yrIngfi8kj8p2wQ-Zm3VvkI3jZOVJd9RQrmYpKz_mdBUDDemcks7-gxCVgU4Td8C_FhFb3TnGJK6yss_eDc2Lw", "q": "wGNNAKh1WkVozRHI0ZKJKBDl6O-r--Dwa-qfRMZz6Lt7zeAQ8yymDdfTanf5PHnaYkfuQBb6qJHbwaz6XNep8Q", "dp": "tiv58Akyyan1Hz-oKXzrjoyKyzZp5NjZesO9mbtWGdKvxy847B4L8IaWFCOq3-ngEBXxieOiU2aEdQDIsW3Fxw", "dq": "UtLtNZlQXDqBcbd0UvTY40zTDcMQsXEXT_5D7uHYyJreI7WQ1n-kRVVjCPT5cZWr9J-u7Bx4cNXKW8jSR-H4oQ", "qi": "kYgDGprkBJChc2FiBjKnSaRtKK6abFg5HOcD0dGXMCNhBMjUiZWO-cIn2POjn8Ax1vCX3ubbOVjao94R7YwEDw"}};
        export default async () => {{
          const {{ subtle }} = crypto;
          const data = utf8("abc");
          const pkcs1 = {{ name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }};
          const pss = {{ name: "RSA-PSS", hash: "SHA-256" }};
          const oaep = {{ name: "RSA-OAEP", hash: "SHA-256" }};
          const signer = await subtle.importKey("jwk", JWK, pkcs1, true, ["sign"]);
          const verifier = await subtle.importKey("jwk", {{ kty: "RSA", n: JWK.n, e: JWK.e }}, pkcs1, true, ["verify"]);
          const signature = await subtle.sign("RSASSA-PKCS1-v1_5", signer, data);
          const pssPublic = await subtle.importKey("spki", await subtle.exportKey("spki", verifier), pss, false, ["verify"]);
          const pssPrivate = await subtle.importKey("pkcs8", await subtle.exportKey("pkcs8", signer), pss, false, ["sign"]);
          const ours = await subtle.sign({{ name: "RSA-PSS", saltLength: 32 }}, pssPrivate, data);
          const decrypter = await subtle.importKey("jwk", JWK, oaep, false, ["decrypt", "unwrapKey"]);
          const encrypter = await subtle.importKey("jwk", {{ kty: "RSA", n: JWK.n, e: JWK.e }}, oaep, false, ["encrypt", "wrapKey"]);
          const label = new Uint8Array([1, 2, 3]);
          const sealed = await subtle.encrypt({{ name: "RSA-OAEP", label }}, encrypter, utf8("ours"));
          const aes = await subtle.generateKey({{ name: "AES-GCM", length: 128 }}, true, ["encrypt"]);
          const wrapped = await subtle.wrapKey("raw", aes, encrypter, {{ name: "RSA-OAEP" }});
          const unwrapped = await subtle.unwrapKey("raw", wrapped, decrypter, {{ name: "RSA-OAEP" }}, "AES-GCM", true, ["encrypt"]);
          const made = await subtle.generateKey({{ name: "RSA-PSS", modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-384" }}, true, ["sign", "verify"]);
          const madeJwk = await subtle.exportKey("jwk", made.privateKey);
          const again = await subtle.importKey("jwk", madeJwk, {{ name: "RSA-PSS", hash: "SHA-384" }}, true, ["sign"]);
          const tampered = new Uint8Array(signature.slice(0));
          tampered[0] ^= 1;
          return {{
            pkcs1: hex(signature) === "71db8e3f0a29d2ef932fd72e0fe2b816d45694c4c8824c20ab6e43fba38eb59d74ee4ad3f13b6bab698a817f354f637238b388e597e2287444c402c35a9079674e15efcfa109d3ace355e8a13b77e03d4881a6bd5557e0fb48b2ff9a2d566844c010b9030fc3f98457b2863e47b3d528e31cc4efdb1ba3171a1e5c47a4d5442f",
            pkcs1Verifies: [await subtle.verify("RSASSA-PKCS1-v1_5", verifier, signature, data), await subtle.verify("RSASSA-PKCS1-v1_5", verifier, tampered, data)],
            nodePss: await subtle.verify({{ name: "RSA-PSS", saltLength: 32 }}, pssPublic, fromHex("4c04899f207c2a53c7df96ba0cca4c931557230a6c6b5bfe1338d1c02f387a1c2d3319fe04b6190c10c7b6eb293251ecee336d80c5708ad240179ec6fa5b93df3281564370635588eb002b21d5e7ce2809a72a5dad5042db0c53ae310ce595c68b79ae84dae1089ac5a028cfaa542a9732124728cedf01fcc1a5f5fd69f76b99"), data),
            ourPss: [await subtle.verify({{ name: "RSA-PSS", saltLength: 32 }}, pssPublic, ours, data), await subtle.verify({{ name: "RSA-PSS", saltLength: 20 }}, pssPublic, ours, data)],
            nodeOaep: new TextDecoder().decode(await subtle.decrypt({{ name: "RSA-OAEP", label }}, decrypter, fromHex("5f4b887b8ee91aebaaf45885b3f2266fb441c9f3a36c3e2e8c4cb54fe6f67d0fc7996101aa7a1faebb0e7ece33a22d8545ee4485db8d51c954e7618f12eea27e75c907406ddb7a27cc1d597e8d687f864c6408240f00c109a7c5941f6e3dbae25f2d911f750a6cbf1b97f7a2c0c7aab56178c2a1dc4025a0de7f3b3171f1611a"))),
            ourOaep: new TextDecoder().decode(await subtle.decrypt({{ name: "RSA-OAEP", label }}, decrypter, sealed)),
            wrongLabel: await failure(subtle.decrypt({{ name: "RSA-OAEP" }}, decrypter, sealed)),
            unwrapped: hex(await subtle.exportKey("raw", unwrapped)) === hex(await subtle.exportKey("raw", aes)),
            key: [signer.type, signer.algorithm.name, signer.algorithm.modulusLength, hex(signer.algorithm.publicExponent), signer.algorithm.hash.name, signer.usages],
            sizes: [(await subtle.exportKey("spki", verifier)).byteLength, (await subtle.exportKey("pkcs8", signer)).byteLength],
            jwk: (await subtle.exportKey("jwk", signer)).d === JWK.d,
            made: [made.privateKey.algorithm.modulusLength, made.publicKey.usages, made.privateKey.usages, madeJwk.alg,
                   await subtle.verify({{ name: "RSA-PSS", saltLength: 48 }}, made.publicKey, await subtle.sign({{ name: "RSA-PSS", saltLength: 48 }}, again, data), data)],
            errors: [
              await failure(subtle.importKey("raw", new Uint8Array(8), pkcs1, true, ["verify"])),
              await failure(subtle.importKey("jwk", JWK, pkcs1, true, ["encrypt"])),
              await failure(subtle.importKey("spki", new Uint8Array(8), pkcs1, true, ["verify"])),
              await failure(subtle.importKey("jwk", {{ ...JWK, alg: "RS384" }}, pkcs1, true, ["sign"])),
              await failure(subtle.importKey("jwk", {{ ...JWK, dp: JWK.dq }}, pkcs1, true, ["sign"])),
              await failure(subtle.importKey("spki", new Uint8Array(8), "RSA-OAEP", true, ["encrypt"])),
              await failure(subtle.sign("RSA-OAEP", decrypter, data)),
              await failure(subtle.sign("RSA-PSS", pssPrivate, data)),
              await failure(subtle.sign({{ name: "RSA-PSS", saltLength: 1000 }}, pssPrivate, data)),
              await failure(subtle.exportKey("raw", verifier)),
              await failure(subtle.exportKey("pkcs8", pssPrivate)),
              await failure(subtle.encrypt({{ name: "RSA-OAEP" }}, encrypter, new Uint8Array(100))),
              await failure(subtle.generateKey({{ name: "RSA-OAEP", modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 0]), hash: "SHA-1" }}, true, ["encrypt"])),
              await failure(subtle.generateKey({{ name: "RSA-OAEP", modulusLength: 1024, publicExponent: [1, 0, 1], hash: "SHA-1" }}, true, ["encrypt"])),
              await failure(subtle.generateKey({{ name: "RSA-OAEP", modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-1" }}, true, ["sign"])),
            ],
          }};
        }};"#
    ))
    .await;
    assert_eq!(
        got,
        json!({
            "pkcs1": true,
            "pkcs1Verifies": [true, false],
            "nodePss": true,
            "ourPss": [true, false],
            "nodeOaep": "sealed",
            "ourOaep": "ours",
            "wrongLabel": "DOMException:OperationError",
            "unwrapped": true,
            "key": ["private", "RSASSA-PKCS1-v1_5", 1024, "010001", "SHA-256", ["sign"]],
            "sizes": [162, 635],
            "jwk": true,
            "made": [1024, ["verify"], ["sign"], "PS384", true],
            "errors": [
                "DOMException:NotSupportedError",
                "DOMException:SyntaxError",
                "DOMException:DataError",
                "DOMException:DataError",
                "DOMException:DataError",
                "TypeError:TypeError",
                "DOMException:NotSupportedError",
                "TypeError:TypeError",
                "DOMException:OperationError",
                "DOMException:NotSupportedError",
                "DOMException:InvalidAccessError",
                "DOMException:OperationError",
                "DOMException:OperationError",
                "TypeError:TypeError",
                "DOMException:SyntaxError",
            ],
        })
    );
}

/// Finding an RSA key's primes is slow in wasm: under the default policy's one-second deadline a
/// 4,096-bit key ends the call as `timeout`, and under a small fuel budget a 2,048-bit one as
/// `fuel_exhausted`, never as anything else; the next call is fine.
#[tokio::test]
async fn subtle_rsa_generate_key_is_bounded_by_the_call_limits() {
    let generate = |bits: u32| {
        Script::new(
            "rsa-generate.js",
            format!(
                r#"export default async () => {{
                  const pair = await crypto.subtle.generateKey({{ name: "RSASSA-PKCS1-v1_5", modulusLength: {bits}, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }}, true, ["sign"]);
                  return pair.privateKey.algorithm.modulusLength;
                }};"#
            ),
        )
    };
    // The default policy's one-second deadline with fuel to spare, so that only the deadline
    // can end it (a 4,096-bit key needs well over 30,000,000,000 fuel, the default budget).
    let deadline = policy("[limits]\nfuel = 2_000_000_000_000\ntimeout = \"1s\"\n");
    let outcome = PALISADE.run(&deadline, &generate(4096), "null").await;
    assert_eq!(code(&outcome), "timeout");
    assert_next_call_works().await;
    let small =
        policy("[limits]\nfuel = 200_000_000\ntimeout = \"60s\"\n[determinism]\nseed = 1\n");
    let outcome = PALISADE.run(&small, &generate(2048), "null").await;
    assert_eq!(code(&outcome), "fuel_exhausted");
    assert_next_call_works().await;
}

/// Web Crypto normalizes the algorithm for the operation before it looks at the key: `sign` and
/// `verify` with an algorithm that has neither (AES, ECDH, X25519, HKDF, PBKDF2, RSA-OAEP) are
/// `NotSupportedError` whatever the key, and a signing algorithm that is not the key's is
/// `InvalidAccessError`. AES-KW wraps a JWK padded with spaces to whole 64-bit blocks, as Web
/// Crypto's note to `wrapKey` allows and Node and browsers do, and unwraps it again.
#[tokio::test]
async fn subtle_sign_normalizes_first_and_aes_kw_wraps_any_jwk() {
    let got = eval(&format!(
        r#"{HEX}
        export default async () => {{
          const s = crypto.subtle;
          const aes = await s.generateKey({{ name: "AES-GCM", length: 128 }}, true, ["encrypt"]);
          const hmac = await s.generateKey({{ name: "HMAC", hash: "SHA-256", length: 264 }}, true, ["sign", "verify"]);
          const data = new Uint8Array(4);
          const out = {{ sign: [], verify: [] }};
          for (const name of ["AES-GCM", "AES-KW", "ECDH", "X25519", "HKDF", "PBKDF2", "RSA-OAEP", "HMAC", "ECDSA"]) {{
            out.sign.push(await failure(s.sign({{ name, hash: "SHA-256" }}, aes, data)));
            out.verify.push(await failure(s.verify({{ name, hash: "SHA-256" }}, aes, data, data)));
          }}
          const kw = await s.generateKey({{ name: "AES-KW", length: 128 }}, false, ["wrapKey", "unwrapKey"]);
          const text = JSON.stringify(await s.exportKey("jwk", hmac));
          const wrapped = await s.wrapKey("jwk", hmac, kw, "AES-KW");
          const unwrapped = await s.unwrapKey("jwk", wrapped, kw, "AES-KW", {{ name: "HMAC", hash: "SHA-256" }}, true, ["sign"]);
          // AES-KW adds one 8-byte block to what it wraps.
          out.jwk = {{ whole: text.length % 8 === 0, wrapped: wrapped.byteLength - 8, padded: Math.ceil(text.length / 8) * 8 }};
          out.jwk.padsToWholeBlocks = out.jwk.wrapped === out.jwk.padded && out.jwk.wrapped > text.length;
          out.same = hex(await s.exportKey("raw", unwrapped)) === hex(await s.exportKey("raw", hmac));
          out.raw = await failure(s.wrapKey("raw", hmac, kw, "AES-KW"));
          return out;
        }};"#
    ))
    .await;
    let not_supported = json!("DOMException:NotSupportedError");
    let invalid_access = json!("DOMException:InvalidAccessError");
    let mut expected = vec![not_supported; 7];
    expected.extend([invalid_access.clone(), invalid_access]);
    assert_eq!(
        got,
        json!({
            "sign": expected.clone(),
            "verify": expected,
            // The 33-byte key's JWK is not a whole number of blocks: it is padded to the next one.
            "jwk": {
                "whole": false,
                "wrapped": got["jwk"]["padded"],
                "padded": got["jwk"]["padded"],
                "padsToWholeBlocks": true,
            },
            "same": true,
            // Raw, the 33 bytes are not whole blocks either, and raw keys are not padded.
            "raw": "DOMException:OperationError",
        })
    );
}

/// `getReader(options)` and `values(options)` take WebIDL dictionaries: `undefined`, `null` or an
/// object. A number, string, boolean or symbol is a `TypeError` before any member is read, as in
/// WPT's `rs-test-templates.js` (`getReader(5)`) and in Node 20.
#[tokio::test]
async fn readable_stream_options_that_are_not_objects_are_type_errors() {
    let got = eval(
        r#"
        export default async () => {
          const out = [];
          for (const options of [5, "byob", true, Symbol.iterator]) {
            for (const method of ["getReader", "values"]) {
              try {
                new ReadableStream({ type: "bytes" })[method](options);
                out.push("returned");
              } catch (e) {
                out.push(e.constructor.name);
              }
            }
          }
          const stream = new ReadableStream();
          stream.getReader(null).releaseLock();
          stream.getReader(undefined).releaseLock();
          stream.values({}).return();
          out.push(stream.locked);
          return out;
        };"#,
    )
    .await;
    let mut expected = vec![json!("TypeError"); 8];
    expected.push(json!(false));
    assert_eq!(got, json!(expected));
}
