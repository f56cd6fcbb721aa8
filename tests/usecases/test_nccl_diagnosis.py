"""The diagnose-a-text use case: NCCL logs from files or pasted, the envdoctor.nccl/1 document."""

from __future__ import annotations

import pytest

from envdoctor.errors import InputError
from envdoctor.nccl import diagnose_paths, diagnose_text, load_rules
from envdoctor.usecases.nccl_diagnosis import diagnose_logs, diagnose_pasted
from tests.conftest import ROOT
from tests.json_schemas import assert_valid

LOGS = ROOT / "tests" / "fixtures" / "nccl"


def test_a_log_file_is_diagnosed_and_its_text_kept_when_small(snapshot_of):
    rules = load_rules()
    path = str(LOGS / "driver_too_old.log")
    snap = snapshot_of("h100_8x_nvswitch")
    result = diagnose_logs([path], rules, snap, keep_text=1 << 20)
    assert result.to_json() == diagnose_paths([path], snapshot=snap, rules=rules).to_json()
    assert result.report.failed and result.exit_code() == 1 and result.snapshot_used
    assert result.log_text == (LOGS / "driver_too_old.log").read_text(encoding="utf-8", errors="replace")
    assert_valid(result.to_json())
    assert diagnose_logs([path], rules, keep_text=10).log_text is None  # bigger than that: not kept
    assert diagnose_logs([path], rules).log_text is None


def test_a_pasted_log_is_diagnosed():
    rules = load_rules()
    text = (LOGS / "healthy_single_node.txt").read_text(encoding="utf-8")
    result = diagnose_pasted(text, rules)
    assert result.to_json() == diagnose_text(text, rules=rules).to_json()
    assert not result.report.failed and result.exit_code() == 0 and not result.snapshot_used
    assert result.log_text == text


def test_an_unreadable_log_is_bad_input(tmp_path):
    with pytest.raises(InputError, match="nowhere.log"):
        diagnose_logs([str(tmp_path / "nowhere.log")], load_rules(), keep_text=1 << 20)
