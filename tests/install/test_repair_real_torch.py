"""`fix` repairs a real torch of the release it already has, whose files were damaged: `check` finds it broken,
`fix` reinstalls that distribution (`--force-reinstall --no-deps`) from a local index and verifies it, and `check`
is then clean.

The real torch 2.13.0+cpu and its dependencies come from tools/fetch_test_wheels.py's folder (as in
tests/probes/test_broken_envs.py), served as a PEP 503 index on 127.0.0.1: the torch index at /whl/cpu/torch/,
the dependencies through PIP_INDEX_URL. Without the wheels the tests are skipped."""

from __future__ import annotations

import hashlib
import http.server
import json
import subprocess
import sys
import threading

import pytest
from packaging.utils import canonicalize_name, parse_wheel_filename

from tests.test_install import ROOT, clean_env, write_page
from tools.fetch_test_wheels import TORCH

pytestmark = [pytest.mark.slow, pytest.mark.heavy]


@pytest.fixture(scope="module")
def index(tmp_path_factory, wheelhouse):
    root = tmp_path_factory.mktemp("realindex")
    (root / "files").symlink_to(wheelhouse)
    by_name: dict = {}
    for whl in sorted(wheelhouse.glob("*.whl")):
        digest = hashlib.sha256(whl.read_bytes()).hexdigest()
        by_name.setdefault(canonicalize_name(parse_wheel_filename(whl.name)[0]), []).append(
            (f"/files/{whl.name.replace('+', '%2B')}#sha256={digest}", whl.name))
    write_page(root / "whl" / "cpu" / "torch", by_name["torch"])
    for name, links in by_name.items():
        if name != "torch":
            write_page(root / "simple" / name, links)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(root), **kw)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheelhouse):
    d = tmp_path_factory.mktemp("repair") / "v"
    subprocess.run([sys.executable, "-m", "venv", str(d)], check=True)
    subprocess.run([str(d / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(wheelhouse),
                    TORCH], check=True, env=clean_env(), capture_output=True, timeout=900)
    return d


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
