"""`fix --target SNAPSHOT` / `fix --gpu CC --driver VERSION`: the planner's plan for another machine's GPUs and driver
with this environment's Python, platform and packages (envdoctor.wheels.target), and the bad inputs (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from envdoctor.errors import InputError
from envdoctor.snapshot import ProbeFailed, Unavailable, is_unknown, load_snapshot
from envdoctor.wheels import target
from envdoctor.wheels.index import load_index
from envdoctor.wheels.planner import plan
from envdoctor.wheels.wishes import Wishes
from tests.conftest import fixture_path, run_cli_in_process
from tests.test_install import ROOT


def clean_image():
    """A Docker build: this repo's CPU fixture (Python 3.11, Linux x86_64) before torch is installed."""
    here = load_snapshot(fixture_path("cpu_only_this_machine"))
    here.torch = load_snapshot(fixture_path("gtx1080ti_no_torch")).torch  # torch: not installed
    here.python.packages = {k: v for k, v in here.python.packages.items() if k.lower() != "torch"}
    return here


def plan_for(here, tgt, torch=None):
    index = load_index()
    return plan(target.retarget(here, tgt), index, Wishes.from_options(torch, None, None, index.default_index_base))


def test_rtx5090_on_570_gets_torch_2_11_cu128():
    # The bundled index: 2.12-2.14 ship sm_120 only in cu130/cu132 (driver >= 580.65.06), cu126 stops at sm_90;
    # 2.11 cu128 has sm_120 and CUDA 12.8 runs on 570.
    p = plan_for(clean_image(), target.from_options("12.0", "570.133.07", name="NVIDIA GeForce RTX 5090"))
    assert p.status == "planned" and p.torch.pin == "torch==2.11.0+cu128"
    assert p.python == "3.11" and p.platform == "linux_x86_64"  # this environment's, not the target's
    why = {(r.version, r.variant): r.why for r in p.rejected}
    assert why[("2.14.1", "cu130")] == "driver 570.133.07 < 580.65.06 needed by CUDA 13.0"
    assert "no kernels for GPU 0 NVIDIA GeForce RTX 5090 (cc 12.0)" in why[("2.14.1", "cu126")]


def test_a_gpu_given_without_a_name_is_named_once():
    # `fix --gpu 12.0 --driver 570.133.07`: the GPU's name is unknown; its label is "GPU 0", not "GPU 0 GPU 0".
    p = plan_for(clean_image(), target.from_options("12.0", "570.133.07"))
    why = {(r.version, r.variant): r.why for r in p.rejected}
    assert why[("2.14.1", "cu126")].startswith("no kernels for GPU 0 (cc 12.0): build has sm_50")
    assert not any("GPU 0 GPU 0" in r.why for r in p.rejected)
    two = plan_for(clean_image(), target.from_options("12.0", "570.133.07", count=2))
    assert any("no kernels for GPUs 0,1 (cc 12.0)" in r.why for r in two.rejected)


def test_h100_on_580_gets_the_newest_2_14_build():
    p = plan_for(clean_image(), target.from_options("9.0", "580.95.05", count=8))
    assert p.status == "planned" and p.torch.pin == "torch==2.14.1+cu130"
    assert "GPUs cc 9.0, driver 580.95.05" in p.reason


def test_a_target_snapshot_gives_its_gpus_and_driver_only():
    snap = load_snapshot(fixture_path("h200_8x_healthy"))  # Python 3.12 there
    tgt = target.from_snapshot(snap, "h200.json")
    assert tgt.driver == "580.95.05" and [str(g.compute_capability) for g in tgt.gpus] == ["9.0"] * 8
    here = clean_image()
    moved = target.retarget(here, tgt)
    assert moved.python.version == here.python.version and moved.host.arch == here.host.arch
    assert plan_for(here, tgt).python == "3.11"


def test_a_target_snapshot_that_does_not_know_its_gpus_is_refused():
    snap = load_snapshot(fixture_path("cpu_only_this_machine"))
    snap.gpus = ProbeFailed("nvml probe timeout")
    with pytest.raises(InputError, match="snap.json: its GPU list is probe failed"):
        target.from_snapshot(snap, "snap.json")
    snap.gpus, snap.driver = [], ProbeFailed("nvidia-smi hung")
    with pytest.raises(InputError, match="empty and its driver probe failed"):
        target.from_snapshot(snap, "snap.json")
    snap.driver = Unavailable("no NVIDIA driver installed")  # known: a machine without NVIDIA GPUs
    assert target.from_snapshot(snap, "snap.json").gpus == []


def test_the_installed_torch_is_judged_for_the_target():
    here = load_snapshot(fixture_path("cpu_only_this_machine"))  # torch 2.13.0+cpu, no GPU here
    p = plan_for(here, target.from_options("9.0", "580.95.05"), torch="2.14")
    assert p.torch.pin == "torch==2.14.1+cu130"
    moved = target.retarget(here, target.from_options("9.0", "580.95.05"))
    assert is_unknown(moved.torch.cuda_available)  # whether CUDA starts is the target's fact
    # With no GPU in the target the CPU build is right and stays.
    assert plan_for(here, target.Target("none.json", None, [])).status == "nothing_to_do"


def test_a_driver_too_old_for_the_gpu_is_impossible_with_the_upgrade():
    p = plan_for(clean_image(), target.from_options("12.0", "565.57.01"))
    assert p.status == "impossible" and p.upgrade and p.upgrade[0].startswith("driver >= ")


@pytest.mark.parametrize("gpu,driver,count,message", [
    ("abc", "570.133.07", None, "--gpu 'abc': not a compute capability"),
    ("9.0,x", "570.133.07", None, "--gpu 'x': not a compute capability"),
    ("9.0", "x", None, "--driver 'x': not an NVIDIA driver version"),
    ("9.0", None, None, "--gpu needs --driver"),
    ("9.0", "570.133.07", 0, "--gpu-count 0: must be 1 or more"),
    ("9.0,8.0", "570.133.07", 3, "--gpu-count 3 with 2 compute capabilities"),
])
def test_bad_target_options(gpu, driver, count, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        target.from_options(gpu, driver, count)


def run_fix(*args):
    return subprocess.run([sys.executable, "-m", "envdoctor", "fix", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("args,message", [
    (["--gpu", "abc", "--driver", "570.133.07"], "--gpu 'abc': not a compute capability"),
    (["--gpu", "9.0", "--driver", "x"], "--driver 'x': not an NVIDIA driver version"),
    (["--target", "/nonexistent/snap.json"], "/nonexistent/snap.json: no such file"),
    (["--driver", "570.133.07"], "--driver goes with --gpu CC"),
    (["--gpu", "9.0", "--driver", "580.95.05", "--gpu-count", "many"], "--gpu-count 'many': not a number"),
    (["--gpu", "9.0", "--driver", "580.95.05", "--target", "x.json"], "--target and --gpu both name"),
    (["--snapshot", "x.json", "--gpu", "9.0", "--driver", "580.95.05"], "--gpu plans for another machine"),
    (["--format", "pylock", "-o", "lock.toml"], "PEP 751 names a lock file pylock.toml"),
    (["--format", "uv", "--yes"], "--format writes a lock and installs nothing"),
    (["--format", "requirements", "--snapshot", "x.json"], "use --target SNAPSHOT instead of --snapshot"),
    (["-o", "x.txt"], "-o/--output goes with --format"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    res = run_cli_in_process(["fix", *args, "--dry-run"])
    assert res.returncode == 2, res.stderr
    assert res.stderr.count("\n") == 1 and message in res.stderr and not res.stdout


@pytest.mark.slow
def test_cli_plans_for_a_target_snapshot_without_installing():
    res = run_fix("--target", str(fixture_path("h200_8x_healthy")), "--torch", "2.14", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["packages"][0]["pin"] == "torch==2.14.1+cu130" and doc["target"]["driver"] == "580.95.05"
    assert doc["target"]["source"].endswith("h200_8x_healthy.json") and len(doc["target"]["gpus"]) == 8
    assert doc["python"] == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert any("first `envdoctor check`" in n for n in doc["notes"])
    from tests.json_schemas import assert_valid

    assert_valid(doc)
