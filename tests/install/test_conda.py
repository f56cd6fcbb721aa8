"""A conda environment whose torch is conda's `pytorch` (a conda-meta record): `fix` plans the switch to a
pip-only torch and says why, and `--yes` does not pip-install over it. The conda environment is the venv of
tests/test_install.py with a conda-meta directory, the files conda writes."""

from __future__ import annotations

import json

import pytest

from envdoctor.install.conda_env import conda_torch
from tests.test_install import fake_torch, fix, freeze


def _conda_meta(prefix, records) -> None:
    meta = prefix / "conda-meta"
    meta.mkdir()
    (meta / "history").write_text("")
    for name, version, build in records:
        (meta / f"{name}-{version}-{build}.json").write_text(json.dumps(
            {"name": name, "version": version, "build": build,
             "channel": "https://conda.anaconda.org/pytorch/linux-64"}))


@pytest.mark.slow
def test_conda_torch_is_not_pip_installed_over(site):
    _conda_meta(site.venv, [("pytorch", "2.13.0", "py3.11_cpu_0"), ("pytorch-mutex", "1.0", "cpu"),
                            ("numpy", "1.26.4", "py311h_0")])
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    before = freeze(site)
    res = fix(site, "--dry-run")
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    prefix = str(site.venv)
    assert doc["commands"][0] == ["conda", "remove", "--prefix", prefix, "--force", "--yes", "pytorch", "pytorch-mutex"]
    assert doc["commands"][1][1:4] == ["-m", "pip", "download"]
    [note] = [n for n in doc["notes"] if "conda" in n]
    assert "conda's pytorch 2.13.0 (py3.11_cpu_0, channel pytorch)" in note and "pip-only torch" in note
    assert "conda-forge pytorch=2.14.1" in note
    res = fix(site, "--yes")
    assert res.returncode == 2 and "is a conda environment with conda's pytorch 2.13.0" in res.stderr, res.stderr[-2000:]
    assert freeze(site) == before


@pytest.mark.slow
def test_a_conda_env_without_condas_pytorch_is_planned_as_usual(site):
    _conda_meta(site.venv, [("python", "3.11.7", "h_0"), ("pytorch-lightning", "2.5.0", "pyhd_0")])
    assert conda_torch(str(site.venv)) is None
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    res = fix(site, "--dry-run")
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    assert [c[1:4] for c in doc["commands"]] == [["-m", "pip", "download"], ["-m", "pip", "install"]]
    assert not [n for n in doc["notes"] if "conda" in n]


def test_an_unreadable_record_is_unknown_not_guessed(tmp_path):
    meta = tmp_path / "conda-meta"
    meta.mkdir()
    (meta / "pytorch-2.5.1-py3.12_cuda12.4_cudnn9.1.0_0.json").write_text("{truncated")
    found = conda_torch(str(tmp_path))
    assert found is not None and found.version is None and found.packages == ["pytorch"]
    assert found.describe() == "conda's pytorch (version unreadable)"
    assert conda_torch(str(tmp_path / "nowhere")) is None
