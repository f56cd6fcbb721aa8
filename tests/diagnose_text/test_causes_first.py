"""A cause ranks above the findings it explains (the signature settings' `explains`), and only when established."""

from __future__ import annotations

import os

import pytest

from envdoctor.findings import Finding
from envdoctor.fixes import manual
from envdoctor.settings import Settings
from envdoctor.usecases.diagnose_text import causes_first, diagnose_text


def _f(category: str, confidence: str, fid: str = "") -> Finding:
    return Finding(id=fid or category.upper(), severity="error", category=category, title=category, detail="",
                   remedy=manual("none"), confidence=confidence)


EXPLAINS = {"cpu_build_on_gpu_machine": ["extension_torch_mismatch", "cuda_unavailable"]}


def test_an_established_cause_moves_above_what_it_explains() -> None:
    ranked = [_f("extension_torch_mismatch", "high"), _f("shm_exhausted", "medium"), _f("cpu_build_on_gpu_machine", "medium")]
    assert [f.category for f in causes_first(ranked, EXPLAINS)] == [
        "cpu_build_on_gpu_machine", "extension_torch_mismatch", "shm_exhausted"]


def test_a_low_confidence_cause_stays_where_it_is() -> None:
    ranked = [_f("extension_torch_mismatch", "high"), _f("cpu_build_on_gpu_machine", "low")]
    assert causes_first(ranked, EXPLAINS) == ranked


def test_nothing_moves_without_an_effect_above_it() -> None:
    ranked = [_f("cpu_build_on_gpu_machine", "high"), _f("extension_torch_mismatch", "high"), _f("gpu_oom", "medium")]
    assert causes_first(ranked, EXPLAINS) == ranked
    assert causes_first(ranked, {}) == ranked


@pytest.fixture(scope="module")
def know():
    return Settings.from_env({k: v for k, v in os.environ.items() if not k.startswith("ENVDOCTOR_")}).knowledge()


def test_a_cpu_torch_explains_the_cuda_built_xformers_that_fails_beside_it(know) -> None:
    text = ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
            "    PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.1.0+cpu)\n")
    r = diagnose_text([("paste", text)], know)
    cats = [f.category for f in r.findings]
    assert cats[0] == "cpu_build_on_gpu_machine"
    assert "extension_torch_mismatch" in cats[1:]
