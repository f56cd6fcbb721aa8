"""Use case: run self-tests in a target interpreter (`envdoctor selftest` and the TUI's Self-tests tab).

`run_selftests(python, tests, options, ...)` probes the interpreter once, selects the tests (`all`: each record's
`applies`), runs them one by one and returns a `SelftestRun`, whose `to_json()` is the `envdoctor.selftest/1`
document. What happens on the way is told through `on_event` (Selected, Said, Finished), in that order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from envdoctor.errors import InputError
from envdoctor.selftest import common, registry, runner
from envdoctor.selftest.common import Target
from envdoctor.selftest.result import TestResult, document, exit_code
from envdoctor.selftest.runner import SelftestOptions
from envdoctor.snapshot import Snapshot

if TYPE_CHECKING:
    from envdoctor.knowledge import Knowledge


@dataclass(frozen=True)
class Selected:
    """The tests this run runs, in order: chosen once the target is probed."""

    names: Tuple[str, ...]


@dataclass(frozen=True)
class Said:
    """A progress line; `test` is the test it belongs to (None: the run's own, about the target)."""

    text: str
    test: Optional[str] = None


@dataclass(frozen=True)
class Finished:
    """One test's verdict, as soon as it has one."""

    result: TestResult


SelftestEvent = Union[Selected, Said, Finished]


@dataclass
class SelftestRun:
    """What a run gave: the probed target, a result per test run, and whether it was cancelled before the end."""

    target: Target
    results: List[TestResult] = field(default_factory=list)
    cancelled: bool = False

    def to_json(self) -> Dict[str, Any]:
        """The `envdoctor.selftest/1` document."""
        return document(self.results)

    def exit_code(self) -> int:
        """1 when a test failed, else 0 (passed or skipped); a method, as on every use case's result."""
        return exit_code(self.results)


def _ignore(_event: SelftestEvent) -> None:
    pass


def _never() -> bool:
    return False


def run_selftests(python: str, tests: Sequence[str], options: SelftestOptions, *, links: Optional[Snapshot] = None,
                  probe_links: bool = True, on_event: Callable[[SelftestEvent], None] = _ignore,
                  cancelled: Callable[[], bool] = _never, knowledge: Optional[Knowledge] = None) -> SelftestRun:
    """Run `tests` (names, or `["all"]`) in the interpreter `python`.

    `links` is this machine's snapshot for the expected all-reduce bandwidth; without it, `probe_links` probes the
    machine on first need. `cancelled()` is asked before and after the probe and before each test: when it says yes, the run
    stops there (`SelftestRun.cancelled`). `knowledge`: the rules database failures are diagnosed with (the
    edge's `settings.knowledge()`; None: the bundled one). InputError (exit 2) for bad options or a test no record has.
    """
    options.check()
    known = f"(known: {', '.join(registry.names())}, {registry.ALL})"
    unknown = [n for n in tests if n != registry.ALL and registry.find(n) is None]
    if unknown:
        raise InputError(f"no self-test called {', '.join(map(repr, unknown))} {known}")
    if not tests:
        raise InputError(f"no self-test asked for {known}")
    if registry.ALL in tests and len(tests) > 1:
        raise InputError(f"{registry.ALL!r} is every test that applies: not with other names")

    def say(text: str, test: Optional[str] = None) -> None:
        on_event(Said(text, test))

    run = SelftestRun(Target(python))
    if cancelled():
        run.cancelled = True
        return run
    if links is not None or not probe_links:
        snapshot: runner.SnapshotSource = lambda: links  # noqa: E731
    else:
        snapshot = runner.link_snapshot(python, say)
    say(f"target {python}")
    run.target = target = common.probe_target(python)
    if target.error:
        say(f"torch does not import: {target.error}")
    else:
        cuda = f"available, {target.device_count} GPU(s)" if target.cuda_available else "not available"
        say(f"torch {target.torch}, CUDA {cuda}")
    if cancelled():  # not even the selection: a newer run may be choosing its own
        run.cancelled = True
        return run
    names = registry.select(tests, target)
    on_event(Selected(tuple(names)))
    try:
        for name in names:
            if cancelled():
                run.cancelled = True
                return run
            result = runner.run_test(name, options, target, snapshot, lambda text, n=name: say(text, n), knowledge)
            run.results.append(result)
            on_event(Finished(result))
    except KeyboardInterrupt:  # the launcher already ended its processes; drop the half-written scratch dirs
        common.discard_open_rundirs()
        raise
    return run
