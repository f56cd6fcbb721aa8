"""The NCCL use case: logs from files, the envdoctor.nccl/1 document."""

from __future__ import annotations

import pytest

from envdoctor.errors import InputError
from envdoctor.nccl import diagnose_paths, load_rules
from envdoctor.usecases.nccl_diagnosis import diagnose_logs
from tests.conftest import ROOT
from tests.json_schemas import assert_valid

LOGS = ROOT / "tests" / "fixtures" / "nccl"


def test_a_log_file_is_diagnosed(snapshot_of):
    rules = load_rules()
    path = str(LOGS / "driver_too_old.log")
    snap = snapshot_of("h100_8x_nvswitch")
    result = diagnose_logs([path], rules, snap)
    assert result.to_json() == diagnose_paths([path], snapshot=snap, rules=rules).to_json()
    assert result.report.failed and result.exit_code() == 1 and result.snapshot_used
    assert_valid(result.to_json())
    assert not diagnose_logs([path], rules).snapshot_used


def test_an_unreadable_log_is_bad_input(tmp_path):
    with pytest.raises(InputError, match="nowhere.log"):
        diagnose_logs([str(tmp_path / "nowhere.log")], load_rules())
