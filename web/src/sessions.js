// The Sessions tab: the caller's sessions; one session's files (ls, read, write) and its runs
// (the Run tab's script and input, run in the session, listed newest first).
import { call } from "./api.js";
import { $, el, fill, pretty } from "./dom.js";
import { showOutcome } from "./results.js";
import { currentInput, currentScript } from "./run.js";

let current = null;
const runs = new Map();

export function setupSessions() {
  $("#session-new").addEventListener("click", create);
  $("#sessions-refresh").addEventListener("click", loadSessions);
  $("#fs-ls").addEventListener("click", ls);
  $("#file-read").addEventListener("click", () => read($("#file-path").value));
  $("#file-write").addEventListener("click", write);
  $("#session-run").addEventListener("click", runIn);
  $("#session-stop").addEventListener("click", stop);
}

export async function loadSessions() {
  const [policies, sessions] = await Promise.all([call("GET", "/v1/policies"), call("GET", "/v1/sessions")]);
  if (!policies.ok) return problem(policies);
  if (!sessions.ok) return problem(sessions);
  const chosen = $("#session-policy").value;
  fill($("#session-policy"), policies.body.map((p) => el("option", { value: p.name }, p.name)));
  if (chosen) $("#session-policy").value = chosen;
  fill($("#sessions-list"), sessions.body.length ? sessions.body.map((s) =>
    el("li", {}, el("button", { type: "button", class: "link", "data-session": s.session_id, onclick: () => openSession(s) },
      `${s.name ?? s.session_id.slice(0, 12)} · ${s.policy} · ${s.status ?? ""}`))) : el("li", { class: "empty" }, "no session"));
}

async function create() {
  const answer = await call("POST", "/v1/sessions", { policy: $("#session-policy").value });
  if (!answer.ok) return problem(answer);
  await loadSessions();
  await openSession(answer.body);
}

async function openSession(session) {
  current = session;
  $("#session-detail").hidden = false;
  fill($("#session-title"), `session ${session.session_id} (policy ${session.policy})`);
  fill($("#session-result"));
  drawRuns();
  await ls();
}

function problem(answer) {
  showOutcome($("#session-result"), answer, () => {});
}

async function fs(op, body) {
  return call("POST", `/v1/sessions/${encodeURIComponent(current.session_id)}/fs/${op}`, body);
}

async function ls() {
  const path = $("#fs-path").value || "/scratch";
  const answer = await fs("ls", { path });
  if (!answer.ok) return problem(answer);
  const base = path.replace(/\/+$/, "");
  fill($("#fs-list"), answer.body.entries.length ? answer.body.entries.map((e) =>
    el("li", {}, e.is_dir
      ? el("button", { type: "button", class: "link", onclick: () => { $("#fs-path").value = `${base}/${e.name}`; ls(); } }, `${e.name}/`)
      : el("button", { type: "button", class: "link", "data-file": e.name, onclick: () => read(`${base}/${e.name}`) },
        `${e.name} (${e.size} bytes)`))) : el("li", { class: "empty" }, "empty"));
}

async function read(path) {
  const answer = await fs("read", { path });
  if (!answer.ok) return problem(answer);
  $("#file-path").value = path;
  $("#file-content").value = answer.body.body ?? `(not UTF-8 text: ${answer.body.size} bytes)`;
}

async function write() {
  const answer = await fs("write", { path: $("#file-path").value, content: $("#file-content").value, parents: true });
  if (!answer.ok) return problem(answer);
  fill($("#session-result"), el("p", { class: "ok" }, `wrote ${$("#file-path").value}`));
  await ls();
}

async function runIn() {
  const parsed = currentInput();
  if (parsed.error) return problem({ status: 0, body: { ok: false, error: { code: "invalid_input", message: parsed.error } } });
  const id = current.session_id;
  const answer = await call("POST", `/v1/sessions/${encodeURIComponent(id)}/run`, { source: currentScript(), input: parsed.value });
  showOutcome($("#session-result"), answer, () => {});
  const list = runs.get(id) ?? [];
  list.unshift({ at: new Date().toLocaleTimeString(), ok: answer.body?.ok === true, code: answer.body?.error?.code, output: answer.body?.output });
  runs.set(id, list);
  drawRuns();
  await ls();
}

function drawRuns() {
  const list = runs.get(current.session_id) ?? [];
  fill($("#session-runs"), list.map((r) => el("li", { class: r.ok ? "ok" : "failed" },
    `${r.at} · ${r.ok ? `ok: ${pretty(r.output ?? null)}` : r.code}`)));
}

async function stop() {
  const answer = await call("DELETE", `/v1/sessions/${encodeURIComponent(current.session_id)}`);
  if (!answer.ok) return problem(answer);
  $("#session-detail").hidden = true;
  current = null;
  await loadSessions();
}
