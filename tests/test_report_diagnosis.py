"""The exported report's diagnosis section is the Diagnose tab's: any failure text, the report sections it read,
the ranked causes (issue 26, point 4)."""

from __future__ import annotations

import os

from envdoctor.present.report import render_report
from envdoctor.settings import Settings
from envdoctor.snapshot import load_snapshot
from envdoctor.usecases.diagnose_text import diagnose_text
from tests.conftest import fixture_path

PASTE = """Collecting environment information...
PyTorch version: 2.1.0+cpu
Is debug build: False
CUDA used to build PyTorch: None
OS: Ubuntu 22.04.3 LTS (x86_64)
Python version: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0] (64-bit runtime)
Is CUDA available: False

Traceback (most recent call last):
  File "train.py", line 3, in <module>
    x = torch.zeros(1).cuda()
AssertionError: Torch not compiled with CUDA enabled
"""


def test_the_report_names_the_diagnosis_and_the_sections_it_read() -> None:
    know = Settings.from_env({k: v for k, v in os.environ.items() if not k.startswith("ENVDOCTOR_")}).knowledge()
    result = diagnose_text([("paste", PASTE)], know)
    text = render_report(load_snapshot(fixture_path("h200_8x_healthy")), [], diagnosis=result)
    assert "### Diagnosis" in text and "NCCL diagnosis" not in text
    assert "Report sections read: collect_env." in text
    assert f"1. **{result.findings[0].title}** (most likely root cause" in text
