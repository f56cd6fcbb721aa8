"""compat.serving_kernel, the one answer to "does this arch list have a kernel for this GPU?", and every
caller that asks it: the rules (ED102, ED309), the planner and the install verifier.

The rules it must follow (CUDA Blackwell Compatibility Guide 1.2; CUDA Programming Guide 5.1.2; NVIDIA's
CUDA 12.9 family-specific features post):
- SASS sm_XY runs on cc X.Z iff same major and Y <= Z; sm_XYa only on exactly X.Y; sm_XYf on the same
  major with minor >= Y.
- PTX compute_XY is JIT-compiled on any cc >= X.Y; compute_XYa only on X.Y; compute_XYf only within the
  family (same major, minor >= Y).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envdoctor import compat
from envdoctor.install.installer import verify_problems
from envdoctor.probes.children_run import CHILDREN
from envdoctor.rules.engine import evaluate_rule
from envdoctor.rules.registry import load_rules
from envdoctor.snapshot import Extension, load_snapshot
from envdoctor.wheels.index import Variant, bundled_path, read_index
from envdoctor.wheels.planner import GpuFact, MachineFacts, _check_variant, _installed_problem
from tests.conftest import fixture_path

ROOT = Path(__file__).resolve().parents[1]
INDEX = read_index(bundled_path())

majors = st.integers(3, 13)
minors = st.integers(0, 9)
suffixes = st.sampled_from(["", "a", "f"])
ccs = st.builds(lambda ma, mi: f"{ma}.{mi}", majors, minors)
targets = st.builds(lambda kind, ma, mi, sfx: f"{kind}_{ma}{mi}{sfx}", st.sampled_from(["sm", "compute"]), majors, minors,
                    suffixes)
arch_lists = st.lists(st.one_of(targets, st.sampled_from(["gfx90a", "sm_9", "compute_", "sm_90b"])), max_size=8)


def expected_alone(target: str, cc: str) -> str:
    """What one arch-list entry gives a GPU, straight from the rules in the module docstring."""
    kind, digits = target.split("_")
    suffix = digits[-1] if digits[-1] in "af" else ""
    digits = digits.rstrip("af")
    ma, mi = int(digits[:-1]), int(digits[-1])
    cma, cmi = (int(x) for x in cc.split("."))
    if suffix == "a":
        fits = (ma, mi) == (cma, cmi)
    elif suffix == "f" or kind == "sm":
        fits = ma == cma and mi <= cmi
    else:
        fits = (ma, mi) <= (cma, cmi)
    return ("sass" if kind == "sm" else "ptx") if fits else "none"


@given(targets, ccs)
def test_each_target_follows_the_sass_and_ptx_rules(target, cc):
    m = compat.serving_kernel([target], cc)
    assert m.via == expected_alone(target, cc), m
    assert m.target == (target if m.via != "none" else None) and m.why


@given(arch_lists, ccs)
def test_a_list_takes_sass_first_then_ptx_and_names_the_closest(archs, cc):
    m = compat.serving_kernel(archs, cc)
    alone = {a: expected_alone(a, cc) for a in archs if compat.parse_arch(a) is not None}
    if "sass" in alone.values():
        assert m.via == "sass"
    elif "ptx" in alone.values():
        assert m.via == "ptx"
    else:
        assert m.via == "none" and m.target is None and not m
        return
    assert m and m.target in archs and alone[m.target] == m.via
    best = compat.parse_arch(m.target)
    for a, via in alone.items():
        if via == m.via:
            p = compat.parse_arch(a)
            assert (p.major, p.minor) <= (best.major, best.minor)


@given(arch_lists, targets, ccs, st.randoms(use_true_random=False))
def test_adding_a_target_never_removes_coverage(archs, extra, cc, rnd):
    before = compat.serving_kernel(archs, cc)
    shuffled = archs + [extra]
    rnd.shuffle(shuffled)
    after = compat.serving_kernel(shuffled, cc)
    if before.via == "sass":
        assert after.via == "sass"
    if before:
        assert after
    assert compat.serving_kernel(list(reversed(archs)), cc).via == before.via  # order does not matter


def test_cases_the_three_old_implementations_disagreed_on():
    # compute_90a is arch-specific PTX: it JITs for 9.0 only, never for Blackwell (kernel_for said compute_90a).
    assert compat.serving_kernel(["compute_90a"], "10.0").via == "none"
    assert compat.serving_kernel(["compute_90a"], "9.0").via == "ptx"  # runs_on said no
    # Family-specific SASS/PTX: the same major, minor >= Y; never across majors.
    assert compat.serving_kernel(["sm_100f"], "10.3").via == "sass"
    assert compat.serving_kernel(["sm_100f"], "12.0").via == "none"
    assert compat.serving_kernel(["compute_100f"], "10.3").via == "ptx"
    assert compat.serving_kernel(["compute_100f"], "12.0").via == "none"  # the old child said yes
    assert compat.serving_kernel(["sm_103f"], "10.0").via == "none"
    assert compat.serving_kernel(["sm_120", "compute_120"], "12.1") == ("sass", "sm_120", "sm_120 SASS runs on 12.1")


def test_malformed_compute_capability_is_an_error():
    with pytest.raises(ValueError, match="not a compute capability"):
        compat.serving_kernel(["sm_80"], "8")


def test_compat_does_not_import_the_wheel_index():
    code = "import sys, envdoctor.compat; print([m for m in sys.modules if m.startswith('envdoctor.wheels')])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


# --- every caller agrees with serving_kernel -----------------------------------------------------

RULES = {r.id: r for r in load_rules()}
SNAP = load_snapshot(fixture_path("rtx5090_old_torch"))
nonempty_lists = st.lists(targets, min_size=1, max_size=6)


@settings(max_examples=60)
@given(nonempty_lists, ccs)
def test_rule_ed102_fires_exactly_when_there_is_no_kernel(archs, cc):
    SNAP.gpus[0].compute_capability = cc
    SNAP.torch.arch_list = archs
    assert bool(evaluate_rule(RULES["ED102"], SNAP)) is not compat.serving_kernel(archs, cc)


@settings(max_examples=60)
@given(nonempty_lists, ccs)
def test_rule_ed309_fires_exactly_when_there_is_no_kernel(archs, cc):
    SNAP.gpus[0].compute_capability = cc
    SNAP.extensions = [Extension(name="ext", version="1.0", arch_list=archs)]
    found = evaluate_rule(RULES["ED309"], SNAP)
    missing = [g for g in SNAP.gpus if not compat.serving_kernel(archs, g.compute_capability)]
    assert bool(found) is bool(missing)


def _machine(ccs_: list, **kw) -> MachineFacts:
    return MachineFacts(python="3.12", driver="580.65.06", gpus=[GpuFact(i, "g", c) for i, c in enumerate(ccs_)], **kw)


@settings(max_examples=60)
@given(st.lists(targets, max_size=6), st.lists(ccs, min_size=1, max_size=3))
def test_the_planner_agrees(archs, gpu_ccs):
    sm = [a for a in archs if a.startswith("sm_")]
    ptx = [a for a in archs if a.startswith("compute_")]
    var = Variant(release="2.9", name="cu128", kind="cuda", cuda="12.8", status="verified",
                  platforms={"linux_x86_64": {"sm": sm, "ptx": ptx}})
    served = all(compat.serving_kernel(sm + ptx, c) for c in gpu_ccs)
    why, _notes, _full = _check_variant(var, _machine(gpu_ccs), "linux_x86_64", INDEX)
    assert (why == "") is served, why  # driver 580.65.06 runs CUDA 12.8 and JITs its PTX
    if archs:
        installed = _installed_problem(_machine(gpu_ccs, torch_version="2.9.1+cu128", torch_cuda="12.8",
                                                torch_arch_list=archs), INDEX, "linux_x86_64")
        assert (installed is None) is all(compat.serving_kernel(archs, c) for c in gpu_ccs), installed


@given(st.lists(targets, max_size=6), st.lists(ccs, max_size=3), st.lists(ccs, max_size=3))
def test_the_install_verifier_agrees(archs, planned, devices):
    problems = verify_problems({"problems": [], "arch_list": archs, "device_capabilities": devices}, planned)
    uncovered = {c for c in planned + devices if not compat.serving_kernel(archs, c)}
    assert len(problems) == len(uncovered)
    assert all(p.startswith("no kernels for compute capability") for p in problems)


def test_the_verifier_keeps_the_childs_problems_and_skips_a_torch_that_did_not_import():
    assert verify_problems({"problems": ["import torch failed: X"]}, ["9.0"]) == ["import torch failed: X"]
    assert verify_problems({"problems": [], "arch_list": ["sm_80"], "device_capabilities": ["9.0"]}, []) == [
        "no kernels for compute capability 9.0 (build has sm_80, no PTX)"]


def test_the_verify_child_reports_facts_and_leaves_the_decision_to_the_parent(tmp_path):
    """The child under a fake torch module (the outermost boundary): it reports the arch list and the
    devices' compute capabilities; the parent finds that sm_90a does not serve the 10.0 device."""
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "__version__ = '2.9.1+cu128'\n"
        "class version:\n    cuda = '12.8'\n"
        "class _T:\n    def __mul__(self, k):\n        return self\n    def sum(self):\n        return self\n"
        "    def item(self):\n        return 8.0\n"
        "def ones(n, device=None):\n    return _T()\n"
        "class cuda:\n"
        "    get_arch_list = staticmethod(lambda: ['sm_80', 'sm_90a'])\n"
        "    is_available = staticmethod(lambda: True)\n"
        "    device_count = staticmethod(lambda: 2)\n"
        "    get_device_capability = staticmethod(lambda i: [(9, 0), (10, 0)][i])\n")
    want = {"torch": "2.9.1+cu128", "cuda": "12.8", "gpus": True, "packages": {}}
    res = subprocess.run([sys.executable, str(CHILDREN / "install_verify_child.py"), json.dumps(want)],
                         capture_output=True, text=True, env={"PYTHONPATH": str(tmp_path)}, check=True)
    report = json.loads(res.stdout)
    assert report["problems"] == []
    assert report["arch_list"] == ["sm_80", "sm_90a"] and report["device_capabilities"] == ["9.0", "10.0"]
    assert verify_problems(report, ["9.0"]) == [
        "no kernels for compute capability 10.0 (build has sm_80, sm_90a, no PTX)"]
