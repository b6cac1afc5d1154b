// applyFix against each form of `fix` the host writes (host/src/caps/http/rules.rs,
// host/src/error/mod.rs): run by `make page` with node's test runner.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parse } from "smol-toml";
import { applyFix } from "../src/fix.js";

/** Tables as plain objects (smol-toml makes them without a prototype). */
const plain = (value) => JSON.parse(JSON.stringify(value));

const POLICY = `name = "p"
[limits]
fuel = 1000
[http]
allow_private = ["10.0.0.1/32"]
[[http.allow]]
url = "https://api.example.com/"
methods = ["GET"]
`;

test("a dotted key is set, its table made where missing", () => {
  const fuel = parse(applyFix(POLICY, { key: "limits.fuel", value: "2000" }));
  assert.equal(fuel.limits.fuel, 2000);
  const timeout = parse(applyFix(POLICY, { key: "overrides.timeout", value: '"5s"' }));
  assert.deepEqual(plain(timeout.overrides), { timeout: "5s" });
  assert.equal(timeout.name, "p");
});

test("integers past 2^53 are kept exact", () => {
  const fixed = applyFix(POLICY, { key: "limits.fuel", value: "9007199254740993" });
  assert.match(fixed, /fuel = 9007199254740993\n/);
});

test("an array value adds what the old one lacks", () => {
  const fixed = parse(applyFix(POLICY, { key: "http.allow_private", value: '["127.0.0.1/32"]' }));
  assert.deepEqual(fixed.http.allow_private, ["10.0.0.1/32", "127.0.0.1/32"]);
});

test("an indexed key reaches into an array of tables", () => {
  const fixed = parse(applyFix(POLICY, { key: "http.allow[0].methods", value: '["GET", "POST"]' }));
  assert.deepEqual(fixed.http.allow[0].methods, ["GET", "POST"]);
  assert.throws(() => applyFix(POLICY, { key: "http.allow[3].methods", value: '["GET"]' }), /no allow\[3\]/);
});

test("[[table]] key appends a table, making the array and its parent where missing", () => {
  const fixed = parse(applyFix(POLICY, { key: "[[http.allow]] url", value: '"http://127.0.0.1:9/"' }));
  assert.deepEqual(fixed.http.allow.map((r) => r.url), ["https://api.example.com/", "http://127.0.0.1:9/"]);
  const fresh = parse(applyFix('name = "d"\n', { key: "[[http.allow]] url", value: '"https://x.example/"' }));
  assert.deepEqual(plain(fresh.http), { allow: [{ url: "https://x.example/" }] });
});

test("a value that is not TOML is refused, the policy unchanged", () => {
  assert.throws(() => applyFix(POLICY, { key: "limits.fuel", value: "two thousand" }));
});
