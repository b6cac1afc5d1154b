"""Palisade, Policy and Script over the native module: requests written as JSON, capability
handlers (sync or async) answered from Python, outcomes read back as typed objects."""

from __future__ import annotations

import asyncio
import atexit
import base64
import datetime
import inspect
import itertools
import json
import os
import threading
import weakref
from typing import (
    TYPE_CHECKING, Any, Awaitable, Callable, Dict, List, Mapping, Optional, TypedDict, Union, cast,
)

from . import _native
from ._outcome import Outcome, OutcomeError, PalisadeError

if TYPE_CHECKING:
    from typing_extensions import Unpack

#: What a report from the native module carries (src/palisade.rs).
_EVENT = 0
_OUTCOME = 1

Json = Any
#: A capability handler: `(payload, context) -> answer`, a plain or an async function.
Handler = Callable[[Any, Dict[str, Any]], Union[Json, Awaitable[Json]]]
#: A policy: a Policy, a policy file's path, TOML text, or the policy's tables as a dict.
PolicySpec = Union["Policy", str, Mapping[str, Any]]
#: A span of time: `"500ms"`, `"2s"`, or a timedelta.
Duration = Union[str, datetime.timedelta]
#: Called with each console line (`{"type": "console", "level", "message"}`) and audit record
#: (`{"type": "audit", ...}`) of a call as it comes.
OnEvent = Callable[[Dict[str, Any]], None]


class RunRequest(TypedDict, total=False):
    """One call: the script (`source`, `file` or `script`), its input and per-call options."""

    #: A Policy, a policy file's path, TOML text, or a dict; the built-in default when absent.
    policy: PolicySpec
    #: The script's source (an ES module).
    source: str
    #: The module name of `source`, in stack traces (default `main.js`).
    name: str
    #: A script file: an ES module, TypeScript (`.ts`) or a compiled component (`.wasm`).
    file: str
    #: A script read once.
    script: "Script"
    #: The export's one argument (default None, JSON null).
    input: Json
    #: The export's one argument as JSON text, instead of `input`: a request body or a tool
    #: call's arguments as they arrived, read once, in the sandbox (text that is not JSON ends
    #: the call as `invalid_input`).
    input_json: str
    #: The export's arguments, one each (instead of `input`).
    args: List[Json]
    #: The export, or method of the default export, to call.
    export: str
    #: A shorter deadline than the policy's.
    timeout: Duration
    #: Less fuel than the policy's `limits.fuel`.
    fuel: int
    #: Less memory than the policy's, such as "32MiB".
    memory: str
    #: Handed to capability handlers as `context["metadata"]`.
    metadata: Json
    #: The instant the script's clock reads (the policy must set `overrides.now`).
    now: Union[str, datetime.datetime]
    #: The seed of `Math.random` (the policy must set `overrides.seed`).
    seed: int
    #: `[config]` values for this call (keys in `overrides.config`).
    config: Dict[str, str]
    #: Files placed in the policy's scratch directory, by name.
    files: Dict[str, Union[str, bytes, bytearray, memoryview]]


class CapabilityError(Exception):
    """A failure a capability handler reports; the script catches a `CapabilityError` with the
    same `code`, `message` and `retryable`."""

    def __init__(self, code: str, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable


def _native_call(make: Callable[[], Any]) -> Any:
    """Run `make`, raising the library's errors as PalisadeError."""
    try:
        return make()
    except _native.NativeError as e:
        raise PalisadeError(OutcomeError.from_dict(json.loads(e.args[0]))) from None


class Policy:
    """A policy read once (a file's path, TOML text, or a dict of its tables) for many calls."""

    def __init__(self, spec: Union[str, Mapping[str, Any]]) -> None:
        try:
            text = json.dumps(spec)
        except (ValueError, RecursionError) as e:  # a circular or too deep table
            raise TypeError(f"Policy(): {e}") from None
        self._native: _native.NativePolicy = _native_call(lambda: _native.NativePolicy.read(text))

    @property
    def name(self) -> str:
        return self._native.name

    @property
    def sha256(self) -> str:
        return self._native.sha256


class Script:
    """A script read once for many calls."""

    def __init__(self, native: _native.NativeScript) -> None:
        self._native = native

    @staticmethod
    def from_source(source: str, name: str = "main.js") -> "Script":
        return Script(_native.NativeScript.from_source(name, source))

    @staticmethod
    def from_file(path: str) -> "Script":
        return Script(_native_call(lambda: _native.NativeScript.from_file(str(path))))

    @staticmethod
    def from_component(wasm: bytes) -> "Script":
        # A bytes-like object's bytes (`bytes(n)` would make n zero bytes of an int).
        return Script(_native_call(lambda: _native.NativeScript.from_component(memoryview(wasm).tobytes())))

    @property
    def name(self) -> str:
        return self._native.name


def _failure_json(error: BaseException) -> str:
    """A handler's failure as the answer `{"error": {...}}`, whatever its exception holds: one
    whose `str()` (or code's, or `retryable`'s truth) raises is a `handler_error` naming its
    type, so that the call is answered (an async handler's call would otherwise wait for its
    deadline)."""
    try:
        if isinstance(error, CapabilityError):
            failure = {"code": str(error.code), "message": str(error.message),
                       "retryable": bool(error.retryable)}
        else:
            failure = {"code": "handler_error", "message": str(error), "retryable": False}
        return json.dumps({"error": failure})
    except BaseException:
        message = f"{type(error).__name__} (its message could not be read)"
        return json.dumps({"error": {"code": "handler_error", "message": message, "retryable": False}})


def _answer_json(value: Any) -> str:
    return json.dumps({"ok": value})


_handler_loop: Optional[asyncio.AbstractEventLoop] = None
_handler_loop_lock = threading.Lock()


def _async_handler_loop() -> asyncio.AbstractEventLoop:
    """The event loop async handlers run on: one daemon thread, started on first use."""
    global _handler_loop
    with _handler_loop_lock:
        if _handler_loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=_serve, args=(loop,), name="palisade-handlers", daemon=True).start()
            _handler_loop = loop
        return _handler_loop


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    """Run the handlers' loop for ever: a handler that stops it (`loop.stop()`), or raises
    KeyboardInterrupt or SystemExit out of a callback, would otherwise leave every async
    handler after it unanswered."""
    while True:
        try:
            loop.run_forever()
        except BaseException as e:
            loop.call_exception_handler({"message": "palisade: a handler stopped its loop", "exception": e})


def _invoker(handlers: Dict[str, Handler]) -> Callable[[str, str, Callable[[str], None]], None]:
    """The function the native module calls for every capability call, on a worker thread. It
    answers with `{"ok": value}` or `{"error": {...}}`; a sync handler runs here, an async one
    on the handlers' event loop."""

    def invoke(payload: str, context: str, answer: Callable[[str], None]) -> None:
        ctx = json.loads(context)
        handler = handlers[ctx["capability"]]
        try:
            result = handler(json.loads(payload), ctx)
        except Exception as e:
            answer(_failure_json(e))
            return
        if not inspect.isawaitable(result):
            try:
                answer(_answer_json(result))
            except Exception as e:
                answer(_failure_json(e))
            return

        async def settle(awaitable: Awaitable[Any]) -> None:
            try:
                text = _answer_json(await awaitable)
            # Any exception, KeyboardInterrupt and SystemExit too: raised out of a task, they
            # would stop the handlers' loop, and every async handler after it with the loop.
            except BaseException as e:
                text = _failure_json(e)
            answer(text)

        asyncio.run_coroutine_threadsafe(settle(result), _async_handler_loop())

    return invoke


def _weakly(invoke: Callable[[str, str, Callable[[str], None]], None]) -> Callable[[str, str, Callable[[str], None]], None]:
    """`invoke`, reached through a weak reference (a call runs while its Palisade is held)."""
    reach = weakref.ref(invoke)

    def call(payload: str, context: str, answer: Callable[[str], None]) -> None:
        live = reach()
        if live is None:
            raise RuntimeError("the Palisade is gone")
        live(payload, context, answer)

    return call


def _duration(value: Duration) -> str:
    if isinstance(value, datetime.timedelta):
        micros = value // datetime.timedelta(microseconds=1)
        return f"{micros}us"
    return value


def _instant(value: Union[str, datetime.datetime]) -> str:
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            raise TypeError("now: give an aware datetime (with tzinfo), such as one in UTC")
        utc = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return utc.isoformat() + "Z"
    return value


class Palisade(_native.NativePalisade):
    """Runs scripts in fresh sandboxes. Create one per process and share it: `run` may be
    called from many threads, `run_async` from many tasks.

    `run(*, on_event=None, **request)` (native: the request is read in Rust, without a Python
    frame) runs a script in a fresh sandbox on this thread, with the GIL released while it
    runs, and returns its Outcome (a failed call is an Outcome with `ok` False, not an
    exception). `on_event` gets each console line and audit record on this thread as they
    come. Ctrl-C cancels the call. Raises TypeError for a malformed request."""

    def __init__(
        self,
        *,
        capabilities: Optional[Mapping[str, Handler]] = None,
        max_concurrency: Optional[int] = None,
        queue_timeout: Optional[Duration] = None,
        audit_log: Optional[str] = None,
        kv_path: Optional[str] = None,
    ) -> None:
        handlers = dict(capabilities or {})
        for name, handler in handlers.items():
            if not callable(handler):
                raise TypeError(f"capabilities[{name!r}] is not callable")
        settings: Dict[str, Any] = {
            "max_concurrency": max_concurrency,
            "queue_timeout": None if queue_timeout is None else _duration(queue_timeout),
            "audit_log": audit_log,
            "kv_path": kv_path,
        }
        text = json.dumps({k: v for k, v in settings.items() if v is not None})
        # The native module reaches the handlers weakly, through this Palisade: a handler that
        # refers to its Palisade (a bound method of an object holding it, a closure) makes a
        # cycle Python's collector can see, and free.
        invoke = _invoker(handlers)
        _native_call(lambda: self._build(text, list(handlers), _weakly(invoke)))
        # Kept once built: a Palisade built already keeps the handlers it was built with.
        self._invoke = invoke

    async def run_async(
        self, *, on_event: Optional[OnEvent] = None, **request: Unpack[RunRequest]
    ) -> Outcome:
        """`run` for asyncio: the call runs on Palisade's own threads; cancelling the awaiting
        task cancels the call. `on_event` is called on the event loop's thread."""
        # Asked once: each asking reads the process id (a system call).
        loop = asyncio.get_running_loop()
        # Inline, not in helpers: each Python frame here is a cost of every call on the loop.
        mailbox = _MAILBOXES.get(loop)
        if mailbox is None:
            mailbox = _MAILBOXES[loop] = _Mailbox(loop)
        call_id = next(mailbox.ids)
        done: "asyncio.Future[Outcome]" = loop.create_future()
        mailbox.waiting[call_id] = (done, on_event)
        try:
            # The native module reads a snapshot of the request's items: no copy here. The
            # cast's type is a string: `Dict[str, Any]` itself would be looked up in typing's
            # cache on every call (some 170 ns).
            call = self._start(cast("Dict[str, Any]", request), on_event is not None,
                               mailbox.native, call_id)
        except BaseException:
            mailbox.forget(call_id)
            raise
        try:
            # Cancelling the awaiting task cancels `done` too; the mailbox skips a done future.
            outcome = await done
        except asyncio.CancelledError:
            mailbox.forget(call_id)
            call.cancel()
            raise
        return outcome


class _Mailbox:
    """The reports of the calls one event loop started, from every Palisade: Palisade's threads
    queue them in the native mailbox, whose pipe wakes the loop, which settles each call's
    future on its own thread (Palisade's threads never wait for the GIL)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        # No reference to the loop: `_MAILBOXES` holds its loop weakly, so that a loop's
        # mailbox (and its pipe) goes with the loop. The loop holds the mailbox (its reader),
        # so the mailbox is one per loop, not per Palisade: a Palisade's would stay with its
        # loop after the Palisade had gone.
        self.native = _native.Mailbox()
        os.set_blocking(self.native.fileno(), False)
        self.ids = itertools.count()
        self.waiting: Dict[int, "tuple[asyncio.Future[Outcome], Optional[OnEvent]]"] = {}
        loop.add_reader(self.native.fileno(), self._ready)

    def forget(self, call_id: int) -> None:
        self.waiting.pop(call_id, None)

    def _ready(self) -> None:
        # KeyboardInterrupt or SystemExit from a callback is raised once every report taken is
        # delivered: raised at once, it would lose the rest (other calls would never end).
        stopping: Optional[BaseException] = None
        for call_id, kind, value in self.native.drain():
            waiting = self.waiting.get(call_id)
            if waiting is None:
                continue  # a cancelled call's last reports: nobody waits
            done, on_event = waiting
            if kind == _EVENT:
                if on_event is not None:
                    try:
                        on_event(json.loads(value))
                    except Exception as e:  # a failing callback misses its event
                        asyncio.get_running_loop().call_exception_handler(
                            {"message": "palisade: on_event raised", "exception": e})
                    except BaseException as e:
                        stopping = stopping or e
                continue
            del self.waiting[call_id]
            if done.done():
                continue
            if kind == _OUTCOME:
                done.set_result(value)
            else:
                done.set_exception(TypeError(value))
        if stopping is not None:
            raise stopping


# At exit, while every thread may still take the GIL: no new call or handler starts, the calls
# of `run` still running (a daemon thread's) are cancelled, and exit waits for the threads that
# will take the GIL again (a sync handler still running) to do so: one that took it once Python
# had begun to finalize would end the process (docs/python.md, "Exit").
atexit.register(_native._at_exit)


def _after_fork() -> None:
    """In a child `fork` made: the calls run on a runtime of the child's own, a Palisade built
    before the fork is refused (its threads stayed with the parent), and async handlers get a
    loop of the child's own (the parent's thread is not here)."""
    global _handler_loop, _handler_loop_lock
    _native._forked()
    _handler_loop = None
    _handler_loop_lock = threading.Lock()


# The native module's own locks are taken before a fork and let go after it, in both processes:
# none is held, in the child, by a thread that stayed with the parent.
os.register_at_fork(before=_native._before_fork, after_in_parent=_native._after_fork_in_parent,
                    after_in_child=_after_fork)

#: Each event loop's mailbox, by the loop, weakly.
_MAILBOXES: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Mailbox]" = (
    weakref.WeakKeyDictionary())


def _dumps(value: Any) -> str:
    """`value` as compact JSON text, by the C encoder `json.dumps` uses where Python has one:
    the native module writes with it what its own writer does not take (a subclass, a value
    nested deeper than 32 levels). Each call makes its encoder, with a table of its own for the
    circular-reference check (a circular value is a ValueError, not a recursion that, under a
    raised recursion limit, overflows the C stack); it costs about a microsecond, on this path
    alone. Compact, as the native module's own writer is: the input's size against
    `limits.input` is that of the text written. A float that is not finite (which JSON cannot
    hold) is the caller's mistake, as for `json.dumps(allow_nan=False)`."""
    if _MAKE_ENCODER is None:
        return json.dumps(value, separators=(",", ":"), allow_nan=False)
    encode = _MAKE_ENCODER({}, _DEFAULT, json.encoder.encode_basestring_ascii,
                           None, ":", ",", False, False, False)
    return "".join(encode(value, 0))


_MAKE_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_DEFAULT = json.JSONEncoder().default


def _plain(fields: Dict[str, Any]) -> None:
    """Turn the request's values only Python has into their JSON form, in place: a timedelta
    `timeout`, a datetime `now`, `files` holding bytes. The native module calls it for a request
    that has one of these keys."""
    if "timeout" in fields:
        fields["timeout"] = _duration(fields["timeout"])
    if "now" in fields:
        fields["now"] = _instant(fields["now"])
    files = fields.get("files")
    if isinstance(files, Mapping):
        # Bytes as base64; anything else as it is, for the request's reading to refuse what is
        # not text (an int would be that many zero bytes to `bytes()`).
        fields["files"] = {
            name: {"base64": base64.b64encode(contents).decode()}
            if isinstance(contents, (bytes, bytearray, memoryview)) else contents
            for name, contents in files.items()
        }


__all__: List[str] = ["CapabilityError", "Handler", "Palisade", "Policy", "RunRequest", "Script"]
