"""`fix --gpu/--target --yes` installs the target's plan here without a GPU, and each `fix --format` lock installs
against the 127.0.0.1 index: a requirements file with pip, a pylock.toml with pip (PEP 751 support), the uv snippet
with uv (from PATH, else from the registry)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.json_schemas import assert_valid
from tests.test_install import fake_torch, fix, freeze

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the lock files are checked by parsing them

TARGET = ["--gpu", "9.0", "--driver", "580.95.05", "--gpu-name", "NVIDIA H100 80GB HBM3"]


def add_cu130(site):
    whl = fake_torch(site.tmp, "2.14.1+cu130", cuda="13.0", archs=["sm_90", "sm_100"], requires=["fakedep>=2"])
    site.index.add_torch(whl, variant="cu130")
    return whl


def fresh_venv(site, name="img"):
    """A venv without torch: a Docker image's Python before the torch layer."""
    venv = site.tmp / name
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    return str(venv / "bin" / "python")


def installed(python, env):
    res = subprocess.run([python, "-c", "import torch, fakedep; print(torch.__version__, torch.version.cuda, fakedep.V)"],
                         capture_output=True, text=True, env=env)
    return res.stdout.split(), res.stderr


@pytest.mark.slow
def test_yes_installs_the_targets_plan_here_without_a_gpu(site):
    add_cu130(site)
    res = fix(site, *TARGET, "--yes")
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    assert doc["status"] == "installed" and doc["packages"][0]["pin"] == "torch==2.14.1+cu130"
    assert doc["target"]["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"
    assert_valid(doc)
    assert "run `envdoctor check` on the target machine" in res.stderr
    assert "torch==2.14.1+cu130" in freeze(site)
    assert installed(site.python, site.env)[0] == ["2.14.1+cu130", "13.0", "2"]


@pytest.mark.slow
def test_requirements_lock_pins_indexes_and_hashes_and_installs(site):
    whl = add_cu130(site)
    res = fix(site, *TARGET, "--format", "requirements", as_json=False)
    assert res.returncode == 0, res.stderr[-3000:]
    text = res.stdout
    assert f"--index-url {site.url}/simple\n" in text and f"--extra-index-url {site.url}/whl/cu130\n" in text
    digest = hashlib.sha256(whl.read_bytes()).hexdigest()
    assert f"torch==2.14.1+cu130 \\\n    --hash=sha256:{digest}\n" in text
    assert "fakedep==2.0 \\\n    --hash=sha256:" in text
    assert freeze(site).count("torch==2.13.0+cpu") == 1  # nothing was installed
    req = site.tmp / "requirements.txt"
    req.write_text(text)
    python = fresh_venv(site)
    env = {k: v for k, v in site.env.items() if k != "PIP_INDEX_URL"}  # the file names the indexes
    done = subprocess.run([python, "-m", "pip", "install", "-q", "-r", str(req)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert installed(python, env)[0] == ["2.14.1+cu130", "13.0", "2"]


@pytest.mark.slow
def test_a_file_without_an_index_hash_drops_every_hash_and_pylock_refuses(site, wheels):
    add_cu130(site)
    site.index.simple["fakedep"] = []
    site.index.add_simple(wheels["dep2"], "fakedep", hashed=False)
    res = fix(site, *TARGET, "--format", "requirements", as_json=False)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "--hash=" not in res.stdout and "# no --hash lines: no hash is published for fakedep" in res.stdout
    res = fix(site, *TARGET, "--format", "pylock", as_json=False)
    assert res.returncode == 1 and "no hash for fakedep" in res.stderr and not res.stdout


@pytest.mark.slow
def test_pylock_is_pep_751_and_installs(site):
    add_cu130(site)
    out = site.tmp / "pylock.toml"
    res = fix(site, *TARGET, "--format", "pylock", "-o", str(out), as_json=False)
    assert res.returncode == 0, res.stderr[-3000:]
    lock = tomllib.loads(out.read_text())
    assert lock["lock-version"] == "1.0" and lock["created-by"] == "envdoctor"
    by_name = {p["name"]: p for p in lock["packages"]}
    assert by_name["torch"]["version"] == "2.14.1+cu130" and by_name["torch"]["index"] == f"{site.url}/whl/cu130"
    assert by_name["fakedep"]["version"] == "2.0"
    for pkg in lock["packages"]:
        (wheel,) = pkg["wheels"]
        with urllib.request.urlopen(wheel["url"], timeout=30) as resp:  # 127.0.0.1
            assert hashlib.sha256(resp.read()).hexdigest() == wheel["hashes"]["sha256"]
    python = fresh_venv(site)
    env = {k: v for k, v in site.env.items() if k != "PIP_INDEX_URL"}
    done = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "-r", str(out)],
                          capture_output=True, text=True, env=env)
    if "pylock" in done.stderr and "not" in done.stderr and done.returncode != 0:
        pytest.skip(f"this pip cannot install from pylock.toml: {done.stderr.strip()[-200:]}")
    assert done.returncode == 0, done.stderr
    assert installed(python, env)[0] == ["2.14.1+cu130", "13.0", "2"]


@pytest.fixture(scope="session")
def uv(tmp_path_factory):
    found = shutil.which("uv")
    if found:
        return found
    d = tmp_path_factory.mktemp("uv")
    res = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(d), "uv"],
                         capture_output=True, text=True, timeout=300)
    if res.returncode != 0 or not (d / "bin" / "uv").exists():
        pytest.skip(f"uv is not on PATH and not installable from the registry: {res.stderr.strip()[-200:]}")
    return str(d / "bin" / "uv")


@pytest.mark.slow
def test_uv_snippet_installs_torch_from_its_explicit_index(site, uv):
    add_cu130(site)
    res = fix(site, *TARGET, "--format", "uv", as_json=False)
    assert res.returncode == 0, res.stderr[-3000:]
    snippet = res.stdout
    lock = tomllib.loads(snippet)
    assert lock["tool"]["uv"]["sources"] == {"torch": {"index": "pytorch-cu130"}}
    assert lock["tool"]["uv"]["index"] == [{"name": "pytorch-cu130", "url": f"{site.url}/whl/cu130", "explicit": True}]
    deps = next(ln for ln in snippet.splitlines() if ln.startswith("# [project] dependencies: ")).split(": ", 1)[1]
    project = site.tmp / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "img"\nversion = "0"\nrequires-python = ">=3.8"\ndependencies = [{deps}]\n\n{snippet}')
    python = fresh_venv(site)
    env = dict(site.env, UV_DEFAULT_INDEX=f"{site.url}/simple", UV_CACHE_DIR=str(site.tmp / "uvc"), UV_NO_CONFIG="1")
    env.pop("PIP_INDEX_URL")
    done = subprocess.run([uv, "pip", "install", "--python", python, "-r", "pyproject.toml"], cwd=project,
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert installed(python, env)[0] == ["2.14.1+cu130", "13.0", "2"]
    assert os.path.basename(uv).startswith("uv")
    assert Path(python).exists()
