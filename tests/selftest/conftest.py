"""Helpers for the self-test tests: the CLI as users run it, and processes left behind, found by a marker."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Dict, List, Optional

import psutil
import pytest

from tests.json_schemas import assert_valid

ROOT = Path(__file__).resolve().parents[2]


def cli(args: List[str], env: Optional[Dict[str, str]] = None, timeout: float = 240) -> subprocess.CompletedProcess:
    full = dict(os.environ)
    full["PYTHONPATH"] = str(ROOT) + os.pathsep + full.get("PYTHONPATH", "")
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "envdoctor", *args], cwd=ROOT, env=full, capture_output=True,
                          text=True, timeout=timeout)


def popen_cli(args: List[str], env: Dict[str, str]) -> subprocess.Popen:
    full = dict(os.environ)
    full["PYTHONPATH"] = str(ROOT) + os.pathsep + full.get("PYTHONPATH", "")
    full.update(env)
    return subprocess.Popen([sys.executable, "-m", "envdoctor", *args], cwd=ROOT, env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def doc(proc: subprocess.CompletedProcess) -> dict:
    """The `selftest --json` document a run printed; it must be valid under envdoctor/data/selftest.schema.json."""
    data = json.loads(proc.stdout)
    assert data["schema"] == "envdoctor.selftest/1"
    assert_valid(data)
    return data


def by_name(data: dict, name: str) -> dict:
    return next(t for t in data["tests"] if t["name"] == name)


def marked(marker: str) -> List[psutil.Process]:
    """Live processes whose environment carries MARK=marker: everything a CLI run started, at any depth."""
    found = []
    for p in psutil.process_iter():
        try:
            if p.pid != os.getpid() and p.environ().get("ENVDOCTOR_TEST_MARK") == marker and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            continue
    return found


@pytest.fixture
def marker():
    """A unique mark for one test's processes; the test fails if any of them outlives it."""
    mark = uuid.uuid4().hex
    yield mark
    left = marked(mark)
    for p in left:  # do not leak into the next test even when this one failed
        try:
            p.kill()
        except psutil.Error:
            pass
    assert not left, f"processes left behind: {[p.pid for p in left]}"


@pytest.fixture(autouse=True)
def run_dirs(tmp_path, monkeypatch):
    """Kept run directories of failed tests go under the test's tmp_path, not the system temp directory."""
    monkeypatch.setenv("ENVDOCTOR_SELFTEST_DIR", str(tmp_path / "runs"))
    return tmp_path / "runs"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
