"""The process around the calls: the interpreter's exit while handlers and calls still run, and a
child made by `os.fork()`. Each runs in a process of its own, which must end as Python would."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from support import ROOT


def child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)


# A sync handler that runs for about a second, taking the GIL back every millisecond.
SLOW_HANDLER = """
import os, signal, threading, time
from palisade import Palisade
signal.signal(signal.SIGINT, signal.default_int_handler)
started = threading.Event()
def lookup(payload, context):
    started.set()
    for _ in range(1000):
        time.sleep(0.001)
    return payload
palisade = Palisade(capabilities={"lookup": lookup})
policy = {"limits": {"timeout": "30s"}, "capabilities": {"global": "host", "allow": {"lookup": {}}}}
"""


def test_ctrl_c_while_a_sync_handler_runs_ends_the_process_as_keyboard_interrupt() -> None:
    # The handler's thread is the runtime's, not Python's: taking the GIL back once Python had
    # begun to finalize ended it where it stood, and the process with it (SIGABRT, SIGSEGV).
    # Exit now waits for the handler, and the process ends as Ctrl-C ends Python: killed by
    # SIGINT, which Python sends itself once KeyboardInterrupt has been reported.
    ended = child(SLOW_HANDLER + """
threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
palisade.run(source="export default () => host.lookup(1)", policy=policy)
""")
    assert ended.returncode == -signal.SIGINT, ended.stderr
    assert "KeyboardInterrupt" in ended.stderr
    assert "Fatal Python error" not in ended.stderr


def test_a_call_that_ends_before_its_handler_leaves_a_clean_exit() -> None:
    # The call ends at its deadline while its handler still runs; the script then ends.
    ended = child(SLOW_HANDLER + """
policy["limits"]["timeout"] = "100ms"
print(palisade.run(source="export default () => host.lookup(1)", policy=policy).error.code)
""")
    assert (ended.returncode, ended.stdout) == (0, "timeout\n"), ended.stderr


def test_daemon_threads_calling_run_at_exit_are_cancelled_and_refused() -> None:
    # Daemon threads in `run` at exit: their calls end as `cancelled`, their next `run` raises
    # RuntimeError, and the process ends as the main thread does.
    ended = child("""
import atexit, time
codes = []
# Registered before palisade's own exit function, so run after it: the calls have ended.
@atexit.register
def report():
    time.sleep(0.2)
    print(sorted(set(codes)), flush=True)
""" + SLOW_HANDLER + """
def loop():
    while True:
        outcome = palisade.run(source="export default async () => { for (;;) await host.lookup(1) }",
                               policy=policy)
        codes.append(outcome.error.code)
for _ in range(3):
    threading.Thread(target=loop, daemon=True).start()
time.sleep(0.5)
""")
    assert ended.returncode == 0, ended.stderr
    assert ended.stdout == "['cancelled']\n", ended.stderr
    assert "RuntimeError: run(): the interpreter is exiting, and starts no call" in ended.stderr
    assert "Fatal Python error" not in ended.stderr


def test_a_child_process_builds_a_palisade_of_its_own() -> None:
    # After os.fork(), the parent's Palisade is refused in the child (its threads stayed with
    # the parent); one built in the child runs `run`, `run_async` and async handlers; and the
    # parent's goes on in the parent.
    ended = child("""
import asyncio, os
from palisade import Palisade
async def slow(payload, context):
    await asyncio.sleep(0.01)
    return payload
policy = {"capabilities": {"global": "host", "allow": {"slow": {}}}}
source = "export default (x) => host.slow(x)"
parent = Palisade(capabilities={"slow": slow})
print(parent.run(source=source, input=1, policy=policy).unwrap(), flush=True)
pid = os.fork()
if pid == 0:
    try:
        parent.run(source=source, input=2, policy=policy)
    except RuntimeError as e:
        print(e, flush=True)
    mine = Palisade(capabilities={"slow": slow})
    print(mine.run(source=source, input=3, policy=policy).unwrap(), flush=True)
    async def main():
        outcome = await asyncio.wait_for(mine.run_async(source=source, input=4, policy=policy), 30)
        print(outcome.unwrap(), flush=True)
    asyncio.run(main())
    os._exit(0)
_, status = os.waitpid(pid, 0)
print(status, parent.run(source=source, input=5, policy=policy).unwrap(), flush=True)
""")
    assert ended.returncode == 0, ended.stderr
    assert ended.stdout == ("1\nthis Palisade was built before os.fork(): build one in this process\n"
                            "3\n4\n0 5\n"), ended.stderr


def test_children_forked_beside_busy_threads_compile_and_exit_normally() -> None:
    # Two threads call `run` without a pause while the main thread forks: a child could start
    # with a thread's place in the exit gate counted (its exit then waited for ever), or with a
    # lock of the bindings held by a thread it does not have. The parent compiled a component
    # first, which starts rayon's pool of compiling threads; a child's compile (the compiled
    # script's cache entry removed) would wait for them for ever. Each child compiles, then exits
    # as a script does (atexit runs); SIGALRM ends one that hangs.
    ended = child("""
import glob, os, signal, sys, tempfile, threading
from palisade import Palisade, Script
wasm = open("target/bindings/trap.wasm", "rb").read()
cache = os.environ["PALISADE_CACHE_DIR"] = tempfile.mkdtemp()
def compiled_scripts_forgotten():
    for entry in glob.glob(os.path.join(cache, "script-*")):
        os.remove(entry)
parent = Palisade()
print(parent.run(script=Script.from_component(wasm), input=1).error.code, flush=True)
def busy():
    while True:
        parent.run(source="export default (x) => x", input=1)
for _ in range(2):
    threading.Thread(target=busy, daemon=True).start()
statuses = []
for i in range(2):
    pid = os.fork()
    if pid == 0:
        signal.alarm(40)
        compiled_scripts_forgotten()
        mine = Palisade()
        code = mine.run(script=Script.from_component(wasm), input=1).error.code
        sys.exit(0 if code == "guest_trap" else 3)
    _, status = os.waitpid(pid, 0)
    statuses.append(os.waitstatus_to_exitcode(status))
print(statuses, flush=True)
""")
    assert ended.returncode == 0, ended.stderr
    assert ended.stdout == "guest_trap\n[0, 0]\n", ended.stderr


def test_a_script_read_at_exit_is_refused_and_one_waiting_for_its_writer_lets_exit_go() -> None:
    # A daemon thread waits in Script.from_file for the end of a FIFO whose writer never
    # closes it: exit does not wait for the read (it goes on off the GIL, on a thread that never
    # takes it), the wait ends as RuntimeError, and a read started once exit has begun is
    # refused.
    ended = child("""
import atexit, os, tempfile, threading, time
seen = []
# Registered before palisade's own exit function, so run after it.
@atexit.register
def report():
    try:
        Script.from_file(fifo)
    except RuntimeError as e:
        seen.append(str(e))
    print(seen, flush=True)
from palisade import Script
fifo = os.path.join(tempfile.mkdtemp(), "script.js")
os.mkfifo(fifo)
writer = os.open(fifo, os.O_RDWR)
os.write(writer, b"export default () => 1;")
def read():
    try:
        Script.from_file(fifo)
    except RuntimeError as e:
        seen.append(str(e))
threading.Thread(target=read, daemon=True).start()
time.sleep(0.3)
""")
    refused = "Script.from_file(): the interpreter is exiting, and reads no script"
    assert ended.returncode == 0, ended.stderr
    assert ended.stdout == f"[{refused!r}, {refused!r}]\n", ended.stderr


@pytest.mark.parametrize("signalled, status", [
    ("", 130),
    ("signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))", 3),
    ("signal.signal(signal.SIGTERM, lambda *_: sys.exit('bye'))", 1),
])
def test_a_signal_during_the_wait_at_exit_ends_the_process(signalled: str, status: int) -> None:
    # Exit waits for a sync handler still running; Ctrl-C during that wait ends the process at
    # once, with status 130, its output flushed, rather than letting Python finalize under it;
    # a signal handler's sys.exit(3) ends it with 3, and sys.exit('bye') with 1, at once (not
    # through Python's own exit, which would wait again).
    sent = "SIGTERM" if signalled else "SIGINT"
    ended = child(SLOW_HANDLER.replace("range(1000)", "range(100000)") + f"""
import sys
{signalled}
def call():
    palisade.run(source="export default () => host.lookup(1)", policy=policy)
threading.Thread(target=call, daemon=True).start()
started.wait(60)
timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.{sent}))
timer.daemon = True
timer.start()
sys.stdout.write("unflushed")
""")
    assert ended.returncode == status, ended.stderr
    assert ended.stdout == "unflushed"
    assert "Fatal Python error" not in ended.stderr


def test_ctrl_c_ends_a_wait_for_a_fifos_writer() -> None:
    # Script.from_file of a FIFO whose writer never closes it waits on a thread of its own:
    # Ctrl-C on the main thread ends the wait as KeyboardInterrupt.
    ended = child("""
import os, signal, tempfile, threading
from palisade import Script
signal.signal(signal.SIGINT, signal.default_int_handler)
fifo = os.path.join(tempfile.mkdtemp(), "script.js")
os.mkfifo(fifo)
writer = os.open(fifo, os.O_RDWR)
threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    Script.from_file(fifo)
except KeyboardInterrupt:
    print("interrupted", flush=True)
""")
    assert (ended.returncode, ended.stdout) == (0, "interrupted\n"), ended.stderr
