"""One record per self-test: a record registered in the registry alone reaches the CLI (choices, help, `all`, the
JSON document, the text report) and the presenter (docs/extend-selftest.md). No test here starts torch."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from envdoctor.cli import main
from envdoctor.present.selftest import render_results, summary_line
from envdoctor.present.style import Style
from envdoctor.selftest import common, registry
from envdoctor.selftest.common import Target
from envdoctor.selftest.kind import RunInputs, SelftestKind
from envdoctor.selftest.result import TestResult
from tests.json_schemas import assert_valid

TARGET = Target(python="/fake/python", torch="2.13.0", gloo=True, compile=True, raw={"torch": "2.13.0"})


def _echo(inputs: RunInputs) -> TestResult:
    inputs.progress("echo: saying hello")
    return TestResult("echo", "passed", 0.25, {"answer": 42, "timeout": inputs.timeout})


ECHO = SelftestKind("echo", "an echo", 12.0, _echo, summary=lambda m: f"the answer is {m['answer']}")


@pytest.fixture
def with_echo(monkeypatch):
    """The registry with the test-only `echo` record added; the target probe answers without a subprocess, and
    every other test is left out of `all` (they would start torch)."""
    others = tuple(replace(k, applies=lambda _t: (False, "not in this test")) for k in registry.KINDS)
    monkeypatch.setattr(registry, "KINDS", (*others, ECHO))
    monkeypatch.setattr(common, "probe_target", lambda python, *a, **k: replace(TARGET, python=python))


def test_a_registered_record_is_a_cli_choice_with_its_title_and_timeout(with_echo, capsys):
    assert main(["selftest", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "{allreduce,collectives,backward,compile,gpu,zero3,echo,all}" in out
    assert "echo 12" in out  # its default timeout, in --timeout's help
    assert main(["--help"]) == 0
    assert "ZeRO-3 offload, an echo)" in " ".join(capsys.readouterr().out.split())


def test_the_cli_runs_a_registered_record_and_the_presenter_renders_it(with_echo, capsys):
    assert main(["selftest", "echo", "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert_valid(doc)
    assert doc["tests"] == [{"name": "echo", "status": "passed", "seconds": 0.25,
                             "metrics": {"answer": 42, "timeout": 12.0}, "error": None, "findings": [], "log": None}]
    assert "envdoctor selftest: echo: saying hello" in captured.err
    assert "envdoctor selftest: echo: passed (0.2s)" in captured.err
    assert main(["selftest", "echo", "--json", "--timeout", "3"]) == 0  # --timeout over the record's own
    assert json.loads(capsys.readouterr().out)["tests"][0]["metrics"]["timeout"] == 3.0
    assert main(["selftest", "all"]) == 0  # `all` takes it too
    text = capsys.readouterr().out
    assert "PASSED  echo         0.2s  the answer is 42" in text
    assert text.rstrip().endswith("1 passed, 0 failed, 0 skipped")


def test_the_presenter_reads_the_summary_from_the_record(with_echo):
    passed = TestResult("echo", "passed", 1.0, {"answer": 7})
    assert summary_line(passed) == "the answer is 7"
    assert summary_line(replace(passed, status="failed")) == ""  # a gist is what a passed test measured
    assert summary_line(TestResult("nonesuch", "passed", 1.0, {"answer": 7})) == ""  # no record: no gist
    assert "the answer is 7" in render_results([passed], Style(False))


def test_every_registered_test_has_a_record_with_its_own_name():
    kinds = registry.kinds()
    assert [k.name for k in kinds] == ["allreduce", "collectives", "backward", "compile", "gpu", "zero3"]
    assert {k.name: k.timeout for k in kinds} == {"allreduce": 300.0, "collectives": 600.0, "backward": 600.0, "compile": 900.0,
                                                  "gpu": 600.0, "zero3": 900.0}
    assert registry.get("zero3").name == "zero3" and registry.find("nonesuch") is None
    with pytest.raises(KeyError):
        registry.get("nonesuch")


def test_all_selects_from_each_records_applies():
    with_ds = replace(TARGET, raw={"deepspeed": "0.19.8"})
    assert registry.select(["all"], with_ds) == ["allreduce", "collectives", "backward", "compile", "gpu", "zero3"]
    assert registry.select(["all"], TARGET) == ["allreduce", "collectives", "backward", "compile", "gpu"]
    assert registry.select(["zero3"], TARGET) == ["zero3"]  # asked by name, it runs (and says why it skips)
    assert registry.get("zero3").applies(TARGET) == (False, "DeepSpeed is not installed in /fake/python")
