"""Real broken environments, built from real wheels: what `envdoctor check --python VENV --json` records about
each, and the finding it gives.

One venv per session holds torch 2.13.0+cpu and its dependencies; each test breaks it in one way
(a torchvision built for another torch, a sympy older than torch requires, a second torch on
PYTHONPATH, one of torch's own libraries removed) and puts it back. `tools/fetch_test_wheels.py` (run by
.ci/run and the README's test command) fetches the wheels once per machine; the tests install only from
that folder and never reach an index. Without the wheels they are skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from envdoctor.snapshot import Unavailable, is_absent, snapshot_from_json
from tools.fetch_test_wheels import TORCH

pytestmark = [pytest.mark.slow, pytest.mark.heavy]
ROOT = Path(__file__).resolve().parents[2]


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "ENVDOCTOR_", "UV_", "PYTHON"))}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def venv(tmp_path_factory, wheelhouse):
    d = tmp_path_factory.mktemp("broken") / "v"
    subprocess.run([sys.executable, "-m", "venv", str(d)], check=True)
    site = next((d / "lib").glob("python3.*/site-packages"))
    v = type("Venv", (), {"path": d, "python": str(d / "bin" / "python"), "site": site, "wheels": wheelhouse})
    pip(v, "install", TORCH)
    return v


def pip(v, *args):
    cmd = [v.python, "-m", "pip", *args]
    if args[0] == "install":
        cmd += ["-q", "--no-index", "--find-links", str(v.wheels)]
    subprocess.run(cmd, check=True, env=_env(PIP_CONFIG_FILE=os.devnull), capture_output=True, timeout=600)


class Checked:
    """One real `envdoctor check --python VENV --json` run: the snapshot it took and the findings it gave."""

    def __init__(self, doc: dict, returncode: int) -> None:
        self.snapshot = snapshot_from_json(doc["snapshot"])
        self.findings = doc["findings"]
        self.returncode = returncode

    def ids(self, *severities: str) -> set:
        return {f["id"] for f in self.findings if not severities or f["severity"] in severities}

    def finding(self, finding_id: str) -> dict:
        [f] = [f for f in self.findings if f["id"] == finding_id]
        return f


def check(v, tmp_path, **env) -> Checked:
    """Run the CLI as a user would; envdoctor itself is imported from the checkout (cwd), never from PYTHONPATH,
    which belongs to the probed environment."""
    env = _env(XDG_STATE_HOME=str(tmp_path / "state"), XDG_CACHE_HOME=str(tmp_path / "cache"), **env)
    res = subprocess.run([sys.executable, "-m", "envdoctor", "check", "--python", v.python, "--json", "--timeout", "180"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)
    assert res.returncode in (0, 1), res.stderr[-3000:]
    doc = json.loads(res.stdout)
    errors = [f for f in doc["findings"] if f["severity"] == "error"]
    assert res.returncode == (1 if errors else 0)
    return Checked(doc, res.returncode)


@contextmanager
def installed(v, requirement, restore=None):
    pip(v, "install", "--no-deps", requirement)
    try:
        yield
    finally:
        if restore:
            pip(v, "install", "--no-deps", restore)
        else:
            pip(v, "uninstall", "-y", requirement.split("==")[0])


def test_healthy_venv_records_no_problem(venv, tmp_path):
    checked = check(venv, tmp_path)
    assert checked.ids("error", "warning") == set()
    snap = checked.snapshot
    t = snap.torch
    assert t.importable and t.version == "2.13.0+cpu"
    assert snap.requirement_conflicts == []
    assert t.origin.kind == "site-packages" and t.origin.outside_site_packages is False
    assert t.origin.file == str(venv.site / "torch" / "__init__.py")
    assert isinstance(t.cwd_torch, Unavailable)
    assert t.companions == {} and t.nvidia_wheels == {} and t.mapped_cuda_libraries == []
    assert isinstance(t.numpy.version, Unavailable) and isinstance(t.numpy.works, Unavailable)  # no numpy: not a failure
    assert t.cxx11_abi is True
    assert "PYTHONPATH" not in snap.env


def test_sympy_older_than_torch_requires(venv, tmp_path):
    with installed(venv, "sympy==1.12", restore="sympy==1.14.0"):
        checked = check(venv, tmp_path)
    assert checked.ids("error", "warning") == {"ED503"}
    assert "sympy>=1.13" in checked.finding("ED503")["detail"].replace(" ", "")
    snap = checked.snapshot
    assert snap.torch.importable  # torch still imports: only the metadata says it
    [c] = snap.requirement_conflicts
    assert (c.package, c.installed) == ("torch", "1.12") and c.requirement.replace(" ", "").startswith("sympy>=1.13")


def test_torchvision_built_for_another_torch(venv, tmp_path):
    # PyPI's torchvision 0.28.0 is a CUDA build for torch 2.13.0: beside the CPU torch its operators do not load.
    with installed(venv, "torchvision==0.28.0"):
        checked = check(venv, tmp_path)
    assert "ED502" in checked.ids("error")
    assert "torchvision" in checked.finding("ED502")["title"] + checked.finding("ED502")["detail"]
    assert checked.ids("error") == {"ED502"}  # not blamed on torch, which imports
    snap = checked.snapshot
    tv = snap.torch.companions["torchvision"]
    assert tv.version == "0.28.0" and tv.requires_torch == "==2.13.0"
    assert tv.importable is False and "torchvision::nms does not exist" in tv.error
    assert tv.nms_op is False
    assert snap.torch.importable
    # installed without its dependencies: pip check would say so too
    assert {c.requirement.split()[0].split("(")[0] for c in snap.requirement_conflicts} >= {"numpy"}
    assert all(c.package == "torchvision" for c in snap.requirement_conflicts)


def test_second_torch_on_pythonpath_shadows_the_installed_one(venv, tmp_path):
    shadow = tmp_path / "checkout"
    (shadow / "torch").mkdir(parents=True)
    (shadow / "torch" / "__init__.py").write_text(
        "__version__ = '2.1.0a0+git1234'\n"
        "class version:\n    cuda = None\n    hip = None\n"
        "class cuda:\n"
        "    is_available = staticmethod(lambda: False)\n    device_count = staticmethod(lambda: 0)\n"
        "    get_arch_list = staticmethod(lambda: [])\n")
    checked = check(venv, tmp_path, PYTHONPATH=str(shadow))
    shadowed = checked.finding("ED505")
    assert shadowed["severity"] == "error" and str(shadow) in shadowed["detail"] and "PYTHONPATH" in shadowed["detail"]
    snap = checked.snapshot
    t = snap.torch
    assert t.version == "2.1.0a0+git1234" and snap.python.packages["torch"] == "2.13.0+cpu"
    assert t.origin.kind == "pythonpath" and t.origin.outside_site_packages is True
    assert t.origin.file == str(shadow / "torch" / "__init__.py")
    assert t.origin.dist_location == str(venv.site)
    assert snap.env["PYTHONPATH"] == str(shadow)


def test_numpy_one_beside_a_numpy_two_torch_works(venv, tmp_path):
    # torch 2.13 is built against NumPy 2, whose ABI also runs on NumPy 1.x: a real bridge, no failure.
    with installed(venv, "numpy==1.26.0"):
        checked = check(venv, tmp_path)
    assert not checked.ids() & {"ED501", "ED513"}
    snap = checked.snapshot
    assert snap.torch.numpy.version == "1.26.0" and snap.torch.numpy.works is True and snap.torch.numpy.error is None


def test_torch_with_one_of_its_libraries_removed(venv, tmp_path):
    lib = venv.site / "torch" / "lib" / "libc10.so"
    hidden = lib.with_name("libc10.so.hidden-by-test")
    lib.rename(hidden)
    try:
        checked = check(venv, tmp_path)
    finally:
        hidden.rename(lib)
    broken = [f for f in checked.findings if f["category"] == "torch_broken"]
    assert [f["severity"] for f in broken] == ["error"] and "libc10.so" in broken[0]["detail"]
    snap = checked.snapshot
    t = snap.torch
    assert t.importable is False and "libc10.so" in t.error
    assert t.missing_files == ["torch/lib/libc10.so"]
    assert t.version == "2.13.0+cpu" and t.origin.kind == "site-packages"
    assert is_absent(t.numpy) and is_absent(t.cxx11_abi)
