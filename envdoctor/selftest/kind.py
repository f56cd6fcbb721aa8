"""What a self-test is: one record per test, read by the runner, the CLI, the TUI and the presenters.

A test's module (allreduce.py, backward.py, ...) defines its `KIND`; `registry.py` lists them in the order
`selftest all` runs them. Nothing else dispatches on a test's name: adding one is its module, its worker script,
and a line in the registry (docs/extend-selftest.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence, Tuple, Union

from envdoctor.selftest.result import TestResult
from envdoctor.snapshot import Snapshot

if TYPE_CHECKING:  # the options and the target are values here; their modules load when a test runs
    from envdoctor.knowledge import Knowledge
    from envdoctor.selftest.common import Progress, Target
    from envdoctor.selftest.runner import SelftestOptions

SnapshotSource = Callable[[], Optional[Snapshot]]


@dataclass(frozen=True)
class RunInputs:
    """What a test's `run` is given: the options, the probed target, its bound, the machine's links, progress."""

    options: SelftestOptions
    target: Target
    timeout: float  # the test's bound in seconds (--timeout, else the record's default)
    snapshot: SnapshotSource  # called only when a test needs the machine's links (allreduce's expectation)
    progress: Progress
    knowledge: Optional[Knowledge] = None  # the rules database, read through it only (None: none given; a test
    # that needs its tables says what it could not compare)

    @property
    def scratch(self) -> Optional[Path]:
        return self.options.scratch


@dataclass(frozen=True)
class SizePlot:
    """Bandwidth by message size (bytes -> GB/s), `what` naming the quantity (busbw or algbw)."""

    points: Dict[int, float]
    what: str = "busbw"


@dataclass(frozen=True)
class SpeedupPlot:
    """Two timings of the same work, the second expected faster."""

    looped_seconds: float
    batched_seconds: float
    caption: str


Plot = Union[SizePlot, SpeedupPlot]


def always(_target: Target) -> Tuple[bool, str]:
    """`applies` for a test that `selftest all` runs everywhere."""
    return True, ""


def no_summary(_metrics: Dict[str, Any]) -> str:
    return ""


def no_plots(_result: TestResult) -> Sequence[Plot]:
    return ()


@dataclass(frozen=True)
class SelftestKind:
    """One self-test.

    - `name`: the CLI's word and the result's `name`; `title`: how the CLI's help names it.
    - `timeout`: the default bound in seconds (`--timeout` overrides it for every test).
    - `run(inputs) -> TestResult`: the test itself (its body runs in the target interpreter).
    - `applies(target) -> (bool, why not)`: whether `selftest all` (and the TUI's Run all) runs it there.
    - `steps`: progress lines a run writes before its result (each moves the TUI's bar by 1/steps).
    - `size_line(line) -> (bytes, GB/s) | None`: a progress line that finishes one message size; a test that has
      one moves the bar by sizes and draws them live instead of counting steps.
    - `summary(metrics) -> str`: the one-line gist of a passed result (text report, TUI table, markdown report).
    - `plots(result)`: what the TUI draws beside a result's numbers (its detail).
    """

    name: str
    title: str
    timeout: float
    run: Callable[[RunInputs], TestResult]
    applies: Callable[[Target], Tuple[bool, str]] = always
    steps: int = 4
    size_line: Optional[Callable[[str], Optional[Tuple[int, float]]]] = None
    summary: Callable[[Dict[str, Any]], str] = no_summary
    plots: Callable[[TestResult], Sequence[Plot]] = field(default=no_plots)
