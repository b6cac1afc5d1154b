"""Running scripts from Python: the smallest call, the ways to give a policy and a script,
per-call options, the GIL released while calls run, and the Outcome as an object and a dict."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import copy
import datetime
import enum
import gc
import json
import pathlib
import subprocess
import sys
import threading
import time
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from palisade import Outcome, Palisade, Policy, Script
from support import GENEROUS, ROOT, failure, output

palisade = Palisade()


def test_the_smallest_call_runs_under_the_default_policy() -> None:
    outcome = Palisade().run(source="export default (x) => x.n * 2", input={"n": 21})
    assert outcome.output == 42
    assert outcome.receipt.policy == "default"
    assert outcome.receipt.fuel_used > 0
    assert outcome.logs == []


def test_a_policy_from_a_path_toml_text_a_dict_or_a_policy() -> None:
    file = str(ROOT / "policies/deterministic-action.toml")
    named: List[Tuple[Any, str]] = [
        (file, "deterministic-action"),
        ('name = "toml"\n[limits]\ntimeout = "30s"', "toml"),
        ({"name": "table", "limits": {"timeout": "30s"}}, "table"),
        (Policy(file), "deterministic-action"),
    ]
    for policy, name in named:
        outcome = palisade.run(policy=policy, source="export default () => 1")
        assert output(outcome) == 1
        assert outcome.receipt.policy == name
    assert len(Policy({"name": "p"}).sha256) == 64


def test_a_script_from_source_a_file_or_a_script_a_named_export_and_arguments() -> None:
    hello = str(ROOT / "examples/hello.js")
    from_file = palisade.run(file=hello, input={"name": "Ada"}, policy=GENEROUS)
    from_script = palisade.run(script=Script.from_file(hello), input={"name": "Ada"}, policy=GENEROUS)
    assert output(from_script) == output(from_file)
    script = Script.from_source("export const add = (a, b) => a + b; export default () => 0", "add.js")
    assert script.name == "add.js"
    assert output(palisade.run(script=script, export="add", args=[2, 3], policy=GENEROUS)) == 5


def test_options_lower_the_limits_and_one_above_is_policy_denied_with_the_fix() -> None:
    error = failure(palisade.run(source="export default () => 1", timeout=datetime.timedelta(seconds=5)))
    assert error.code == "policy_denied"
    assert error.fix is not None and (error.fix.key, error.fix.value) == ("limits.timeout", '"5s"')
    fixed = '[overrides]\nnow = true\n[limits]\ntimeout = "30s"'
    now = datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    outcome = palisade.run(source="export default () => new Date().toISOString()", policy=fixed, now=now)
    assert output(outcome) == "2030-01-02T03:04:05.000Z"


def test_files_for_the_scratch_directory_are_text_or_bytes() -> None:
    policy = '[fs.scratch]\nguest = "/scratch"'
    source = """export default async () => [await fs.readFile("/scratch/a.txt"),
                                              await fs.readFile("/scratch/b.bin")]"""
    outcome = palisade.run(source=source, policy=policy, files={"a.txt": "text", "b.bin": b"bytes"})
    assert output(outcome) == ["text", "bytes"]
    outcome = palisade.run(source=source, policy=policy,
                           files={"a.txt": bytearray(b"mutable"), "b.bin": memoryview(b"a view")})
    assert output(outcome) == ["mutable", "a view"]
    for files in [{"a.txt": 5}, {"a.txt": None}, ["a.txt"], "a.txt"]:
        with pytest.raises(TypeError, match="run\\(\\)"):
            palisade.run(source=source, policy=policy, files=files)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="is a Script"):
        palisade.run(script="export default () => 1")  # type: ignore[arg-type]


def test_a_call_that_is_unwrapped_runs_no_python_frame() -> None:
    # The request is read, and the outcome unwrapped, in the native module: a thread that runs
    # calls back to back spends its time in them, not in Python (docs/bench.md, "The bindings").
    policy, script = Policy(GENEROUS), Script.from_source("export default (x) => x.n * 2")
    frames: List[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            frames.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        doubled = palisade.run(policy=policy, script=script, input={"n": 21}).unwrap()
    finally:
        sys.setprofile(None)
    assert doubled == 42
    assert frames == []


def test_the_outcome_is_typed_and_a_dict() -> None:
    outcome = palisade.run(source='export default () => { console.log("hi"); return [1] }', policy=GENEROUS)
    assert isinstance(outcome, Outcome)
    assert outcome.logs[0].level == "log" and outcome.logs[0].message == "hi"
    as_dict = outcome.to_dict()
    assert as_dict["ok"] is True and as_dict["output"] == [1]
    assert as_dict["logs"] == [{"level": "log", "message": "hi"}]
    assert outcome.unwrap() == [1]
    assert outcome == outcome and outcome != as_dict  # type: ignore[comparison-overlap]
    assert copy.copy(outcome) is outcome
    assert repr(outcome).startswith("Outcome(ok=True, output=[1], error=None, logs=[LogLine(")
    with pytest.raises(TypeError, match="unhashable"):
        hash(outcome)


def test_the_output_is_every_json_type_and_the_same_object_each_time() -> None:
    source = 'export default () => ({a: [1, -2.5, "é\\u0000", null, true, false], b: {c: 9007199254740991}})'
    outcome = palisade.run(source=source, policy=GENEROUS)
    expected = {"a": [1, -2.5, "é\u0000", None, True, False], "b": {"c": 9007199254740991}}
    assert outcome.output == expected and outcome.to_dict()["output"] == expected
    assert outcome.output is outcome.output and outcome.to_dict() is outcome.to_dict()
    assert outcome.error is None and outcome.receipt.fuel_used > 0


def test_a_whole_number_beyond_64_bits_is_an_int_as_json_loads_reads_it() -> None:
    # JSON.stringify writes these doubles as whole numbers of 19 to 21 digits, beyond 64 bits:
    # `output` reads them as json.loads does (ints), as it does what 64 bits hold.
    source = "export default () => [1e20, -(2 ** 63) - 4096, 2 ** 64, 2 ** 53, 0.5]"
    outcome = palisade.run(source=source, policy=GENEROUS)
    expected = [10**20, -9223372036854780000, 18446744073709552000, 2**53, 0.5]
    assert output(outcome) == expected and outcome.to_dict()["output"] == expected
    assert [type(n) for n in outcome.output] == [int, int, int, int, float]


def test_an_output_serde_json_cannot_read_is_still_the_output() -> None:
    # Nested deeper than serde_json's limit (128), and a lone surrogate, which a script's
    # JSON.stringify writes as an escape: the library returns both, and so does `output`.
    nested = palisade.run(policy=GENEROUS, source="""export default () => {
      let a = 1; for (let i = 0; i < 500; i++) a = [a]; return a }""")
    value = output(nested)
    for _ in range(500):
        assert isinstance(value, list) and len(value) == 1
        value = value[0]
    assert value == 1
    lone = palisade.run(source='export default () => ["\\ud800", "é"]', policy=GENEROUS)
    assert output(lone) == ["\ud800", "é"] and lone.to_dict()["output"] == ["\ud800", "é"]
    assert output(palisade.run(source="export default () => 2", policy=GENEROUS)) == 2


def test_a_malformed_request_is_a_type_error_and_the_next_call_works() -> None:
    with pytest.raises(TypeError, match="unknown field"):
        palisade.run(source="x", sauce=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="give the script"):
        palisade.run(input=1)
    with pytest.raises(TypeError, match="not JSON serializable"):
        palisade.run(source="export default () => 1", input=object())
    circular: List[Any] = []
    circular.append(circular)
    with pytest.raises(TypeError, match="^run\\(\\): Circular reference detected$"):
        palisade.run(source="export default () => 1", input=circular)
    # A lone surrogate is not text: refused saying so (the input alone passes through).
    with pytest.raises(TypeError, match="lone UTF-16 surrogate"):
        palisade.run(source='export default () => "\ud800"')
    with pytest.raises(TypeError, match="lone UTF-16 surrogate"):
        surrogate: Dict[str, Any] = {"\udc80": 1}
        palisade.run(source="export default () => 1", **surrogate)
    lone = palisade.run(source="export default (x) => x.length", input="\ud800")
    assert output(lone) == 1
    assert output(palisade.run(source="export default () => 2", policy=GENEROUS)) == 2


class _Text(str):
    """A str subclass: a request holding one is written by `json.dumps`."""


class _Kind(enum.IntEnum):
    ONE = 1


def test_an_input_reaches_the_script_the_same_whichever_writes_the_request() -> None:
    # A request of Python's own JSON types only is written by serde_json; one holding anything
    # else (here a str subclass beside the value) by json.dumps. The script gets the same value
    # either way, its types and its keys' order too (it writes its own JSON of it), and, within
    # what a JavaScript number holds, what json.loads(json.dumps(…)) is.
    echo = "export default (x) => JSON.stringify(x)"
    exact: List[Any] = [
        {"rows": [{"id": i, "name": f"item-{i}", "price": i * 37.5 % 100} for i in range(50)]},
        [0.1, -2.5, -0.0, 1e300, 5e-324, 1e-05, 1.0, 2**53, -(2**53)],
        [True, False, 1, 0, None, "", [], {}, {"b": 1, "a": 2}],
        ("a", ("tuple", 1), [None]),
        {"é\u0000\n\"\\\t\x7f": "\u2028\u2029 ☃ \U0001F600", "": {"nested": [[[1]]]}},
        collections.OrderedDict(b=1, a=2),
        {1: "int key", 2.5: "float key", None: "None key"},
        [_Text("subclass"), _Kind.ONE],
    ]
    # Beyond 2**53 a JavaScript number rounds them: the same either way, not what json.loads reads.
    beyond: List[Any] = [2**63 - 1, -(2**63), 2**63, 2**64, [2**70, -(2**70)], -(2**63) - 1]
    nested: List[Any] = []
    for depth in range(28, 37):
        deep: Any = 1
        for _ in range(depth):
            deep = [deep]
        nested.append(deep)
    for value in exact + beyond + nested:
        plain = output(palisade.run(source=echo, input=[value, "x"], policy=GENEROUS))
        written = output(palisade.run(source=echo, input=[value, _Text("x")], policy=GENEROUS))
        assert plain == written, value
        if not any(value is b for b in beyond):
            assert json.loads(plain)[0] == json.loads(json.dumps(value)), value
    # A float JSON cannot hold is the caller's mistake, in the input or anywhere else.
    nans: List[Dict[str, Any]] = [{"input": [1.0, float("nan")]},
                                  {"input": [_Text("x"), float("inf")]},
                                  {"metadata": {"at": float("nan")}}]
    for nan in nans:
        with pytest.raises(TypeError, match="^run\\(\\): Out of range float values"):
            palisade.run(source=echo, **nan)
    assert output(palisade.run(source="export default () => 2", policy=GENEROUS)) == 2


def test_an_input_given_as_json_text_reaches_the_script_as_the_same_value() -> None:
    echo = "export default (x) => JSON.stringify(x)"
    value = {"n": [1, 2.5, -3e-7], "s": "é\n\"\U0001F600", "t": True, "z": None, "o": {"deep": [[{}]]}}
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    given = output(palisade.run(source=echo, input_json=text))
    assert given == output(palisade.run(source=echo, input=value))
    assert json.loads(given) == value
    # Text that is not JSON, or over the policy's input limit, ends the call as the library's
    # own error; the next call works.
    broken = failure(palisade.run(source=echo, input_json='{"n": '))
    assert broken.code == "invalid_input" and "line 1" in broken.message
    small = '[limits]\ninput = "1KiB"\ntimeout = "30s"'
    over = failure(palisade.run(source=echo, input_json='"' + "x" * 2000 + '"', policy=small))
    assert over.code == "invalid_input"
    assert over.fix is not None and (over.fix.key, over.fix.value) == ("limits.input", '"2KiB"')
    # The caller's mistakes: both forms, text that is not a str or not text, the input beside
    # `args`.
    mistakes: List[Tuple[Dict[str, Any], str]] = [
        ({"input": 1, "input_json": "1"}, "run(): give `input` or `input_json`, not both"),
        ({"input_json": b"1"}, "run(): `input_json` is JSON text (a str)"),
        ({"input_json": '"\ud800"'}, "run(): `input_json` holds a lone UTF-16"),
        ({"input_json": "1", "args": [1]}, "run(): give `input` or `args`, not both"),
    ]
    for request, said in mistakes:
        with pytest.raises(TypeError) as raised:
            palisade.run(source=echo, **request)
        assert str(raised.value).startswith(said), raised.value
    # A None of either is as absent.
    assert output(palisade.run(source=echo, input=None, input_json="[1]")) == "[1]"
    assert output(palisade.run(source=echo, input=2, input_json=None)) == "2"  # type: ignore[arg-type]
    assert output(palisade.run(source="export default (a, b) => a + b", input=None, args=[2, 3])) == 5
    assert output(palisade.run(source="export default () => 2", policy=GENEROUS)) == 2


WRITER_CHILD = """
import json, palisade._palisade as wrapper
calls = []
dumps = wrapper._dumps
def counting(value):
    calls.append(1)
    return dumps(value)
wrapper._dumps = counting
from palisade import Palisade
p = Palisade()
class Text(str): pass
def nested(lists):
    value = 1
    for _ in range(lists):
        value = [value]
    return value
counts = []
for value in [{"n": [1.5, "a", None, True]}, nested(31), nested(32), 2**63 - 1, 2**63, Text("t")]:
    outcome = p.run(source="export default (x) => x", input=value, policy='[limits]\\ntimeout = "30s"')
    assert outcome.ok, outcome.error
    counts.append(len(calls))
print(json.dumps(counts))
"""


def test_a_request_of_python_json_types_is_written_without_json_dumps() -> None:
    # In a process of its own, whose encoder counts its calls before the first run reads it:
    # the request itself and 32 levels below it are written in Rust, an int beyond i64 or a
    # str subclass by json.dumps.
    child = subprocess.run([sys.executable, "-c", WRITER_CHILD], capture_output=True,
                           text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    assert json.loads(child.stdout) == [0, 0, 1, 1, 2, 3]


def test_a_dict_a_finalizer_changes_while_the_request_is_written_is_no_crash() -> None:
    # An int beyond i64 makes the Rust writer's read fail, and the exception it makes may run
    # the garbage collector, so a __del__ that adds to the input: the writer stops there (a
    # dict read further after a change would panic) and json.dumps writes the request.
    data: Dict[str, Any] = {"big": 2**63, "after": 0}

    class Arm:
        def __del__(self) -> None:
            data[f"k{len(data)}"] = 0
            again = Arm()
            again.me = again  # type: ignore[attr-defined]

    armed = Arm()
    armed.me = armed  # type: ignore[attr-defined]
    del armed
    threshold = gc.get_threshold()
    gc.set_threshold(1)
    try:
        outcome = palisade.run(source="export default (x) => Object.keys(x).length", input=data)
    finally:
        gc.set_threshold(*threshold)
    assert outcome.ok and outcome.output >= 2
    assert output(palisade.run(source="export default () => 2", policy=GENEROUS)) == 2


def test_calls_from_many_threads_each_get_their_own_output_and_overlap() -> None:
    # 32 threads at once, each with its own input. Spans taken in Python around run() can
    # overlap by a thread switch alone; that run() lets the GIL go is the next test's.
    loop = "export default (n) => { let s = 0; for (let i = 0; i < 200000; i++) s += i % 7; return n }"
    policy = Policy(GENEROUS)
    spans: dict[int, tuple[float, float]] = {}
    results: dict[int, int] = {}

    def call(i: int) -> None:
        started = time.monotonic()
        results[i] = output(palisade.run(source=loop, input=i, policy=policy))
        spans[i] = (started, time.monotonic())

    threads = [threading.Thread(target=call, args=(i,)) for i in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {i: i for i in range(32)}
    overlapping = [
        (a, b) for a in spans for b in spans
        if a < b and spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1]
    ]
    assert overlapping, "no two calls were in flight at once"


@contextlib.contextmanager
def a_thread_busy_in_python(count: List[int]) -> Iterator[None]:
    """Another thread spins in Python, adding to `count[0]`, under a switch interval of 0.1 s:
    it keeps the GIL until it has waited that long for it or a thread lets it go."""
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            count[0] += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.1)
    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        yield
    finally:
        stop.set()
        sys.setswitchinterval(interval)
        spinner.join()


def test_another_thread_runs_python_while_a_call_runs_because_run_releases_the_gil() -> None:
    # A thread counts while a call runs a loop. The count is read at the call's first console
    # line and at its last, each handed to `on_event` on the calling thread. With a switch
    # interval of 0.1 s, the GIL changes hands only when a thread lets it go or has waited that
    # long for it: between the two lines the counter runs through the guest's loop and while
    # the calling thread waits to take the GIL back for the last line. A `run` that held the
    # GIL through the call would leave the count unchanged in between (exactly 0). The call
    # runs on a thread of its own: on the main thread, `run` also takes the GIL every 100 ms
    # to check for Ctrl-C, which under this switch interval slowed the call by up to 80 times.
    source = """export default () => {
      console.log("in"); let s = 0;
      for (let i = 0; i < 300000; i++) s += i % 7;
      console.log("out"); return s > 0 }"""
    policy = Policy('[limits]\ntimeout = "60s"\nfuel = 100_000_000_000\n')
    counted = [0]
    marks: Dict[str, int] = {}

    def on_event(event: Dict[str, Any]) -> None:
        if event.get("type") == "console":
            marks[event["message"]] = counted[0]

    outcomes: List[Outcome] = []

    def call() -> None:
        outcomes.append(palisade.run(source=source, policy=policy, on_event=on_event))

    caller = threading.Thread(target=call)
    with a_thread_busy_in_python(counted):
        caller.start()
        caller.join()
    assert output(outcomes[0]) is True
    assert marks["out"] - marks["in"] > 10_000, marks


def test_a_call_on_the_main_thread_beside_a_busy_thread_ends_in_its_deadline() -> None:
    # On the main thread `run` takes the GIL every 100 ms to check for Ctrl-C. Beside a thread
    # that keeps the GIL for its whole switch interval (0.1 s here), each check waits for it:
    # checks due back to back left the call half a millisecond between waits, and a loop of
    # 0.2 s took 7 to 41 s. Checked a whole period after the last one ended, it takes 0.5-0.7 s,
    # well inside its 5 s deadline.
    source = "export default () => { let s = 0; for (let i = 0; i < 3000000; i++) s += i % 7; return s > 0 }"
    policy = Policy('[limits]\ntimeout = "5s"\nfuel = 100_000_000_000\n')
    assert output(palisade.run(source=source, policy=policy)) is True
    with a_thread_busy_in_python([0]):
        outcome = palisade.run(source=source, policy=policy)
    assert output(outcome) is True


def test_async_calls_on_several_event_loops_each_get_their_own_outcome() -> None:
    # Each loop reads the reports of the calls it started (its own mailbox): two loops on two
    # threads at once, then a third after them, each with 100 calls in flight.
    double = Script.from_source("export default (x) => x.n * 2")

    async def many(tag: int) -> List[Any]:
        calls = [palisade.run_async(script=double, input={"n": tag * 1000 + i}) for i in range(100)]
        return [output(outcome) for outcome in await asyncio.gather(*calls)]

    results: dict[int, List[Any]] = {}

    def on_a_thread(tag: int) -> None:
        results[tag] = asyncio.run(many(tag))

    threads = [threading.Thread(target=on_a_thread, args=(tag,)) for tag in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results[3] = asyncio.run(many(3))
    assert results == {tag: [2 * (tag * 1000 + i) for i in range(100)] for tag in (1, 2, 3)}


def test_event_loops_that_end_leave_no_file_descriptors_behind() -> None:
    # Each loop that ran a call had a mailbox (a pipe): it goes with its loop.
    fds = pathlib.Path("/proc/self/fd")
    one = Palisade()

    def rounds(n: int) -> None:
        for _ in range(n):
            assert output(asyncio.run(one.run_async(source="export default () => 1"))) == 1
        gc.collect()

    rounds(20)
    before = len(list(fds.iterdir()))
    rounds(300)
    assert len(list(fds.iterdir())) - before < 20
