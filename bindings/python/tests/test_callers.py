"""What a caller's own values, handlers and files may do to a call: each ends as documented (an
exact error code or exception), and the next call runs."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import threading
import time
from typing import Any, Dict, List

import pytest

from palisade import CapabilityError, Palisade, Policy, Script
from support import GENEROUS, ROOT, assert_next_call_works, failure, output

palisade = Palisade()


def test_a_circular_input_is_a_type_error_under_a_raised_recursion_limit() -> None:
    # Written by Python's encoder with its circular-reference check: the encoder made once
    # without it recursed until the C stack overflowed (SIGSEGV) once the limit allowed it.
    ended = subprocess.run([sys.executable, "-c", """
import sys, threading
from palisade import Palisade
sys.setrecursionlimit(200_000)
threading.stack_size(2 << 20)
palisade = Palisade()
circular = {}
circular["self"] = circular
def call():
    try:
        palisade.run(source="export default () => 1", input=circular)
    except TypeError as e:
        print(e, flush=True)
thread = threading.Thread(target=call)
thread.start()
thread.join()
print(palisade.run(source="export default () => 2").unwrap())
"""], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert (ended.returncode, ended.stdout) == (0, "run(): Circular reference detected\n2\n"), ended.stderr


def test_an_output_nested_deeper_than_python_reads_leaves_the_rest_of_the_outcome_readable() -> None:
    # A script may return 3,000 levels; json.loads stops at Python's recursion limit. The
    # output (and what holds it) raises RecursionError; the receipt, the logs and repr read.
    source = ("export default () => { let v = 0; for (let i = 0; i < 2000; i++) v = [v];"
              " console.log('deep'); return v }")
    for outcome in (palisade.run(source=source, policy=GENEROUS),
                    asyncio.run(palisade.run_async(source=source, policy=GENEROUS))):
        assert outcome.ok and outcome.error is None
        assert [line.message for line in outcome.logs] == ["deep"]
        assert outcome.receipt.fuel_used > 0
        assert "output=<nested deeper than Python's recursion limit>" in repr(outcome)
        for read in (lambda: outcome.output, outcome.unwrap, outcome.to_dict):
            with pytest.raises(RecursionError):
                read()
    assert_next_call_works(palisade)


def test_an_async_handler_whose_exception_cannot_be_written_is_answered() -> None:
    # The failure's message could not be read (its __str__ raises): the call is answered as a
    # `handler_error` at once, not left to its deadline.
    class Opaque(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no message")

    kept = Opaque()  # outlives the call, as a module's or a cached exception does

    async def async_fail(payload: Any, context: Dict[str, Any]) -> Any:
        raise kept

    def sync_fail(payload: Any, context: Dict[str, Any]) -> Any:
        raise kept

    def coded(payload: Any, context: Dict[str, Any]) -> Any:
        raise CapabilityError(kept, "the message")  # type: ignore[arg-type]

    handlers = {"async_fail": async_fail, "sync_fail": sync_fail, "coded": coded}
    mine = Palisade(capabilities=handlers)
    policy = {"limits": {"timeout": "60s"},
              "capabilities": {"global": "host", "allow": {name: {} for name in handlers}}}
    for name in handlers:
        started = time.monotonic()
        source = (f"export default async () => {{ try {{ await host.{name}() }}"
                  " catch (e) { return [e.code, e.message] } }")
        kind = "CapabilityError" if name == "coded" else "Opaque"
        assert output(mine.run(source=source, policy=policy)) == [
            "handler_error", f"{kind} (its message could not be read)"], name
        assert time.monotonic() - started < 30, name
    assert_next_call_works(mine)


def test_palisades_on_one_event_loop_share_its_mailbox() -> None:
    # The loop holds its mailbox (a pipe, a reader): one per Palisade stayed with the loop after
    # the Palisade had gone, two descriptors each.
    def descriptors() -> int:
        return len(os.listdir("/proc/self/fd"))

    async def many() -> List[int]:
        counts = []
        for _ in range(40):
            mine = Palisade()
            assert output(await mine.run_async(source="export default () => 1")) == 1
            del mine
            gc.collect()
            counts.append(descriptors())
        return counts

    counts = asyncio.run(many())
    assert counts[-1] == counts[0], counts
    assert_next_call_works(palisade)


def test_a_policy_that_is_no_json_and_a_component_that_is_no_bytes_are_type_errors() -> None:
    circular: Dict[str, Any] = {}
    circular["limits"] = circular
    with pytest.raises(TypeError, match=r"^Policy\(\): Circular reference detected$"):
        Policy(circular)
    # `bytes(n)` would have made n zero bytes of an int (10**10: ten gigabytes).
    with pytest.raises(TypeError, match="bytes-like object is required"):
        Script.from_component(10**10)  # type: ignore[arg-type]
    assert_next_call_works(palisade)


class Fifo:
    """A FIFO named `main.js`, with a writer that writes nothing until `close`."""

    def __init__(self, folder: Any) -> None:
        self.path = folder / "main.js"
        os.mkfifo(self.path)
        self.writer = os.open(self.path, os.O_RDWR)  # a writer that does not wait for a reader

    def close(self, text: str = "") -> None:
        if self.writer >= 0:
            os.write(self.writer, text.encode())
            os.close(self.writer)
            self.writer = -1


@pytest.fixture
def fifo(tmp_path: Any) -> Any:
    made = Fifo(tmp_path)
    yield made
    made.close()


def test_a_fifo_script_holds_up_no_other_call_and_is_cancelled(fifo: Any) -> None:
    # A FIFO is read to its end, as `palisade run` reads one: on a blocking thread, not on the
    # runtime's workers, which other calls share; cancelling the call ends it meanwhile.
    async def calls() -> None:
        waiting = [asyncio.ensure_future(palisade.run_async(file=str(fifo.path)))
                   for _ in range(os.cpu_count() or 2)]
        await asyncio.sleep(0.2)
        other = await asyncio.wait_for(palisade.run_async(source="export default () => 7"), 10)
        assert output(other) == 7
        assert not any(task.done() for task in waiting)
        for task in waiting:
            task.cancel()
        for task in waiting:
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, 10)

    asyncio.run(calls())
    assert_next_call_works(palisade)


def test_script_from_file_reads_a_fifo_with_the_gil_released(fifo: Any) -> None:
    read: List[Script] = []
    reader = threading.Thread(target=lambda: read.append(Script.from_file(str(fifo.path))))
    reader.start()
    time.sleep(0.2)
    # This thread runs Python while the other waits for the FIFO's writer.
    assert output(palisade.run(source="export default () => 8")) == 8
    assert reader.is_alive() and read == []
    fifo.close("export default () => 9")
    reader.join(10)
    assert output(palisade.run(script=read[0])) == 9
