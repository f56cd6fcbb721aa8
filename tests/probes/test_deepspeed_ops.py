"""DeepSpeed's op report (what `ds_report` lists): every op with whether it can be built here and whether it is
prebuilt, from the DeepSpeed child's answer to the snapshot and the `check` facts."""

from __future__ import annotations

import importlib.util

import pytest

from envdoctor.present.facts import op_report
from envdoctor.probes.torch_sections import deepspeed_from_child, op_states
from envdoctor.snapshot import NOT_RECORDED, ProbeFailed
from tests.conftest import ROOT


def test_each_op_gets_its_compatibility_and_install_state() -> None:
    got = op_states({"cpu_adam": True, "async_io": False}, {"cpu_adam": True, "async_io": False})
    assert got == {"async_io": {"compatible": False, "installed": False}, "cpu_adam": {"compatible": True, "installed": True}}


def test_without_a_build_record_the_install_state_is_unknown_not_false() -> None:
    assert op_states({"fused_adam": True}, None) == {"fused_adam": {"compatible": True, "installed": None}}


def test_no_report_is_not_recorded_and_an_empty_one_says_the_builders_were_not_read() -> None:
    assert op_states(None, None) is NOT_RECORDED
    assert isinstance(op_states({}, None), ProbeFailed)


def test_the_child_answer_reaches_the_deepspeed_section() -> None:
    ds = deepspeed_from_child({"installed": True, "version": "0.19.8", "importable": True, "ops_error": None,
                               "ops": {"cpu_adam": True, "async_io": False},
                               "build": {"installed_ops": {"cpu_adam": False, "async_io": False}}}, None)
    assert ds.ops == {"async_io": {"compatible": False, "installed": False},
                      "cpu_adam": {"compatible": True, "installed": False}}


def test_check_lists_every_op_as_ds_report_does() -> None:
    text = op_report({"async_io": {"compatible": False, "installed": False},
                      "cpu_adam": {"compatible": True, "installed": True},
                      "fused_adam": {"compatible": True, "installed": None}})
    assert text == ("async_io: JIT-built on first use, NOT compatible here; cpu_adam: installed, compatible; "
                    "fused_adam: install state unknown, compatible")


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("deepspeed") is None, reason="DeepSpeed is not installed")
def test_a_real_deepspeed_reports_its_builders() -> None:
    spec = importlib.util.spec_from_file_location(
        "deepspeed_child", ROOT / "envdoctor" / "probes" / "children" / "deepspeed_child.py")
    child = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(child)  # type: ignore[union-attr]
    ops = child.op_report()["ops"]
    assert "cpu_adam" in ops and all(isinstance(v, bool) for v in ops.values())
