"""w1 and w2 from Python, measured as `palisade bench` measures the Rust library: the workload's
module and input from bench/workloads/, a fresh sandbox per call, the output checked; the median
of sequential `run` calls, then the throughput of the `--throughput` workloads (w1 unless told)
with many `run_async` calls in flight and with a few threads each calling `run`, with the
process's CPU time per call; and, for the `run_js` tool's comparison, w1 as a `palisade run`
subprocess per call. One JSON line per measure (bench/bindings.sh puts them beside `palisade
bench`). With `--input-json`, each call gives the input as its JSON text (`input_json`), as
`palisade bench` gives it to the library.

Usage: python bench.py [--calls N] [--concurrency N] [--threads N,N] [--palisade PATH]
                       [--subprocess-calls N] [--only w1|w2] [--throughput w1,w2] [--input-json]
`--concurrency 0` leaves out `run_async`'s throughput, `--threads ""` the threads.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pathlib
import subprocess
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Tuple

from palisade import Palisade, Policy, Script

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKLOADS = ROOT / "bench/workloads"
# The policy `palisade bench` runs the workloads under (cli/src/bench.rs).
POLICY_TOML = 'name = "bench"\n[limits]\nfuel = 10_000_000_000\ntimeout = "10s"\nmemory = "64MiB"\n'


def load(name: str, as_text: bool = False) -> Dict[str, Any]:
    """A workload; its calls give the input as its JSON text with `as_text`."""
    source = (WORKLOADS / f"{name}.main.js").read_text() + "\nexport default (input) => main(input);\n"
    text = (WORKLOADS / f"{name}.input.json").read_text()
    return {
        "name": name,
        "source": source,
        "script": Script.from_source(source, f"{name}.js"),
        "input_text": text,
        "given": {"input_json": text} if as_text else {"input": json.loads(text)},
        "expected": json.loads((WORKLOADS / f"{name}.expected.json").read_text()),
    }


def percentiles(times: List[float]) -> Dict[str, float]:
    times.sort()
    return {"median_us": times[len(times) // 2], "p99_us": times[int(len(times) * 0.99)]}


def sequential(palisade: Palisade, policy: Policy, workload: Dict[str, Any], calls: int) -> Dict[str, float]:
    warmup = max(calls // 10, 5)
    times = []
    for i in range(warmup + calls):
        started = time.perf_counter()
        outcome = palisade.run(policy=policy, script=workload["script"], **workload["given"])
        elapsed = (time.perf_counter() - started) * 1e6
        if i == 0:
            assert outcome.unwrap() == workload["expected"], outcome
        if i >= warmup:
            times.append(elapsed)
    return percentiles(times)


def timed(run: Callable[[], None], calls: int) -> Tuple[float, float]:
    """Calls per second of `run`, which makes `calls` calls, and the process's CPU µs per call."""
    cpu, started = time.process_time(), time.perf_counter()
    run()
    seconds = time.perf_counter() - started
    return calls / seconds, (time.process_time() - cpu) / calls * 1e6


def throughput(palisade: Palisade, policy: Policy, workload: Dict[str, Any], calls: int, concurrency: int) -> Tuple[float, float]:
    per_task = calls * 5 // concurrency

    async def task() -> None:
        for _ in range(per_task):
            outcome = await palisade.run_async(policy=policy, script=workload["script"], **workload["given"])
            outcome.unwrap()

    async def all_tasks() -> None:
        await asyncio.gather(*(task() for _ in range(concurrency)))

    return timed(lambda: asyncio.run(all_tasks()), per_task * concurrency)


def threaded(palisade: Palisade, policy: Policy, workload: Dict[str, Any], calls: int, threads: int) -> Tuple[float, float]:
    """The workload's throughput with `threads` threads each calling `run` in a loop."""
    per_thread = calls * 5 // threads

    def loop() -> None:
        for _ in range(per_thread):
            palisade.run(policy=policy, script=workload["script"], **workload["given"]).unwrap()

    def all_threads() -> None:
        running = [threading.Thread(target=loop) for _ in range(threads)]
        for thread in running:
            thread.start()
        for thread in running:
            thread.join()

    return timed(all_threads, per_thread * threads)


def subprocess_per_call(binary: str, workload: Dict[str, Any], calls: int) -> Dict[str, float]:
    """w1 the way the run_js tool runs code today: a process per call (`palisade run`)."""
    with tempfile.TemporaryDirectory() as folder:
        script = pathlib.Path(folder) / "w1.js"
        script.write_text(workload["source"])
        policy = pathlib.Path(folder) / "bench.toml"
        policy.write_text(POLICY_TOML)
        times = []
        for i in range(calls + 2):
            started = time.perf_counter()
            done = subprocess.run([binary, "run", str(script), "--policy", str(policy), "--input", workload["input_text"]],
                                  capture_output=True, text=True, check=True)
            elapsed = (time.perf_counter() - started) * 1e6
            if i == 0:
                assert json.loads(done.stdout) == workload["expected"], done.stdout
            if i >= 2:
                times.append(elapsed)
    return percentiles(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--threads", default="2,8", help="thread counts for `run` from threads")
    parser.add_argument("--palisade", help="the palisade binary, for a subprocess per call")
    parser.add_argument("--subprocess-calls", type=int, default=50)
    parser.add_argument("--only", help="one workload (w1 or w2)")
    parser.add_argument("--throughput", default="w1", help="the workloads whose throughput is measured")
    parser.add_argument("--input-json", action="store_true", help="give each input as its JSON text")
    args = parser.parse_args()
    thread_counts = [int(n) for n in args.threads.split(",") if n]
    # As many slots as calls at once, as `palisade bench --concurrency N` has (threads alone:
    # as many as the most threads).
    palisade = Palisade(max_concurrency=args.concurrency or max(thread_counts, default=1))
    policy = Policy(POLICY_TOML)
    measured_throughput = args.throughput.split(",")
    for name in [name for name in ["w1", "w2"] if args.only in (None, name)]:
        workload = load(name, args.input_json)
        given = ", input as JSON text" if args.input_json else ""
        line: Dict[str, Any] = {"binding": f"python{given}", "workload": name, "calls": args.calls}
        line.update(sequential(palisade, policy, workload, args.calls))
        if name in measured_throughput and args.concurrency > 0:
            rate, cpu = throughput(palisade, policy, workload, args.calls, args.concurrency)
            line.update(throughput_calls_per_s=rate, cpu_us_per_call=cpu, in_flight=args.concurrency)
        print(json.dumps(line), flush=True)
        if name in measured_throughput:
            for threads in thread_counts:
                rate, cpu = threaded(palisade, policy, workload, args.calls, threads)
                print(json.dumps({"binding": f"python, {threads} threads on `run`{given}", "workload": name,
                                  "throughput_calls_per_s": rate, "cpu_us_per_call": cpu,
                                  "in_flight": threads}), flush=True)
        if name == "w1" and args.palisade:
            measured = subprocess_per_call(args.palisade, workload, args.subprocess_calls)
            print(json.dumps({"binding": "python-subprocess", "workload": name,
                              "calls": args.subprocess_calls, **measured}), flush=True)


if __name__ == "__main__":
    main()
