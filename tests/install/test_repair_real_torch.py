"""`fix` repairs a real torch of the release it already has, whose files were damaged: `check` finds it broken,
`fix` reinstalls that distribution (`--force-reinstall --no-deps`) from a local index and verifies it, and `check`
is then clean.

The real torch 2.13.0+cpu and its dependencies come from tools/fetch_test_wheels.py's folder (as in
tests/probes/test_broken_envs.py), served as a PEP 503 index on 127.0.0.1: the torch index at /whl/cpu/torch/,
the dependencies through PIP_INDEX_URL. Without the wheels the tests are skipped."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.install.local_index import serve_wheelhouse, torch_venv
from tests.test_install import ROOT, clean_env

pytestmark = [pytest.mark.slow, pytest.mark.heavy]


@pytest.fixture(scope="module")
def index(tmp_path_factory, wheelhouse):
    yield from serve_wheelhouse(tmp_path_factory.mktemp("realindex"), wheelhouse)


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheelhouse):
    return torch_venv(tmp_path_factory.mktemp("repair") / "v", wheelhouse)


def _check(python: str, env: dict) -> dict:
    res = subprocess.run([sys.executable, "-m", "envdoctor", "check", "--python", python, "--json"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode in (0, 1), res.stderr[-3000:]
    return json.loads(res.stdout)


def _freeze(python: str) -> str:
    return subprocess.run([python, "-m", "pip", "freeze", "--all"], capture_output=True, text=True, check=True,
                          env=clean_env()).stdout


@pytest.mark.parametrize("damaged", ["torch/lib/libtorch_cpu.so", "torch/functional.py"])
@pytest.mark.hostile("handled")
def test_fix_reinstalls_a_damaged_torch_of_the_same_release(venv, index, tmp_path, damaged):
    python = str(venv / "bin" / "python")
    site = next((venv / "lib").glob("python3.*/site-packages"))
    healthy = _freeze(python)
    (site / damaged).unlink()
    env = clean_env(PIP_INDEX_URL=f"{index}/simple", XDG_CACHE_HOME=str(tmp_path / "cache"),
                    PIP_CACHE_DIR=str(tmp_path / "pipc"), ENVDOCTOR_INSTALLER="pip", PYTHONDONTWRITEBYTECODE="1")
    broken = subprocess.run([python, "-c", "import torch"], capture_output=True, text=True, env=env)
    assert broken.returncode != 0
    before = _check(python, env)
    assert [f["severity"] for f in before["findings"] if f["category"] == "torch_broken"] == ["error"]
    assert before["snapshot"]["torch"]["importable"] is False
    if damaged.endswith(".so"):
        assert before["snapshot"]["torch"]["missing_files"] == [damaged]

    res = subprocess.run([sys.executable, "-m", "envdoctor", "fix", "--python", python, "--torch", "2.13",
                          "--index-base", f"{index}/whl", "--yes", "--json"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=1200)
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    assert doc["status"] == "installed", doc["message"]
    assert "reinstalled torch==2.13.0+cpu" in doc["message"]
    assert any("--force-reinstall" in c and "--no-deps" in c and "torch==2.13.0+cpu" in c for c in doc["commands"])
    assert (site / damaged).exists()
    assert _freeze(python) == healthy
    works = subprocess.run([python, "-c", "import torch; print(torch.zeros(2).add(1).sum().item())"],
                           capture_output=True, text=True, env=env)
    assert works.stdout.strip() == "2.0", works.stderr[-2000:]
    after = _check(python, env)
    assert after["snapshot"]["torch"]["importable"] is True
    assert [f["id"] for f in after["findings"] if f["severity"] in ("error", "warning")] == []
