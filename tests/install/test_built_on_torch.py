"""A package built on torch (DeepSpeed: an sdist) is built against the torch `fix` leaves in place, adds its own
dependencies, and changes nothing that was installed; when it cannot, the environment is rolled back.

The sdist is a small `deepspeed` 0.19.8 on the 127.0.0.1 index of tests/test_install.py, with an in-tree
build backend (no setuptools, no network) that records the torch it was built against."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.test_install import ROOT, build_wheel, fake_torch, fix, freeze

BACKEND = '''
import base64, hashlib, os, zipfile
NAME, VERSION = "deepspeed", "0.19.8"
REQUIRES = {requires!r}


def _wheel(directory):
    try:
        import torch
        built_with = torch.__version__
    except ImportError:
        built_with = None
    di = f"{{NAME}}-{{VERSION}}.dist-info"
    files = {{
        "deepspeed/__init__.py": f"__version__ = {{VERSION!r}}\\nBUILT_WITH_TORCH = {{built_with!r}}\\n",
        "deepspeed/env_report.py": "def main(**kw):\\n    print('DeepSpeed general environment info: ok')\\n",
        f"{{NAME}}-{{VERSION}}.data/scripts/ds_report": "#!python\\nfrom deepspeed.env_report import main\\nmain()\\n",
        f"{{di}}/METADATA": f"Metadata-Version: 2.1\\nName: {{NAME}}\\nVersion: {{VERSION}}\\n"
                          + "".join(f"Requires-Dist: {{r}}\\n" for r in REQUIRES),
        f"{{di}}/WHEEL": "Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
    }}
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{{path}},sha256={{digest}},{{len(text.encode())}}")
    files[f"{{di}}/RECORD"] = "\\n".join(record + [f"{{di}}/RECORD,,"]) + "\\n"
    name = f"{{NAME}}-{{VERSION}}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory)
'''


def fake_deepspeed_sdist(out: Path, requires) -> Path:
    sdist = out / "deepspeed-0.19.8.tar.gz"
    members = {
        "deepspeed-0.19.8/pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
        "deepspeed-0.19.8/backend.py": BACKEND.format(requires=list(requires)),
        "deepspeed-0.19.8/PKG-INFO": "Metadata-Version: 2.1\nName: deepspeed\nVersion: 0.19.8\n",
    }
    with tarfile.open(sdist, "w:gz") as tf:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return sdist


def _deepspeed(site) -> list:
    out = subprocess.run([site.python, "-c", "import deepspeed, torch, fakedep; "
                          "print(deepspeed.__version__, deepspeed.BUILT_WITH_TORCH, torch.__version__, fakedep.V)"],
                         capture_output=True, text=True, env=site.env)
    return out.stdout.split()


@pytest.mark.slow
def test_deepspeed_is_built_against_the_new_torch_and_adds_only_its_own_dependencies(site):
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=1"]))
    site.index.add_simple(build_wheel(site.tmp, "hjson", "3.1.0", {"hjson/__init__.py": ""}), "hjson")
    site.index.add_simple(fake_deepspeed_sdist(site.tmp, ["torch>=2.0.0", "hjson", "fakedep"]), "deepspeed")
    res = fix(site, "--yes", "--deepspeed")
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    assert doc["status"] == "installed", doc["message"]
    build = doc["commands"][-1]
    assert "--no-build-isolation" in build and "--constraint" in build and build[-1] == "deepspeed==0.19.8"
    assert "--no-index" not in build
    # Built in the target against the torch the same fix installed; fakedep stayed at the installed 1.0.
    assert _deepspeed(site) == ["0.19.8", "2.14.1+cpu", "2.14.1+cpu", "1"]
    after = freeze(site)
    assert "hjson==3.1.0" in after and "fakedep==1.0" in after and "torch==2.14.1+cpu" in after
    assert (site.venv / "bin" / "ds_report").is_file()


@pytest.mark.slow
def test_deepspeed_that_would_change_an_installed_package_rolls_everything_back(site):
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=1"]))
    # It wants fakedep 2 while 1.0 is installed: the constraints keep every installed version, so pip refuses.
    site.index.add_simple(fake_deepspeed_sdist(site.tmp, ["torch>=2.0.0", "fakedep>=2"]), "deepspeed")
    before = freeze(site)
    res = fix(site, "--yes", "--deepspeed")
    assert res.returncode == 3, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    assert doc["status"] == "rolled_back" and doc["rollback_ok"] is True, doc["message"]
    assert doc["message"].startswith("install failed")
    assert freeze(site) == before


@pytest.mark.slow
def test_deepspeed_only_keeps_the_installed_torch(site):
    site.index.add_simple(fake_deepspeed_sdist(site.tmp, ["torch>=2.0.0"]), "deepspeed")
    res = _fix_keeping_torch(site)
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    assert [p["name"] for p in doc["packages"]] == ["deepspeed"] and doc["status"] == "installed", doc["message"]
    assert _deepspeed(site) == ["0.19.8", "2.13.0+cpu", "2.13.0+cpu", "1"]
    second = _fix_keeping_torch(site)
    assert json.loads(second.stdout)["status"] == "nothing_to_do", second.stdout


def _fix_keeping_torch(site):
    """`fix --deepspeed` without the --torch 2.14.1 of tests.test_install.fix: the installed torch is kept."""
    argv = [sys.executable, "-m", "envdoctor", "fix", "--python", site.python, "--index-base", f"{site.url}/whl",
            "--deepspeed", "--yes", "--json"]
    return subprocess.run(argv, cwd=ROOT, env=site.env, capture_output=True, text=True, timeout=300)
