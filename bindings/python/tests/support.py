"""What the tests share: the outcome's output or error (failing the test otherwise), a policy
with a generous deadline for calls that must pass on a loaded machine, the repository."""

from __future__ import annotations

import pathlib
from typing import Any

from palisade import Outcome, OutcomeError, Palisade

#: The repository's root.
ROOT = pathlib.Path(__file__).resolve().parents[3]

#: A deadline no passing call comes near, even on a loaded 2-core machine.
GENEROUS = '[limits]\ntimeout = "30s"\n'


def output(outcome: Outcome) -> Any:
    assert outcome.error is None, f"expected ok, got {outcome.error.code}: {outcome.error.message}"
    assert outcome.ok
    return outcome.output


def failure(outcome: Outcome) -> OutcomeError:
    assert outcome.error is not None, f"expected an error, got {outcome.output!r}"
    assert not outcome.ok
    return outcome.error


def assert_next_call_works(palisade: Palisade) -> None:
    """Show the host is fine after a hostile call: a normal call on the same Palisade."""
    outcome = palisade.run(source="export default (x) => x + 1", input=41, policy=GENEROUS)
    assert output(outcome) == 42
