"""`fix --yes --deepspeed` with the real DeepSpeed sdist from the configured package registry (the one network
use the suite allows besides 127.0.0.1): a fresh venv with torch 2.13.0+cpu keeps that torch, and DeepSpeed
imports and runs ds_report afterwards. Minutes (a torch install, a DeepSpeed build): marked `registry` and
`slow`; `-m 'not registry'` skips it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.test_install import ROOT
from tools.fetch_test_wheels import TORCH, default_dir

pytestmark = [pytest.mark.slow, pytest.mark.registry]


def _registry_env(tmp_path) -> dict:
    """The user's own pip configuration (registry, mirrors, certificates); envdoctor's state in tmp_path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENVDOCTOR_")}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), XDG_STATE_HOME=str(tmp_path / "state"),
               ENVDOCTOR_INSTALLER="pip", PYTHONDONTWRITEBYTECODE="1")
    return env


def _link_installed(name: str, site_packages: Path) -> None:
    """Hard-link the files of the running interpreter's `name` and everything it requires into site_packages:
    the same installed torch in a fresh venv in seconds (pip and DeepSpeed's build never write to them in place)."""
    todo, seen = [name], set()
    while todo:
        dist = metadata.distribution(todo.pop())
        key = canonicalize_name(dist.metadata["Name"])
        if key in seen:
            continue
        seen.add(key)
        root = Path(dist.locate_file("")).resolve()
        for f in dist.files or []:
            src = Path(dist.locate_file(f)).resolve()
            if root not in src.parents or not src.is_file():
                continue  # a console script outside site-packages
            dst = site_packages / src.relative_to(root)
            dst.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)


@pytest.fixture(scope="module")
def torch_venv(tmp_path_factory):
    if not sys.platform.startswith("linux"):
        pytest.skip("torch 2.13.0+cpu wheels are for Linux here")
    d = tmp_path_factory.mktemp("ds") / "v"
    subprocess.run([sys.executable, "-m", "venv", str(d)], check=True)
    try:
        have = metadata.version("torch")
    except metadata.PackageNotFoundError:
        have = None
    if have == TORCH.split("==")[1]:
        _link_installed("torch", next((d / "lib").glob("python3.*/site-packages")))
        return d
    links = ["--find-links", str(default_dir())] if (default_dir() / ".complete").exists() else []
    res = subprocess.run([str(d / "bin" / "python"), "-m", "pip", "install", "-q", *links, TORCH],
                         capture_output=True, text=True, timeout=1200, env=_registry_env(tmp_path_factory.mktemp("e")))
    if res.returncode != 0:
        pytest.skip(f"cannot install {TORCH} from the configured registry: {res.stderr.strip()[-300:]}")
    return d


def test_deepspeed_from_the_registry_builds_against_the_torch_in_place(torch_venv, tmp_path):
    python = str(torch_venv / "bin" / "python")
    env = _registry_env(tmp_path)
    res = subprocess.run([sys.executable, "-m", "envdoctor", "fix", "--python", python, "--yes", "--deepspeed", "--json"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert res.returncode == 0, res.stderr[-4000:]
    doc = json.loads(res.stdout)
    assert doc["status"] == "installed", doc["message"]
    assert [p["name"] for p in doc["packages"]] == ["deepspeed"]
    out = subprocess.run([python, "-c", "import torch, deepspeed; print('VERSIONS', torch.__version__, deepspeed.__version__)"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    _, torch_version, ds_version = out.stdout.splitlines()[-1].split()
    assert torch_version == "2.13.0+cpu"
    assert ds_version == doc["packages"][0]["version"]
    report = subprocess.run([str(torch_venv / "bin" / "ds_report")], capture_output=True, text=True, env=env, timeout=300)
    assert report.returncode == 0 and "DeepSpeed general environment info" in report.stdout, report.stderr[-2000:]
