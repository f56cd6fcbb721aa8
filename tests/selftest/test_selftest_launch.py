"""The deadline and the process-tree cleanup, on real processes (no torch)."""

from __future__ import annotations

import os
import sys
import textwrap
import time

import pytest

from envdoctor.selftest import launch as launch_mod
from envdoctor.selftest.launch import RUN_ENV, launch

from .conftest import marked

# A launcher that behaves like torch's: ranks in sessions of their own; then it waits, exits or ignores SIGTERM.
TREE = textwrap.dedent("""
    import signal, subprocess, sys, time
    mode = sys.argv[1]
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = [sys.executable, "-c", "import signal,sys,time\\n"
             "if sys.argv[1] == 'stubborn': signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
             "time.sleep(300)", mode]
    for _ in range(2):
        subprocess.Popen(child, start_new_session=True)
    print("started", flush=True)
    if mode == "orphan":
        sys.exit(3)
    time.sleep(300)
""")


def run_tree(tmp_path, mode, marker, timeout):
    script = tmp_path / "tree.py"
    script.write_text(TREE)
    env = dict(os.environ, ENVDOCTOR_TEST_MARK=marker)
    return launch([sys.executable, str(script), mode], env, timeout, tmp_path / "log.txt")


@pytest.mark.slow
def test_deadline_kills_ranks_in_their_own_sessions(tmp_path, marker):
    start = time.monotonic()
    res = run_tree(tmp_path, "wait", marker, timeout=3)
    assert res.timed_out and not res.ok
    assert time.monotonic() - start < 3 + launch_mod.TERM_GRACE + 2
    assert "started" in res.log_text()
    assert marked(marker) == []
    assert "timed out after 3s" in res.describe()


@pytest.mark.slow
def test_processes_ignoring_sigterm_get_sigkill(tmp_path, marker, monkeypatch):
    monkeypatch.setattr(launch_mod, "TERM_GRACE", 1.0)
    start = time.monotonic()
    res = run_tree(tmp_path, "stubborn", marker, timeout=2)
    assert res.timed_out
    assert time.monotonic() - start < 2 + 2 * 1.0 + 2
    assert marked(marker) == []


def test_orphans_of_an_exited_launcher_are_swept(tmp_path, marker):
    res = run_tree(tmp_path, "orphan", marker, timeout=30)
    assert res.returncode == 3 and not res.timed_out
    assert res.leftovers == 2  # the two ranks it abandoned, found by the run id in their environment
    assert marked(marker) == []


def test_a_clean_run_leaves_nothing_and_counts_nothing(tmp_path, marker):
    res = launch([sys.executable, "-c", "print('hello')"], dict(os.environ, ENVDOCTOR_TEST_MARK=marker), 30,
                 tmp_path / "log.txt")
    assert res.ok and res.leftovers == 0 and res.log_text().strip() == "hello"


def test_missing_program_is_a_result_not_an_exception(tmp_path):
    res = launch(["/nonexistent/python"], dict(os.environ), 5, tmp_path / "log.txt")
    assert not res.ok and res.error and "cannot start /nonexistent/python" in res.error


def test_every_process_carries_the_run_id(tmp_path):
    script = tmp_path / "env.py"
    script.write_text(f"import os; print(os.environ['{RUN_ENV}'])")
    env = dict(os.environ, **{RUN_ENV: "run-123"})
    res = launch([sys.executable, str(script)], env, 30, tmp_path / "log.txt")
    assert res.log_text().strip() == "run-123"
