"""`fix` installs flash-attn's release wheel built for the torch in place, by its file from the release host (here a
mirror on 127.0.0.1 through ENVDOCTOR_RELEASE_MIRROR), and the verifier's fresh check no longer finds ED508.

The venv holds a stand-in torch 2.8.0+cu128 (its __init__ reports torch.version.cuda 12.8) and a flash-attn 2.8.3
installed from the release file built for torch 2.7, as a user who upgraded torch has it: the probe reads the torch
it was built for from the file name pip recorded (direct_url.json)."""

from __future__ import annotations

import http.server
import json
import platform
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.test_install import ROOT, build_wheel, clean_env, fake_torch

PY = f"{sys.version_info.major}.{sys.version_info.minor}"
TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"
RELEASES = "/Dao-AILab/flash-attention/releases/download"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    sys.platform != "linux" or platform.machine() != "x86_64" or PY not in ("3.9", "3.10", "3.11", "3.12", "3.13"),
    reason="flash-attn 2.8.3's release files are for CPython 3.9-3.13 on Linux x86_64")]


def _flash_attn(out: Path, torch_mm: str) -> Path:
    """flash-attn 2.8.3 as its release workflow names it: the wheel's metadata says 2.8.3, the file name adds
    +cu12torch<X.Y>cxx11abiTRUE and the CPython tag."""
    built = build_wheel(out, "flash_attn", "2.8.3", {"flash_attn/__init__.py": f"__version__ = '2.8.3'\nBUILT = '{torch_mm}'\n"})
    return built.rename(out / f"flash_attn-2.8.3+cu12torch{torch_mm}cxx11abiTRUE-{TAG}-{TAG}-linux_x86_64.whl")


@pytest.fixture
def site(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    torch = fake_torch(wheels, "2.8.0+cu128", cuda="12.8", archs=["sm_80", "sm_90"])
    old = _flash_attn(wheels, "2.7")
    served = tmp_path / "mirror" / RELEASES.strip("/") / "v2.8.3"
    served.mkdir(parents=True)
    new = _flash_attn(tmp_path, "2.8")
    shutil.copy(new, served / new.name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(torch), str(old)], check=True,
                   env=clean_env(), capture_output=True, timeout=300)
    requests: list = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(tmp_path / "mirror"), **kw)

        def log_message(self, *a):
            requests.append(self.path)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    mirror = f"http://127.0.0.1:{server.server_address[1]}"
    env = clean_env(PIP_INDEX_URL=f"{mirror}/simple", XDG_CACHE_HOME=str(tmp_path / "cache"),
                    PIP_CACHE_DIR=str(tmp_path / "pipc"), ENVDOCTOR_INSTALLER="pip", PYTHONDONTWRITEBYTECODE="1",
                    ENVDOCTOR_RELEASE_MIRROR=mirror)
    yield type("Site", (), {"python": python, "env": env, "mirror": mirror, "requests": requests,
                            "file": new.name, "served": served})
    server.shutdown()


def _envdoctor(site, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envdoctor", *args, "--python", site.python], cwd=ROOT, env=site.env,
                          capture_output=True, text=True, timeout=600)


def _ed508(site) -> list:
    res = _envdoctor(site, "check", "--json")
    assert res.returncode in (0, 1), res.stderr[-3000:]
    return [f for f in json.loads(res.stdout)["findings"] if f["id"] == "ED508"]


def _built_for(site) -> str:
    return subprocess.run([site.python, "-c", "import flash_attn; print(flash_attn.BUILT)"], capture_output=True,
                          text=True, env=site.env, check=True).stdout.strip()


def test_the_release_file_for_the_torch_in_place_is_planned_installed_and_verified(site):
    [finding] = _ed508(site)
    assert "torch 2.7" in finding["title"]

    dry = _envdoctor(site, "fix", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr[-3000:]
    plan = json.loads(dry.stdout)
    url = f"{site.mirror}{RELEASES}/v2.8.3/{site.file}"
    [step] = [s for s in plan["steps"] if s["id"] == "ED508:flash-attn"]
    assert step["status"] == "planned" and step["applicability"] == "safe" and step["installs"] == [url]
    assert "built for torch 2.8.0+cu128" in step["reason"]
    assert plan["files"] == [url] and "rebuilds" not in plan
    [entry] = [i for i in plan["installs"] if i.get("release_file")]
    assert (entry["name"], entry["version"], entry["hashed"]) == ("flash-attn", "2.8.3+cu12torch2.8cxx11abitrue", False)
    assert any("--no-deps" in c and url in c for c in plan["commands"])  # downloaded before anything changes
    lock = _envdoctor(site, "fix", "--dry-run", "--format", "requirements")
    assert lock.returncode == 0 and f"\nflash-attn @ {url}\n" in lock.stdout, lock.stderr[-2000:]
    pylock = _envdoctor(site, "fix", "--dry-run", "--format", "pylock")
    assert pylock.returncode != 0 and "the release host of flash-attn publishes no hash" in pylock.stderr

    res = _envdoctor(site, "fix", "--yes", "--json")
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    doc = json.loads(res.stdout)
    assert doc["status"] == "installed", doc.get("message")
    assert site.file in doc["message"]
    assert _built_for(site) == "2.8"
    assert _ed508(site) == []  # the verifier's finding is gone in a fresh check too
    assert any(p.endswith(site.file.replace("+", "%2B")) or p.endswith(site.file) for p in site.requests)


def test_a_release_file_missing_on_the_host_changes_nothing(site):
    (site.served / site.file).unlink()  # the workflow's build for this torch failed: no file in the release
    res = _envdoctor(site, "fix", "--yes", "--json")
    assert res.returncode == 3, (res.stdout[-3000:], res.stderr[-3000:])
    doc = json.loads(res.stdout)
    assert doc["status"] == "rolled_back" and "nothing was changed" in doc["message"]
    assert _built_for(site) == "2.7"
