#!/usr/bin/env python3
"""CPU µs a call of each thread of a benchmark's process, by thread name.

Runs COMMAND, reads /proc/PID/task/*/stat every half second while it runs, and keeps the
half-seconds in which at least BUSY of its threads were each over 80% busy (the throughput
run, not the start-up or the sequential calls). Each thread name's CPU time in those
half-seconds, over the calls made in them (the calls/s COMMAND prints last, times their
length), is its CPU µs a call; the total is the process's. The figures are as coarse as
/proc's ticks of 1/100 s: run for several seconds.

Usage: [BUSY=1] bench/thread-cpu.py COMMAND...    (docs/bench.md, "What a call costs, by part")
e.g.   TOKIO_WORKER_THREADS=1 bench/thread-cpu.py node bindings/node/bench.js --calls 30000 \\
           --only w1 --throughput w1
"""

import os
import re
import subprocess
import sys
import time

TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def threads(pid):
    """{tid: (name, user ticks, system ticks)} of the process's threads now."""
    found = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                line = stat.read()
        except OSError:
            continue
        name = line[line.index("(") + 1 : line.rindex(")")]
        fields = line[line.rindex(")") + 2 :].split()
        found[tid] = (name, int(fields[11]), int(fields[12]))
    return found


def rate(output):
    """The last calls/s the command printed: `N calls/s`, or a JSON line's throughput."""
    found = re.findall(r"(\d+(?:\.\d+)?) calls/s", output) or re.findall(
        r'"throughput_calls_per_s":\s*(\d+(?:\.\d+)?)', output
    )
    if not found:
        sys.exit(f"thread-cpu: no calls/s in the command's output:\n{output}")
    return float(found[-1])


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    busy_threads = int(os.environ.get("BUSY", "1"))
    process = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, text=True)
    snaps = []
    while process.poll() is None:
        snaps.append((time.monotonic(), threads(process.pid)))
        time.sleep(0.5)
    calls_per_s = rate(process.stdout.read())
    seconds, per_name = 0.0, {}
    for (t1, before), (t2, after) in zip(snaps, snaps[1:]):
        used = {
            tid: (after[tid][1] + after[tid][2] - before[tid][1] - before[tid][2]) / TICKS_PER_S
            for tid in after
            if tid in before
        }
        if sum(1 for u in used.values() if u / (t2 - t1) > 0.8) < busy_threads:
            continue
        seconds += t2 - t1
        for tid, cpu in used.items():
            per_name[after[tid][0]] = per_name.get(after[tid][0], 0.0) + cpu
    if seconds == 0:
        sys.exit("thread-cpu: no half-second with enough busy threads")
    calls = calls_per_s * seconds
    for name, cpu in sorted(per_name.items(), key=lambda item: -item[1]):
        if cpu * 1e6 / calls >= 0.05:
            print(f"{name:16} {cpu * 1e6 / calls:6.1f} CPU µs a call")
    total = sum(per_name.values()) * 1e6 / calls
    print(f"{'process':16} {total:6.1f} CPU µs a call ({calls_per_s:.0f} calls/s, {seconds:.1f} s kept)")


if __name__ == "__main__":
    main()
