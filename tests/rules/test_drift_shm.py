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
