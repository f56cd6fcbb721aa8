"""Commands that plan nothing never read the wheel index, so a bad one does not stop them; and what a command
prints goes to the stdout of the moment."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from envdoctor.commands.common import write_output
from tests.conftest import fixture_path, run_cli


def test_fleet_and_selftest_run_beside_a_bad_wheel_index(tmp_path):
    bad = tmp_path / "index.json"
    bad.write_text("{ not json", encoding="utf-8")
    env = {"ENVDOCTOR_WHEELS_INDEX": str(bad)}
    a, b = str(fixture_path("h100_8x_nvswitch")), str(fixture_path("a100_pcie_8x"))
    fleet = run_cli(["fleet", a, b, "--json"], env=env)
    assert fleet.returncode in (0, 1), fleet.stderr
    assert '"envdoctor.fleet/1"' in fleet.stdout
    # check plans nothing either, but it reports what the index says about the torch builds: it still refuses
    assert run_cli(["check", "--snapshot", a], env=env).returncode == 2


@pytest.mark.slow
def test_selftest_runs_beside_a_bad_wheel_index(tmp_path):
    bad = tmp_path / "index.json"
    bad.write_text("{ not json", encoding="utf-8")
    res = run_cli(["selftest", "gpu", "--json", "--timeout", "120"], env={"ENVDOCTOR_WHEELS_INDEX": str(bad)}, timeout=300)
    assert res.returncode in (0, 1), res.stderr
    assert '"envdoctor.selftest/1"' in res.stdout


def test_write_output_writes_to_the_stdout_of_the_moment():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        write_output(argparse.Namespace(output=None), "the report\n", "report")
    assert out.getvalue() == "the report\n"
