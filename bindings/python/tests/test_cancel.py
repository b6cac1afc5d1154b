"""Cancelling a call from asyncio, and the live events of a call."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from typing import Any, Dict, List

import pytest

from palisade import Palisade
from support import GENEROUS, failure, output, assert_next_call_works

palisade = Palisade()
LOOP = "export default () => { for (;;) {} }"
LONG = '[limits]\ntimeout = "60s"\nfuel = 1_000_000_000_000_000\n'


def test_cancelling_the_awaiting_task_raises_cancelled_error_there() -> None:
    # In Python a cancelled call is not an Outcome: `cancelled` (docs/errors.md) is the awaiting
    # task's asyncio.CancelledError, raised once its console line shows the call is running.
    events: List[Dict[str, Any]] = []

    async def cancel() -> None:
        task = asyncio.ensure_future(palisade.run_async(
            source="export default () => { console.log('in'); for (;;) {} }", policy=LONG,
            on_event=events.append))
        deadline = time.monotonic() + 30
        while not events:
            assert time.monotonic() < deadline, "the call never started"
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel())
    assert events[0] == {"type": "console", "level": "log", "message": "in"}
    assert_next_call_works(palisade)


def test_a_cancelled_call_ends_and_frees_its_slot() -> None:
    # One slot, and a queue that waits 30 s for it: the call after the cancelled one runs only
    # if the cancelled call ended (its loop would run for 60 s).
    one = Palisade(max_concurrency=1, queue_timeout="30s")

    async def cancel_then_run() -> str:
        task = asyncio.ensure_future(one.run_async(source=LOOP, policy=LONG))
        await asyncio.sleep(0.05)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        # The one slot is free again only if the cancelled call ended.
        after = await one.run_async(source="export default () => 'free'", policy=GENEROUS)
        return str(output(after))

    assert asyncio.run(cancel_then_run()) == "free"


def test_on_event_gets_console_lines_and_audit_records_as_they_come() -> None:
    source = """export default async () => {
      console.log("one"); console.warn("two");
      try { await fetch("https://example.com/") } catch (e) {}
      return 3
    }"""
    for run in ("sync", "async"):
        events: List[Dict[str, Any]] = []
        if run == "sync":
            outcome = palisade.run(source=source, policy=GENEROUS, on_event=events.append)
        else:
            outcome = asyncio.run(palisade.run_async(source=source, policy=GENEROUS, on_event=events.append))
        assert output(outcome) == 3
        assert events[:2] == [{"type": "console", "level": "log", "message": "one"},
                              {"type": "console", "level": "warn", "message": "two"}]
        record = dict(events[2])
        assert record.pop("type") == "audit"
        assert record == outcome.to_dict()["audit"][0]
        assert record["decision"] == "deny"


# The callback's exception is reported as unraisable (not raised into the call).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_on_event_callback_that_raises_misses_its_event() -> None:
    def boom(event: Dict[str, Any]) -> None:
        raise RuntimeError("boom")

    outcome = palisade.run(source='export default () => { console.log("x"); return 1 }', on_event=boom)
    assert output(outcome) == 1
    assert failure(palisade.run(source=LOOP, policy='[limits]\nfuel = 100_000_000\ntimeout = "60s"')).code \
        == "fuel_exhausted"


def test_an_on_event_callback_that_raises_keyboard_interrupt_cancels_the_call() -> None:
    # Ctrl-C while the callback runs raises KeyboardInterrupt there: it is not an event missed
    # but the caller's interrupt (SystemExit too), raised by `run` once the call has ended.
    for raised in (KeyboardInterrupt, SystemExit):
        def interrupt(event: Dict[str, Any], raised: type = raised) -> None:
            raise raised()

        with pytest.raises(raised):
            palisade.run(source='export default () => { console.log("x"); for (;;) {} }',
                         policy=LONG, on_event=interrupt)
    assert_next_call_works(palisade)


def test_keyboard_interrupt_from_run_async_callbacks_loses_no_other_call() -> None:
    # Each call's callback raises KeyboardInterrupt, which stops the loop; the reports taken
    # with it (other calls' events and outcomes, many to a batch with 40 in flight) are still
    # delivered, so every call ends once the loop runs again.
    def interrupt(event: Dict[str, Any]) -> None:
        raise KeyboardInterrupt()

    loop = asyncio.new_event_loop()
    try:
        calls = [loop.create_task(palisade.run_async(
            source=f'export default () => {{ console.log("x"); return {i} }}', on_event=interrupt))
            for i in range(40)]
        everything = asyncio.gather(*calls)
        interrupts = 0
        deadline = time.monotonic() + 60
        while not everything.done():
            assert time.monotonic() < deadline, "a call never ended"
            try:
                loop.run_until_complete(asyncio.wait_for(asyncio.shield(everything), 1))
            except KeyboardInterrupt:
                interrupts += 1
            except asyncio.TimeoutError:
                pass
        assert [output(outcome) for outcome in everything.result()] == list(range(40))
        assert interrupts >= 1
    finally:
        loop.close()
    assert_next_call_works(palisade)


def test_a_run_made_from_an_on_event_callback_runs() -> None:
    # The outer call runs on this thread and hands it its events; a run made from that callback
    # cannot enter the runtime again there: it runs on the runtime's workers and answers.
    nested: List[Any] = []

    def on_event(event: Dict[str, Any]) -> None:
        if event.get("type") == "console" and not nested:
            nested.append(output(palisade.run(source="export default (x) => x.n * 2", input={"n": 21})))

    outcome = palisade.run(source='export default () => { console.log("x"); return 1 }', on_event=on_event)
    assert output(outcome) == 1
    assert nested == [42]
    assert_next_call_works(palisade)


def test_ctrl_c_cancels_a_running_call_and_the_next_call_runs() -> None:
    # A process of its own, sent SIGINT as Ctrl-C would, while `run` waits with the GIL
    # released: KeyboardInterrupt is raised in it, the call is cancelled (its one slot is free
    # again), and the next call on the same Palisade runs.
    child = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_CHILD],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "calling\n"
        time.sleep(0.5)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 0, err
    assert out == "interrupted\nafter\n", err


def test_ctrl_c_reaches_a_call_made_from_on_event() -> None:
    # A call made from `on_event` runs on the runtime's workers while this thread waits for
    # it: Ctrl-C then cancels it too, at once, not at its 60 s deadline.
    child = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_CHILD.replace("on_event=started", "on_event=nested")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "calling\n"
        time.sleep(0.5)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        child.kill()
    assert child.returncode == 0, err
    assert out == "interrupted\nafter\n", err
    assert took < 20, took


CTRL_C_CHILD = """
import signal
from palisade import Palisade
# Ctrl-C as in a terminal: a child started from a background job inherits SIGINT ignored (a
# non-interactive shell's `&`), and Python then leaves it ignored.
signal.signal(signal.SIGINT, signal.default_int_handler)
palisade = Palisade(max_concurrency=1, queue_timeout="30s")
# "calling" once the script runs: its console line reaches on_event on this thread.
def started(event):
    if event.get("type") == "console":
        print("calling", flush=True)
# The same, from inside a call of its own made from the callback.
def nested(event):
    if event.get("type") == "console":
        palisade_inside.run(source="export default () => { console.log('in'); for (;;) {} }",
                            policy='[limits]\\ntimeout = "60s"\\nfuel = 1_000_000_000_000_000\\n',
                            on_event=print_calling)
print_calling = started
palisade_inside = Palisade()
try:
    outcome = palisade.run(source="export default () => { console.log('in'); for (;;) {} }",
                           policy='[limits]\\ntimeout = "60s"\\nfuel = 1_000_000_000_000_000\\n',
                           on_event=started)
    print("returned", outcome.to_dict(), flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
print(palisade.run(source="export default () => 'after'").unwrap(), flush=True)
"""
