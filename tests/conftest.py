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
SHARED = ROOT.parent / "shared"


def fixture_path(name: str) -> Path:
    return SNAPSHOTS / f"{name}.json"


def bundled_knowledge():
    """The repository's rules, tables and wheel index, named explicitly (no environment, no user cache)."""
    from envdoctor.knowledge import load_knowledge
    from envdoctor.wheels.index import bundled_path

    return load_knowledge(ROOT / "rules", bundled_path())


def diagnose_bundled(snapshot, baseline=None):
    """`diagnose` with the repository's knowledge."""
    from envdoctor.diagnose import diagnose

    know = bundled_knowledge()
    return diagnose(snapshot, know.rules, know.index, baseline)


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
