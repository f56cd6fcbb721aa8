"""The single-process self-tests: `backward`, `compile` and `gpu`. Each runs one worker in the target
interpreter under the same deadline and process-tree cleanup as `allreduce` (see launch.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

from envdoctor.findings import Finding
from envdoctor.fixes import manual
from envdoctor.selftest.common import Progress, RunDir, Target, failure_text, no_progress, run_worker
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


def _skip_if_no_torch(name: str, target: Target) -> Optional[TestResult]:
    if target.error or not target.torch:
        return TestResult(name, "failed", error=f"torch does not import in {target.python}: {target.error}")
    return None


def run_backward(target: Target, batch: int = 8, repeats: int = 3, timeout: float = 600.0, deepspeed: bool = True,
                 progress: Progress = no_progress, launcher: Launcher = launch,
                 scratch: Optional[Path] = None) -> TestResult:
    bad = _skip_if_no_torch("backward", target)
    if bad:
        return bad
    rundir = RunDir("backward", scratch)
    progress(f"backward: per-sample loop vs one non-scalar backward, batch {batch}")
    args = ["--batch", str(batch), "--repeats", str(repeats), "--deepspeed", "auto" if deepspeed else "off"]
    run = run_worker(target, "backward_worker.py", args, rundir, timeout, progress, launcher=launcher, prefix="  ")
    data = run.data or {}
    metrics: Dict[str, Any] = {}
    runs = data.get("runs") or {}
    fp32 = runs.get("float32")
    if fp32:
        metrics.update(batch=data.get("batch"), parameters=data.get("parameters"), device=data.get("device"),
                       looped_seconds=_r(fp32["looped_seconds"]), batched_seconds=_r(fp32["batched_seconds"]),
                       speedup=_r(fp32["speedup"], 3), max_rel_grad_diff=fp32["max_rel_grad_diff"],
                       tolerance=fp32["tolerance"], looped_peak_bytes=fp32["looped_peak_bytes"],
                       batched_peak_bytes=fp32["batched_peak_bytes"], memory_method=fp32["memory_method"])
        metrics["dtypes"] = {d: {k: _timing(k, v) for k, v in r.items()} for d, r in runs.items()}
    if "deepspeed" in data:
        metrics["deepspeed"] = data["deepspeed"]
    if run.launch.ok and data.get("ok"):
        return rundir.finish(TestResult("backward", "passed", run.launch.seconds, metrics))
    return rundir.finish(TestResult("backward", "failed", run.launch.seconds, metrics,
                                    failure_text(run, "the backward worker")), run.launch.log_path)


def run_compile(target: Target, timeout: float = 900.0, progress: Progress = no_progress,
                launcher: Launcher = launch, scratch: Optional[Path] = None) -> TestResult:
    bad = _skip_if_no_torch("compile", target)
    if bad:
        return bad
    if not target.compile:
        return TestResult("compile", "skipped", error=f"torch {target.torch} has no torch.compile (needs 2.0 or newer)")
    rundir = RunDir("compile", scratch)
    progress("compile: torch.compile of a small model against eager")
    run = run_worker(target, "compile_worker.py", [], rundir, timeout, progress, launcher=launcher, prefix="  ")
    data = run.data or {}
    metrics = {k: _timing(k, v) for k, v in data.items()
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


def run_gpu(target: Target, timeout: float = 600.0, progress: Progress = no_progress, launcher: Launcher = launch,
            device: str = "cuda", scratch: Optional[Path] = None) -> TestResult:
    bad = _skip_if_no_torch("gpu", target)
    if bad:
        return bad
    if device == "cuda" and not target.cuda_available:
        build = target.raw.get("cuda_build") or "CPU-only"
        why = target.raw.get("cuda_error") or f"CUDA is not available to torch {target.torch} (build: {build})"
        return TestResult("gpu", "skipped", error=why)
    rundir = RunDir("gpu", scratch)
    progress(f"gpu: matmul per dtype on {target.device_count if device == 'cuda' else 'the CPU'} device(s), peer access")
    run = run_worker(target, "gpu_worker.py", ["--device", device], rundir, timeout, progress, launcher=launcher, prefix="  ")
    data = run.data or {}
    metrics: Dict[str, Any] = {}
    if data.get("devices"):
        metrics["devices"] = [
            {k: v for k, v in d.items() if k != "matmul"}
            | {"tflops": {n: _sig(m.get("tflops")) for n, m in d["matmul"].items()},
               "rel_err": {n: m.get("rel_err") for n, m in d["matmul"].items()}}
            for d in data["devices"]
        ]
    findings: List[Finding] = []
    if data.get("peers"):
        metrics["peers"] = data["peers"]
        no_peer = sorted(p for p, e in data["peers"].items() if not e["can_access_peer"])
        if no_peer:
            findings.append(Finding(
                id="SELFTEST-GPU-NO-PEER", severity="warning", category="p2p_unavailable",
                title=f"{len(no_peer)} GPU pair(s) cannot access each other peer to peer",
                detail=f"torch.cuda.can_device_access_peer is false for {', '.join(no_peer)}; NCCL then stages "
                       "through host memory, at a fraction of the bandwidth.",
                remedy=manual("Check `nvidia-smi topo -p2p r`, ACS and the IOMMU (`envdoctor check`); in a VM enable P2P."),
                subjects=sorted({f"gpu:{x}" for p in no_peer for x in p.split("->")}),
            ))
    if data.get("skipped"):
        return rundir.finish(TestResult("gpu", "skipped", run.launch.seconds, metrics, data.get("error")))
    if run.launch.ok and data.get("ok"):
        return rundir.finish(TestResult("gpu", "passed", run.launch.seconds, metrics, None, findings))
    return rundir.finish(TestResult("gpu", "failed", run.launch.seconds, metrics, failure_text(run, "the gpu worker"),
                                    findings), run.launch.log_path)


def _timing(key: str, value: Any) -> Any:
    """Seconds and ratios rounded; differences and tolerances (1e-05 and below) kept as measured."""
    return value if "diff" in key or key == "tolerance" else _r(value)


def _r(value: Any, digits: int = 4) -> Any:
    return round(value, digits) if isinstance(value, float) else value


def _sig(value: Any, figures: int = 3) -> Any:
    """Round to significant figures, so a slow device's 0.004 TFLOP/s does not read as 0."""
    return float(f"{value:.{figures}g}") if isinstance(value, float) else value
