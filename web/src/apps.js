// The Apps tab: an action app's view for people (the server's escaped HTML of the human
// view, parsed as inert nodes), its actions as buttons, each previewed by a dry run (audit
// preview, events, state diff) before its commit, and the session's events as they land.
import { call, follow } from "./api.js";
import { $, el, fill, pretty } from "./dom.js";
import { showOutcome } from "./results.js";

const app = { name: "", session: "default", state: undefined, pending: null, stream: null };

export function setupApps() {
  $("#apps-refresh").addEventListener("click", loadApps);
  $("#app-pick").addEventListener("change", () => openApp($("#app-pick").value));
  $("#app-session").addEventListener("change", () => openApp(app.name));
  $("#app-load").addEventListener("click", loadApp);
  $("#action-preview").addEventListener("click", preview);
  $("#commit").addEventListener("click", commit);
  $("#preview-cancel").addEventListener("click", () => { $("#preview").hidden = true; app.pending = null; });
}

export async function loadApps() {
  const [apps, policies] = await Promise.all([call("GET", "/v1/apps"), call("GET", "/v1/policies")]);
  if (policies.ok) fill($("#app-policy"), policies.body.map((p) => el("option", { value: p.name }, p.name)));
  if (!apps.ok) return showOutcome($("#app-result"), apps, () => {});
  fill($("#app-pick"), apps.body.map((a) => el("option", { value: a.name }, a.name)));
  const names = apps.body.map((a) => a.name);
  if (names.length) await openApp(names.includes(app.name) ? app.name : names[0]);
}

async function loadApp() {
  const body = { name: $("#app-name").value, source: $("#app-source").value, policy: $("#app-policy").value };
  const answer = await call("POST", "/v1/apps", body);
  if (!answer.ok) return showOutcome($("#app-result"), answer, () => {});
  app.name = answer.body.name;
  await loadApps();
}

const appPath = (rest) => `/v1/apps/${encodeURIComponent(app.name)}${rest}`;
const sessionQuery = () => `session_id=${encodeURIComponent(app.session)}`;

async function openApp(name) {
  if (!name) return;
  app.name = name;
  app.session = $("#app-session").value || "default";
  app.state = undefined;
  $("#app-pick").value = name;
  $("#app-detail").hidden = false;
  $("#preview").hidden = true;
  fill($("#app-result"));
  fill($("#events"));
  const shown = await call("GET", appPath(""));
  if (!shown.ok) return showOutcome($("#app-result"), shown, () => {});
  fill($("#app-actions"), shown.body.actions.map((action) =>
    el("button", { type: "button", "data-action": action, onclick: () => choose(action) }, action)));
  await Promise.all([drawView(), readState()]);
  followEvents();
}

/** The session's state as its last commit left it (null before its first). */
async function readState() {
  const answer = await call("GET", `${appPath("/state")}?${sessionQuery()}`);
  app.state = answer.ok ? answer.body.state : undefined;
}

/** The human view: the server escapes every string of it; the page parses that HTML into a
 *  detached document (where nothing runs) and moves its nodes over, dropping any script,
 *  style, frame or event attribute should one ever be there. */
async function drawView() {
  const answer = await call("GET", `${appPath("/view")}?${sessionQuery()}`, undefined, { Accept: "text/html" });
  if (!answer.ok) return showOutcome($("#app-result"), answer, () => {});
  const doc = new DOMParser().parseFromString(answer.body, "text/html");
  for (const bad of doc.body.querySelectorAll("script, style, iframe, object, embed, link, meta")) bad.remove();
  for (const node of doc.body.querySelectorAll("*")) {
    for (const attr of [...node.attributes]) if (!/^(class|data-[a-z-]+)$/.test(attr.name)) node.removeAttribute(attr.name);
  }
  fill($("#app-view"), [...doc.body.childNodes].map((n) => document.adoptNode(n)));
}

function choose(action) {
  app.pending = { action };
  fill($("#action-name"), action);
  $("#action-form").hidden = false;
  $("#preview").hidden = true;
}

function actionBody(extra) {
  let params;
  try {
    params = JSON.parse($("#action-params").value || "{}");
  } catch (e) {
    throw new Error(`params are not JSON: ${e.message}`);
  }
  return { action: app.pending.action, params, session_id: app.session, ...extra };
}

async function preview() {
  let body;
  try {
    body = actionBody({ dry_run: true });
  } catch (e) {
    return showOutcome($("#app-result"), { status: 0, body: { ok: false, error: { code: "invalid_input", message: e.message } } }, () => {});
  }
  const answer = await call("POST", appPath("/actions"), body);
  if (!answer.ok) return showOutcome($("#app-result"), answer, () => {});
  app.pending = { ...app.pending, params: body.params, digest: answer.body.preview };
  fill($("#app-result"));
  fill($("#preview-audit"), String(answer.body.audit_preview ?? "(no audit preview)"));
  fill($("#preview-events"), pretty(answer.body.events ?? []));
  await readState();
  fill($("#state-diff"), stateDiff(app.state, answer.body.state));
  $("#preview").hidden = false;
}

/** Commit what was previewed: `if_preview` makes the server keep it only if the commit is
 *  what the dry run showed (409 `preview_mismatch` otherwise). */
async function commit() {
  const { action, params, digest } = app.pending;
  const body = { action, params, session_id: app.session, if_preview: digest };
  const answer = await call("POST", appPath("/actions"), body, { "Idempotency-Key": crypto.randomUUID() });
  $("#preview").hidden = true;
  if (!answer.ok) return showOutcome($("#app-result"), answer, () => {});
  fill($("#app-result"), el("p", { class: "ok", id: "committed" }, `committed ${action} (seq ${answer.body.seq})`));
  await drawView();
}

/** One row per top-level key whose value changes (the whole state when either is not an
 *  object); `before` is null until the session's first commit (`init` makes its state). */
function stateDiff(before, after) {
  const known = before !== undefined;
  const isObject = (v) => v && typeof v === "object" && !Array.isArray(v);
  const shown = (holder, k) => (isObject(holder) && k in holder ? pretty(holder[k]) : "(absent)");
  const rows = [];
  if (isObject(after) && (before === null || isObject(before))) {
    const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after)]);
    for (const k of keys) {
      if (before && JSON.stringify(before[k]) === JSON.stringify(after[k])) continue;
      rows.push([k, shown(before, k), shown(after, k)]);
    }
  } else if (JSON.stringify(before) !== JSON.stringify(after)) {
    rows.push(["(state)", known ? pretty(before) : "(unknown)", pretty(after)]);
  }
  return [
    el("tr", {}, el("th", {}, "state"), el("th", {}, before === null ? "now (no commit yet)" : "now"), el("th", {}, "after")),
    rows.length ? rows.map(([k, a, b]) => el("tr", { "data-key": k }, el("td", {}, k), el("td", {}, el("pre", {}, a)), el("td", {}, el("pre", {}, b))))
      : el("tr", {}, el("td", { colspan: 3 }, "no change")),
  ];
}

/** The session's committed events, live; a new app or session ends the old stream. */
function followEvents() {
  app.stream?.abort();
  const stream = new AbortController();
  app.stream = stream;
  const path = `${appPath("/events")}?${sessionQuery()}`;
  fill($("#events-status"), "following");
  follow(path, (event) => {
    let data = event.data;
    try {
      data = pretty(JSON.parse(event.data));
    } catch { /* shown as sent */ }
    $("#events").append(el("li", { "data-id": event.id ?? "" }, el("span", { class: "at" }, `#${event.id}`), el("pre", {}, data)));
  }, stream.signal).catch((e) => {
    if (!stream.signal.aborted) fill($("#events-status"), `stopped: ${e.message}`);
  });
}
