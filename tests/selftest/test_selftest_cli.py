"""The `selftest` command's interface: arguments, exit codes, text output, and no torch in envdoctor's process."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from envdoctor.findings import Finding
from envdoctor.fixes import manual
from envdoctor.present.selftest import render_results
from envdoctor.present.style import Style
from envdoctor.selftest.result import TestResult, document, exit_code
from tests.conftest import run_cli_in_process

from .conftest import ROOT, by_name, cli, doc


@pytest.mark.parametrize("args,message", [
    (["--nproc", "0"], "--nproc must be between 1 and 256"),
    (["--nnodes", "2"], "--nnodes above 1 needs --rdzv-endpoint"),
    (["--nnodes", "2", "--node-rank", "2", "--rdzv-endpoint", "h:1"], "--node-rank 2 is outside 0..1"),
    (["--rdzv-endpoint", "nohost"], "expected HOST:PORT"),
    (["--rdzv-endpoint", "h:99999"], "expected HOST:PORT"),
    (["--max-size", "lots"], "not a size: 'lots'"),
    (["--min-size", "1M", "--max-size", "1K"], "must be positive and not above"),
    (["--timeout", "0"], "--timeout must be positive"),
    (["--python", "/nonexistent/python"], "no such interpreter"),
    (["--snapshot", "/nonexistent.json"], "no such file"),
])
def test_bad_arguments_exit_2_with_one_line(args, message):
    proc = run_cli_in_process(["selftest", "allreduce", *args])
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("envdoctor: error:") and message in lines[0], proc.stderr


def test_unknown_test_name_is_an_argparse_error():
    proc = cli(["selftest", "everything"])
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


@pytest.mark.slow
def test_nccl_without_cuda_fails_with_a_reason():
    proc = cli(["selftest", "allreduce", "--backend", "nccl", "--json"])
    assert proc.returncode == 1
    t = by_name(doc(proc), "allreduce")
    assert t["status"] == "failed" and "--backend nccl" in t["error"] and "use --backend gloo" in t["error"]


@pytest.mark.skipif(not shutil.which("python3") or subprocess.run(["python3", "-c", "import torch"],
                    capture_output=True).returncode == 0, reason="needs a python3 without torch")
def test_target_without_torch_fails_every_test_with_the_import_error():
    proc = cli(["selftest", "all", "--json", "--python", shutil.which("python3")])
    assert proc.returncode == 1
    data = doc(proc)
    assert [t["name"] for t in data["tests"]] == ["allreduce", "collectives", "backward", "compile", "gpu"]
    assert all(t["status"] == "failed" and "torch does not import" in t["error"] for t in data["tests"])
    assert "No module named 'torch'" in data["tests"][0]["error"]


def test_envdoctor_process_never_imports_torch():
    code = ("import sys, envdoctor.commands.selftest, envdoctor.selftest.registry, envdoctor.usecases.selftest, "
            "envdoctor.selftest.bandwidth; from envdoctor.cli import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'deepspeed', 'numpy')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_json_document_and_exit_codes():
    ok = TestResult("allreduce", "passed", 1.23456, {"world_size": 2, "backend": "gloo", "busbw_gbps": {"1048576": 0.9}})
    skipped = TestResult("gpu", "skipped", error="CUDA is not available")
    failed = TestResult("backward", "failed", 2.0, {}, "gradients differ", [
        Finding(id="X", severity="error", category="c", title="t", detail="d", remedy=manual("f"))])
    d = document([ok, skipped])
    assert d["schema"] == "envdoctor.selftest/1"
    assert d["tests"][0] == {"name": "allreduce", "status": "passed", "seconds": 1.235,
                             "metrics": {"world_size": 2, "backend": "gloo", "busbw_gbps": {"1048576": 0.9}},
                             "error": None, "findings": [], "log": None}
    assert exit_code([ok, skipped]) == 0 and exit_code([ok, failed]) == 1
    assert document([failed])["tests"][0]["findings"][0]["id"] == "X"


def test_text_report():
    ok = TestResult("allreduce", "passed", 7.4, {"world_size": 2, "backend": "gloo", "ddp": {"grads_identical": True},
                                                 "busbw_gbps": {"1024": 0.001, "1048576": 0.5}})
    bad = TestResult("compile", "failed", 4.9, {}, "InvalidCxxCompiler: No working C++ compiler found",
                     [Finding(id="SELFTEST-COMPILE-TOOLCHAIN", severity="error", category="compile_toolchain_missing",
                              title="torch.compile cannot build kernels", detail="d", remedy=manual("install g++"))],
                     log="/tmp/x/compile_worker.log")
    text = render_results([ok, bad], Style(False))
    assert "PASSED  allreduce    7.4s  2 ranks, gloo: busbw 0.50 GB/s at 1 MiB; DDP gradients identical on every rank" in text
    assert "FAILED  compile      4.9s" in text and "error: InvalidCxxCompiler" in text
    assert "log kept: /tmp/x/compile_worker.log" in text
    assert "ERROR SELFTEST-COMPILE-TOOLCHAIN torch.compile cannot build kernels" in text
    assert text.rstrip().endswith("1 passed, 1 failed, 0 skipped")
