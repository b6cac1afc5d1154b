"""Each seed project's own example, ported to the library from Python (docs/python.md,
"Migrating")."""

from __future__ import annotations

import http.server
import json
import os
import pathlib
import threading
from typing import Any, Dict, List

from palisade import Palisade, Policy
from support import ROOT, assert_next_call_works, failure, output


def test_run_js_tool_a_read_only_workspace_and_no_network(tmp_path: pathlib.Path) -> None:
    # The seed's run_js tool spawned a QuickJS subprocess per call; here it is one library call
    # under a policy: the workspace mounted read-only, no network.
    (tmp_path / "scores.csv").write_text("name,score\nada,3\nbob,4\n")
    policy = Policy(f'name = "run-js-tool"\n[limits]\ntimeout = "30s"\n'
                    f'[[fs.mount]]\nhost = {json.dumps(str(tmp_path))}\nguest = "/workspace"\nmode = "ro"\n')
    palisade = Palisade()

    def run_js(code: str) -> Any:
        return palisade.run(policy=policy, source=code)

    total = run_js("""export default async () => {
      const rows = (await fs.readFile("/workspace/scores.csv")).trim().split("\\n").slice(1);
      return rows.reduce((total, row) => total + Number(row.split(",")[1]), 0);
    }""")
    assert output(total) == 7
    write = run_js('export default async () => { try { await fs.writeFile("/workspace/x", "1") } '
                   'catch (e) { return e.code } }')
    assert output(write) == "EACCES"
    assert not (tmp_path / "x").exists()
    assert failure(run_js('export default () => fetch("https://example.com/")')).code == "policy_denied"
    assert_next_call_works(palisade)


class _Hook(http.server.BaseHTTPRequestHandler):
    seen: List[str] = []

    def do_POST(self) -> None:
        auth = self.headers.get("authorization", "")
        _Hook.seen.append(auth)
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        answer = json.dumps({"received": body, "auth": auth}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_agent_callback_fetch_to_a_local_api_with_a_secret_the_script_never_sees() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    os.environ["PALISADE_TEST_AGENT_TOKEN"] = "tok-8d7f"
    template = (ROOT / "bindings/fixtures/agent-callback.toml").read_text()
    policy = Policy(template.replace("HOOK_PORT", str(port)))
    callback = f"""export default async (input) => {{
      console.log("calling the hook for", input.user);
      const response = await fetch("http://127.0.0.1:{port}/agents/hook", {{
        method: "POST", headers: {{ "content-type": "application/json" }}, body: JSON.stringify(input) }});
      return {{ status: response.status, body: await response.json() }};
    }}"""
    palisade = Palisade()
    try:
        outcome = palisade.run(policy=policy, source=callback, input={"user": "ada"})
        assert output(outcome) == {"status": 200, "body": {"received": {"user": "ada"}, "auth": "Bearer [redacted]"}}
        assert _Hook.seen == ["Bearer tok-8d7f"]
        assert [line.message for line in outcome.logs] == ["calling the hook for ada"]
        assert "tok-8d7f" not in json.dumps(outcome.to_dict())
        elsewhere = palisade.run(policy=policy, source=f'export default () => fetch("http://127.0.0.1:{port}/admin")')
        assert failure(elsewhere).code == "policy_denied"
        assert len(_Hook.seen) == 1, "the refused request never reached the server"
    finally:
        server.shutdown()
    assert_next_call_works(palisade)


def test_action_runtime_the_calculator_one_action_per_call() -> None:
    calc = (ROOT / "examples/apps/calc.js").read_text() + (
        "\nexport default ({ action, state, params }) => globalThis.jace.actions[action](state, params ?? {}, {});"
        "\nexport const init = () => globalThis.jace.init({});")
    policy = Policy(str(ROOT / "policies/deterministic-action.toml"))
    palisade = Palisade()
    state = output(palisade.run(policy=policy, source=calc, export="init"))
    audit = []
    for action, params in [("calc.input", {"digit": 7}), ("calc.op", {"op": "divide"}),
                           ("calc.input", {"digit": 2}), ("calc.equals", {})]:
        result = output(palisade.run(policy=policy, source=calc,
                                     input={"action": action, "state": state, "params": params}))
        state = result["state"]
        audit.append(result["audit_preview"])
    assert state["acc"] == 3.5
    assert audit == ["INPUT 7", "OP divide", "INPUT 2", "DIVIDE 7÷2 -> 3.5"]
    divide_by_zero = output(palisade.run(policy=policy, source=calc, input={
        "action": "calc.equals", "state": {"acc": 1, "op": "divide", "entry": "0", "history": []}}))
    assert divide_by_zero["error"]["code"] == "DIV_ZERO"
    assert_next_call_works(palisade)


def test_capability_bridge_maia_do_and_maia_render_answered_from_python() -> None:
    painted: List[Dict[str, Any]] = []

    async def do(payload: Any, context: Dict[str, Any]) -> Any:
        return {"value": sum(payload["args"])}

    def render(args: Any, context: Dict[str, Any]) -> Any:
        assert context["argument_list"] is True
        actor_id, view, style = args
        painted.append({"actor_id": actor_id, "view": view, "style": style})
        return {"rendered": actor_id}

    palisade = Palisade(capabilities={"do": do, "render": render})
    policy = Policy((ROOT / "policies/capability-bridge.toml").read_text()
                    + "\n[capabilities.allow.render]\nmax_calls = 5\n")
    actor = """export default {
      async execute(actor, payload) {
        const sum = await maia.do({ op: "add", args: payload.args });
        return await maia.render(actor.id, { type: "text", value: String(sum.value) }, { color: "red" });
      }
    }"""
    outcome = palisade.run(policy=policy, source=actor, export="execute", args=[{"id": "co_z1"}, {"args": [1, 2, 3]}])
    assert output(outcome) == {"rendered": "co_z1"}
    assert painted == [{"actor_id": "co_z1", "view": {"type": "text", "value": "6"}, "style": {"color": "red"}}]
    assert [(r.target, r.decision) for r in outcome.audit] == [("do", "allow"), ("render", "allow")]
    assert failure(palisade.run(policy=policy, source="export default () => maia.do({ nope: 1 })")).code \
        == "policy_denied"
    assert_next_call_works(palisade)
