"""Stopping envdoctor while a self-test runs (Ctrl-C, SIGTERM) ends every rank and removes its scratch dir."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from tests.conftest import ROOT

pytest.importorskip("torch")
pytestmark = pytest.mark.slow  # every test runs real all-reduce ranks under torch.distributed


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.hostile("handled")
def test_interrupt_leaves_nothing_behind(tmp_path, sig):
    env = dict(os.environ, PYTHONPATH=str(ROOT), ENVDOCTOR_SELFTEST_DIR=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "envdoctor", "selftest", "allreduce", "--backend", "gloo",
                             "--nproc", "2", "--iters", "200"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    for line in proc.stderr:
        if "ranks joined" in line or time.monotonic() > deadline:
            break
    ranks = [p for p in psutil.Process(proc.pid).children(recursive=True)]
    assert ranks, "the launcher and its ranks should be running by now"
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    _gone, alive = psutil.wait_procs(ranks, timeout=10)
    assert alive == []
    leftovers = [p for p in psutil.process_iter(["cmdline"]) if str(tmp_path) in " ".join(p.info["cmdline"] or [])]
    assert leftovers == []
    assert list(tmp_path.iterdir()) == []


@pytest.mark.hostile("handled")
def test_kill_9_of_envdoctor_leaves_no_launcher_or_rank(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), ENVDOCTOR_SELFTEST_DIR=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "envdoctor", "selftest", "allreduce", "--backend", "gloo",
                             "--nproc", "2", "--iters", "200"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    for line in proc.stderr:
        if "ranks joined" in line or time.monotonic() > deadline:
            break
    tree = psutil.Process(proc.pid).children(recursive=True)
    assert len(tree) >= 4, "the guard, the launcher and two ranks should be running by now"
    assert len(_run_processes(tmp_path)) >= 4  # the run's processes are told apart by their environment
    proc.kill()
    proc.communicate(timeout=60)
    _gone, alive = psutil.wait_procs(tree, timeout=60)
    assert alive == []
    deadline = time.monotonic() + 60  # and none that started after the snapshot above survives either
    while _run_processes(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _run_processes(tmp_path) == []


def _run_processes(scratch) -> list:
    """Live processes (not zombies) with this test's ENVDOCTOR_SELFTEST_DIR in their environment."""
    found = []
    for p in psutil.process_iter():
        try:
            if p.status() != psutil.STATUS_ZOMBIE and p.environ().get("ENVDOCTOR_SELFTEST_DIR") == str(scratch):
                found.append(p)
        except (psutil.Error, OSError):
            continue
    return found
