"""`selftest backward`: one non-scalar backward of a per-sample loss vector against the per-sample loop (and
through a DeepSpeed engine where it imports). One worker in the target interpreter under the same deadline and
process-tree cleanup as `allreduce` (launch.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from envdoctor.selftest.common import (
    Progress,
    RunDir,
    Target,
    failure_text,
    no_progress,
    rounded,
    run_worker,
    timing,
    torch_missing,
)
from envdoctor.selftest.kind import Plot, RunInputs, SelftestKind, SpeedupPlot
from envdoctor.selftest.launch import Launcher, launch
from envdoctor.selftest.result import TestResult


def run_backward(target: Target, batch: int = 8, repeats: int = 3, timeout: float = 600.0, deepspeed: bool = True,
                 progress: Progress = no_progress, launcher: Launcher = launch,
                 scratch: Optional[Path] = None) -> TestResult:
    bad = torch_missing("backward", target)
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
                       looped_seconds=rounded(fp32["looped_seconds"]), batched_seconds=rounded(fp32["batched_seconds"]),
                       speedup=rounded(fp32["speedup"], 3), max_rel_grad_diff=fp32["max_rel_grad_diff"],
                       tolerance=fp32["tolerance"], looped_peak_bytes=fp32["looped_peak_bytes"],
                       batched_peak_bytes=fp32["batched_peak_bytes"], memory_method=fp32["memory_method"])
        metrics["dtypes"] = {d: {k: timing(k, v) for k, v in r.items()} for d, r in runs.items()}
    if "deepspeed" in data:
        metrics["deepspeed"] = data["deepspeed"]
    if run.launch.ok and data.get("ok"):
        return rundir.finish(TestResult("backward", "passed", run.launch.seconds, metrics))
    return rundir.finish(TestResult("backward", "failed", run.launch.seconds, metrics,
                                    failure_text(run, "the backward worker")), run.launch.log_path)


def summary(m: Dict[str, Any]) -> str:
    if not m.get("speedup"):
        return ""
    text = (f"batch {m['batch']}: loop {m['looped_seconds']:.3f}s, non-scalar {m['batched_seconds']:.3f}s "
            f"(x{m['speedup']:.2f}), max rel grad diff {m['max_rel_grad_diff']:.1e}")
    ds = m.get("deepspeed") or {}
    if ds.get("status"):
        text += f"; DeepSpeed {ds['status']}" + (f" ({ds.get('reason')})" if ds.get("reason") else "")
    return text


def plots(result: TestResult) -> Sequence[Plot]:
    m = result.metrics or {}
    if not m.get("speedup"):
        return ()
    return (SpeedupPlot(m["looped_seconds"], m["batched_seconds"],
                        f"backward, batch {m.get('batch')} on {m.get('device')} (median seconds)"),)


def _run(inputs: RunInputs) -> TestResult:
    o = inputs.options
    return run_backward(inputs.target, batch=o.batch, repeats=o.repeats, timeout=inputs.timeout, deepspeed=o.deepspeed,
                        progress=inputs.progress, scratch=inputs.scratch)


KIND = SelftestKind("backward", "backward", 600.0, _run, steps=4, summary=summary, plots=plots)
