"""`selftest compile`: torch.compile (Inductor) of a small model, forward and backward against eager; a missing
toolchain is a finding with the install command. One worker in the target interpreter (launch.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional

from envdoctor.findings import Finding
from envdoctor.fixes import manual
from envdoctor.selftest.common import Progress, RunDir, Target, failure_text, no_progress, run_worker, timing, torch_missing
from envdoctor.selftest.kind import RunInputs, SelftestKind
from envdoctor.selftest.launch import Launcher, launch
from envdoctor.selftest.result import TestResult

COMPILE_FIX = {
    "c_compiler_missing": ("torch.compile (Inductor) needs a working C++ compiler to build its CPU kernels: install one "
                           "(Debian/Ubuntu: `apt install build-essential`; RHEL: `dnf install gcc-c++`; conda: "
                           "`conda install -c conda-forge cxx-compiler`), or point CXX at it."),
    "triton_missing": ("torch.compile needs Triton for GPU kernels: `pip install triton` at the version pinned by this "
                       "torch (`pip show torch` lists it), or reinstall torch from the official index, which brings it."),
    "python_headers_missing": ("Inductor compiles against Python.h: install the Python development headers "
                               "(Debian/Ubuntu: `apt install python3-dev`; or use a Python that ships them)."),
}


def run_compile(target: Target, timeout: float = 900.0, progress: Progress = no_progress,
                launcher: Launcher = launch, scratch: Optional[Path] = None) -> TestResult:
    bad = torch_missing("compile", target)
    if bad:
        return bad
    if not target.compile:
        return TestResult("compile", "skipped", error=f"torch {target.torch} has no torch.compile (needs 2.0 or newer)")
    rundir = RunDir("compile", scratch)
    progress("compile: torch.compile of a small model against eager")
    run = run_worker(target, "compile_worker.py", [], rundir, timeout, progress, launcher=launcher, prefix="  ")
    data = run.data or {}
    metrics = {k: timing(k, v) for k, v in data.items()
               if k in ("device", "backend", "compile_seconds", "cache_hits", "eager_step_seconds", "compiled_step_seconds",
                        "max_rel_out_diff", "max_rel_grad_diff", "tolerance", "torch")}
    if data.get("skipped"):
        return rundir.finish(TestResult("compile", "skipped", run.launch.seconds, metrics, data.get("error")))
    if run.launch.ok and data.get("ok"):
        return rundir.finish(TestResult("compile", "passed", run.launch.seconds, metrics))
    kind = data.get("error_kind")
    findings = []
    error = failure_text(run, "the compile worker")
    if kind in COMPILE_FIX:
        findings.append(compile_finding(kind, error, str(data.get("device") or "cpu")))
        error = _headline(error)
    metrics["error_kind"] = kind
    return rundir.finish(TestResult("compile", "failed", run.launch.seconds, metrics, error, findings), run.launch.log_path)


def compile_finding(kind: str, error: str, device: str) -> Finding:
    what = {"c_compiler_missing": "no working C/C++ compiler", "triton_missing": "Triton is missing",
            "python_headers_missing": "the Python headers (Python.h) are missing"}[kind]
    return Finding(
        id="SELFTEST-COMPILE-TOOLCHAIN",
        severity="error",
        category="compile_toolchain_missing",
        title=f"torch.compile cannot build kernels on {device}: {what}",
        detail=f"torch.compile of a small model failed while building its kernels:\n{_headline(error)}",
        remedy=manual(COMPILE_FIX[kind]),
        subjects=["torch"],
    )


def _headline(error: str) -> str:
    """The line of a traceback that names the exception."""
    lines = [ln.strip() for ln in error.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        name = ln.split(":")[0].replace(".", "")
        if ":" in ln and name.isidentifier() and not ln.startswith(("File ", "Set TORCHDYNAMO")):
            return ln[:400]
    return lines[-1][:400] if lines else error


def summary(m: Dict[str, Any]) -> str:
    if m.get("compile_seconds") is None:
        return ""
    return (f"{m.get('device')}: compiled in {m['compile_seconds']:.1f}s, output diff {m.get('max_rel_out_diff', 0):.1e}, "
            f"grad diff {m.get('max_rel_grad_diff', 0):.1e}")


def _run(inputs: RunInputs) -> TestResult:
    return run_compile(inputs.target, timeout=inputs.timeout, progress=inputs.progress, scratch=inputs.scratch)


KIND = SelftestKind("compile", "torch.compile", 900.0, _run, steps=2, summary=summary)
