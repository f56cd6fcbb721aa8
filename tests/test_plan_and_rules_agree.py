"""`fix` and `check` agree on the same snapshot: where the planner finds nothing that runs, a rule says why,
and an unknown (an empty arch list, an unreadable driver version) is neither a plan change nor an error."""

from __future__ import annotations

import pytest

from envdoctor.snapshot import load_snapshot
from envdoctor.wheels.index import load_index
from envdoctor.wheels.planner import Wishes, facts_from_snapshot, plan
from tests.conftest import diagnose_bundled, fixture_path


def _plan(snap, **wishes):
    return plan(facts_from_snapshot(snap), load_index(), Wishes(**wishes))


@pytest.mark.parametrize("cc", ["10.0", "10.3", "12.1"])
def test_old_driver_blackwell_is_impossible_for_fix_and_an_error_for_check(cc):
    snap = load_snapshot(fixture_path("b200_driver_575"))
    snap.driver.version = "565.57.01"
    for g in snap.gpus:
        g.compute_capability = cc
    p = _plan(snap)
    assert p.status == "impossible" and p.upgrade == ["driver >= 570.26"]
    assert "ED107" in {f.id for f in diagnose_bundled(snap)}


def test_empty_arch_list_is_unknown_not_broken():
    snap = load_snapshot(fixture_path("h200_8x_healthy"))
    snap.torch.arch_list = []
    assert _plan(snap).status == "nothing_to_do"
    assert not [f for f in diagnose_bundled(snap) if f.severity != "info"]


def test_unreadable_driver_version_is_unknown_not_old():
    snap = load_snapshot(fixture_path("driver_version_junk"))
    ids = {f.id for f in diagnose_bundled(snap)}
    assert "ED110" in ids and not ids & {"ED101", "ED210"}
    p = _plan(snap)
    assert p.status == "impossible" and "unknown" in p.reason and "driver >= " not in " ".join(p.upgrade)
