"""The Outcome of a call, typed: the JSON `palisade run --json` prints, as dataclasses read from
the native module's outcome on first use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Literal, Optional

from . import _native

#: The library's error codes (docs/errors.md); each is the `code` of an OutcomeError and of a
#: PalisadeError.
ErrorCode = Literal[
    "guest_exception", "guest_syntax", "guest_deadlock", "missing_export", "bad_output",
    "invalid_input", "output_too_large", "not_compilable", "invalid_component", "guest_trap",
    "fuel_exhausted", "timeout", "memory_limit", "stack_overflow", "cancelled",
    "invalid_policy", "policy_denied", "capacity_exhausted", "internal",
]


@dataclass(frozen=True)
class Fix:
    """The policy change that would allow the call: set `key` to `value` (written as TOML)."""

    key: str
    value: str


@dataclass(frozen=True)
class OutcomeError:
    """Why a call failed."""

    code: str
    message: str
    fix: Optional[Fix]
    fix_note: str
    docs_url: str
    retryable: bool
    #: For script errors: the exception's name and stack, and where it was thrown.
    name: Optional[str] = None
    stack: Optional[str] = None
    location: Optional[Dict[str, int]] = None
    #: For `policy_denied`: the capability and the rule that refused.
    capability: Optional[str] = None
    rule: Optional[str] = None

    @staticmethod
    def from_dict(error: Dict[str, Any]) -> "OutcomeError":
        fix = error.get("fix")
        return OutcomeError(
            code=error["code"],
            message=error["message"],
            fix=Fix(fix["key"], fix["value"]) if fix else None,
            fix_note=error["fix_note"],
            docs_url=error["docs_url"],
            retryable=error["retryable"],
            name=error.get("name"),
            stack=error.get("stack"),
            location=error.get("location"),
            capability=error.get("capability"),
            rule=error.get("rule"),
        )


class PalisadeError(Exception):
    """An error of the library: raised by `Outcome.unwrap()` for a failed call, and by
    `Palisade(...)`, `Policy(...)` and `Script.*` for what they refuse."""

    def __init__(self, error: OutcomeError) -> None:
        super().__init__(f"{error.code}: {error.message}")
        self.error = error
        self.code = error.code
        self.retryable = error.retryable


@dataclass(frozen=True)
class LogLine:
    """A console line the script wrote."""

    level: str
    message: str


@dataclass(frozen=True)
class AuditRecord:
    """One gated decision (a capability call, a request, a file or key-value access)."""

    time_unix_ms: int
    capability: str
    target: str
    decision: str
    rule: str
    bytes_in: int
    bytes_out: int
    duration_us: int
    policy: str
    policy_sha256: str
    error: Optional[str] = None


@dataclass(frozen=True)
class Receipt:
    """What a call used."""

    fuel_used: int
    wall_time_us: int
    peak_memory_bytes: int
    console_bytes_dropped: int
    console_lines_dropped: int
    audit_records_dropped: int
    policy: str
    policy_sha256: str


class Outcome:
    """The result of a call: its output or its error, console lines, audit records, receipt.

    It reads the call's outcome (held by the native module) as far as it is read: `ok` and
    `output` directly, the other fields from `to_dict()` on first use."""

    __slots__ = ("_native", "_fields")

    def __init__(self, native: _native.NativeOutcome) -> None:
        self._native = native
        self._fields: Optional[_Fields] = None

    @property
    def ok(self) -> bool:
        return self._native.ok

    @property
    def output(self) -> Any:
        return self._native.output

    @property
    def error(self) -> Optional[OutcomeError]:
        return None if self._native.ok else self._read().error

    @property
    def logs(self) -> List[LogLine]:
        return self._read().logs

    @property
    def audit(self) -> List[AuditRecord]:
        return self._read().audit

    @property
    def receipt(self) -> Receipt:
        return self._read().receipt

    @property
    def error_id(self) -> Optional[str]:
        """For `internal`: the id under which the host logged the cause."""
        return self._read().error_id

    def to_dict(self) -> Dict[str, Any]:
        """The outcome as the JSON object `palisade run --json` prints."""
        outcome: Dict[str, Any] = self._native.to_dict()
        return outcome

    def unwrap(self) -> Any:
        """The output, or the call's error raised as a PalisadeError."""
        if not self._native.ok:
            raise PalisadeError(self._read().error)  # type: ignore[arg-type]
        return self._native.output

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Outcome) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Outcome(ok={self.ok!r}, output={self.output!r}, error={self.error!r}, "
                f"logs={self.logs!r}, audit={self.audit!r}, receipt={self.receipt!r}, "
                f"error_id={self.error_id!r})")

    def _read(self) -> "_Fields":
        if self._fields is None:
            self._fields = _Fields.from_dict(self.to_dict())
        return self._fields


@dataclass(frozen=True)
class _Fields:
    """An Outcome's typed fields but its output, read from its dict."""

    error: Optional[OutcomeError]
    logs: List[LogLine]
    audit: List[AuditRecord]
    receipt: Receipt
    error_id: Optional[str]

    @staticmethod
    def from_dict(outcome: Dict[str, Any]) -> "_Fields":
        error = outcome.get("error")
        return _Fields(
            error=OutcomeError.from_dict(error) if error else None,
            logs=[LogLine(**line) for line in outcome["logs"]],
            audit=[AuditRecord(**record) for record in outcome["audit"]],
            receipt=Receipt(**outcome["receipt"]),
            error_id=outcome.get("error_id"),
        )
