"""Triton comes from the index torch came from: torch's own metadata pins triton==3.6.0 (a recorded environment of
torch 2.11.0+cu128 with Triton 3.3.1), the plan adds the torch index of that build (laid out as
<base>/cu128/triton/) to pip's configuration, and its commands fetch and install the real Triton 3.6.0 wheel from
there into a real venv. The user's own index (PIP_INDEX_URL) has no Triton: without the torch index the same
download fails. The wheel comes from tools/fetch_test_wheels.py's folder; without it the test is skipped."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from envdoctor.snapshot import RequirementConflict
from envdoctor.usecases.plan_fix import FixSetup, FixWishes, plan_fix
from envdoctor.wheels.index import load_index
from tests.conftest import bundled_knowledge, fixture_path
from tests.install.local_index import serve_wheelhouse
from tests.test_install import clean_env

pytestmark = [pytest.mark.slow, pytest.mark.heavy]

TRITON = "triton==3.6.0"


@pytest.fixture(scope="module")
def index(tmp_path_factory, wheelhouse):
    if not list(wheelhouse.glob("triton-3.6.0-*.whl")):
        pytest.skip("no triton wheel in the test wheels: run `python tools/fetch_test_wheels.py` again")
    yield from serve_wheelhouse(tmp_path_factory.mktemp("tritonindex"), wheelhouse,
                                torch_index={"torch": "cpu", "triton": "cu128"})


def _snapshot():
    from envdoctor.snapshot import load_snapshot

    snap = load_snapshot(fixture_path("triton_mismatch"))
    torch = dataclasses.replace(snap.torch, version="2.11.0+cu128", cuda="12.8")
    conflict = RequirementConflict(package="torch", requirement='triton==3.6.0; platform_system == "Linux"',
                                   installed="3.3.1")
    return dataclasses.replace(snap, torch=torch, requirement_conflicts=[conflict])


def test_triton_is_fetched_from_the_torch_index_and_installed(index, tmp_path):
    venv = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    know = bundled_knowledge()
    setup = FixSetup(wheel_index=load_index, state_root=tmp_path / "state",
                     writable_state_root=lambda: tmp_path / "state", use_uv=False, knowledge=lambda: know)
    result = plan_fix(_snapshot(), setup, FixWishes(index_base=f"{index}/whl"), python)
    steps = {s.id: s for s in result.plan.steps}
    assert steps["ED503:triton"].status == "planned" and steps["ED503:triton"].installs == [TRITON]
    assert steps["ED503"].status == "covered" and "from the index torch came from" in steps["ED503"].why
    [p] = result.plan.packages
    assert (p.pin, p.index_url) == (TRITON, f"{index}/whl/cu128")
    assert result.plan.requirements == []
    download, install = result.plan.commands
    assert download[download.index("--extra-index-url") + 1] == f"{index}/whl/cu128" and download[-1] == TRITON

    env = clean_env(PIP_INDEX_URL=f"{index}/simple", PIP_CACHE_DIR=str(tmp_path / "pipc"))
    bare = [a for i, a in enumerate(download) if a != "--extra-index-url" and download[i - 1] != "--extra-index-url"]
    res = subprocess.run(bare, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode != 0 and "triton" in res.stderr  # the user's own index has none
    for argv in (download, install):
        res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
        assert res.returncode == 0, res.stderr[-2000:]
    wheelhouse = Path(download[download.index("--dest") + 1])
    assert [w.name.split("-")[1] for w in wheelhouse.glob("triton-*.whl")] == ["3.6.0"]
    show = subprocess.run([python, "-m", "pip", "show", "triton"], env=clean_env(), capture_output=True, text=True)
    assert "Version: 3.6.0" in show.stdout
