"""A partial package list (rebuilt from a report, a listing cut short) holds facts only for the packages it
names: a package it lacks is unknown, never "not installed". Every rule and predicate that reads the list,
the condition language and the planner keep to that (issue 25, point 5)."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Set

import pytest
from packaging.specifiers import SpecifierSet

from envdoctor.rules.conditions import Context, Found, evaluate
from envdoctor.snapshot import (
    PartialList,
    PartialMap,
    Snapshot,
    Unavailable,
    is_unknown,
    load_snapshot,
    partial_reason,
)
from envdoctor.wheels.planner import Wishes, plan
from tests.conftest import all_fixture_names, bundled_knowledge, diagnose_bundled, fast_subset, fixture_path
from tests.rules.test_unknowns import FAST, _added, _alarms

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = all_fixture_names()
WHY = "rebuilt from a report that names some packages"
# The fast loop leaves packages out of these fixtures' lists (machines whose findings name a package); CI every one.
FAST_PARTIAL = (*FAST, "eco_numpy2_old_torch", "eco_torchvision_mismatch", "h100_no_triton", "triton_mismatch")


def _watched() -> Set[str]:
    """The packages the Python probe lists, and every package a rule's condition names."""
    sys.path.insert(0, str(ROOT / "envdoctor" / "probes" / "children"))
    import python_child

    names = {python_child._norm(n) for n in python_child.WATCH}
    for path in (ROOT / "rules").glob("*.json"):
        text = path.read_text(encoding="utf-8")
        names |= {part.split('"')[0] for part in text.split('"python.packages.')[1:]}
    return names


NAMES = sorted(_watched())


def _partial(snap: Snapshot, drop: str = "") -> Snapshot:
    """`snap` with its package list marked partial, `drop` left out of it."""
    s = copy.copy(snap)
    s.python = copy.copy(snap.python)
    s.python.packages = PartialMap({k: v for k, v in snap.python.packages.items() if k != drop}, WHY)
    return s


def test_the_walk_covers_the_rules_that_name_a_package() -> None:
    assert {"triton", "pytorch-triton", "ninja", "numpy", "torchvision"} <= set(NAMES)


@pytest.mark.parametrize("name", fast_subset(FIXTURES, FAST_PARTIAL))
def test_no_rule_reads_a_package_a_partial_list_lacks_as_not_installed(name: str) -> None:
    """For each package the rules or the probe know: the fixture's list with that package left out and marked
    partial knows less than the fixture, so it may lose findings but never gain an error or a warning (a
    "Triton is not installed" on a machine whose report did not list Triton)."""
    snap = load_snapshot(fixture_path(name))
    if not isinstance(snap.python.packages, dict):
        pytest.skip("no package list")
    before = _alarms(diagnose_bundled(snap))
    added: Dict[str, List[Any]] = {}
    for pkg in ["", *NAMES]:
        more = _added(before, _alarms(diagnose_bundled(_partial(snap, pkg))))
        if more:
            added[pkg or "(nothing left out)"] = sorted(more)
    assert not added, added


def test_triton_missing_from_a_partial_list_is_not_reported_missing() -> None:
    snap = load_snapshot(fixture_path("h100_no_triton"))
    ids = {f.id for f in diagnose_bundled(snap)}
    assert "ED310" in ids  # a whole list without Triton: Triton is not installed
    assert "ED310" not in {f.id for f in diagnose_bundled(_partial(snap))}


def test_ninja_missing_from_a_partial_list_is_not_reported_missing() -> None:
    snap = load_snapshot(fixture_path("a100_sxm_shadowed_cudnn"))
    assert "ED307" in {f.id for f in diagnose_bundled(snap)}
    assert "ED307" not in {f.id for f in diagnose_bundled(_partial(snap, "ninja"))}


def test_a_healthy_machine_rebuilt_from_a_report_gets_no_triton_warning() -> None:
    """A report lists torch and numpy only (collect_env's filtered pip list): Triton is not known to be missing."""
    sys.path.insert(0, str(ROOT / "tests" / "corpus"))
    import build

    from envdoctor.snapshot import snapshot_from_json

    case = {"id": "x", "source": "", "settled_by": "", "category": "healthy", "expect": [], "also_ok": [], "notes": "",
            "snapshot": {"host": {"os": "linux", "arch": "x86_64"}, "driver": {"version": "550.54.14"},
                         "gpus": [{"index": 0, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"}],
                         "python": {"version": "3.11.7", "packages": {"torch": "2.5.1", "numpy": "1.26.4"}},
                         "torch": {"importable": True, "version": "2.5.1+cu124", "cuda": "12.4",
                                   "cuda_available": True, "device_count": 1}}}
    doc = build.build_snapshot(case)
    assert doc["partial"]["python.packages"] == build.PARTIAL_WHY
    snap = snapshot_from_json(json.loads(json.dumps(doc)))
    assert "ED310" not in {f.id for f in diagnose_bundled(snap)}
    whole = build.build_snapshot({**case, "full_lists": ["python.packages"]})  # a whole pip list: a fact
    assert "python.packages" not in whole.get("partial", {})
    assert "ED310" in {f.id for f in diagnose_bundled(snapshot_from_json(whole))}


# --- the one accessor -------------------------------------------------------------------------


def test_package_says_installed_not_installed_or_unknown() -> None:
    snap = Snapshot(created="2026-01-01T00:00:00Z")
    snap.python.packages = {"flash-attn": "2.6.3", "torch": "2.5.1"}
    assert snap.package("flash_attn") == "2.6.3" and snap.package("Torch") == "2.5.1"
    assert isinstance(snap.package("triton"), Unavailable)
    snap.python.packages = PartialMap(snap.python.packages, WHY)
    assert snap.package("torch") == "2.5.1"
    assert is_unknown(snap.package("triton")) and WHY in str(snap.package("triton"))
    snap.python.packages = Unavailable("no Python")
    assert isinstance(snap.package("torch"), Unavailable)


# --- the condition language ---------------------------------------------------------------------


def _truth(cond: Dict[str, Any], snap: Snapshot) -> Any:
    return evaluate(cond, Context(snap), {}, Found())


def test_conditions_read_a_key_a_partial_map_lacks_as_unknown() -> None:
    snap = load_snapshot(fixture_path("h100_no_triton"))
    assert _truth({"absent": "python.packages.triton"}, snap) is True
    part = _partial(snap)
    assert _truth({"absent": "python.packages.triton"}, part) is False
    assert _truth({"unknown": "python.packages.triton"}, part) is True
    assert _truth({"present": "python.packages.triton"}, part) is False
    assert _truth({"eq": ["python.packages.triton", "3.1.0"]}, part) is None  # never satisfies a comparison
    assert _truth({"not": {"eq": ["python.packages.triton", "3.1.0"]}}, part) is None
    assert _truth({"eq": ["python.packages.torch", snap.python.packages["torch"]]}, part) is True  # a named one is a fact


def test_conditions_on_a_partial_list() -> None:
    snap = load_snapshot(fixture_path("h100_no_triton"))
    snap.env = PartialMap({"CUDA_HOME": "/usr/local/cuda"}, WHY)
    snap.torch.arch_list = PartialList(["sm_80", "sm_90"], WHY)
    some_90 = {"some": {"in": "torch.arch_list", "as": "a", "where": {"eq": ["a", "sm_90"]}}}
    some_70 = {"some": {"in": "torch.arch_list", "as": "a", "where": {"eq": ["a", "sm_70"]}}}
    assert _truth(some_90, snap) is True
    assert _truth(some_70, snap) is None  # not in the part we know: unknown, and so is its `not`
    assert _truth({"not": some_70}, snap) is None
    assert _truth({"contains": ["torch.arch_list", "sm_80"]}, snap) is True
    assert _truth({"contains": ["torch.arch_list", "sm_70"]}, snap) is None
    assert _truth({"len": ["torch.arch_list", "ge", 2]}, snap) is True
    assert _truth({"len": ["torch.arch_list", "ge", 3]}, snap) is None
    assert _truth({"len": ["torch.arch_list", "lt", 2]}, snap) is False
    assert _truth({"len": ["torch.arch_list", "lt", 3]}, snap) is None
    assert _truth({"len": ["torch.arch_list", "eq", 1]}, snap) is False
    assert _truth({"len": ["torch.arch_list", "eq", 2]}, snap) is None
    assert _truth({"eq": ["torch.arch_list.5", "sm_70"]}, snap) is None
    assert _truth({"unknown": "env.NCCL_P2P_DISABLE"}, snap) is True
    assert _truth({"absent": "env.NCCL_P2P_DISABLE"}, snap) is False
    snap.torch.arch_list = ["sm_80", "sm_90"]  # a whole list: what it lacks is known
    assert _truth(some_70, snap) is False and _truth({"len": ["torch.arch_list", "ge", 3]}, snap) is False


# --- the planner --------------------------------------------------------------------------------


def test_the_planner_says_a_companion_missing_from_a_partial_list_is_unknown() -> None:
    snap = load_snapshot(fixture_path("h100_no_triton"))
    whole = copy.copy(snap)
    whole.python = copy.copy(snap.python)
    whole.python.packages = {k: v for k, v in snap.python.packages.items() if k not in ("torchvision", "torchaudio")}
    index = bundled_knowledge().index
    notes = " ".join(plan(whole, index, Wishes(torch=SpecifierSet(">=2.6"))).notes)
    assert "is installed is unknown" not in notes
    part = _partial(whole)
    assert partial_reason(part.python.packages) == WHY
    p = plan(part, index, Wishes(torch=SpecifierSet(">=2.6")))
    assert any(pk.name == "torch" for pk in p.packages), p.to_json()
    assert "whether torchvision is installed is unknown" in " ".join(p.notes)


def test_the_deepspeed_ops_report_says_ninja_is_unknown_on_a_partial_list() -> None:
    # cpu_adam said "needs ninja" and async_io "libaio found" beside buildable false: a partial list lacking ninja
    # says that whether ninja is there is unknown, for every op that needs it.
    snap = load_snapshot(fixture_path("a100_sxm_shadowed_cudnn"))
    part = _partial(snap, "ninja")
    ops = plan(part, bundled_knowledge().index, Wishes(deepspeed=True)).deepspeed_ops
    assert ops is not None and not ops["ninja"]
    for name in ("cpu_adam", "async_io"):
        assert "the package list is partial" in ops["ops"][name]["why"], ops["ops"][name]
