"""`fix` repairs what `check` finds, the whole stack in one transaction, in a real venv with the real torch 2.13.0+cpu:
torch's own unmet requirements (sympy too old, networkx removed) through pip's resolver with torch held, a
torchvision of the wrong build (PyPI's 0.28.0 is cu130: its version.py says so), an unsafe rebuild refused without
--unsafe, and a failing step rolled back with the others.

The wheels come from tools/fetch_test_wheels.py's folder, served as a PEP 503 index on 127.0.0.1 (the
dependencies through PIP_INDEX_URL, torch at /whl/cpu/torch/); the user's pip configuration is that index only
(PIP_CONFIG_FILE=/dev/null). Without the wheels the tests are skipped."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.install.local_index import serve_wheelhouse, torch_venv
from tests.test_install import ROOT, build_wheel, clean_env

pytestmark = [pytest.mark.slow, pytest.mark.heavy]

UNREACHABLE = "http://127.0.0.1:9/whl"  # the discard port: nothing answers there


@pytest.fixture(scope="module")
def index(tmp_path_factory, wheelhouse):
    yield from serve_wheelhouse(tmp_path_factory.mktemp("stackindex"), wheelhouse)


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheelhouse):
    return torch_venv(tmp_path_factory.mktemp("stack") / "v", wheelhouse)


@pytest.fixture(scope="module")
def xformers_wheel(tmp_path_factory) -> Path:
    """A compiled extension's stand-in that pins the torch it was built for (xformers pins torch in its metadata)."""
    out = tmp_path_factory.mktemp("ext")
    return build_wheel(out, "xformers", "0.0.1", {"xformers/__init__.py": "__version__ = '0.0.1'\n"},
                       requires=["torch==2.12.0"])


def _python(venv: Path) -> str:
    return str(venv / "bin" / "python")


def _pip(venv: Path, wheelhouse: Path, *args: str) -> None:
    subprocess.run([_python(venv), "-m", "pip", *args], check=True, env=clean_env(), capture_output=True, timeout=600)


def _env(index: str, tmp_path: Path) -> dict:
    return clean_env(PIP_INDEX_URL=f"{index}/simple", XDG_CACHE_HOME=str(tmp_path / "cache"),
                     PIP_CACHE_DIR=str(tmp_path / "pipc"), ENVDOCTOR_INSTALLER="pip", PYTHONDONTWRITEBYTECODE="1")


def _envdoctor(*args: str, env: dict, timeout: int = 1200) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envdoctor", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _check(python: str, env: dict) -> dict:
    res = _envdoctor("check", "--python", python, "--json", env=env, timeout=600)
    assert res.returncode in (0, 1), res.stderr[-3000:]
    return json.loads(res.stdout)


def _freeze(python: str) -> str:
    return subprocess.run([python, "-m", "pip", "freeze", "--all"], capture_output=True, text=True, check=True,
                          env=clean_env()).stdout


@pytest.fixture
def broken(venv, wheelhouse):
    """sympy 1.12 (torch 2.13.0 requires >=1.13.3) and networkx removed; put back afterwards."""
    _pip(venv, wheelhouse, "install", "-q", "--no-index", "--find-links", str(wheelhouse), "--no-deps", "sympy==1.12")
    subprocess.run([_python(venv), "-m", "pip", "uninstall", "-y", "-q", "networkx"], env=clean_env(),
                   capture_output=True, timeout=300)
    yield venv
    _pip(venv, wheelhouse, "install", "-q", "--no-index", "--find-links", str(wheelhouse), "sympy==1.14.0",
         "networkx==3.6.1")


def _ids(doc: dict) -> set:
    return {f["id"] for f in doc["findings"] if f["severity"] in ("error", "warning")}


def test_wrong_torchvision_build_is_named_and_a_fix_that_leaves_it_rolls_back(venv, index, wheelhouse, tmp_path):
    """PyPI's torchvision 0.28.0 is the cu130 build of the right release: check says the build is wrong (from
    torchvision/version.py); the fix plans the CPU build from the index torch came from. That index has none, pip
    falls back to the same cu130 wheel, the fresh check still finds ED502: everything is rolled back (exit 3)."""
    if not list(wheelhouse.glob("pillow-*.whl")):
        pytest.skip("no pillow wheel in the test wheels: run `python tools/fetch_test_wheels.py` again")
    python = _python(venv)
    _pip(venv, wheelhouse, "install", "-q", "--no-index", "--find-links", str(wheelhouse), "--no-deps",
         "torchvision==0.28.0")
    try:
        env = _env(index, tmp_path)
        before = _check(python, env)
        [f] = [f for f in before["findings"] if f["id"] == "ED502"]
        text = f["title"] + " " + f["detail"] + " " + f["fix"]
        assert "0.28.0+cu130" in text and "torchvision/version.py" in text and "the build, not the release" in text
        assert "CPU torch with torchvision's CPU build (+cpu)" in text
        assert before["snapshot"]["torch"]["companions"]["torchvision"]["build_version"] == "0.28.0+cu130"
        assert f["fix_safety"] == "safe" and f["fix_action"]["action"] == "envdoctor_fix"

        dry = _envdoctor("fix", "--python", python, "--index-base", f"{index}/whl", "--dry-run", "--json", env=env)
        assert dry.returncode == 0, dry.stderr[-3000:]
        plan = json.loads(dry.stdout)
        [step] = [s for s in plan["steps"] if s["id"] == "ED502:torchvision"]
        assert step["kind"] == "companion" and step["status"] == "planned" and step["findings"] == ["ED502"]
        assert [p["index_url"] for p in plan["packages"]] == [f"{index}/whl/cpu"]
        assert [p["variant"] for p in plan["packages"]] == ["cpu"]

        # the torch index unreachable: the plan says which setting reaches it (a mirror), and --yes changes nothing
        away = json.loads(_envdoctor("fix", "--python", python, "--index-base", UNREACHABLE, "--dry-run", "--json",
                                     env=env).stdout)
        assert any(f"cannot reach the PyTorch index {UNREACHABLE}/cpu/torchvision/" in n
                   and "ENVDOCTOR_TORCH_INDEX or --index-base" in n for n in away["notes"]), away["notes"]
        frozen = _freeze(python)
        gone = _envdoctor("fix", "--python", python, "--index-base", UNREACHABLE, "--yes", "--json", env=env)
        assert gone.returncode == 3 and "nothing was changed" in json.loads(gone.stdout)["message"]
        assert _freeze(python) == frozen

        res = _envdoctor("fix", "--python", python, "--index-base", f"{index}/whl", "--yes", "--json", env=env)
        assert res.returncode == 3, res.stderr[-3000:]
        doc = json.loads(res.stdout)
        assert doc["status"] == "rolled_back" and doc["rollback_ok"] is True
        assert "ED502 is still found after the install" in doc["message"]
        assert _freeze(python) == frozen
    finally:
        subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "torchvision"], env=clean_env(),
                       capture_output=True, timeout=300)


def test_unsafe_rebuild_is_refused_without_unsafe(broken, index, wheelhouse, xformers_wheel, tmp_path):
    python = _python(broken)
    _pip(broken, wheelhouse, "install", "-q", "--no-deps", str(xformers_wheel))
    try:
        env = _env(index, tmp_path)
        before = _check(python, env)
        assert {"ED503", "ED508"} <= _ids(before)
        dry = _envdoctor("fix", "--python", python, "--dry-run", "--json", env=env)
        assert dry.returncode == 0, dry.stderr[-3000:]
        plan = json.loads(dry.stdout)
        [step] = [s for s in plan["steps"] if s["id"] == "ED508:xformers"]
        assert step["applicability"] == "unsafe" and step["installs"] == ["xformers==0.0.1"]
        assert plan["rebuilds"] == ["xformers==0.0.1"]
        assert any("--no-build-isolation" in c and "xformers==0.0.1" in c for c in plan["commands"])
        text = _envdoctor("fix", "--python", python, "--dry-run", env=env).stdout
        assert "[ED508:xformers]" in text and "UNSAFE" in text and "[ED503]" in text

        frozen = _freeze(python)
        res = _envdoctor("fix", "--python", python, "--yes", env=env)
        assert res.returncode == 2
        assert "--unsafe" in res.stderr and "ED508:xformers" in res.stderr and "nothing was changed" in res.stderr
        assert _freeze(python) == frozen
        # the rest runs without it: --skip ED508 leaves the requirements step
        skip = json.loads(_envdoctor("fix", "--python", python, "--skip", "ED508", "--dry-run", "--json", env=env).stdout)
        assert [s["status"] for s in skip["steps"] if s["id"] == "ED508:xformers"] == ["skipped"]
        assert "rebuilds" not in skip and skip["requirements"]
        only = json.loads(_envdoctor("fix", "--python", python, "--only", "ED508", "--dry-run", "--json", env=env).stdout)
        assert [s["status"] for s in only["steps"] if s["id"] == "ED503"] == ["skipped"]
        bad = _envdoctor("fix", "--python", python, "--only", "ED999", "--dry-run", env=env)
        assert bad.returncode == 2 and "ED999" in bad.stderr
    finally:
        subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "xformers"], env=clean_env(),
                       capture_output=True, timeout=300)


def test_a_failing_step_rolls_back_with_the_others(broken, index, wheelhouse, xformers_wheel, tmp_path):
    """The requirements step installs sympy and networkx; the rebuild after it fails (no xformers source on the
    index): the whole transaction is rolled back, sympy 1.12 and the missing networkx included."""
    python = _python(broken)
    _pip(broken, wheelhouse, "install", "-q", "--no-deps", str(xformers_wheel))
    try:
        env = _env(index, tmp_path)
        frozen = _freeze(python)
        assert "sympy==1.12" in frozen and "networkx" not in frozen
        res = _envdoctor("fix", "--python", python, "--unsafe", "--yes", "--json", env=env)
        assert res.returncode == 3, res.stderr[-3000:]
        doc = json.loads(res.stdout)
        assert doc["status"] == "rolled_back" and doc["rollback_ok"] is True, doc["message"]
        assert "install failed" in doc["message"]
        assert "sympy" in res.stderr  # the requirements step ran before the rebuild failed
        assert _freeze(python) == frozen
    finally:
        subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "xformers"], env=clean_env(),
                       capture_output=True, timeout=300)


def test_sympy_and_networkx_are_repaired_with_torch_held(broken, index, tmp_path):
    """The issue's case: check names both; `fix --yes` installs them through pip's resolver with torch held, from
    the user's own pip configuration (the torch index is unreachable and not needed), and check is then clean."""
    python = _python(broken)
    env = _env(index, tmp_path)
    before = _check(python, env)
    assert _ids(before) == {"ED503"}
    [f] = [f for f in before["findings"] if f["id"] == "ED503"]
    assert "sympy" in f["detail"] and "networkx" in f["detail"]
    assert f["fix_safety"] == "safe" and f["fix_action"]["changes"] == ["sympy", "networkx"]
    assert [r.split(">=")[0] for r in f["fix_action"]["requirements"]] == ["sympy", "networkx"]
    torch_before = [ln for ln in _freeze(python).splitlines() if ln.startswith("torch==")]

    dry = json.loads(_envdoctor("fix", "--python", python, "--index-base", UNREACHABLE, "--dry-run", "--json",
                                env=env).stdout)
    assert dry["status"] == "planned" and dry["packages"] == []
    [step] = dry["steps"]
    assert (step["id"], step["kind"], step["findings"], step["status"]) == ("ED503", "requirements", ["ED503"], "planned")
    assert dry["requirements"] == f["fix_action"]["requirements"]
    assert any("--constraint" in c and c[-2:] == dry["requirements"] for c in dry["commands"])
    assert {(i["name"], i["version"]) for i in dry["installs"]} >= {("sympy", "1.14.0"), ("networkx", "3.6.1")}
    assert "torch" not in {i["name"] for i in dry["installs"]}  # held

    start = time.monotonic()
    res = _envdoctor("fix", "--python", python, "--index-base", UNREACHABLE, "--yes", "--json", env=env)
    took = time.monotonic() - start
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    assert doc["status"] == "installed", doc["message"]
    assert "sympy 1.14.0" in doc["message"] and "networkx 3.6.1" in doc["message"]
    frozen = _freeze(python)
    assert "sympy==1.14.0" in frozen and "networkx==3.6.1" in frozen
    assert [ln for ln in frozen.splitlines() if ln.startswith("torch==")] == torch_before
    assert _ids(_check(python, env)) == set()
    print(f"\nfix --yes (sympy/networkx) took {took:.1f}s")


def test_a_torchvision_of_another_release_plans_the_right_release_and_build(venv, index, wheelhouse, tmp_path):
    """torchvision 0.29.0 (torch 2.14's release; the registry's wheel is its cu130 build) beside torch 2.13.0+cpu:
    check names the release, the fix plans torchvision 0.28 in the CPU build from the index torch came from. No
    CPU torchvision can be had here (the registry's are CUDA builds; the local torch index has none): pip installs
    the only 0.28 there is, the cu130 build, the fresh check still finds ED502, and the whole transaction is rolled
    back to torchvision 0.29.0."""
    if not list(wheelhouse.glob("torchvision-0.29.0-*.whl")) or not list(wheelhouse.glob("pillow-*.whl")):
        pytest.skip("no torchvision 0.29.0 or pillow wheel in the test wheels: run `python tools/fetch_test_wheels.py`")
    python = _python(venv)
    _pip(venv, wheelhouse, "install", "-q", "--no-index", "--find-links", str(wheelhouse), "--no-deps",
         "torchvision==0.29.0")
    try:
        env = _env(index, tmp_path)
        before = _check(python, env)
        [f] = [f for f in before["findings"] if f["id"] == "ED502"]
        assert f["title"].startswith("torchvision 0.29.0 does not match") and "0.28" in f["fix"]
        dry = _envdoctor("fix", "--python", python, "--index-base", f"{index}/whl", "--dry-run", "--json", env=env)
        assert dry.returncode == 0, dry.stderr[-3000:]
        plan = json.loads(dry.stdout)
        [step] = [s for s in plan["steps"] if s["id"] == "ED502:torchvision"]
        assert step["status"] == "planned" and step["installs"] == ["torchvision==0.28.*"]
        [pkg] = plan["packages"]
        assert (pkg["name"], pkg["variant"], pkg["index_url"]) == ("torchvision", "cpu", f"{index}/whl/cpu")
        assert ("torchvision", "0.28.0") in {(i["name"], i["version"]) for i in plan["installs"]}
        assert "torch" not in {i["name"] for i in plan["installs"]}

        frozen = _freeze(python)
        res = _envdoctor("fix", "--python", python, "--index-base", f"{index}/whl", "--yes", "--json", env=env)
        assert res.returncode == 3, res.stderr[-3000:]
        doc = json.loads(res.stdout)
        assert doc["status"] == "rolled_back" and doc["rollback_ok"] is True
        assert "step ED502:torchvision: ED502 is still found after the install" in doc["message"]
        assert "torchvision==0.29.0" in _freeze(python) and _freeze(python) == frozen
    finally:
        subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "torchvision"], env=clean_env(),
                       capture_output=True, timeout=300)


def test_the_lock_pins_the_requirements_steps_and_names_the_rebuild(broken, index, wheelhouse, xformers_wheel, tmp_path):
    """`fix --format requirements|pylock` of the sympy/networkx case with an xformers rebuild: the requirements
    step's resolution is in the lock (hashed), the rebuild is named as built from source, not lockable."""
    python = _python(broken)
    _pip(broken, wheelhouse, "install", "-q", "--no-deps", str(xformers_wheel))
    try:
        env = _env(index, tmp_path)
        req = _envdoctor("fix", "--python", python, "--index-base", f"{index}/whl", "--format", "requirements", env=env)
        assert req.returncode == 0, req.stderr[-3000:]
        lines = req.stdout.splitlines()
        assert "sympy>=1.13.3" in lines[0] and "networkx>=2.5.1" in lines[0]
        assert any(ln.startswith("sympy==1.14.0") for ln in lines) and any(ln.startswith("networkx==3.6.1") for ln in lines)
        assert any(ln.startswith("torch==2.13.0+cpu") for ln in lines) and "--hash=sha256:" in req.stdout
        assert any(ln.startswith("# xformers==0.0.1: built from source, not lockable") for ln in lines)
        out = tmp_path / "pylock.toml"
        lock = _envdoctor("fix", "--python", python, "--index-base", f"{index}/whl", "--format", "pylock", "-o",
                          str(out), env=env)
        assert lock.returncode == 0, lock.stderr[-3000:]
        import tomllib

        text = out.read_text()
        names = {p["name"]: p["version"] for p in tomllib.loads(text)["packages"]}
        assert names["sympy"] == "1.14.0" and names["networkx"] == "3.6.1" and "xformers" not in names
        assert "# xformers==0.0.1: built from source, not lockable" in text
    finally:
        subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "xformers"], env=clean_env(),
                       capture_output=True, timeout=300)
