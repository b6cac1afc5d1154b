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


#: The result of a call: its output or its error, console lines, audit records, receipt. Made
#: by the native module (src/outcome.rs), which reads the call's outcome as far as it is read:
#: `ok` and `output` directly, the other fields from `to_dict()` on first use (`_Fields`).
Outcome = _native.Outcome


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
