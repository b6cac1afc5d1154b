// An outcome drawn for people: output, console lines with their levels, the receipt, the
// audit records as a timeline, and a refusal with its code, message, fix and docs link.
import { el, fill, pretty } from "./dom.js";

const RECEIPT = [
  ["fuel_used", "fuel", (v) => v.toLocaleString("en")],
  ["wall_time_us", "wall time", (v) => `${(v / 1000).toFixed(1)} ms`],
  ["peak_memory_bytes", "peak memory", (v) => `${(v / 1048576).toFixed(1)} MiB`],
  ["policy", "policy", String],
  ["policy_sha256", "policy sha256", (v) => `${String(v).slice(0, 16)}…`],
  ["form", "form", String],
];

/** Draw `answer` ({status, body}) into `box`; `onFix(fix)` applies a refusal's fix. */
export function showOutcome(box, answer, onFix) {
  const body = answer.body ?? {};
  const outcome = typeof body === "object" ? body : { error: { code: "invalid", message: body } };
  fill(
    box,
    el("div", { class: `status ${outcome.ok ? "ok" : "failed"}`, id: "run-status" },
      outcome.ok ? `ok · ${answer.status}` : `refused · ${answer.status}`),
    outcome.error ? refusal(outcome.error, onFix) : null,
    section("Output", el("pre", { id: "output" }, outcome.ok ? pretty(outcome.output ?? null) : "")),
    section("Console", consoleLines(outcome.logs ?? [])),
    section("Receipt", receipt(outcome.receipt)),
    section("Audit", timeline(outcome.audit ?? [])),
  );
}

function section(title, content) {
  return el("section", { class: "result" }, el("h3", {}, title), content);
}

function consoleLines(logs) {
  if (!logs.length) return el("p", { class: "empty" }, "no console lines");
  return el("ol", { id: "console", class: "console" },
    logs.map((l) => el("li", { class: `level-${l.level}`, "data-level": l.level },
      el("span", { class: "level" }, l.level), el("span", { class: "message" }, l.message))));
}

function receipt(r) {
  if (!r) return el("p", { class: "empty" }, "no receipt (refused before it ran)");
  return el("table", { id: "receipt", class: "kv" },
    RECEIPT.filter(([k]) => r[k] !== undefined && r[k] !== null)
      .map(([k, label, f]) => el("tr", { "data-key": k }, el("th", {}, label), el("td", {}, f(r[k])))));
}

function timeline(audit) {
  if (!audit.length) return el("p", { class: "empty" }, "no gated decision");
  const start = audit[0].time_unix_ms ?? 0;
  return el("ol", { id: "timeline", class: "timeline" },
    audit.map((a) => el("li", { class: `decision-${a.decision}` },
      el("span", { class: "at" }, `+${(a.time_unix_ms ?? start) - start} ms`),
      el("span", { class: "capability" }, a.capability),
      el("span", { class: "target" }, a.target ?? ""),
      el("span", { class: "decision" }, a.decision),
      el("span", { class: "rule" }, a.rule ?? ""),
      el("span", { class: "duration" }, a.duration_us === undefined ? "" : `${a.duration_us} µs`))));
}

/** A refusal: code, message, the fix with a button that applies it, the docs link. */
export function refusal(error, onFix) {
  const fix = error.fix && typeof error.fix.key === "string" ? error.fix : null;
  return el("div", { class: "refusal", id: "refusal" },
    el("div", {}, el("code", { id: "error-code" }, error.code ?? "error"), " ",
      el("span", { id: "error-message" }, error.message ?? "")),
    fix ? el("div", { class: "fix" }, "fix: ",
      el("code", { id: "fix-text" }, `${fix.key} = ${fix.value}`), " ",
      el("button", { id: "apply-fix", type: "button", onclick: () => onFix(fix) },
        "Apply to the policy copy")) : null,
    !fix && error.fix ? el("pre", { class: "fix" }, `fix: ${pretty(error.fix)}`) : null,
    error.fix_note ? el("div", { class: "note" }, error.fix_note) : null,
    /^https?:\/\//.test(error.docs_url ?? "") ? el("a", { id: "docs-link", href: error.docs_url, target: "_blank",
      rel: "noopener noreferrer" }, `docs: ${error.code}`) : null);
}
