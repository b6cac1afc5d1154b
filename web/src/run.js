// The Run tab: the script (CodeMirror), its JSON input, the policy picked from the caller's
// catalog and shown resolved beside them, and the outcome. A fix applied from a refusal edits
// a copy of the shown policy; a run then sends that copy with the call instead of the name.
import { javascript } from "@codemirror/lang-javascript";
import { json } from "@codemirror/lang-json";
import { call } from "./api.js";
import { $, el, fill } from "./dom.js";
import { editor } from "./editor.js";
import { applyFix } from "./fix.js";
import { showOutcome } from "./results.js";

const SAMPLE = `// A script runs in a fresh sandbox under the policy on the right.
export default async (input) => {
  console.log("hello", input.name);
  return { greeting: \`hello, \${input.name}\` };
};
`;

/** The run body's policy: its catalog name while the text is the catalog's, else the
 *  edited text itself, sent with the call as `policy_toml` (a policy sent with a call, which
 *  the server admits within the tenant's ceiling). */
export function policyField(policy) {
  return policy.text === policy.catalogText ? { policy: policy.name } : { policy_toml: policy.text };
}

const state = { name: "", catalogText: "", text: "" };
let script;
let input;

export const currentScript = () => script.state.doc.toString();

/** The input as JSON, or an error naming what does not parse. */
export function currentInput() {
  const text = input.state.doc.toString().trim();
  if (!text) return { value: null };
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    return { error: `the input is not JSON: ${e.message}` };
  }
}

export function setupRun() {
  script = editor($("#editor"), SAMPLE, javascript());
  input = editor($("#input"), '{"name": "Ada"}', json());
  $("#policy").addEventListener("change", () => pick($("#policy").value));
  $("#policy-text").addEventListener("input", () => {
    state.text = $("#policy-text").value;
    showOrigin();
  });
  $("#policy-reset").addEventListener("click", () => pick(state.name));
  $("#run").addEventListener("click", run);
}

/** Fill the picker from the caller's catalog; keep the chosen policy if it is still there. */
export async function loadPolicies() {
  const answer = await call("GET", "/v1/policies");
  const select = $("#policy");
  if (!answer.ok) {
    fill(select);
    showOutcome($("#result"), answer, () => {});
    return;
  }
  fill(select, answer.body.map((p) =>
    el("option", { value: p.name }, p.description ? `${p.name} — ${p.description}` : p.name)));
  const names = answer.body.map((p) => p.name);
  await pick(names.includes(state.name) ? state.name : names.includes("default") ? "default" : names[0]);
}

async function pick(name) {
  if (!name) return;
  const answer = await call("GET", `/v1/policies/${encodeURIComponent(name)}`);
  if (!answer.ok) {
    showOutcome($("#result"), answer, () => {});
    return;
  }
  Object.assign(state, { name, catalogText: answer.body, text: answer.body });
  $("#policy").value = name;
  $("#policy-text").value = answer.body;
  showOrigin();
}

function showOrigin() {
  const edited = state.text !== state.catalogText;
  fill($("#policy-origin"), edited
    ? `an edited copy of ${state.name}: sent with each run`
    : `${state.name}, as the catalog has it (resolved)`);
  $("#policy-origin").className = edited ? "edited" : "";
  $("#policy-reset").disabled = !edited;
}

function onFix(fix) {
  try {
    state.text = applyFix(state.text, fix);
  } catch (e) {
    fill($("#policy-origin"), `cannot apply ${fix.key}: ${e.message}`);
    return;
  }
  $("#policy-text").value = state.text;
  showOrigin();
  $("#policy-text").focus();
}

async function run() {
  const parsed = currentInput();
  if (parsed.error) {
    showOutcome($("#result"), { status: 0, body: { ok: false, error: { code: "invalid_input", message: parsed.error } } }, onFix);
    return;
  }
  $("#run").disabled = true;
  fill($("#result"), el("p", { class: "empty" }, "running…"));
  const body = { ...policyField(state), source: currentScript(), input: parsed.value };
  const answer = await call("POST", "/v1/run", body);
  $("#run").disabled = false;
  showOutcome($("#result"), answer, onFix);
}
