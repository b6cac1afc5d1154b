// The page end to end in headless Chromium (Debian's `chromium`, driven by puppeteer-core):
// a `palisade serve` of its own on 127.0.0.1 (an ephemeral port, a keys file, two policies),
// and a fetch target on 127.0.0.1 it starts too. Steps: type a script, run it, see its output;
// a denied fetch shows its fix, applying it makes the next run pass; a session's files and
// runs; an app's button previews (dry run) then commits and the event appears; a view whose
// strings hold `<script>` renders as text. Bounded: the whole run stops after TIME_LIMIT_MS.
// On failure, a screenshot of each step taken is written under target/page-e2e/.
//
//   node web/test/e2e.mjs            (make page; PALISADE_BIN, CHROMIUM override the paths)
//   PAGE_SCREENSHOT=docs/page.png node web/test/e2e.mjs    (also writes the docs' picture)
import puppeteer from "puppeteer-core";
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { once } from "node:events";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BIN = process.env.PALISADE_BIN ?? join(root, "target", "debug", "palisade");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const SHOTS = join(root, "target", "page-e2e");
const TIME_LIMIT_MS = 150_000;
const KEY = "page-test-key-7f3a";
const running = [];

const COUNTER_APP = `globalThis.jace = {
  manifest: { name: "counter", version: "1.0.0" },
  init() { return { count: 0, label: "<script>window.__pwned = 1</script><img src=x onerror=\\"window.__pwned = 2\\">" }; },
  view(state) { return { type: "counter", title: state.label, children: [{ type: "text", value: "count " + state.count }] }; },
  actions: {
    "counter.add"(state, params) {
      const by = params.by ?? 1;
      return { state: { ...state, count: state.count + by }, audit_preview: "ADD " + by, events: [{ type: "counter.added", by }] };
    },
  },
};`;

function check(condition, message) {
  if (!condition) throw new Error(message);
}

/** Whether this server takes a policy sent with a call (`policy_toml`, within the ceiling
 *  `--inline-ceiling` names). */
const takesInline = () => execFileSync(BIN, ["serve", "--help"], { encoding: "utf8" }).includes("--inline-ceiling");

/** A folder with the keys file and the policies: `default` (no network), `fetcher` (loopback
 *  reachable, but only a port nothing listens on is allowed) and `ceiling` (what a policy
 *  sent with a call may grant: fetcher's grants and the target's port). */
function setUp(targetPort) {
  const dir = mkdtempSync(join(tmpdir(), "palisade-test-page-"));
  mkdirSync(join(dir, "policies"));
  writeFileSync(join(dir, "policies", "default.toml"), readFileSync(join(root, "policies", "default.toml")));
  writeFileSync(join(dir, "policies", "fetcher.toml"), [
    'name = "fetcher"', 'description = "loopback only, one port"',
    "[limits]", 'timeout = "10s"',
    "[http]", 'allow_private = ["127.0.0.1/32"]',
    "[[http.allow]]", 'url = "http://127.0.0.1:1/"', "",
  ].join("\n"));
  writeFileSync(join(dir, "policies", "ceiling.toml"), [
    'name = "ceiling"',
    "[limits]", 'timeout = "10s"',
    "[http]", 'allow_private = ["127.0.0.1/32"]',
    "[[http.allow]]", 'url = "http://127.0.0.1:1/"',
    "[[http.allow]]", `url = "http://127.0.0.1:${targetPort}/"`, "",
  ].join("\n"));
  const hash = createHash("sha256").update(KEY).digest("hex");
  writeFileSync(join(dir, "keys.toml"), [
    "[[tenant]]", 'name = "page"', `key_sha256 = "${hash}"`, 'policies = ["default", "fetcher"]',
    'inline_ceiling = "ceiling"', "",
  ].join("\n"));
  return dir;
}

/** `palisade serve` on an ephemeral loopback port: its address once it listens. */
async function startServer(dir, inline) {
  const args = ["serve", "--listen", "127.0.0.1:0", "--policies", join(dir, "policies"),
    "--data", join(dir, "data"), "--keys", join(dir, "keys.toml")];
  if (inline) args.push("--inline-ceiling", "ceiling");
  const child = spawn(BIN, args, { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, PALISADE_LOG: "warn" } });
  let seen = "";
  const addr = await new Promise((done, fail) => {
    child.stderr.on("data", (chunk) => {
      seen += chunk;
      const found = /listening on http:\/\/(\S+)\s/.exec(seen);
      if (found) done(found[1]);
    });
    child.on("exit", (code) => fail(new Error(`palisade serve exited ${code}: ${seen}`)));
  });
  return { child, base: `http://${addr}` };
}

/** The fetch target: one JSON answer, on 127.0.0.1. */
async function startTarget() {
  const server = createServer((_, res) => {
    server.hits = (server.hits ?? 0) + 1;
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"hello":"from the target"}');
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return server;
}

/** Select everything in the CodeMirror editor inside `selector` and type `text` over it. */
async function typeInto(page, selector, text) {
  await page.click(`${selector} .cm-content`);
  await page.keyboard.down("Control");
  await page.keyboard.press("a");
  await page.keyboard.up("Control");
  await page.keyboard.press("Backspace");
  await page.keyboard.type(text);
  await page.keyboard.press("Escape");
  const shown = await page.$eval(`${selector} .cm-content`, (n) => n.innerText.replace(/\u00a0/g, " "));
  check(shown === text, `the editor holds ${JSON.stringify(shown)}, not what was typed (${JSON.stringify(text)})`);
}

const textOf = (page, selector) => page.$eval(selector, (n) => n.textContent);

/** Run and wait for the outcome's status line; its text. */
async function run(page) {
  await page.$eval("#result", (n) => n.replaceChildren());
  await page.click("#run");
  await page.waitForSelector("#run-status");
  return textOf(page, "#run-status");
}

/** The page and its assets carry the CSP: scripts from the server only, nothing inline. */
async function checkHeaders(base) {
  for (const path of ["/", "/page/app.js", "/page/app.css"]) {
    const response = await fetch(`${base}${path}`);
    const csp = response.headers.get("content-security-policy") ?? "";
    check(response.ok && csp.includes("script-src 'self'") && csp.includes("default-src 'none'") && !csp.includes("unsafe"),
      `${path}: ${response.status}, CSP ${csp}`);
  }
}

/** Wait (up to 20 s) until the catalog's `fetcher` holds `text` (the folder is reloaded). */
async function waitForReload(base, text) {
  for (let i = 0; i < 200; i += 1) {
    const answer = await fetch(`${base}/v1/policies/fetcher`, { headers: { Authorization: `Bearer ${KEY}` } });
    if ((await answer.text()).includes(text)) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error("the server did not reload the policies folder within 20 s");
}

const STEPS = {
  async "type a script, run it, see its output"(page) {
    await page.type("#key", KEY);
    await page.click("#key-save");
    await page.waitForFunction(() => document.querySelector("#policy-text").value.includes('name = "default"'));
    await typeInto(page, "#editor", 'export default (x) => { console.warn("adding", x.a, x.b); return { sum: x.a + x.b } }');
    await typeInto(page, "#input", '{"a": 2, "b": 40}');
    const status = await run(page);
    check(status.startsWith("ok"), `the run was ${status}`);
    check(JSON.parse(await textOf(page, "#output")).sum === 42, "the output is not {sum: 42}");
    const line = await page.$eval("#console li", (n) => [n.dataset.level, n.querySelector(".message").textContent]);
    check(line[0] === "warn" && line[1] === "adding 2 40", `console line ${line}`);
    check((await textOf(page, "#receipt")).includes("fuel"), "no receipt");
  },

  async "a denied fetch shows its fix; applying it makes the next run pass"(page, env) {
    await page.select("#policy", "fetcher");
    await page.waitForFunction(() => document.querySelector("#policy-text").value.includes('name = "fetcher"'));
    const url = `http://127.0.0.1:${env.targetPort}/hello`;
    await typeInto(page, "#editor", `export default async () => (await fetch("${url}")).json()`);
    const denied = await run(page);
    check(denied.startsWith("refused · 403"), `the run was ${denied}`);
    check(await textOf(page, "#error-code") === "policy_denied", "not policy_denied");
    const fix = await textOf(page, "#fix-text");
    check(fix === `[[http.allow]] url = "http://127.0.0.1:${env.targetPort}/"`, `fix ${fix}`);
    check((await page.$eval("#docs-link", (a) => a.href)).endsWith("#policy_denied"), "no docs link");
    check(env.hits() === 0, "the refused fetch reached the target");
    check(await page.$eval("#timeline li.decision-deny .rule", (n) => n.textContent) === "http.allow", "no deny in the timeline");
    if (process.env.PAGE_SCREENSHOT) writeFileSync(process.env.PAGE_SCREENSHOT, await page.screenshot({ fullPage: true }));
    await page.click("#apply-fix");
    const policy = await page.$eval("#policy-text", (n) => n.value);
    check(policy.includes(`url = "http://127.0.0.1:${env.targetPort}/"`), "the fix is not in the policy copy");
    check((await textOf(page, "#policy-origin")).includes("edited copy of fetcher"), "the copy is not marked edited");
    if (!env.inline) {
      // A server that takes no policy with a call: the operator saves the copy as the
      // catalog's file, the server reloads it, and the page shows it and runs it by name.
      writeFileSync(join(env.dir, "policies", "fetcher.toml"), policy);
      await waitForReload(env.base, `url = "http://127.0.0.1:${env.targetPort}/"`);
      await page.click("#policy-reset");
      await page.waitForFunction(() => document.querySelector("#policy-origin").textContent.includes("as the catalog has it"));
      check((await page.$eval("#policy-text", (n) => n.value)).includes(`127.0.0.1:${env.targetPort}/`), "the reloaded policy lacks the fix");
    }
    const passed = await run(page);
    check(passed.startsWith("ok"), `the run after the fix was ${passed}: ${await textOf(page, "#result")}`);
    check(JSON.parse(await textOf(page, "#output")).hello === "from the target", "no answer from the target");
    check(env.hits() === 1, `the target saw ${env.hits()} requests`);
    check(await page.$eval("#timeline li.decision-allow .capability", (n) => n.textContent) === "http", "no allow in the timeline");
  },

  async "a session's files and runs"(page) {
    await typeInto(page, "#editor", "export default () => 6 * 7");
    await page.click("#tab-sessions");
    await page.waitForFunction(() => document.querySelector("#session-policy").options.length > 0);
    await page.select("#session-policy", "default");
    await page.click("#session-new");
    await page.waitForSelector("#session-detail:not([hidden])");
    await page.type("#file-path", "/scratch/notes.txt");
    await page.type("#file-content", "written from the page");
    await page.click("#file-write");
    await page.waitForSelector('#fs-list [data-file="notes.txt"]');
    await page.$eval("#file-content", (n) => { n.value = ""; });
    await page.click('#fs-list [data-file="notes.txt"]');
    await page.waitForFunction(() => document.querySelector("#file-content").value === "written from the page");
    await page.click("#session-run");
    await page.waitForSelector("#session-runs li");
    const ran = await textOf(page, "#session-runs li");
    check(ran.endsWith("ok: 42"), `the session's run: ${ran}`);
  },

  async "an app's button previews, then commits, and its event appears"(page) {
    await page.click("#tab-apps");
    await page.waitForFunction(() => document.querySelector("#app-policy").options.length > 0);
    await page.$eval("summary", (n) => n.click());
    await page.$eval("#app-source", (n, source) => { n.value = source; }, COUNTER_APP);
    await page.click("#app-load");
    await page.waitForSelector('#app-actions [data-action="counter.add"]');
    await page.waitForFunction(() => document.querySelector("#events-status").textContent === "following");
    await page.click('#app-actions [data-action="counter.add"]');
    await page.$eval("#action-params", (n) => { n.value = '{"by": 5}'; });
    await page.click("#action-preview");
    await page.waitForSelector("#preview:not([hidden])");
    check(await textOf(page, "#preview-audit") === "ADD 5", "no audit preview");
    const diff = await page.$eval('#state-diff tr[data-key="count"]', (tr) => [...tr.cells].map((c) => c.textContent));
    check(diff.join("|") === "count|(absent)|5", `state diff ${diff}`);
    check(await page.$$eval("#events li", (l) => l.length) === 0, "an event before the commit");
    await page.click("#commit");
    await page.waitForSelector("#committed");
    await page.waitForFunction(() => [...document.querySelectorAll("#events li")].some((li) => li.textContent.includes("counter.added")));
    await page.waitForFunction(() => document.querySelector("#app-view").textContent.includes("count 5"));
    // A second preview diffs against the committed state.
    await page.click('#app-actions [data-action="counter.add"]');
    await page.click("#action-preview");
    await page.waitForSelector("#preview:not([hidden])");
    const next = await page.$eval('#state-diff tr[data-key="count"]', (tr) => [...tr.cells].map((c) => c.textContent));
    check(next.join("|") === "count|5|10", `state diff ${next}`);
    check(await page.$$eval("#state-diff tr[data-key]", (l) => l.length) === 1, "unchanged keys in the diff");
    await page.click("#preview-cancel");
  },

  async "a view whose strings hold <script> renders as text"(page) {
    const text = await textOf(page, "#app-view");
    check(text.includes("<script>window.__pwned = 1</script><img src=x"), `the view shows ${text}`);
    check(await page.$$eval("#app-view script, #app-view img", (l) => l.length) === 0, "markup from the view");
    check(await page.evaluate(() => window.__pwned === undefined), "a script of the view ran");
  },
};

async function main() {
  const target = await startTarget();
  const targetPort = target.address().port;
  const dir = setUp(targetPort);
  const inline = takesInline();
  const server = await startServer(dir, inline);
  running.push(() => server.child.kill());
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  const shots = [];
  let failed = null;
  let passed = 0;
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    page.setDefaultTimeout(20_000);
    const problems = [];
    // A refused request is an answer the page shows, not a problem of the page.
    page.on("console", (m) => m.type() === "error" && !m.text().startsWith("Failed to load resource") && problems.push(m.text()));
    page.on("pageerror", (e) => problems.push(String(e)));
    const requests = [];
    page.on("request", (r) => requests.push({ url: r.url(), auth: r.headers().authorization }));
    await checkHeaders(server.base);
    await page.goto(`${server.base}/`);
    const env = { targetPort, dir, inline, base: server.base, hits: () => target.hits ?? 0 };
    console.log(inline ? "page: the fix is sent with the run (policy_toml)" : "page: this server takes no policy with a call: the fixed copy is saved as the catalog's file");
    for (const [name, step] of Object.entries(STEPS)) {
      try {
        await step(page, env);
        shots.push([name, await page.screenshot({ fullPage: true })]);
        passed += 1;
        console.log(`ok: ${name}`);
      } catch (e) {
        shots.push([name, await page.screenshot({ fullPage: true }).catch(() => null)]);
        const shown = await page.$$eval("#result, #session-result, #app-result",
          (boxes) => boxes.map((b) => `#${b.id}: ${b.textContent.slice(0, 400)}`).join("\n")).catch(() => "");
        throw new Error(`${name}: ${e.message}\n${shown}`);
      }
    }
    check(!problems.length, `the page reported errors: ${problems.join(" | ")}`);
    // The key went in a header of every API request after it was typed, never in a URL.
    const api = requests.filter((r) => new URL(r.url).pathname.startsWith("/v1/"));
    check(requests.every((r) => !r.url.includes(KEY)), "the key in a URL");
    check(api.length > 10 && api.slice(api.findIndex((r) => r.auth)).every((r) => r.auth === `Bearer ${KEY}`), "an API request without the key");
    check(await page.evaluate(() => sessionStorage.getItem("palisade.key")) === KEY, "the key is not in session storage");
    // The CSP is in force: a script added inline does not run.
    const inlineRan = await page.evaluate(() => {
      const s = document.createElement("script");
      s.textContent = "window.__inline = 1";
      document.body.append(s);
      return window.__inline;
    });
    check(inlineRan === undefined, "an inline script ran");
  } catch (e) {
    failed = e;
  } finally {
    await browser.close();
    server.child.kill();
    target.close();
    rmSync(dir, { recursive: true, force: true });
  }
  if (failed) {
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    shots.forEach(([name, png], i) => png && writeFileSync(join(SHOTS, `${i + 1}-${name.replace(/[^a-z0-9]+/gi, "-")}.png`), png));
    console.error(`page: ${failed.message}\nscreenshots in ${SHOTS}`);
  }
  console.log(`page: ${passed} passed, ${failed ? 1 : 0} failed`);
  return failed ? 1 : 0;
}

const timer = setTimeout(() => {
  console.error(`page: the browser test took more than ${TIME_LIMIT_MS / 1000} s`);
  for (const stop of running) stop();
  process.exit(1);
}, TIME_LIMIT_MS);
process.exitCode = await main();
clearTimeout(timer);
