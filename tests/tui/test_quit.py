"""Quitting while the probes still run: the process ends at once (not when a hanging torch import times out), takes
the torch child with it, and claims no verdict it does not have."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import psutil
import pytest

from tests.conftest import ROOT
from tests.probes.test_torch_probe import fake_torch

APP = """
import asyncio, json, os, sys
from pathlib import Path
from envdoctor.probes.base import ProbeContext
from envdoctor.tui.app import make_app
from tests.probes.fake_nvml import LIBRARY_NOT_FOUND, FakeNvml

pid_file = Path(sys.argv[1])

async def main():
    ctx = ProbeContext(python=sys.executable, env={"PATH": os.environ["PATH"], "PYTHONPATH": sys.argv[2]},
                       nvml=FakeNvml(init_error=LIBRARY_NOT_FOUND), timeout=10.0, torch_timeout=600.0)
    app = make_app(probe_context=ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        while not pid_file.exists():  # torch is hanging in its import
            await pilot.pause(0.05)
        await pilot.press("q")
    print(json.dumps({"code": app.return_code, "findings": app.findings}))

asyncio.run(main())
"""


@pytest.mark.slow
def test_q_while_torch_hangs_ends_the_process_and_its_torch_child_with_no_verdict(tmp_path):
    pid_file = tmp_path / "torch-child.pid"
    site = fake_torch(tmp_path, f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                                "time.sleep(600)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TEXTUAL_ANIMATIONS": "none"}
    # Before, the process waited for the torch probe's thread: 600 s here, the torch timeout on a real machine.
    done = subprocess.run([sys.executable, "-c", APP, str(pid_file), site], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"code": 2, "findings": None}  # no verdict, not "0"
    child = int(pid_file.read_text())
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE


CRASH = """
import asyncio, json, sys
from pathlib import Path
from envdoctor.tui import messages as msg
from envdoctor.tui.app import make_app
from tests.tui.conftest import recorded

pid_file = Path(sys.argv[1])

def boom():
    raise RuntimeError("a bug in a handler")

async def main():
    app = make_app(recorded("cpu_only_this_machine"), fix_python=sys.argv[2])
    async with app.run_test(size=(100, 30)) as pilot:
        app.post_message(msg.SelftestRequested(["gpu"]))
        while not pid_file.exists():  # the self-test's interpreter probe hangs in torch's import
            await pilot.pause(0.05)
        app.call_later(boom)
        await pilot.pause(0.5)

try:
    asyncio.run(main())
except RuntimeError as exc:
    print(json.dumps({"error": str(exc)}))
"""


@pytest.mark.slow
def test_a_crash_during_a_self_test_ends_the_process_and_the_test_child(tmp_path):
    """Textual closes on an unhandled exception without App.exit: the self-test's commands end all the same."""
    pid_file = tmp_path / "torch-child.pid"
    site = fake_torch(tmp_path, f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                                "time.sleep(600)\n")
    python = tmp_path / "python"  # the interpreter the self-tests run: this one, with the hanging torch
    python.write_text(f"#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TEXTUAL_ANIMATIONS": "none"}
    # Before, the process waited for the self-test thread: 120 s for the interpreter probe, then the test itself.
    done = subprocess.run([sys.executable, "-c", CRASH, str(pid_file), str(python)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"error": "a bug in a handler"}, done.stderr[-2000:]
    child = int(pid_file.read_text())
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE
