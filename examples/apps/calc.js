// A stack-like calculator app: the seed's calculator, in the `globalThis.jace` form.
// Serve it: `palisade serve --app examples/apps/calc.js` (docs/apps.md walks through it).
const OPS = {
  add: { sign: "+", apply: (a, b) => a + b },
  subtract: { sign: "-", apply: (a, b) => a - b },
  multiply: { sign: "×", apply: (a, b) => a * b },
  divide: { sign: "÷", apply: (a, b) => a / b },
};

function display(state) {
  return state.entry !== "" ? state.entry : String(state.acc ?? 0);
}

globalThis.jace = {
  manifest: { name: "calc", version: "1.0.0" },

  init(env) {
    return { acc: null, op: null, entry: "", history: [] };
  },

  view(state) {
    return {
      type: "calculator",
      title: "Calculator",
      children: [
        { type: "display", id: "display", value: display(state), presentation: { font: "mono", size: "xl" } },
        { type: "text", id: "pending", value: state.op ? `${state.acc} ${OPS[state.op].sign}` : "" },
        { type: "list", id: "history", audience: "human", items: state.history.slice(-5) },
        { type: "actions", id: "keys", audience: "agent",
          items: ["calc.input", "calc.op", "calc.equals", "calc.clear"] },
      ],
    };
  },

  actions: {
    "calc.input"(state, params) {
      const digit = params.digit;
      if (!Number.isInteger(digit) || digit < 0 || digit > 9) {
        return { state, error: { code: "BAD_DIGIT", message: "digit must be an integer 0-9" }, audit_preview: `INPUT ${digit}` };
      }
      const entry = state.entry === "0" ? String(digit) : state.entry + String(digit);
      return { state: { ...state, entry }, result: { display: entry }, audit_preview: `INPUT ${digit}` };
    },

    "calc.op"(state, params) {
      const op = params.op;
      if (!OPS[op]) {
        return { state, error: { code: "BAD_OP", message: `unknown operator ${op}` }, audit_preview: `OP ${op}` };
      }
      const acc = state.entry !== "" ? Number(state.entry) : (state.acc ?? 0);
      return { state: { ...state, acc, op, entry: "" }, result: { display: String(acc) }, audit_preview: `OP ${op}` };
    },

    "calc.equals"(state) {
      if (!state.op) {
        return { state, result: { display: display(state) }, audit_preview: "EQUALS (nothing pending)" };
      }
      const b = state.entry !== "" ? Number(state.entry) : state.acc;
      if (state.op === "divide" && b === 0) {
        return { state, error: { code: "DIV_ZERO", message: "cannot divide by zero" }, audit_preview: `DIVIDE ${state.acc}÷0` };
      }
      const value = OPS[state.op].apply(state.acc, b);
      const line = `${state.acc}${OPS[state.op].sign}${b} -> ${value}`;
      return {
        state: { acc: value, op: null, entry: "", history: [...state.history, line] },
        result: { value, display: String(value) },
        audit_preview: `${state.op.toUpperCase()} ${line}`,
        events: [{ type: "calc.computed", entity: "calc", changes: { value }, ts: new Date().toISOString() }],
      };
    },

    "calc.clear"(state) {
      return { state: { acc: null, op: null, entry: "", history: state.history }, result: { display: "0" }, audit_preview: "CLEAR" };
    },
  },
};
