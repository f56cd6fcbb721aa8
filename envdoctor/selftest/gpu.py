"""`selftest gpu`: per GPU a matmul in each dtype it has against float64, TFLOP/s, and peer access between every
pair; skipped without CUDA. One worker in the target interpreter (launch.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

from envdoctor.findings import Finding
from envdoctor.fixes import manual
from envdoctor.selftest.common import (
    Progress,
    RunDir,
    Target,
    failure_text,
    no_progress,
    run_worker,
    significant,
    torch_missing,
)
from envdoctor.selftest.kind import RunInputs, SelftestKind
from envdoctor.selftest.launch import Launcher, launch
from envdoctor.selftest.result import TestResult


def run_gpu(target: Target, timeout: float = 600.0, progress: Progress = no_progress, launcher: Launcher = launch,
            device: str = "cuda", scratch: Optional[Path] = None) -> TestResult:
    bad = torch_missing("gpu", target)
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
            | {"tflops": {n: significant(m.get("tflops")) for n, m in d["matmul"].items()},
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


def summary(m: Dict[str, Any]) -> str:
    if not m.get("devices"):
        return ""
    return "; ".join(f"{d['device']} " + ", ".join(f"{k} {v:.1f} TFLOP/s" for k, v in d["tflops"].items() if v)
                     for d in m["devices"])


def _run(inputs: RunInputs) -> TestResult:
    return run_gpu(inputs.target, timeout=inputs.timeout, progress=inputs.progress, scratch=inputs.scratch)


KIND = SelftestKind("gpu", "GPU", 600.0, _run, steps=2, summary=summary)
