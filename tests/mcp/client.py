"""An agent's side of Palisade's MCP server, with the official Python SDK (`mcp`).

Run by tests/tests/integration/mcp.rs, against `palisade mcp` over stdio or `/mcp` on
`palisade serve`:

    python client.py stdio PALISADE_BIN POLICIES_DIR DATA_DIR
    python client.py http URL KEY

It lists the tools and resources, runs a script, gets a typed refusal and follows its `fix`,
drives a session create -> write -> run -> stop, and a live session whose heap outlives its
runs. Every step checks exact values; the last
line printed is a JSON summary, which the Rust test checks too.
"""

import asyncio
import json
import sys
from contextlib import asynccontextmanager

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


@asynccontextmanager
async def connect(argv):
    if argv[0] == "stdio":
        binary, policies, data = argv[1:4]
        params = StdioServerParameters(
            command=binary, args=["mcp", "--policies", policies, "--data", data]
        )
        async with stdio_client(params) as (read, write):
            yield read, write
    else:
        url, key = argv[1:3]
        headers = {"Authorization": f"Bearer {key}"}
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                yield streams[0], streams[1]


def check(condition, what):
    if not condition:
        raise AssertionError(what)


async def call(session, tool, arguments):
    result = await session.call_tool(tool, arguments)
    return result, (result.structured_content or {})


async def run_script(session, summary):
    source = (
        "export default async (input) => {\n"
        "  console.log('adding', input.a, input.b);\n"
        "  return { sum: input.a + input.b };\n"
        "};\n"
    )
    result, body = await call(
        session, "run_js", {"source": source, "policy": "default", "input": {"a": 2, "b": 40}}
    )
    check(not result.is_error, f"run_js failed: {result}")
    check(json.loads(result.content[0].text) == {"sum": 42}, f"output: {result.content}")
    check(result.content[1].text == "console.log: adding 2 40", f"console: {result.content}")
    check(body["output"] == {"sum": 42} and body["receipt"]["policy"] == "default", body)
    summary["run"] = body["output"]


async def refusal_then_fix(session, summary):
    arguments = {"source": "export default () => 'fixed'"}
    result, body = await call(session, "run_js", arguments)
    error = body.get("error", {})
    check(result.is_error and error.get("code") == "invalid_input", f"refusal: {result}")
    check(error.get("fix") == {"policy": "default"}, error)
    check(result.content[0].text.startswith("invalid_input: "), result.content)
    arguments.update(error["fix"])
    result, body = await call(session, "run_js", arguments)
    check(not result.is_error and body["output"] == "fixed", f"after the fix: {result}")
    # A refusal by the policy: its code, rule and the policy change that would allow it.
    denied, body = await call(
        session,
        "run_js",
        {"source": "export default async () => await kv.get('x')", "policy": "default"},
    )
    error = body.get("error", {})
    check(denied.is_error and error.get("code") == "policy_denied", f"denial: {denied}")
    check(error.get("rule") == "kv" and error.get("fix", {}).get("key") == "kv", error)
    summary["refusal"] = ["invalid_input", "policy_denied"]


async def session_flow(session, summary):
    result, body = await call(session, "session_create", {"policy": "box", "name": "agent"})
    check(not result.is_error, f"session_create: {result}")
    sid = body["session_id"]
    result, body = await call(
        session,
        "fs_write",
        {"session_id": sid, "path": "data.json", "content": json.dumps({"n": 20})},
    )
    check(not result.is_error, f"fs_write: {result}")
    source = (
        "export default async () => {\n"
        "  const { n } = JSON.parse(await fs.readFile('/scratch/data.json'));\n"
        "  const runs = await kv.increment('runs');\n"
        "  return { doubled: n * 2, runs };\n"
        "};\n"
    )
    outputs = []
    for _ in range(2):
        result, body = await call(session, "session_run", {"session_id": sid, "source": source})
        check(not result.is_error, f"session_run: {result}")
        outputs.append(body["output"])
    check(outputs == [{"doubled": 40, "runs": 1}, {"doubled": 40, "runs": 2}], outputs)
    result, body = await call(session, "session_stop", {"session_id": sid})
    check(not result.is_error and body == {"session_id": sid, "stopped": True}, body)
    result, body = await call(session, "session_run", {"session_id": sid, "source": source})
    check(result.is_error and body["error"]["code"] == "session_not_found", f"stopped: {result}")
    summary["session"] = outputs


async def live_flow(session, summary):
    """A live session keeps its heap between `session_run` calls; a failed run rolls back."""
    result, body = await call(session, "session_create", {"policy": "default", "live": True})
    check(not result.is_error, f"session_create live: {result}")
    sid = body["session_id"]
    steps = [
        "const seen = new Map([['n', 40]]); seen.get('n')",
        "seen.set('n', seen.get('n') + 2).get('n')",
        "seen.clear(); null.x",
        "seen.get('n')",
    ]
    seen = []
    for source in steps:
        result, body = await call(session, "session_run", {"session_id": sid, "source": source})
        seen.append(body["error"]["code"] if result.is_error else body["output"])
    check(seen == [40, 42, "guest_exception", 42], seen)
    result, body = await call(session, "session_stop", {"session_id": sid})
    check(not result.is_error, f"session_stop live: {result}")
    summary["live"] = seen


async def main(argv):
    summary = {}
    async with connect(argv) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            names = sorted(t.name for t in tools.tools)
            summary["tools"] = names
            run_js = next(t for t in tools.tools if t.name == "run_js")
            check("declare var kv: KvWriter" in run_js.description, run_js.description)
            resources = await session.list_resources()
            uris = sorted(str(r.uri) for r in resources.resources)
            summary["resources"] = uris
            types = await session.read_resource("palisade://policies/box/types")
            check("declare var kv" in types.contents[0].text, types.contents[0].text[:200])
            await run_script(session, summary)
            await refusal_then_fix(session, summary)
            await session_flow(session, summary)
            await live_flow(session, summary)
    print(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
