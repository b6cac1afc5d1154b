// The counter the action-app benchmark loads (docs/bench.md, "Action apps").
export const manifest = { name: "counter", version: "1.0.0" };
export function init() { return { n: 0 }; }
export function view(state) { return { type: "counter", value: state.n }; }
export const actions = {
  inc(state, params) {
    const n = state.n + (params.by ?? 1);
    return { state: { n }, result: { n }, audit_preview: `INC -> ${n}`, events: [{ type: "inc", n }] };
  },
};
