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
GENERALIZES = {"ED109": "ED104"}


def _alarms(findings: List[Any]) -> Set[Tuple[str, str]]:
    return {(f.id, f.severity) for f in findings if f.severity in ALARMS}


def _added(before: Set[Tuple[str, str]], after: Set[Tuple[str, str]]) -> Set[Tuple[str, str]]:
    gone = {i for i, _ in before - after}
    return {(i, sev) for i, sev in after - before if GENERALIZES.get(i) not in gone}


@pytest.mark.parametrize("name", FIXTURES)
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


@pytest.mark.parametrize("name", FIXTURES)
def test_messages_never_print_a_marker(name: str) -> None:
    snap = load_snapshot(fixture_path(name))
    for where in list(_leaves(snap))[::3]:
        for f in diagnose_bundled(_with_unknown(snap, where)):
            for text in (f.title, f.detail, f.fix or ""):
                assert not _MARKER_IN_SENTENCE.search(str(text)), (f.id, where, text)
