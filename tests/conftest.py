"""Shared test helpers: fixture snapshots of real machine types, running the CLI as users do, and a hermetic
environment for every test."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = ROOT / "tests" / "fixtures" / "snapshots"
# The user's home as the session found it (tests get a fake one): where pyenv's interpreters are.
USER_HOME = Path.home()
# Where envdoctor (and the tools it runs) keep per-user files: the wheel index copy, fix state, crash reports.
USER_DIRS = {"XDG_CACHE_HOME": ".cache", "XDG_STATE_HOME": ".local/state", "XDG_CONFIG_HOME": ".config",
             "LOCALAPPDATA": "AppData/Local"}


def hermetic_environ(environ: Mapping[str, str], home: Path) -> Dict[str, str]:
    """`environ` with no ENVDOCTOR_* setting and every per-user directory inside `home`.

    One cache stays the user's: the ops DeepSpeed JIT-compiles in the self-tests (torch's extensions
    directory). It changes how long a test takes, never its answer, and a fresh one costs minutes."""
    env = {k: v for k, v in environ.items() if not k.startswith("ENVDOCTOR_")}
    user_cache = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".cache")
    env.setdefault("TORCH_EXTENSIONS_DIR", str(Path(user_cache) / "torch_extensions"))
    env["HOME"] = str(home)
    env.update({name: str(home / sub) for name, sub in USER_DIRS.items()})
    return env


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test sees the user's envdoctor cache, state or ENVDOCTOR_* settings (nor do the CLIs it starts).

    Returns the fake home directory."""
    from envdoctor import processes

    monkeypatch.setattr(processes, "_refusing", False)  # a quitting app in an earlier test refused new commands
    home = tmp_path_factory.mktemp("home")
    env = hermetic_environ(os.environ, home)
    for name in set(os.environ) - set(env):
        monkeypatch.delenv(name)
    for name, value in env.items():
        if os.environ.get(name) != value:
            monkeypatch.setenv(name, value)
    return home


def fixture_path(name: str) -> Path:
    return SNAPSHOTS / f"{name}.json"


@functools.cache
def bundled_knowledge():
    """The repository's rules, tables and wheel index, named explicitly (no environment, no user cache).

    Loaded and validated once per test process, as the CLI does once per run: the tests that diagnose many
    snapshots (tests/rules/test_unknowns.py: hundreds of diagnoses per fixture) spent most of their time
    re-reading and re-validating the data files. A Knowledge is frozen; the files under ROOT never change
    during a run."""
    from envdoctor.knowledge import knowledge_from
    from envdoctor.wheels.index import bundled_path, load_index

    return knowledge_from(ROOT / "rules", load_index(bundled_path()))


def diagnose_bundled(snapshot, baseline=None):
    """`diagnose` with the repository's knowledge."""
    from envdoctor.diagnose import diagnose

    know = bundled_knowledge()
    return diagnose(snapshot, know.rules, know.index, baseline)


def all_fixture_names() -> List[str]:
    return sorted(p.stem for p in SNAPSHOTS.glob("*.json"))


def fast_subset(names: List[str], fast: Sequence[str]) -> list:
    """`names` for parametrize: those in `fast` run in the fast loop (-m "not slow"), the others are marked slow,
    so CI's suite still runs every one."""
    assert set(fast) <= set(names), set(fast) - set(names)
    return [n if n in fast else pytest.param(n, marks=pytest.mark.slow) for n in names]


def run_cli(args: List[str], env: Optional[Dict[str, str]] = None, timeout: float = 180,
            stdin: Optional[str] = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(ROOT) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.pop("NO_COLOR", None)
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "envdoctor", *args], cwd=ROOT, env=full_env, capture_output=True,
                          text=True, timeout=timeout, input=stdin)


def run_cli_in_process(args: List[str], env: Optional[Dict[str, str]] = None,
                       stdin: Optional[str] = None) -> subprocess.CompletedProcess:
    """What `run_cli` returns, from `main(args)` in this process: no new interpreter to start and nothing to
    import again. For tests of what a command says; a test of the process boundary (signals, exit on a closed
    output, file descriptors) keeps run_cli. The environment, standard streams, working directory and SIGTERM
    handler are put back afterwards."""
    import io
    import signal

    from envdoctor.cli import main

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_sigterm = signal.getsignal(signal.SIGTERM)
    out, err = io.StringIO(), io.StringIO()
    try:
        os.environ.pop("NO_COLOR", None)
        os.environ.update(env or {})
        os.chdir(ROOT)
        sys.stdin = io.TextIOWrapper(io.BytesIO((stdin or "").encode()), encoding="utf-8")
        sys.stdout, sys.stderr = out, err
        code = main(list(args))
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        signal.signal(signal.SIGTERM, saved_sigterm)
    return subprocess.CompletedProcess(["envdoctor", *args], code, out.getvalue(), err.getvalue())


@pytest.fixture
def snapshot_of():
    from envdoctor.snapshot import load_snapshot

    return lambda name: load_snapshot(fixture_path(name))


@pytest.fixture(scope="session")
def wheelhouse() -> Path:
    """The pinned real wheels (torch 2.13.0 CPU and friends) that `tools/fetch_test_wheels.py` fetched."""
    from tools.fetch_test_wheels import default_dir

    if not sys.platform.startswith("linux") or sys.version_info[:2] != (3, 11):
        pytest.skip("the pinned wheels are for CPython 3.11 on Linux")
    d = default_dir()
    if not (d / ".complete").exists():
        pytest.skip(f"no test wheels in {d}: run `python tools/fetch_test_wheels.py`")
    return d
