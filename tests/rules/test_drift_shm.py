"""`check --baseline` reports /dev/shm changing size (issue 31: 64 MiB -> 23.5 GiB went unreported)."""

from __future__ import annotations

import copy
import json

from envdoctor.snapshot import load_snapshot
from tests.conftest import diagnose_bundled, fixture_path, run_cli


def _grown():
    before = load_snapshot(fixture_path("l4_container_shm64"))
    after = copy.deepcopy(before)
    after.host.shm_bytes = 47 * (1 << 29)  # 23.5 GiB
    return before, after


def test_dev_shm_growing_is_drift():
    before, after = _grown()
    drift = [f for f in diagnose_bundled(after, before) if f.id == "ED901"]
    assert [(f.title, f.severity) for f in drift] == [("/dev/shm size changed: 64 MiB -> 23.5 GiB", "warning")]
    assert not [f for f in diagnose_bundled(before, before) if f.id == "ED901"]


def test_check_baseline_reports_dev_shm(tmp_path):
    before, after = _grown()
    (tmp_path / "base.json").write_text(json.dumps(before.to_json()))
    (tmp_path / "now.json").write_text(json.dumps(after.to_json()))
    out = run_cli(["check", "--snapshot", str(tmp_path / "now.json"), "--baseline", str(tmp_path / "base.json")])
    assert "/dev/shm size changed: 64 MiB -> 23.5 GiB" in out.stdout, out.stdout + out.stderr


def test_an_unknown_fact_is_never_a_difference_in_drift_or_fleet():
    """A node (or a baseline) whose package list timed out does not 'differ': an unknown is not a value."""
    import copy

    from envdoctor.rules.drift import drift_findings, fleet_findings
    from envdoctor.snapshot import Unknown, load_snapshot
    from tests.conftest import ROOT

    base = load_snapshot(ROOT / "tests" / "fixtures" / "snapshots" / "h100_8x_nvswitch.json")
    blind = copy.deepcopy(base)
    blind.python.packages = Unknown("pip listing timed out")
    blind.gpus = None
    assert not [f for f in drift_findings(base, blind) if "DeepSpeed" in f.title or "Triton" in f.title or "GPU" in f.title]
    assert not [f for f in fleet_findings([("a", base), ("b", blind)]) if "DeepSpeed" in f.title or "GPU" in f.title]
