"""Every error code a call can end with, from Python: the exact code and the fields every
error has, then a normal call on the same Palisade; PalisadeError for what constructors refuse."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, Optional

import pytest

from palisade import OutcomeError, Palisade, PalisadeError, Policy, Script
from support import ROOT, assert_next_call_works, failure

palisade = Palisade()
CASES = json.loads((ROOT / "bindings/error-cases.json").read_text())["cases"]


def assert_fields(error: OutcomeError, code: str) -> None:
    assert error.code == code
    assert isinstance(error.message, str) and isinstance(error.fix_note, str)
    assert error.docs_url.endswith(f"#{code}"), error.docs_url
    assert isinstance(error.retryable, bool)


@pytest.mark.parametrize("case", CASES, ids=[case["code"] for case in CASES])
def test_a_call_that_ends_with_its_code(case: Dict[str, Any]) -> None:
    outcome = palisade.run(**case["request"])
    assert_fields(failure(outcome), case["code"])
    with pytest.raises(PalisadeError) as raised:
        outcome.unwrap()
    assert raised.value.code == case["code"]
    assert_next_call_works(palisade)


def test_a_component_that_is_not_one_is_invalid_component() -> None:
    with pytest.raises(PalisadeError) as raised:
        Script.from_component(b"\0asm junk")
    assert raised.value.code == "invalid_component"
    assert_fields(raised.value.error, "invalid_component")
    assert_next_call_works(palisade)


def test_a_policy_that_cannot_be_read_is_invalid_policy_with_its_key() -> None:
    with pytest.raises(PalisadeError) as raised:
        Policy("[limits]\nmemory = 64\n")
    assert raised.value.code == "invalid_policy" and not raised.value.retryable
    assert_fields(raised.value.error, "invalid_policy")
    assert "limits.memory" in raised.value.error.message
    assert_next_call_works(palisade)


def test_a_component_whose_call_traps_is_guest_trap() -> None:
    # Made by `cargo run -p xtask -- forge-trap` (make bindings-python does it first): a compiled
    # script whose run export is `unreachable`, which no script can make.
    wasm = (ROOT / "target" / "bindings" / "trap.wasm").read_bytes()
    outcome = palisade.run(script=Script.from_component(wasm), input=1)
    error = failure(outcome)
    assert_fields(error, "guest_trap")
    assert "unreachable" in error.message
    assert_next_call_works(palisade)


def test_an_audit_log_that_cannot_be_opened_is_internal_with_its_cause() -> None:
    with pytest.raises(PalisadeError) as raised:
        Palisade(audit_log="/nonexistent/dir/audit.jsonl")
    assert raised.value.code == "internal" and raised.value.retryable
    assert raised.value.error.message.startswith("internal error: ")
    assert "/nonexistent/dir/audit.jsonl" in raised.value.error.message
    assert_next_call_works(Palisade())


def test_past_the_admission_limit_a_call_waits_then_ends_with_capacity_exhausted() -> None:
    one = Palisade(max_concurrency=1, queue_timeout="2s")
    loop_policy = '[limits]\ntimeout = "60s"\nfuel = 1_000_000_000_000_000\n'

    async def refuse() -> Optional[OutcomeError]:
        loop = asyncio.ensure_future(one.run_async(source="export default () => { for (;;) {} }",
                                                   policy=loop_policy))
        refused = None
        # Until the loop holds the only slot (a loaded machine may start it late), a probe runs.
        for _ in range(200):
            probe = await one.run_async(source="export default () => 1")
            if probe.error is not None:
                refused = probe.error
                break
        loop.cancel()
        await asyncio.gather(loop, return_exceptions=True)
        return refused

    refused = asyncio.run(refuse())
    assert refused is not None, "a call was refused while the loop held the slot"
    assert_fields(refused, "capacity_exhausted")
    assert refused.retryable
    assert_next_call_works(one)
