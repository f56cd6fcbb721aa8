"""Shared test helpers: fixture snapshots of real machine types, and running the CLI as users do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = ROOT / "tests" / "fixtures" / "snapshots"


def fixture_path(name: str) -> Path:
    return SNAPSHOTS / f"{name}.json"


def all_fixture_names() -> List[str]:
    return sorted(p.stem for p in SNAPSHOTS.glob("*.json"))


def run_cli(args: List[str], env: Optional[Dict[str, str]] = None, timeout: float = 180,
            stdin: Optional[str] = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(ROOT) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.pop("NO_COLOR", None)
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "envdoctor", *args], cwd=ROOT, env=full_env, capture_output=True,
                          text=True, timeout=timeout, input=stdin)


@pytest.fixture
def snapshot_of():
    from envdoctor.snapshot import load_snapshot

    return lambda name: load_snapshot(fixture_path(name))
