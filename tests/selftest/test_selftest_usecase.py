"""The `run self-tests` use case over plain values: what it tells on the way, what it returns, when it stops.
The target probe and the tests are stand-ins: nothing here starts torch."""

from __future__ import annotations

from dataclasses import replace
from typing import List

import pytest

from envdoctor.errors import InputError
from envdoctor.selftest import common, runner
from envdoctor.selftest.common import Target
from envdoctor.selftest.result import TestResult, document
from envdoctor.selftest.runner import SelftestOptions
from envdoctor.usecases.selftest import Finished, Said, Selected, run_selftests

TARGET = Target(python="/fake/python", torch="2.13.0", gloo=True, compile=True, raw={"torch": "2.13.0"})


@pytest.fixture
def fake_runs(monkeypatch):
    """Each test passes at once, saying one line; the target is TARGET. Returns the names run, in order."""
    ran: List[str] = []

    def run_test(name, options, target, snapshot, progress, knowledge=None):
        ran.append(name)
        progress(f"{name}: running")
        return TestResult(name, "failed" if name == "compile" else "passed", 1.5, {"n": len(ran)})

    monkeypatch.setattr(runner, "run_test", run_test)
    monkeypatch.setattr(common, "probe_target", lambda python, *a, **k: replace(TARGET, python=python))
    return ran


def test_events_come_in_order_and_the_result_is_the_selftest_document(fake_runs):
    events: list = []
    done = run_selftests("/fake/python", ["all"], SelftestOptions(), probe_links=False, on_event=events.append)
    names = ["allreduce", "collectives", "backward", "compile", "gpu"]  # no DeepSpeed in the target: no zero3
    assert fake_runs == names and [r.name for r in done.results] == names
    assert events[:2] == [Said("target /fake/python"), Said("torch 2.13.0, CUDA not available")]
    assert events[2] == Selected(tuple(names))
    assert events[3:6] == [Said("allreduce: running", "allreduce"), Finished(done.results[0]),
                           Said("collectives: running", "collectives")]
    assert done.to_json() == document(done.results) and done.to_json()["schema"] == "envdoctor.selftest/1"
    assert done.exit_code() == 1 and not done.cancelled and done.target.python == "/fake/python"


def test_with_deepspeed_all_runs_zero3_too(fake_runs, monkeypatch):
    monkeypatch.setattr(common, "probe_target", lambda python, *a, **k: replace(TARGET, raw={"deepspeed": "0.19.8"}))
    run_selftests("/fake/python", ["all"], SelftestOptions(), probe_links=False)
    assert fake_runs == ["allreduce", "collectives", "backward", "compile", "gpu", "zero3"]


def test_a_cancel_stops_before_the_next_test(fake_runs):
    done = run_selftests("/fake/python", ["gpu", "backward"], SelftestOptions(), probe_links=False,
                         cancelled=lambda: bool(fake_runs))
    assert fake_runs == ["gpu"] and [r.name for r in done.results] == ["gpu"] and done.cancelled


def test_a_cancel_before_the_probe_runs_nothing(fake_runs, monkeypatch):
    monkeypatch.setattr(common, "probe_target", lambda *a, **k: pytest.fail("probed"))
    events: list = []
    done = run_selftests("/fake/python", ["all"], SelftestOptions(), on_event=events.append, cancelled=lambda: True)
    assert done.cancelled and done.results == [] and events == []


def test_the_snapshot_given_is_the_one_the_tests_see(fake_runs, monkeypatch):
    seen = []
    monkeypatch.setattr(runner, "run_test", lambda name, o, t, snapshot, p, k=None: seen.append(snapshot()) or
                        TestResult(name, "passed"))
    marker = object()
    run_selftests("/fake/python", ["allreduce"], SelftestOptions(), links=marker)  # type: ignore[arg-type]
    run_selftests("/fake/python", ["allreduce"], SelftestOptions(), probe_links=False)
    assert seen == [marker, None]


@pytest.mark.parametrize("tests,options,message", [
    (["nonesuch"], SelftestOptions(), "no self-test called 'nonesuch'"),
    ([], SelftestOptions(), "no self-test asked for"),
    (["all", "gpu"], SelftestOptions(), "'all' is every test that applies: not with other names"),
    (["gpu"], SelftestOptions(nproc=0), "--nproc must be between 1 and 256"),
])
def test_bad_values_are_input_errors_before_anything_runs(fake_runs, tests, options, message):
    with pytest.raises(InputError, match=message):
        run_selftests("/fake/python", tests, options)
    assert fake_runs == []


def test_ctrl_c_drops_the_half_written_run_directories(fake_runs, monkeypatch, tmp_path):
    def interrupted(name, options, target, snapshot, progress, knowledge=None):
        common.RunDir(name, tmp_path)
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run_test", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_selftests("/fake/python", ["gpu"], SelftestOptions(), probe_links=False)
    assert list(tmp_path.iterdir()) == []
