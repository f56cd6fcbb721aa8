"""The compatibility predicates, the wheel index's schema check and where the index is found."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envdoctor import compat
from envdoctor.errors import InputError
from envdoctor.wheels import index as wi
from envdoctor.wheels.planner import GpuFact, MachineFacts, Wishes, plan

ROOT = Path(__file__).resolve().parents[1]
DRIVER_TABLE = wi.read_index(ROOT / "wheels_index.json").drivers


@pytest.mark.parametrize("archs,cc,ok,via", [
    (["sm_60"], "6.1", True, "sass"),        # same major, higher minor
    (["sm_61"], "6.0", False, "none"),       # SASS never runs on a lower minor
    (["sm_90"], "10.0", False, "none"),      # nor across majors
    (["sm_100"], "10.3", True, "sass"),      # B300 on sm_100
    (["sm_120"], "12.1", True, "sass"),      # GB10 on sm_120
    (["sm_90a"], "9.0", True, "sass"),
    (["sm_90a"], "9.1", False, "none"),      # arch-specific code: that cc only
    (["sm_75", "compute_120"], "12.1", True, "ptx"),
    (["sm_75", "compute_120"], "10.0", False, "none"),  # PTX only JITs upward
    ([], "8.0", False, "none"),
])
def test_serving_kernel(archs, cc, ok, via):
    v = compat.serving_kernel(archs, cc)
    assert bool(v) is ok and v.via == via and v.why


@pytest.mark.parametrize("driver,cuda,os_name,ok", [
    ("525.60.13", "12.8", "linux", True), ("525.60.12", "12.0", "linux", False),
    ("575.57.08", "13.0", "linux", False), ("580.65.06", "13.0", "linux", True), ("580.95.05", "13.2", "linux", True),
    ("450.80.02", "11.8", "linux", True), ("450.51.06", "11.7", "linux", False),
    ("528.33", "12.4", "windows", True), ("527.41", "12.0", "windows", False), ("580.88", "13.0", "windows", True),
    ("garbage", "12.4", "linux", False),
])
def test_driver_supports(driver, cuda, os_name, ok):
    assert bool(compat.driver_supports(driver, cuda, os_name, drivers=DRIVER_TABLE)) is ok


def test_minor_version_compat_is_said():
    v = compat.driver_supports("550.54.14", "12.8", drivers=DRIVER_TABLE)
    assert v and "minor-version compatibility" in v.why
    assert compat.min_driver("12.8", "linux", drivers=DRIVER_TABLE) == ("525.60.13", "570.26")
    assert compat.min_driver("13.0", "windows", drivers=DRIVER_TABLE) == ("580", None)
    assert not compat.ptx_jit_ok("575.57.08", "13.0", drivers=DRIVER_TABLE)
    assert compat.ptx_jit_ok("580.65.06", "13.0", drivers=DRIVER_TABLE)


def test_variant_cuda():
    assert [compat.variant_cuda(v) for v in ("cu118", "cu130", "cu92", "cpu", "rocm6.2", "xpu")] == \
        ["11.8", "13.0", "9.2", None, None, None]


def test_deepspeed_cuda_ok():
    table = {"11": ["11.0", "11.8"], "12": ["12.0", "12.4", "12.6", "12.8"]}
    assert compat.deepspeed_cuda_ok("12.4", "12.8", table)
    assert not compat.deepspeed_cuda_ok("12.4", "13.0", table)
    assert not compat.deepspeed_cuda_ok("13.2", "13.0", table)
    assert compat.deepspeed_cuda_ok("13.0", "13.0", table)


def raw_index():
    return json.loads((ROOT / "wheels_index.json").read_text())


def entry(data, version):
    """The torch release entry of `version` in a raw index document."""
    return next(r for r in data["torch"] if r["version"] == version)


def test_bundled_index_is_valid_and_covers_the_releases():
    idx = wi.read_index(ROOT / "wheels_index.json")
    assert [r.version for r in idx.releases][:3] == ["2.15", "2.14", "2.13"] and idx.releases[-1].version == "2.0"
    r214 = idx.release("2.14.1+cu130")
    assert r214.pypi_default["linux_x86_64"] == "cu130"
    assert r214.variants["cu130"].archs("linux_x86_64") == (["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], [])
    assert idx.release("2.10").variants["cu128"].platforms["linux_x86_64"]["sm_unverified"] == ["sm_70"]
    assert idx.release("2.6").variants["cu126"].status == "UNVERIFIED"


def test_index_errors_are_all_reported(tmp_path):
    data = raw_index()
    bad = copy.deepcopy(data)
    entry(bad, "2.14")["variants"]["cu130"]["cuda"] = "12.9"
    entry(bad, "2.13")["variants"]["cu126"]["platforms"]["linux_x86_64"]["sm"].append("sm_9x")
    entry(bad, "2.12")["python"].append("three")
    bad["drivers"]["families"]["12"]["linux"] = "new"
    bad["deepspeed"]["releases"][0]["torch"] = ">=>2"
    path = tmp_path / "idx.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(InputError) as exc:
        wi.read_index(path)
    msg = str(exc.value)
    assert "5 problems" in msg
    for frag in ("torch[2.14].variants.cu130: cuda '12.9'", "torch[2.13].variants.cu126.platforms.linux_x86_64: sm: 'sm_9x'",
                 "torch[2.12]: python: 'three'", "drivers.families[12]: linux: 'new'", "deepspeed.releases[0.19.8]: torch"):
        assert frag in msg
    assert msg.count(str(path)) == 5


def test_invalid_index_file_exits_2(tmp_path):
    path = tmp_path / "idx.json"
    path.write_text("{not json")
    env = {"ENVDOCTOR_WHEELS_INDEX": str(path), "PATH": "/usr/bin:/bin"}
    res = subprocess.run([sys.executable, "-m", "envdoctor", "fix", "--snapshot", str(ROOT / "tests/data/h100_575.json"),
                          "--dry-run"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "invalid JSON at line 1" in res.stderr and "Traceback" not in res.stderr


def test_user_copy_preferred_only_when_valid_and_current(tmp_path):
    from envdoctor.settings import Settings

    conf = Settings.from_env({"XDG_CACHE_HOME": str(tmp_path), "HOME": str(tmp_path)}, platform="linux")
    bundled = wi.load_index()
    assert conf.wheel_index().path == bundled.path
    user = conf.user_index_path
    user.parent.mkdir(parents=True)
    data = raw_index()
    data["based_on"] = bundled.generated
    entry(data, "2.14")["latest_patch"] = "2.14.2"
    user.write_text(json.dumps(data))
    assert conf.wheel_index().release("2.14").latest_patch == "2.14.2"
    data["based_on"] = "1999-01-01"
    user.write_text(json.dumps(data) + " ")
    warnings = []
    assert conf.wheel_index(warn=warnings.append).release("2.14").latest_patch == "2.14.1" and warnings
    user.write_text("[]")
    assert conf.wheel_index(warn=warnings.append).path == bundled.path


@settings(max_examples=200, deadline=None)
@given(
    ccs=st.lists(st.sampled_from(["6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0", "12.1"]),
                 min_size=1, max_size=4),
    driver=st.sampled_from(["450.80.02", "470.256.02", "525.60.13", "535.247.01", "560.35.05", "570.26", "575.57.08",
                            "580.65.06", "595.45.04"]),
    python=st.sampled_from(["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14"]),
)
def test_plan_properties(ccs, driver, python):
    idx = wi.load_index()
    m = MachineFacts(python=python, driver=driver, gpus=[GpuFact(i, "g", cc) for i, cc in enumerate(ccs)])
    p = plan(m, idx, Wishes())
    if p.status == "impossible":
        assert p.upgrade and not p.packages
        return
    t = p.torch
    rel = idx.release(t.version)
    var = rel.variants[t.variant]
    sm, ptx = var.archs("linux_x86_64")
    assert python in rel.python
    assert all(compat.serving_kernel(sm + ptx, cc) for cc in ccs)
    assert compat.driver_supports(driver, var.cuda, "linux", drivers=DRIVER_TABLE)
    # Dropping a GPU never makes the plan older.
    if len(ccs) > 1:
        fewer = plan(MachineFacts(python=python, driver=driver, gpus=[GpuFact(0, "g", ccs[0])]), idx, Wishes())
        assert idx.release(fewer.torch.version).key >= rel.key
    # A newer driver never makes the plan older.
    newer = plan(MachineFacts(python=python, driver="600.1", gpus=m.gpus), idx, Wishes())
    assert idx.release(newer.torch.version).key >= rel.key


def test_old_toolkits_need_their_own_driver_and_the_index_knows_them():
    assert compat.min_driver("10.2", "linux", drivers=DRIVER_TABLE) == ("440.33", "440.33")
    assert compat.min_driver("10.1", "windows", drivers=DRIVER_TABLE) == ("418.96", "418.96")
    assert compat.min_driver("9.0", "linux", drivers=DRIVER_TABLE) == ("384.81", "384.81")
    assert compat.min_driver("11.0", "linux", drivers=DRIVER_TABLE) == ("450.51.05", "450.51.05")
    assert compat.min_driver("11.1", "linux", drivers=DRIVER_TABLE) == ("450.80.02", "455.23")
    assert not compat.driver_supports("418.67", "10.2", "linux", drivers=DRIVER_TABLE)
    assert compat.driver_supports("440.33", "10.2", "linux", drivers=DRIVER_TABLE)


@pytest.mark.parametrize("cuda,cc,verdict", [
    ("10.0", "1.2", False),   # below sm_30
    ("11.8", "12.0", False),  # a major it does not know
    ("12.8", "12.0", None),   # inside the range: the arch list decides
    ("13.0", "7.0", False),   # CUDA 13 dropped sm_50..sm_72
    ("12.9", "7.0", None),
    ("12.0", "3.7", False),   # CUDA 12 dropped sm_35/37
    ("11.0", "3.0", False),   # CUDA 11 dropped sm_30
    ("99.0", "8.0", None),    # unknown toolkit
])
def test_toolkit_serves(cuda, cc, verdict):
    nvcc = wi.read_index(ROOT / "wheels_index.json").nvcc_sass
    got = compat.toolkit_serves(cuda, cc, nvcc)
    assert (None if got is None else got.ok) is verdict


@pytest.mark.parametrize("os_name,arch,platform", [
    ("linux", "x86_64", "linux_x86_64"), ("Linux", "aarch64", "linux_aarch64"), ("windows", "AMD64", "win_amd64"),
    ("Windows", "ARM64", "win_arm64"), ("darwin", "arm64", "macos_arm64"), ("darwin", "x86_64", "macos_x86_64"),
    ("linux", "ppc64le", None), ("freebsd", "x86_64", None),
])
def test_wheel_platform(os_name, arch, platform):
    assert compat.wheel_platform(os_name, arch) == platform


def test_history_and_wheel_tables_are_loaded_and_checked(tmp_path):
    idx = wi.read_index(ROOT / "wheels_index.json")
    assert [r.version for r in idx.history] == ["1.13", "1.12", "1.11", "1.10", "1.9", "1.8"]
    assert idx.release("1.12.1+cu102").variants["cu102"].archs("linux_x86_64") == (
        ["sm_37", "sm_50", "sm_60", "sm_70"], [])
    assert all(r.version.startswith("2.") for r in idx.releases)  # history is never planned
    w251 = next(w for w in idx.wheels if str(w.version) == "2.5.1")
    assert "3.13" in w251.pythons["linux_x86_64"] and "3.13" not in w251.pythons["win_amd64"]
    bad = raw_index()
    bad["nvcc_sass"]["12.8"]["sass"].append("sm_1z0")
    bad["python_wheels"]["releases"][0]["uploaded"] = "Dec 2018"
    bad["python_wheels"]["releases"][1]["pythons"]["linux_x86_64"].append("py3")
    bad["drivers"]["toolkits"]["10.2"].pop("minor_version_compat")
    bad["torch_history"][0]["python"] = []
    path = tmp_path / "idx.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(InputError) as exc:
        wi.read_index(path)
    msg = str(exc.value)
    for frag in ("nvcc_sass[12.8]: sass", "python_wheels.releases[0]: uploaded 'Dec 2018'",
                 "python_wheels.releases[1]: pythons.linux_x86_64", "drivers.toolkits[10.2]: no drivers.families entry",
                 "torch_history[1.13]: python must be a list"):
        assert frag in msg, msg
