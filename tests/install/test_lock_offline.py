"""`fix --format requirements` offline (issue 31): a requirements file needs no hashes, so it is written from the
plan's pins and says that hashes were left out; pylock.toml, which needs them, still refuses."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli

NOWHERE = {"PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_FIND_LINKS": "",
           "ENVDOCTOR_TORCH_INDEX": "http://127.0.0.1:9/whl"}  # port 9: nothing listens, every fetch fails at once
TARGET = ["fix", "--gpu", "12.0", "--driver", "570.133.07"]


@pytest.mark.slow
def test_offline_requirements_lock_is_written_without_hashes():
    res = run_cli([*TARGET, "--format", "requirements"], env=NOWHERE)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1] == "torch==2.11.0+cu128" and "--hash" not in res.stdout
    assert "# hashes left out: pip could not resolve the files" in res.stdout
    assert "hashes left out" in res.stderr


@pytest.mark.slow
def test_offline_pylock_still_refuses():
    res = run_cli([*TARGET, "--format", "pylock"], env=NOWHERE)
    assert res.returncode == 1 and "no lock:" in res.stderr and not res.stdout
