"""The Diagnose tab's use case: a file's path or a pasted text -> the diagnosis and the text to show beside it."""

from __future__ import annotations

import os

import pytest

from envdoctor.errors import InputError
from envdoctor.settings import Settings
from envdoctor.usecases.diagnose_text import diagnose_text
from envdoctor.usecases.diagnose_view import PASTED, diagnose_input
from tests.conftest import ROOT

LOG = ROOT / "tests" / "fixtures" / "nccl" / "cumem_host.log"


@pytest.fixture(scope="module")
def knowledge():
    return Settings.from_env(os.environ).knowledge()


def test_a_pasted_text_is_diagnosed_as_the_cli_diagnoses_it(knowledge):
    text = LOG.read_text()
    shown = diagnose_input(None, text, knowledge)
    expected = diagnose_text([(PASTED, text)], knowledge)
    assert shown.label == PASTED and shown.text == text and not shown.snapshot_used
    assert [f.id for f in shown.result.findings] == [f.id for f in expected.findings]
    assert shown.result.findings[0].locations[0].startswith(f"{PASTED}:")


def test_a_file_comes_back_with_its_text_when_it_is_small_enough(knowledge, tmp_path):
    shown = diagnose_input(str(LOG), None, knowledge, keep_text=1 << 20)
    assert shown.label == str(LOG) and shown.text == LOG.read_text()
    assert shown.result.findings[0].locations[0].startswith(f"{LOG}:")
    big = diagnose_input(str(LOG), None, knowledge, keep_text=10)  # over the cap: diagnosed, not held
    assert big.text is None and [f.id for f in big.result.findings] == [f.id for f in shown.result.findings]
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "rank0.log").write_text(LOG.read_text())
    folder = diagnose_input(str(tmp_path / "logs"), None, knowledge, keep_text=1 << 20)
    assert folder.text is None and folder.result.findings


def test_an_unreadable_path_is_an_input_error(knowledge, tmp_path):
    with pytest.raises(InputError, match="no such file"):
        diagnose_input(str(tmp_path / "nope.log"), None, knowledge, keep_text=1 << 20)
