// The driver around an action app (docs/apps.md): the host calls its exports with the state as
// JSON and reads the next state back as JSON.
import * as module from "./app.js";

const app = () => {
  const jace = globalThis.jace;
  if (jace !== null && typeof jace === "object") return jace;
  return module;
};

const shape = (value) => (value === undefined ? null : value);

export function describe() {
  const a = app();
  const actions = a.actions !== null && typeof a.actions === "object" ? Object.keys(a.actions).filter((k) => typeof a.actions[k] === "function") : [];
  return { manifest: shape(a.manifest), actions, has_init: typeof a.init === "function", has_view: typeof a.view === "function" };
}

export async function view(request) {
  const a = app();
  let state = request.state;
  if (state === null) state = typeof a.init === "function" ? await a.init(request.env) : {};
  return { state, view: typeof a.view === "function" ? shape(await a.view(state)) : null };
}

export async function act(request) {
  const a = app();
  let state = request.state;
  if (state === null) state = typeof a.init === "function" ? await a.init(request.env) : {};
  const action = a.actions !== null && typeof a.actions === "object" && Object.hasOwn(a.actions, request.action) ? a.actions[request.action] : undefined;
  if (typeof action !== "function") {
    return { state, error: { code: "unknown_action", message: `the app has no action \`${request.action}\`` }, view: null };
  }
  const r = (await action(state, request.params, request.env)) ?? {};
  const next = r.state === undefined ? state : r.state;
  const error = r.error === undefined || r.error === null ? null : r.error;
  const shown = error === null ? next : state;
  return {
    state: shown,
    result: shape(r.result),
    audit_preview: shape(r.audit_preview),
    events: Array.isArray(r.events) ? r.events : [],
    error,
    view: typeof a.view === "function" ? shape(await a.view(shown)) : null,
  };
}
