"""Palisade in-process for Python: run untrusted JavaScript in a fresh WebAssembly sandbox per
call, under the limits and capabilities a policy grants (docs/python.md).

    from palisade import Palisade
    outcome = Palisade().run(source="export default (x) => x.n * 2", input={"n": 21})
    assert outcome.output == 42
"""

from ._outcome import (
    AuditRecord, ErrorCode, Fix, LogLine, Outcome, OutcomeError, PalisadeError, Receipt,
)
from ._palisade import CapabilityError, Handler, Palisade, Policy, RunRequest, Script

__all__ = [
    "AuditRecord", "CapabilityError", "ErrorCode", "Fix", "Handler", "LogLine", "Outcome",
    "OutcomeError", "Palisade", "PalisadeError", "Policy", "Receipt", "RunRequest", "Script",
]
