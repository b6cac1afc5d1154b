"""Python capability handlers, sync and async: answers, typed failures the script catches, the
call's context, and the policy's checks before any handler runs."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from typing import Any, Dict, List

import pytest

from palisade import CapabilityError, Palisade
from support import failure, output, assert_next_call_works

POLICY = {
    "name": "bridge",
    "limits": {"timeout": "30s"},
    "capabilities": {"global": "host", "allow": {"lookup": {"max_calls": 3}, "fail": {}, "sync": {}}},
}

contexts: List[Dict[str, Any]] = []


async def lookup(actor: Any, context: Dict[str, Any]) -> Any:
    contexts.append(context)
    await asyncio.sleep(0.005)
    if actor == "ada":
        return {"id": actor, "tenant": context["metadata"]}
    raise CapabilityError("not_found", f"no actor {actor}", retryable=True)


def fail(payload: Any, context: Dict[str, Any]) -> Any:
    raise RuntimeError("the database is down")


palisade = Palisade(capabilities={
    "lookup": lookup,
    "fail": fail,
    "sync": lambda payload, context: {"echoed": payload},
    "ungranted": lambda payload, context: "never called",
})


def test_an_async_handler_answers_the_script_with_the_call_context() -> None:
    outcome = palisade.run(source="export default async (id) => await host.lookup(id)", input="ada",
                           policy=POLICY, metadata="acme")
    assert output(outcome) == {"id": "ada", "tenant": "acme"}
    context = contexts[-1]
    assert (context["capability"], context["policy"]) == ("lookup", "bridge")
    assert len(context["call_id"]) == 16
    assert (outcome.audit[0].decision, outcome.audit[0].target) == ("allow", "lookup")


def test_a_capability_error_reaches_the_script_with_its_code_and_retryable() -> None:
    source = """export default async () => {
      try { await host.lookup("bob") } catch (e) {
        return { isCapabilityError: e instanceof CapabilityError, code: e.code, message: e.message, retryable: e.retryable }
      }
    }"""
    outcome = palisade.run(source=source, policy=POLICY)
    assert output(outcome) == {"isCapabilityError": True, "code": "not_found", "message": "no actor bob",
                               "retryable": True}


def test_any_other_exception_or_a_sync_handler_is_handled_too() -> None:
    source = """export default async () => {
      const sync = await host.sync([1, 2])
      try { await host.fail() } catch (e) { return { sync, code: e.code, message: e.message } }
    }"""
    outcome = palisade.run(source=source, policy=POLICY)
    assert output(outcome) == {"sync": {"echoed": [1, 2]}, "code": "handler_error",
                               "message": "the database is down"}


def test_the_policy_decides_before_any_handler_runs() -> None:
    ungranted = palisade.run(source="export default () => host.ungranted()", policy=POLICY)
    assert failure(ungranted).code == "policy_denied"
    assert ungranted.audit[0].decision == "deny"
    before = len(contexts)
    source = 'export default async () => { for (let i = 0; i < 4; i++) await host.lookup("ada") }'
    over_budget = palisade.run(source=source, policy=POLICY)
    assert len(contexts) - before == 3, "the fourth call never reached the handler"
    assert over_budget.audit[-1].rule == "capabilities.allow.lookup.max_calls"
    assert_next_call_works(palisade)


def test_handlers_answer_calls_made_with_run_async_too() -> None:
    async def both() -> List[Any]:
        calls = [palisade.run_async(source="export default async (id) => await host.lookup(id)",
                                    input="ada", policy=POLICY, metadata=i) for i in range(8)]
        return [output(outcome) for outcome in await asyncio.gather(*calls)]

    assert asyncio.run(both()) == [{"id": "ada", "tenant": i} for i in range(8)]


def test_a_handler_that_is_not_callable_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        Palisade(capabilities={"x": 1})  # type: ignore[dict-item]


def test_a_quick_run_async_call_ends_while_many_others_wait_on_a_handler() -> None:
    # With many calls in flight, outcomes reach the loop in batches; one must still come while
    # the others cannot end (they wait on the test), not when they do.
    waiting = 40
    gate = threading.Event()
    entered = threading.Semaphore(0)

    def wait(payload: Any, context: Dict[str, Any]) -> Any:
        entered.release()
        gate.wait()
        return "opened"

    gated = Palisade(capabilities={"wait": wait})
    policy = {"limits": {"timeout": "60s"}, "capabilities": {"global": "host", "allow": {"wait": {}}}}

    async def calls() -> List[Any]:
        blocked = [asyncio.ensure_future(gated.run_async(
            source="export default () => host.wait()", policy=policy)) for _ in range(waiting)]
        for _ in range(waiting):
            await asyncio.to_thread(entered.acquire)
        quick = await asyncio.wait_for(gated.run_async(
            source="export default (x) => x * 2", input=21, policy=policy), timeout=60)
        gate.set()
        return [output(quick)] + [output(outcome) for outcome in await asyncio.gather(*blocked)]

    try:
        assert asyncio.run(calls()) == [42] + ["opened"] * waiting
    finally:
        gate.set()


def test_an_async_handler_raising_a_base_exception_fails_its_call_alone() -> None:
    # KeyboardInterrupt or SystemExit raised out of a task would stop the handlers' event loop,
    # and with it every async handler after it.
    async def interrupted(payload: Any, context: Dict[str, Any]) -> Any:
        raise {"interrupt": KeyboardInterrupt("ctrl-c"), "exit": SystemExit("bye"),
               "cancel": asyncio.CancelledError("gone")}[payload]

    async def double(payload: Any, context: Dict[str, Any]) -> Any:
        return payload * 2

    hosted = Palisade(capabilities={"interrupted": interrupted, "double": double})
    policy = {"limits": {"timeout": "30s"},
              "capabilities": {"global": "host", "allow": {"interrupted": {}, "double": {}}}}
    source = """export default async (kind) => {
      try { await host.interrupted(kind) } catch (e) { return [e.code, e.message, await host.double(21)] }
    }"""
    for kind, message in [("interrupt", "ctrl-c"), ("exit", "bye"), ("cancel", "gone")]:
        outcome = hosted.run(source=source, input=kind, policy=policy)
        assert output(outcome) == ["handler_error", message, 42]
    assert_next_call_works(hosted)


def test_an_async_handler_that_stops_the_handlers_loop_leaves_the_next_ones_working() -> None:
    async def stop(payload: Any, context: Dict[str, Any]) -> Any:
        asyncio.get_running_loop().stop()
        return "stopped"

    async def double(payload: Any, context: Dict[str, Any]) -> Any:
        return payload * 2

    hosted = Palisade(capabilities={"stop": stop, "double": double})
    policy = {"limits": {"timeout": "30s"},
              "capabilities": {"global": "host", "allow": {"stop": {}, "double": {}}}}
    stopped = hosted.run(source="export default () => host.stop()", policy=policy)
    assert output(stopped) == "stopped"
    doubled = hosted.run(source="export default (x) => host.double(x)", input=21, policy=policy)
    assert output(doubled) == 42
    assert_next_call_works(hosted)


def test_a_palisade_whose_handler_refers_to_it_is_freed() -> None:
    # A bound method of an object that holds the Palisade: a cycle through the native module,
    # which Python's collector could not see, kept each such Palisade (and the ~560 GiB of
    # address space its instance pool reserves) for ever; some 125 made `Palisade()` fail.
    class Service:
        def __init__(self) -> None:
            self.palisade = Palisade(capabilities={"tenant": self.tenant})

        def tenant(self, payload: Any, context: Dict[str, Any]) -> Any:
            return [payload, self.palisade is not None]

    policy = {"limits": {"timeout": "30s"}, "capabilities": {"global": "host", "allow": {"tenant": {}}}}
    service = Service()
    assert output(service.palisade.run(source="export default (x) => host.tenant(x)", input=7,
                                       policy=policy)) == [7, True]
    freed = weakref.ref(service.palisade)
    del service
    gc.collect()
    assert freed() is None
    assert_next_call_works(palisade)


def test_a_subclass_of_palisade_takes_arguments_of_its_own() -> None:
    class Scaled(Palisade):
        def __init__(self, factor: int) -> None:
            super().__init__(capabilities={"sync": lambda payload, context: payload * factor})
            self.factor = factor

    scaled = Scaled(3)
    outcome = scaled.run(policy=POLICY, source="export default async () => host.sync(14)")
    assert output(outcome) == 42 and scaled.factor == 3

    class Unbuilt(Palisade):
        def __init__(self) -> None:
            pass

    with pytest.raises(TypeError, match="was not built"):
        Unbuilt().run(source="export default () => 1")
    with pytest.raises(TypeError, match="built already"):
        scaled._build("{}", [], lambda payload, context, answer: None)
    with pytest.raises(TypeError, match="built already"):
        Palisade.__init__(scaled, capabilities={"sync": lambda payload, context: 0})
    # The handlers it was built with still answer.
    outcome = scaled.run(policy=POLICY, source="export default async () => host.sync(14)")
    assert output(outcome) == 42
    assert_next_call_works(scaled)
