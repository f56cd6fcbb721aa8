"""Snapshots that `envdoctor check --python VENV --json` took of real environments too large to build in CI
(a CUDA torch with its nvidia-* wheels is 5.4 GB), diagnosed again with the current rules.

tests/data/real_envs/, each built by hand on an x86_64 CPU machine in a docker container with no GPU:
- torch2141_cu130_healthy: `python -m venv v && v/bin/pip install torch==2.14.1` (torch 2.14.1+cu130 and the
  nvidia-*-cu13 wheels it pins).
- torch2141_cu130_nccl2289: the same venv after `pip install --no-deps --force-reinstall
  nvidia_nccl_cu13-2.28.9-...whl` (torch pins nvidia-nccl-cu13==2.30.7); `import torch` then fails with
  "libtorch_cuda.so: undefined symbol: ncclCommResume".
- torch222_cu121_numpy202: `v/bin/pip install torch==2.2.2 numpy==2.0.2` (torch 2.2 is built against NumPy 1.x);
  torch imports, and `torch.zeros(1).numpy()` fails with "Numpy is not available".
- torch222_cu121_numpy1264: the same venv after `pip install numpy==1.26.4`.
"""

from __future__ import annotations

import json
from pathlib import Path

from envdoctor.snapshot import snapshot_from_json
from tests.conftest import diagnose_bundled

DATA = Path(__file__).resolve().parents[1] / "data" / "real_envs"


def findings(name: str) -> dict:
    snap = snapshot_from_json(json.loads((DATA / f"{name}.json").read_text(encoding="utf-8")))
    return {f.id: f for f in diagnose_bundled(snap)}


def test_healthy_cuda_torch_in_a_container_without_gpus_is_not_an_error():
    found = findings("torch2141_cu130_healthy")
    assert [f for f in found.values() if f.severity == "error"] == []
    assert found["ED211"].severity == "warning" and "runs on the CPU" in found["ED211"].detail


def test_nccl_wheel_older_than_torch_pins_is_named_once():
    found = findings("torch2141_cu130_nccl2289")
    errors = {i for i, f in found.items() if f.severity == "error"}
    assert errors == {"ED104", "ED507"}  # torch does not import, and why: not a second finding for the same pin
    assert "nvidia-nccl-cu13 2.28.9 installed, torch requires ==2.30.7" in found["ED507"].detail
    assert "ncclCommResume" in found["ED104"].title


def test_numpy_2_under_a_numpy_1_torch():
    found = findings("torch222_cu121_numpy202")
    assert {i for i, f in found.items() if f.severity == "error"} == {"ED501"}
    assert "NumPy 2.0.2" in found["ED501"].title


def test_numpy_1_under_the_same_torch_is_healthy():
    found = findings("torch222_cu121_numpy1264")
    assert [f for f in found.values() if f.severity == "error"] == []
    assert not {"ED501", "ED513"} & set(found)
