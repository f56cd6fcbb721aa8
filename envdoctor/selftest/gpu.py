"""`selftest gpu`: per GPU a matmul in each dtype it has against float64, TFLOP/s, and peer access between every
pair; skipped without CUDA. One worker in the target interpreter (launch.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

from envdoctor.findings import Finding
from envdoctor.fixes import manual
from envdoctor.rules.tables import Tables
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
from envdoctor.selftest.gpu_stress import peaks, slow_findings, stress_findings, stress_metrics
from envdoctor.selftest.gpu_watch import GpuWatch
from envdoctor.selftest.kind import RunInputs, SelftestKind
from envdoctor.selftest.launch import Launcher, launch
from envdoctor.selftest.result import TestResult


def run_gpu(target: Target, timeout: float = 600.0, progress: Progress = no_progress, launcher: Launcher = launch,
            device: str = "cuda", scratch: Optional[Path] = None, stress: float = 0.0,
            tables: Optional[Tables] = None, watch: Optional[GpuWatch] = None) -> TestResult:
    """The checks; with `stress` seconds also the memory pattern test and the burn, `watch` (NVML; None: a
    GpuWatch over pynvml) reading the health counters around them and `tables` (the Knowledge's; None: no
    rules database was given, and the datasheet peaks are not compared) the GPUs' datasheet peaks."""
    bad = torch_missing("gpu", target)
    if bad:
        return bad
    if device == "cuda" and not target.cuda_available:
        build = target.raw.get("cuda_build") or "CPU-only"
        why = target.raw.get("cuda_error") or f"CUDA is not available to torch {target.torch} (build: {build})"
        return TestResult("gpu", "skipped", error=why)
    rundir = RunDir("gpu", scratch)
    progress(f"gpu: matmul per dtype on {target.device_count if device == 'cuda' else 'the CPU'} device(s), peer access")
    args = ["--device", device]
    if stress > 0:
        args += ["--stress", f"{stress:g}"]
        progress(f"gpu: then a memory pattern test and a {stress:g} s matmul burn, health counters watched")
        watch = watch if watch is not None else GpuWatch()
        watch.start()
    try:
        run = run_worker(target, "gpu_worker.py", args, rundir, timeout, progress, launcher=launcher, prefix="  ")
    finally:
        watched = watch.stop() if stress > 0 and watch is not None else None
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
    if data.get("devices") and tables is not None:
        metrics["peaks"] = peaks(data["devices"], data.get("stress"), tables)
        findings += slow_findings(metrics["peaks"])
    elif data.get("devices"):
        metrics["peaks_not_compared"] = "no rules database was given, so no datasheet peaks to compare with"
    if data.get("stress") is not None or watched is not None:
        metrics["stress"] = stress_metrics(data.get("stress") or {}, watched)
        findings += stress_findings(metrics["stress"])
    if data.get("skipped"):
        return rundir.finish(TestResult("gpu", "skipped", run.launch.seconds, metrics, data.get("error")))
    grew = [f for f in findings if f.severity == "error"]
    if run.launch.ok and data.get("ok") and grew:
        return rundir.finish(TestResult("gpu", "failed", run.launch.seconds, metrics,
                                        "; ".join(f.title for f in grew), findings), run.launch.log_path)
    if run.launch.ok and data.get("ok"):
        return rundir.finish(TestResult("gpu", "passed", run.launch.seconds, metrics, None, findings))
    return rundir.finish(TestResult("gpu", "failed", run.launch.seconds, metrics, failure_text(run, "the gpu worker"),
                                    findings), run.launch.log_path)


def summary(m: Dict[str, Any]) -> str:
    if not m.get("devices"):
        return ""
    text = "; ".join(f"{d['device']} " + ", ".join(f"{k} {v:.1f} TFLOP/s" for k, v in d["tflops"].items() if v)
                     for d in m["devices"])
    burn = [b for b in (m.get("stress") or {}).get("burn", []) if b.get("tflops")]
    if burn:
        text += "; burn " + ", ".join(f"{b['device']} {b['dtype']} {b['tflops']:.1f} TFLOP/s" for b in burn)
    return text


def _run(inputs: RunInputs) -> TestResult:
    stress = inputs.options.stress
    timeout = inputs.timeout if inputs.options.timeout is not None or not stress else inputs.timeout + stress
    tables = inputs.knowledge.rules.tables if inputs.knowledge is not None else None
    return run_gpu(inputs.target, timeout=timeout, progress=inputs.progress, scratch=inputs.scratch, stress=stress,
                   tables=tables)


KIND = SelftestKind("gpu", "GPU", 600.0, _run, steps=2, summary=summary)
