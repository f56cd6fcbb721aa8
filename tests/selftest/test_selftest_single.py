"""`selftest backward`, `compile` and `gpu` for real on this CPU machine (spawns torch processes)."""

from __future__ import annotations

import shutil
import sys

import pytest

from envdoctor.selftest.common import probe_target
from envdoctor.selftest.common import significant as _sig
from envdoctor.selftest.gpu import run_gpu

from .conftest import by_name, cli, doc

pytestmark = pytest.mark.slow


def test_backward_nonscalar_matches_the_loop(marker):
    proc = cli(["selftest", "backward", "--batch", "4", "--json"], env={"ENVDOCTOR_TEST_MARK": marker})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    t = by_name(doc(proc), "backward")
    m = t["metrics"]
    assert t["status"] == "passed" and t["error"] is None
    assert m["batch"] == 4 and m["device"] == "cpu"
    assert 1_000_000 < m["parameters"] < 10_000_000  # "a few million"
    assert 0 <= m["max_rel_grad_diff"] <= 1e-5
    assert m["looped_seconds"] > 0 and m["batched_seconds"] > 0
    assert m["speedup"] == pytest.approx(m["looped_seconds"] / m["batched_seconds"], rel=0.01)
    assert m["memory_method"].startswith("rss_delta")
    assert m["tolerance"] == m["dtypes"]["float32"]["tolerance"] == 1e-5  # as measured, not rounded to 0.0
    assert m["looped_peak_bytes"] > 0 and m["batched_peak_bytes"] > 0
    ds = m["deepspeed"]
    try:
        import deepspeed  # noqa: F401
    except Exception:
        assert ds["status"] == "skipped" and "deepspeed does not import" in ds["reason"]
        assert "deepspeed: engine step" not in proc.stderr  # a step that does not run is not announced
    else:  # its backward takes the weighted sum, and must give the same gradients
        assert ds["status"] == "passed" and ds["max_rel_grad_diff"] <= 1e-5
        assert "deepspeed: engine step" in proc.stderr
    assert "non-scalar" in proc.stderr


@pytest.mark.skipif(not any(shutil.which(c) for c in ("g++", "clang++", "c++")),
                    reason="no C++ compiler here: Inductor cannot build CPU kernels (the failure path is tested below)")
def test_compile_matches_eager(marker):
    proc = cli(["selftest", "compile", "--json"], env={"ENVDOCTOR_TEST_MARK": marker})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    t = by_name(doc(proc), "compile")
    assert t["status"] == "passed"
    m = t["metrics"]
    assert m["compile_seconds"] >= 0 and m["max_rel_out_diff"] <= 1e-4 and m["max_rel_grad_diff"] <= 1e-4


def test_missing_compiler_is_a_finding_not_a_traceback(marker):
    proc = cli(["selftest", "compile"], env={"ENVDOCTOR_TEST_MARK": marker, "CXX": "/nonexistent/g++"})
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout and "Traceback" not in proc.stderr
    assert "FAILED  compile" in proc.stdout
    assert "SELFTEST-COMPILE-TOOLCHAIN" in proc.stdout and "no working C/C++ compiler" in proc.stdout
    assert "build-essential" in proc.stdout
    proc = cli(["selftest", "compile", "--json"], env={"ENVDOCTOR_TEST_MARK": marker, "CXX": "/nonexistent/g++"})
    t = by_name(doc(proc), "compile")
    assert t["status"] == "failed" and t["metrics"]["error_kind"] == "c_compiler_missing"
    assert t["findings"][0]["category"] == "compile_toolchain_missing"
    assert "InvalidCxxCompiler" in t["error"] and "\n" not in t["error"]


def test_gpu_is_skipped_without_cuda(marker):
    proc = cli(["selftest", "gpu", "--json"], env={"ENVDOCTOR_TEST_MARK": marker})
    assert proc.returncode == 0
    t = by_name(doc(proc), "gpu")
    assert t["status"] == "skipped" and "CUDA is not available" in t["error"]


def test_gpu_matmul_checks_run_on_the_cpu(marker, monkeypatch):
    monkeypatch.setenv("ENVDOCTOR_TEST_MARK", marker)
    res = run_gpu(probe_target(sys.executable), device="cpu")
    assert res.status == "passed", res.error
    (dev,) = res.metrics["devices"]
    assert dev["device"] == "cpu" and set(dev["tflops"]) == {"float32", "bfloat16"}
    assert dev["rel_err"]["float32"] < 1e-5 and dev["rel_err"]["bfloat16"] < 2e-2
    # a rate is reported for each dtype; how fast a loaded CPU is does not matter
    assert all(isinstance(v, float) and v > 0 for v in dev["tflops"].values()), dev["tflops"]
    # given no rules database, the run loads none of its own: the datasheet peaks are said not compared
    assert "peaks" not in res.metrics and "no rules database" in res.metrics["peaks_not_compared"]


def test_backward_bf16_autocast_path_on_cpu(tmp_path, marker):
    """The bf16 autocast comparison that runs on GPUs, exercised on the CPU through the worker's own options."""
    import json
    import os
    import subprocess

    from envdoctor.selftest.result import WORKERS

    out = tmp_path / "bw.json"
    subprocess.run([sys.executable, str(WORKERS / "backward_worker.py"), "--out", str(out), "--batch", "4", "--repeats", "1",
                    "--dtypes", "float32,bfloat16", "--deepspeed", "off"], check=True, capture_output=True, timeout=300,
                   env=dict(os.environ, ENVDOCTOR_TEST_MARK=marker))
    data = json.loads(out.read_text())
    assert data["ok"], data["error"]
    bf16 = data["runs"]["bfloat16"]
    assert bf16["tolerance"] == 2e-2 and 0 < bf16["max_rel_grad_diff"] <= 2e-2
    assert data["runs"]["float32"]["max_rel_grad_diff"] < bf16["max_rel_grad_diff"]  # bf16 is looser, as it should be


def test_a_slow_devices_rate_is_reported_to_significant_figures_never_as_zero():
    # 2 decimals made a loaded CPU's 0.004 TFLOP/s read 0.0 (issue 11, 20)
    assert _sig(0.0041234) == 0.00412 and _sig(1234.5678) == 1230.0 and _sig(7.0e-7) == 7.0e-7
    assert _sig(None) is None
