"""The planner's choice over GPUs x drivers x Pythons, against a table derived by hand from FACTS.md.

How the table was derived (not by running the planner):
- Python wheels: 3.8 -> torch <= 2.4; 3.9 -> <= 2.8; 3.10-3.13 -> 2.14; 3.14 -> 2.9+.
- Drivers: 450.51 < 450.80.02 runs nothing; 470 runs only cu11x; 535/550/570 run cu11x/cu12x (>= 525.60.13);
  580.95 runs cu13x too (>= 580.65.06).
- Kernels: cu118/cu12[1-6] have sm_50..sm_90 (no Blackwell); cu128 in 2.8/2.9 has sm_70..sm_120,
  in 2.10 sm_70 is UNVERIFIED (not counted), in 2.11 sm_75..sm_120; cu130/cu132 have sm_75..sm_120.
- Blackwell GPUs (B200 10.0, RTX 5090 12.0) need driver >= 570.26 whatever the build (FACTS.md 4.3):
  below it nothing can run, for any Python.
- Within a release: fully supported by the driver (>= toolkit GA) first, then the PyPI default, then newest CUDA.
  2.4 at 535: cu118/cu121 full, PyPI default cu121. 2.8: PyPI default cu128 (cu126 for P100, which cu128 lacks).
  2.14 at 580: cu130 is full and the PyPI default; cu126 for P100/V100 (cu130 has no sm_60/sm_70).
"""

from __future__ import annotations

import json

import pytest

from envdoctor.snapshot import load_snapshot, snapshot_from_json
from envdoctor.wheels.index import load_index
from envdoctor.wheels.planner import GpuFact, MachineFacts, Wishes, facts_from_snapshot, plan
from tests.conftest import fixture_path

PYTHONS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")
DRIVERS = {"450.51": "450.51.06", "470": "470.256.02", "535": "535.247.01", "550": "550.163.01",
           "570": "570.172.08", "580": "580.95.05"}
GPUS = {"P100": "6.0", "V100": "7.0", "T4": "7.5", "A100": "8.0", "L4": "8.9", "H100": "9.0", "RTX 4090": "8.9",
        "B200": "10.0", "RTX 5090": "12.0"}

I450 = "impossible: driver >= 450.80.02"
I525 = "impossible: driver >= 525.60.13"
I570 = "impossible: driver >= 570.26"
IPY = "impossible: Python 3.9-3.15"  # torch 2.15 (assumed builds) adds 3.15
# columns: Python 3.8 3.9 3.10 3.11 3.12 3.13 3.14
OLD_DRIVERS = {
    "450.51": [I450, I450, I450, I450, I450, I450, I525],
    "470": ["2.4.1 cu118", "2.7.1 cu118", "2.7.1 cu118", "2.7.1 cu118", "2.7.1 cu118", "2.7.1 cu118", I525],
}
TABLE = {
    "P100": {
        **OLD_DRIVERS,
        "535": ["2.4.1 cu121", "2.8.0 cu126"] + ["2.14.1 cu126"] * 5,
        "550": ["2.4.1 cu121", "2.8.0 cu126"] + ["2.14.1 cu126"] * 5,
        "570": ["2.4.1 cu121", "2.8.0 cu126"] + ["2.14.1 cu126"] * 5,
        "580": ["2.4.1 cu121", "2.8.0 cu126"] + ["2.14.1 cu126"] * 5,
    },
    "V100": {
        **OLD_DRIVERS,
        "535": ["2.4.1 cu121", "2.8.0 cu128"] + ["2.14.1 cu126"] * 5,
        "550": ["2.4.1 cu121", "2.8.0 cu128"] + ["2.14.1 cu126"] * 5,
        "570": ["2.4.1 cu121", "2.8.0 cu128"] + ["2.14.1 cu126"] * 5,
        "580": ["2.4.1 cu121", "2.8.0 cu128"] + ["2.14.1 cu126"] * 5,
    },
    "TURING_TO_HOPPER": {
        **OLD_DRIVERS,
        "535": ["2.4.1 cu121", "2.8.0 cu128"] + ["2.14.1 cu126"] * 5,
        "550": ["2.4.1 cu121", "2.8.0 cu128"] + ["2.14.1 cu126"] * 5,
        "570": ["2.4.1 cu121", "2.8.0 cu128"] + ["2.14.1 cu126"] * 5,
        "580": ["2.4.1 cu121", "2.8.0 cu128"] + ["2.14.1 cu130"] * 5,
    },
    "BLACKWELL": {
        "450.51": [I570] * 7,
        "470": [I570] * 7,
        "535": [I570] * 7,
        "550": [I570] * 7,
        "570": [IPY, "2.8.0 cu128"] + ["2.11.0 cu128"] * 5,
        "580": [IPY, "2.8.0 cu128"] + ["2.14.1 cu130"] * 5,
    },
}
GROUP = {"P100": "P100", "V100": "V100", "T4": "TURING_TO_HOPPER", "A100": "TURING_TO_HOPPER", "L4": "TURING_TO_HOPPER",
         "H100": "TURING_TO_HOPPER", "RTX 4090": "TURING_TO_HOPPER", "B200": "BLACKWELL", "RTX 5090": "BLACKWELL"}


@pytest.fixture(scope="module")
def index():
    return load_index()


def outcome(p) -> str:
    if p.status == "impossible":
        return f"impossible: {p.upgrade[0]}"
    t = p.torch
    return f"{t.version} {t.variant}"


def machine(gpus, driver, python, **kw) -> MachineFacts:
    return MachineFacts(python=python, driver=driver, gpus=[GpuFact(i, n, cc) for i, (n, cc) in enumerate(gpus)], **kw)


CASES = [(g, d, py, TABLE[GROUP[g]][d][i]) for g in GPUS for d in DRIVERS for i, py in enumerate(PYTHONS)]


@pytest.mark.parametrize("gpu,driver,python,expected", CASES, ids=[f"{g}-{d}-py{p}" for g, d, p, _ in CASES])
def test_grid(index, gpu, driver, python, expected):
    p = plan(machine([(gpu, GPUS[gpu])], DRIVERS[driver], python), index, Wishes())
    assert outcome(p) == expected, p.reason
    if p.status == "planned":
        assert p.packages[0].pin == f"torch=={expected.replace(' ', '+')}"


def test_every_gpu_must_be_covered(index):
    # Eight GPUs of one kind and the same answer as one.
    p = plan(machine([("H100", "9.0")] * 8, DRIVERS["580"], "3.12"), index, Wishes())
    assert outcome(p) == "2.14.1 cu130"


def test_issue_examples(index):
    assert outcome(plan(machine([("GTX 1080 Ti", "6.1")], "575.57.08", "3.12"), index, Wishes())) == "2.14.1 cu126"
    p = plan(machine([("B200", "10.0")], "575.57.08", "3.12"), index, Wishes())
    assert outcome(p) == "2.11.0 cu128"
    whys = {(r.version, r.variant): r.why for r in p.rejected}
    assert "580.65.06" in whys[("2.14.1", "cu130")]
    assert "no kernels" in whys[("2.14.1", "cu126")]


def test_mixed_volta_and_blackwell_needs_a_build_with_both(index):
    # 2.11+ cu128/cu13x lack sm_70, cu126 lacks sm_100; 2.10 cu128's sm_70 is UNVERIFIED so not counted;
    # 2.9 cu128 has sm_70..sm_120.
    p = plan(machine([("V100", "7.0"), ("B200", "10.0")], DRIVERS["580"], "3.12"), index, Wishes())
    assert outcome(p) == "2.9.1 cu128"
    why = next(r.why for r in p.rejected if r.version == "2.10.0" and r.variant == "cu128")
    assert "UNVERIFIED" in why and "GPU 0 V100" in why


def test_ptx_only_gpu_needs_the_toolkit_ga_driver(index):
    # A cc 13.0 GPU has no SASS anywhere; compute_120 PTX needs the GA driver of the CUDA that made it:
    # 2.11 cu130 needs 580.65.06; 2.8 cu129 needs 575.51.03; 2.7 cu128 needs 570.26.
    gpu = [("future", "13.0")]
    assert outcome(plan(machine(gpu, "580.95.05", "3.12"), index, Wishes())) == "2.11.0 cu130"
    assert outcome(plan(machine(gpu, "575.57.08", "3.12"), index, Wishes())) == "2.8.0 cu129"
    assert outcome(plan(machine(gpu, "570.172.08", "3.12"), index, Wishes())) == "2.7.1 cu128"
    p = plan(machine(gpu, "560.35.05", "3.12"), index, Wishes())
    assert p.status == "impossible" and p.upgrade[0] == "driver >= 570.26"


def test_no_build_has_kernels(index):
    p = plan(machine([("Thor", "11.0")], "580.95.05", "3.12"), index, Wishes())
    assert p.status == "impossible"
    assert "11.0" in p.reason and "index update" in p.upgrade[0]


def test_no_gpu_plans_cpu(index):
    p = plan(MachineFacts(python="3.12", driver=None, gpus=[]), index, Wishes())
    assert outcome(p) == "2.14.1 cpu"


def test_unsupported_platform(index):
    p = plan(MachineFacts(os="darwin", arch="arm64", python="3.12"), index, Wishes())
    assert p.status == "impossible"


def test_torch_spec_limits_the_choice(index):
    from packaging.specifiers import SpecifierSet

    p = plan(machine([("H100", "9.0")], DRIVERS["580"], "3.12"), index, Wishes(torch=SpecifierSet("<2.10")))
    assert outcome(p) == "2.9.1 cu128"
    p = plan(machine([("H100", "9.0")], DRIVERS["470"], "3.12"), index, Wishes(torch=SpecifierSet(">=2.9")))
    assert p.status == "impossible" and p.upgrade[0] == "driver >= 525.60.13"


def installed(version, cuda, archs, available=True, **kw):
    return dict(torch_version=version, torch_cuda=cuda, torch_arch_list=archs, torch_cuda_available=available, **kw)


H100_ARCHS = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]


def test_working_install_is_left_alone(index):
    m = machine([("H100", "9.0")], "570.172.08", "3.12", **installed("2.9.1+cu126", "12.6", H100_ARCHS))
    p = plan(m, index, Wishes())
    assert p.status == "nothing_to_do" and p.packages == [] and p.kept == ["torch 2.9.1+cu126"]


def test_working_install_replaced_only_when_the_spec_excludes_it(index):
    from packaging.specifiers import SpecifierSet

    m = machine([("H100", "9.0")], "570.172.08", "3.12", **installed("2.9.1+cu126", "12.6", H100_ARCHS))
    assert plan(m, index, Wishes(torch=SpecifierSet(">=2.9"))).status == "nothing_to_do"
    p = plan(m, index, Wishes(torch=SpecifierSet(">=2.12")))
    assert outcome(p) == "2.14.1 cu126"


def test_broken_install_gets_the_smallest_fix(index):
    # The PyPI 2.14.1 (cu130) on a 575 driver: same release, cu126.
    m = machine([("H100", "9.0")], "575.57.08", "3.12",
                **installed("2.14.1", "13.0", ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], False))
    p = plan(m, index, Wishes())
    assert outcome(p) == "2.14.1 cu126"
    assert "580.65.06" in p.reason
    # An old release that cannot run here at all is replaced by the newest that does.
    m = machine([("B200", "10.0")], "580.95.05", "3.12", **installed("2.5.1+cu124", "12.4", H100_ARCHS))
    assert outcome(plan(m, index, Wishes())) == "2.14.1 cu130"
    # A CPU build on a GPU machine: the same release with CUDA; at 535 only cu118 (GA 520.61.05) is fully
    # supported (cu124 needs 550.54.14, cu126 560.28.03 for full support).
    m = machine([("A100", "8.0")], "535.247.01", "3.11", **installed("2.6.0+cpu", None, None, False))
    assert outcome(plan(m, index, Wishes())) == "2.6.0 cu118"


def test_companions_follow_the_variant(index):
    m = machine([("H100", "9.0")], "575.57.08", "3.12",
                **installed("2.9.1+cu130", "13.0", ["sm_90"], False), packages={"torchvision": "0.24.1+cu130"})
    p = plan(m, index, Wishes())
    pins = [x.pin for x in p.packages]
    assert pins == ["torch==2.9.1+cu128", "torchvision==0.24.1+cu128"]


def test_deepspeed_follows_nvcc(index):
    m = machine([("H100", "9.0")], "580.95.05", "3.12", nvcc="13.2")
    assert outcome(plan(m, index, Wishes())) == "2.14.1 cu130"
    p = plan(m, index, Wishes(deepspeed=True))
    # DeepSpeed has no 13.x minor-mismatch table: nvcc 13.2 only builds ops for torch CUDA 13.2.
    assert outcome(p) == "2.14.1 cu132"
    ds = next(x for x in p.packages if x.name == "deepspeed")
    assert ds.pin == "deepspeed==0.19.8" and p.env == {"DS_BUILD_OPS": "0"}
    assert p.deepspeed_ops["cuda_check"]["ok"] is True
    m.nvcc = "12.4"
    assert outcome(plan(m, index, Wishes(deepspeed=True))) == "2.14.1 cu126"


def test_deepspeed_warns_when_ops_cannot_build(index):
    from packaging.specifiers import SpecifierSet

    m = machine([("B200", "10.0")], "575.57.08", "3.12", nvcc="13.0", ninja=True, libaio=False)
    p = plan(m, index, Wishes(deepspeed=True, deepspeed_spec=SpecifierSet("<0.19")))
    ds = next(x for x in p.packages if x.name == "deepspeed")
    assert ds.version == "0.18.3"
    assert "CUDAMismatchException" in ds.reason
    ops = p.deepspeed_ops["ops"]
    assert ops["cpu_adam"]["buildable"] and not ops["fused_adam"]["buildable"] and not ops["async_io"]["buildable"]


def test_working_torch_with_deepspeed_wanted(index):
    m = machine([("H100", "9.0")], "570.172.08", "3.12", nvcc="12.6", **installed("2.9.1+cu126", "12.6", H100_ARCHS))
    p = plan(m, index, Wishes(deepspeed=True))
    assert p.status == "planned" and [x.name for x in p.packages] == ["deepspeed"]
    m.packages = {"deepspeed": "0.19.5"}
    assert plan(m, index, Wishes(deepspeed=True)).status == "nothing_to_do"


def _plan(snap, **wishes):
    return plan(facts_from_snapshot(snap), load_index(), Wishes(**wishes))


def test_hidden_cuda_keeps_the_right_torch():
    p = _plan(load_snapshot(fixture_path("h100_cuda_hidden")))
    assert p.status == "nothing_to_do" and p.kept == ["torch 2.5.1+cu124"]
    assert any("reinstalling would not help" in n for n in p.notes)


@pytest.mark.parametrize("name", ["deepspeed_broken", "deepspeed_stale_ops"])
def test_fix_deepspeed_replaces_a_broken_deepspeed(name):
    p = _plan(load_snapshot(fixture_path(name)), deepspeed=True)
    assert [pkg.name for pkg in p.packages] == ["deepspeed"]


def test_deepspeed_notes_follow_nvcc():
    snap = load_snapshot(fixture_path("v100_cuda13_build"))
    notes = " ".join(_plan(snap, deepspeed=True).notes)
    assert "cannot compile for compute capability 7.0" in notes and "TORCH_CUDA_ARCH_LIST=7.0" not in notes
    data = json.loads(fixture_path("h100_8x_nvswitch").read_text())
    notes = " ".join(_plan(snapshot_from_json(data), deepspeed=True).notes)
    assert "TORCH_CUDA_ARCH_LIST" not in notes  # nvcc 12.4 targets every arch DeepSpeed lists
