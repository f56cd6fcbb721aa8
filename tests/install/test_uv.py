"""The uv path of `fix --yes`, with the real uv (installed from the configured package registry once per
session), against the 127.0.0.1 index of tests/test_install.py: it installs, a failed verification rolls back,
`undo` puts the environment back, a uv-made venv without pip downloads with envdoctor's own pip (raw progress:
a start and an end line per wheel), and a uv project gets `uv add`/`uv sync` instead of an install into .venv."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.test_install import ROOT, assert_rolled_back, build_wheel, fake_torch, fix, freeze, undo

pytestmark = pytest.mark.registry


@pytest.fixture(scope="session")
def uv_bin(tmp_path_factory) -> Path:
    if shutil.which("uv"):
        return Path(shutil.which("uv")).parent
    d = tmp_path_factory.mktemp("uv")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENVDOCTOR_", "PYTHON"))}
    res = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(d), "uv"], capture_output=True,
                         text=True, timeout=600, env=env)
    if res.returncode != 0 or not (d / "bin" / "uv").exists():
        pytest.skip(f"cannot install uv from the configured registry: {res.stderr.strip()[-300:]}")
    return d / "bin"


@pytest.fixture
def uv_site(site, uv_bin):
    site.env.update(ENVDOCTOR_INSTALLER="uv", PATH=f"{uv_bin}{os.pathsep}{site.env['PATH']}",
                    UV_CACHE_DIR=str(site.tmp / "uvcache"), UV_NO_CONFIG="1")
    return site


def test_uv_installs_and_undo_puts_back(uv_site):
    site = uv_site
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    before = freeze(site)
    res = fix(site, "--yes")
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    assert doc["status"] == "installed", doc["message"]
    install = doc["commands"][1]
    assert Path(install[0]).name == "uv" and install[1:5] == ["pip", "install", "--python", site.python]
    assert "--no-index" in install
    assert "torch==2.14.1+cpu" in freeze(site)
    res = undo(site)
    assert res.returncode == 0, res.stderr
    assert freeze(site) == before


def test_uv_verification_failure_rolls_back(uv_site):
    site = uv_site
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", reports="2.14.1+cu130", cuda="13.0", requires=["fakedep>=2"]))
    before = freeze(site)
    res = fix(site, "--yes")
    assert Path(json.loads(res.stdout)["commands"][1][0]).name == "uv"
    assert_rolled_back(site, res, before)
    assert "verification failed" in json.loads(res.stdout)["message"]


def test_a_uv_venv_without_pip_downloads_with_raw_progress(uv_site, wheels):
    site = uv_site
    venv = site.tmp / "uvvenv"
    uv = str(Path(site.env["PATH"].split(os.pathsep)[0]) / "uv")
    subprocess.run([uv, "venv", "--python", sys.executable, str(venv)], check=True, env=site.env, capture_output=True)
    python = str(venv / "bin" / "python")
    subprocess.run([uv, "pip", "install", "--python", python, "--no-index", "--find-links", str(wheels["dep1"].parent),
                    "torch==2.13.0+cpu", "fakedep==1.0"], check=True, env=site.env, capture_output=True)
    site.index.add_torch(_big_torch(site.tmp))
    res = subprocess.run([sys.executable, "-m", "envdoctor", "fix", "--python", python, "--torch", "2.14.1",
                          "--index-base", f"{site.url}/whl", "--yes", "--json"], cwd=ROOT, env=site.env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    download = json.loads(res.stdout)["commands"][0]
    assert download[0] == sys.executable and download[download.index("--progress-bar") + 1] == "raw"
    lines = res.stderr.splitlines()
    assert not [ln for ln in lines if "Progress " in ln]
    assert len([ln for ln in lines if "downloading torch-2.14.1+cpu-py3-none-any.whl" in ln]) == 1
    ends = [ln for ln in lines if "downloaded torch-2.14.1+cpu-py3-none-any.whl: " in ln]
    assert len(ends) == 1, res.stderr[-3000:]


def _big_torch(out: Path) -> Path:
    """A fake torch of about 1 MB that does not compress: pip shows progress only for files over 512 KiB."""
    (out / "small").mkdir()
    small = fake_torch(out / "small", "2.14.1+cpu")
    with zipfile.ZipFile(small) as zf:
        init = zf.read("torch/__init__.py").decode()
    return build_wheel(out, "torch", "2.14.1+cpu", {"torch/__init__.py": init, "torch/blob.txt": os.urandom(500_000).hex()},
                       requires=["fakedep>=2"])


def test_a_uv_project_gets_project_commands_not_an_install_into_its_venv(uv_site):
    site = uv_site
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    project = site.tmp / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "0"\nrequires-python = ">=3.8"\n')
    (project / "uv.lock").write_text("version = 1\n")
    os.symlink(site.venv, project / ".venv")
    before = freeze(site)
    python = str(project / ".venv" / "bin" / "python")
    argv = [sys.executable, "-m", "envdoctor", "fix", "--python", python, "--torch", "2.14.1",
            "--index-base", f"{site.url}/whl", "--json"]
    res = subprocess.run([*argv, "--dry-run"], cwd=project, env=dict(site.env, PYTHONPATH=str(ROOT)),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    real = str(project.resolve())
    assert doc["commands"] == [["uv", "add", "--project", real, "--index", f"pytorch-cpu={site.url}/whl/cpu",
                                "torch==2.14.1+cpu"], ["uv", "sync", "--project", real]]
    assert any("uv.lock" in n and "uv sync" in n for n in doc["notes"])
    res = subprocess.run([*argv, "--yes"], cwd=project, env=dict(site.env, PYTHONPATH=str(ROOT)),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "is the environment of the uv project" in res.stderr, res.stderr[-3000:]
    assert freeze(site) == before
