"""An unknown is not a fact: markers never crash the core, and turning one known fact into an unknown never
adds an error or a warning (issue 12, section 1)."""

from __future__ import annotations

import copy
import dataclasses
import re
from typing import Any, Iterator, List, Set, Tuple

import pytest

from envdoctor.present.facts import render_facts
from envdoctor.present.findings import render_findings
from envdoctor.present.style import Style
from envdoctor.snapshot import Model, ProbeFailed, Snapshot, Unknown, is_absent, load_snapshot
from envdoctor.wheels.planner import Wishes, plan
from tests.conftest import all_fixture_names, bundled_knowledge, diagnose_bundled, fixture_path

FIXTURES = all_fixture_names()
ALARMS = ("error", "warning")
# The tests that make every known fact of a fixture unknown, one at a time, diagnose it hundreds of times (a
# second or more per fixture): the fast loop (-m "not slow") runs them on these three kinds of machine (an
# error, no GPU, a container warning), the full suite on every fixture.
FAST = ("rtx5090_old_torch", "cpu_only_this_machine", "l4_container_shm64")
EVERY_LEAF = [name if name in FAST else pytest.param(name, marks=pytest.mark.slow) for name in FIXTURES]


def _marked_gpus(snap: Snapshot) -> Iterator[Tuple[str, Snapshot]]:
    whole = copy.deepcopy(snap)
    whole.gpus = ProbeFailed("nvml: boom")
    yield "gpus", whole
    for attr in ("name", "compute_capability"):
        s = copy.deepcopy(snap)
        if isinstance(s.gpus, list):
            for g in s.gpus:
                setattr(g, attr, ProbeFailed("nvml: boom"))
        yield f"gpu.{attr}", s


@pytest.mark.parametrize("name", FIXTURES)
def test_marker_gpus_never_crash_the_core(name: str) -> None:
    index = bundled_knowledge().index
    for _what, snap in _marked_gpus(load_snapshot(fixture_path(name))):
        findings = diagnose_bundled(snap)
        plan(snap, index, Wishes())
        assert render_facts(snap)
        render_findings(findings, Style(False))


def _leaves(obj: Any, path: Tuple[Any, ...] = ()) -> Iterator[Tuple[Any, ...]]:
    """Every known value's location: each section (model), each list and each scalar leaf."""
    if isinstance(obj, Model):
        for f in dataclasses.fields(obj):
            if f.name in ("extra", "index", "id"):  # identity keys are never markers
                continue
            v = getattr(obj, f.name)
            if is_absent(v) or v is None:
                continue
            yield path + (f.name,)
            yield from _leaves(v, path + (f.name,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            if isinstance(v, Model):
                yield from _leaves(v, path + (i,))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if v is not None and not is_absent(v):
                yield path + (k,)


def _with_unknown(snap: Snapshot, where: Tuple[Any, ...]) -> Snapshot:
    s = copy.deepcopy(snap)
    parent: Any = s
    for step in where[:-1]:
        parent = parent[step] if isinstance(step, int) or isinstance(parent, dict) else getattr(parent, step)
    last = where[-1]
    if isinstance(parent, dict):
        parent[last] = Unknown("made unknown by the test")
    else:
        setattr(parent, last, Unknown("made unknown by the test"))
    return s


# (general, specific): the general finding states the same fact as the specific one, with less detail.
# "torch does not import" (ED109) replaces "torch does not import: libX is missing" (ED104) when the import
# error's text becomes unknown.
# The others: a rule that reasons from versions (ED513) or from less (ED105, ED303, ED306, ED507) speaks when
# the observed failure that its specific rule reads (ED501, ED111, ED316, ED315) becomes unknown. CUDA's own
# "driver is insufficient" (ED122) says what ED101 says from the versions, when the driver's version becomes unknown.
GENERALIZES = {"ED109": {"ED104"}, "ED513": {"ED501"}, "ED105": {"ED111"}, "ED303": {"ED316"},
               "ED306": {"ED316"}, "ED507": {"ED315"}, "ED111": {"ED101", "ED211"},
               "ED122": {"ED101"},
               # "CUDA unavailable, cause unread" (ED124) is what is left of any cause of it whose facts go unknown
               "ED124": {"ED101", "ED105", "ED107", "ED111", "ED112", "ED113", "ED211"}}


def _alarms(findings: List[Any]) -> Set[Tuple[str, str]]:
    return {(f.id, f.severity) for f in findings if f.severity in ALARMS}


def _added(before: Set[Tuple[str, str]], after: Set[Tuple[str, str]]) -> Set[Tuple[str, str]]:
    gone = {i for i, _ in before - after}
    return {(i, sev) for i, sev in after - before if not GENERALIZES.get(i, set()) & gone}


@pytest.mark.parametrize("name", EVERY_LEAF)
def test_an_unknown_never_adds_an_error_or_warning(name: str) -> None:
    snap = load_snapshot(fixture_path(name))
    before = _alarms(diagnose_bundled(snap))
    added = {}
    for where in _leaves(snap):
        more = _added(before, _alarms(diagnose_bundled(_with_unknown(snap, where))))
        if more:
            added[".".join(map(str, where))] = sorted(more)
    assert not added, added


_MARKER_IN_SENTENCE = re.compile(r"(not available|unknown|probe failed) \(")


@pytest.mark.parametrize("name", EVERY_LEAF)
def test_messages_never_print_a_marker(name: str) -> None:
    snap = load_snapshot(fixture_path(name))
    for where in list(_leaves(snap))[::3]:
        for f in diagnose_bundled(_with_unknown(snap, where)):
            for text in (f.title, f.detail, f.fix or ""):
                assert not _MARKER_IN_SENTENCE.search(str(text)), (f.id, where, text)


# --- rules stay in their domain ---------------------------------------------------------------


def _ids(snap: Snapshot) -> Set[str]:
    return {f.id for f in diagnose_bundled(snap)}


def test_triton_rules_stay_quiet_on_windows_and_on_torch_1() -> None:
    snap = load_snapshot(fixture_path("gh200_aarch64"))
    assert "ED310" in _ids(snap)
    windows = copy.deepcopy(snap)
    windows.host.os = "windows"  # PyPI torch ships no Triton on Windows
    assert "ED310" not in _ids(windows)
    old = copy.deepcopy(snap)
    old.torch.version = "1.13.1+cu117"  # no torch.compile before 2.0
    assert not {"ED310", "ED311", "ED313"} & _ids(old)


def test_no_wheels_for_this_python_is_not_claimed_when_torch_imports() -> None:
    snap = load_snapshot(fixture_path("python37_legacy"))
    assert "ED106" in _ids(snap)
    healthy = load_snapshot(fixture_path("h200_8x_healthy"))
    healthy.python.version = "3.7.16"  # an old Python whose torch does import: wheels did exist for it
    assert "ED106" not in _ids(healthy)


def test_cuda_unavailable_never_claims_the_driver_fits_when_its_minimum_is_unknown() -> None:
    snap = load_snapshot(fixture_path("h100_cuda_silent"))
    assert "ED105" in _ids(snap)
    old = copy.deepcopy(snap)
    old.torch.version, old.torch.cuda, old.driver.version = "1.5.0+cu102", "10.2", "410.48"
    assert "ED105" not in _ids(old)  # CUDA 10.2 needs 440.33: nothing here knows that it fits
    unknown = copy.deepcopy(snap)
    unknown.driver = Unknown("not reported")
    assert "ED105" not in _ids(unknown)


def test_a_machine_without_nvidia_gpu_or_driver_says_so() -> None:
    found = [f for f in diagnose_bundled(load_snapshot(fixture_path("cpu_only_this_machine"))) if f.id == "ED214"]
    assert [f.severity for f in found] == ["info"]
    assert "No NVIDIA GPU or driver" in found[0].title
    assert "ED214" not in _ids(load_snapshot(fixture_path("h200_8x_healthy")))
