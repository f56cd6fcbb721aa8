"""A text that says only that torch has no usable CUDA device (issue 26): a low-confidence cause that names the
checks which decide it, never silence; beside a sign of another accelerator or of `docker run`, the cause those
signs point to ranks first."""

from __future__ import annotations

import os

import pytest

from envdoctor.settings import Settings
from envdoctor.usecases.diagnose_text import diagnose_text


@pytest.fixture(scope="module")
def know():
    return Settings.from_env({k: v for k, v in os.environ.items() if not k.startswith("ENVDOCTOR_")}).knowledge()


@pytest.mark.parametrize("line", [
    "RuntimeError: No CUDA GPUs are available",
    "RuntimeError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS variable to "
    "disable this check",
    "UserWarning: CUDA initialization: CUDA driver initialization failed, you might not have a CUDA gpu.",
    "RuntimeError: CUDA error: no CUDA-capable device is detected",
])
def test_cuda_unavailable_alone_is_a_low_confidence_cause_with_its_checks(know, line: str) -> None:
    r = diagnose_text([("paste", f"Traceback (most recent call last):\n  File \"x.py\", line 1\n{line}\n")], know)
    top = r.findings[0]
    assert top.id == "TXT-CUDA-UNAVAILABLE" and top.confidence == "low"
    assert top.severity != "error"  # a low-confidence cause is at most a warning
    assert "nvidia-smi" in top.fix and "torch.version.cuda" in top.fix


def test_another_accelerator_makes_it_cuda_asked_of_a_non_cuda_host(know) -> None:
    text = "2024-09-22 16:26:39,792 - root - INFO - Device: xpu\nRuntimeError: No CUDA GPUs are available\n"
    cats = [f.category for f in diagnose_text([("paste", text)], know).findings]
    assert cats[0] == "cuda_required_on_non_cuda_host"


def test_docker_run_makes_it_a_container_started_without_gpus(know) -> None:
    text = ("$ docker run -it --rm myimage python train.py\n"
            "RuntimeError: CUDA error: no CUDA-capable device is detected\n")
    cats = [f.category for f in diagnose_text([("paste", text)], know).findings]
    assert cats[0] == "container_no_gpu_access"


def test_a_decisive_cause_beside_it_stays_first(know) -> None:
    text = ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
            "installed a driver\nRuntimeError: No CUDA GPUs are available\n")
    first = diagnose_text([("paste", text)], know).findings[0]
    assert first.id == "TXT-NO-NVIDIA-DRIVER"


@pytest.mark.parametrize("launch", ["docker run --gpus all -it --rm myimage python train.py",
                                    "docker run --runtime=nvidia -it myimage python train.py",
                                    "nvidia-docker run -it myimage python train.py"])
def test_a_container_started_with_its_gpus_is_not_blamed_for_a_missing_gpus_flag(know, launch: str) -> None:
    text = f"$ {launch}\nRuntimeError: No CUDA GPUs are available\n"
    cats = [f.category for f in diagnose_text([("paste", text)], know).findings]
    assert "container_no_gpu_access" not in cats[:1]
