"""Every self-test, in the order `selftest all` runs them: the one list the runner, the CLI, the TUI and the
presenters read. A new test is its module (with its `KIND`), its worker script, and a line here."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from envdoctor.selftest import allreduce, backward, collectives, compile, gpu, zero3
from envdoctor.selftest.kind import SelftestKind

if TYPE_CHECKING:
    from envdoctor.selftest.common import Target

ALL = "all"  # the CLI's word (and the TUI's Run all) for every test that applies here

KINDS: Tuple[SelftestKind, ...] = (allreduce.KIND, collectives.KIND, backward.KIND, compile.KIND, gpu.KIND, zero3.KIND)


def kinds() -> Tuple[SelftestKind, ...]:
    """Every registered self-test, in run order."""
    return KINDS


def names() -> List[str]:
    return [k.name for k in KINDS]


def find(name: str) -> Optional[SelftestKind]:
    """The record of the test called `name`; None for a name no test has."""
    return next((k for k in KINDS if k.name == name), None)


def get(name: str) -> SelftestKind:
    """The record of the test called `name`; KeyError for a name no test has."""
    kind = find(name)
    if kind is None:
        raise KeyError(f"no self-test called {name!r} (known: {', '.join(names())})")
    return kind


def select(requested: Sequence[str], target: Target) -> List[str]:
    """The tests a request runs: `all` is every test that applies to the target (each record's `applies`), in
    registry order; names run as given (a test that does not apply then says why in its result)."""
    if list(requested) == [ALL]:
        return [k.name for k in KINDS if k.applies(target)[0]]
    return [get(n).name for n in requested]
