"""`selftest zero3`: DeepSpeed ZeRO-3 with optimizer and parameter offload, the way one GPU fits a big model.

One rank through `python -m torch.distributed.run` (what `deepspeed` and torchrun users run), under the same
deadline and process-tree cleanup as the other tests (launch.py). With CUDA in the target, DeepSpeed's CUDA
accelerator; without, its CPU accelerator (`DS_ACCELERATOR=cpu` unless set). The worker compares ZeRO-3 with
offload to cpu (and to NVMe, with `--nvme PATH` or when libaio and a local disk are there) against torch Adam,
times the op builds, and estimates the largest model that fits; a failure is classified (zero3_causes.py).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from envdoctor.findings import Finding
from envdoctor.rules.registry import Rulebook
from envdoctor.selftest.allreduce import pg_timeout
from envdoctor.selftest.common import (
    Progress,
    ProgressTail,
    RunDir,
    Target,
    WorkerRun,
    failure_text,
    no_progress,
    rounded,
    torch_missing,
    worker_env,
)
from envdoctor.selftest.kind import RunInputs, SelftestKind
from envdoctor.selftest.launch import Launcher, launch
from envdoctor.selftest.result import WORKERS, TestResult, read_json
from envdoctor.selftest.zero3_causes import CAUSES, cause_finding, classify

DEFAULT_STEPS = 4
BUILDING_NOTE = "zero3_worker.building"  # written by the worker while an op builds: the path of torch's build lock
# file systems that are not a local disk: NVMe offload there would measure memory or the network
NOT_LOCAL_DISK = {"tmpfs", "ramfs", "devtmpfs", "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "sshfs", "ceph", "glusterfs",
                  "lustre", "gpfs", "beegfs", "virtiofs", "fuse.sshfs", "fuse.s3fs", "fuse.gcsfuse", "squashfs"}


def deepspeed_version(target: Target) -> Optional[str]:
    value = target.raw.get("deepspeed")
    return value if isinstance(value, str) else None


def applies(target: Target) -> Tuple[bool, str]:
    """`selftest all` runs zero3 only where DeepSpeed is installed (asked for by name, it is skipped, saying why)."""
    if deepspeed_version(target):
        return True, ""
    return False, f"DeepSpeed is not installed in {target.python}"


def local_disk(path: Path) -> Optional[str]:
    """The file system type of the mount holding `path` when it is a local disk; None otherwise or unknown."""
    import psutil

    try:
        real = os.path.realpath(path)
        parts = psutil.disk_partitions(all=True)
    except (OSError, RuntimeError):
        return None
    best = max((p for p in parts if real == p.mountpoint or real.startswith(p.mountpoint.rstrip("/") + "/")),
               key=lambda p: len(p.mountpoint), default=None)
    if best is None or best.fstype in NOT_LOCAL_DISK or best.fstype.startswith("fuse"):
        return None
    return best.fstype if os.access(path, os.W_OK) else None


def launcher_argv(target: Target, out: Path, progress_file: Path, steps: int, timeout: float, nvme: Optional[Path],
                  nvme_auto: Optional[Path]) -> List[str]:
    argv = [target.python, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "1", "--max_restarts", "0",
            "--monitor_interval", "0.5", str(WORKERS / "zero3_worker.py"), "--out", str(out), "--progress",
            str(progress_file), "--steps", str(steps), "--pg-timeout", f"{pg_timeout(timeout):g}"]
    if nvme is not None:
        argv += ["--nvme", str(nvme)]
    elif nvme_auto is not None:
        argv += ["--nvme-auto", str(nvme_auto)]
    return argv


def run_env(target: Target) -> Dict[str, str]:
    env = worker_env()
    if not target.cuda_available:
        env.setdefault("DS_ACCELERATOR", "cpu")  # DeepSpeed's CPU accelerator: ZeRO-3 and cpu_adam without a GPU
    return env


def run_zero3(target: Target, steps: int = DEFAULT_STEPS, nvme: Optional[Path] = None, timeout: float = 900.0,
              progress: Progress = no_progress, launcher: Launcher = launch, scratch: Optional[Path] = None,
              rules: Optional[Rulebook] = None) -> TestResult:
    """The ZeRO-3 offload test; a failure is explained by the fix of the rule in `rules` (the Knowledge's rulebook;
    None: the bundled one) that covers its cause."""
    bad = torch_missing("zero3", target)
    if bad:
        return bad
    there, why = applies(target)
    if not there:
        return TestResult("zero3", "skipped", error=why)
    rundir = RunDir("zero3", scratch)
    auto = rundir.sub("nvme") if nvme is None and local_disk(rundir.path) else None
    accel = "CUDA" if target.cuda_available else "CPU (DS_ACCELERATOR=cpu)"
    progress(f"zero3: DeepSpeed {deepspeed_version(target)} ZeRO-3, offload to cpu{' and NVMe' if nvme else ''}, "
             f"{accel} accelerator, {steps} steps against torch Adam")
    out = rundir.path / "zero3_worker.json"
    tail = ProgressTail(rundir.path / "zero3_worker.progress", progress, "  ")
    argv = launcher_argv(target, out, rundir.path / "zero3_worker.progress", steps, timeout, nvme, auto)
    try:
        res = launcher(argv, run_env(target), timeout, rundir.path / "zero3.log", tail)
    finally:
        _release_build_lock(rundir.path / BUILDING_NOTE, progress)
    data = read_json(out) or {}
    metrics = zero3_metrics(data)
    findings = nvme_findings(data, rules)
    if res.ok and data.get("ok"):
        return rundir.finish(TestResult("zero3", "passed", res.seconds, metrics, None, findings))
    error = failure_text(WorkerRun(res, data or None), "the zero3 worker")
    log = str(data.get("exception_message") or "") + "\n" + res.log_text(2_000_000)
    nvme_cause = (data.get("nvme") or {}).get("cause") if (data.get("nvme") or {}).get("status") == "failed" else None
    found = (nvme_cause, {}) if nvme_cause in CAUSES else classify(error, log)
    if found is not None:
        key, values = found
        values = {**_known_values(data), **values}
        metrics["cause"] = key
        if values.get("first_error"):
            metrics["first_compiler_error"] = values["first_error"]
        finding = cause_finding(key, values, _headline(error), rules=rules)
        findings = [f for f in findings if f.id != finding.id] + [finding]
        error = f"{finding.title}\n{error}"
    return rundir.finish(TestResult("zero3", "failed", res.seconds, metrics, error, findings), res.log_path)


def _release_build_lock(note: Path, progress: Progress) -> None:
    """The run was stopped while an op built (the worker's note is still there): torch's build lock it took
    would make every later build of that op wait forever, so it goes. Every process of the run has ended."""
    try:
        lock = Path(note.read_text(encoding="utf-8").strip())
        note.unlink()
    except OSError:
        return
    if lock.name == "lock" and lock.is_file():
        lock.unlink(missing_ok=True)
        progress(f"zero3: removed {lock}, the build lock of the op build this run left unfinished")


def _known_values(data: Dict[str, Any]) -> Dict[str, str]:
    values = {"cuda": data.get("torch_cuda"), "torch.cuda": data.get("torch_cuda"), "python.version": data.get("python")}
    return {k: str(v) for k, v in values.items() if v}


def _headline(error: str) -> str:
    lines = [ln.strip() for ln in error.strip().splitlines() if ln.strip()]
    return lines[-1][:400] if lines else error


def nvme_findings(data: Dict[str, Any], rules: Optional[Rulebook] = None) -> List[Finding]:
    """NVMe offload skipped for want of libaio: the verdict says so, and names the rule that fixes it."""
    nvme = data.get("nvme") or {}
    if nvme.get("status") == "skipped" and nvme.get("cause") == "libaio_missing":
        return [cause_finding("libaio_missing", {}, f"NVMe offload was not tried: {nvme.get('reason')}", severity="info",
                              rules=rules)]
    return []


def zero3_metrics(data: Dict[str, Any]) -> Dict[str, Any]:
    runs = data.get("runs") or {}
    offloaded = [r for k, r in runs.items() if k.startswith("offload_")]
    metrics: Dict[str, Any] = {k: data[k] for k in ("deepspeed", "accelerator", "device", "parameters", "steps", "batch",
                                                     "tolerance", "ops", "fit", "nvme") if k in data}
    if runs:
        metrics["step_seconds"] = {k: rounded(r.get("step_seconds")) for k, r in runs.items()}
        metrics["runs"] = {k: {x: (rounded(v) if x == "step_seconds" else v) for x, v in r.items()} for k, r in runs.items()}
    if offloaded:
        metrics["max_rel_loss_diff"] = max(r.get("max_rel_loss_diff", 0.0) for r in offloaded)
        metrics["rel_update_diff"] = max(r.get("rel_update_diff", 0.0) for r in offloaded)
    return metrics


def summary(m: Dict[str, Any]) -> str:
    if not m.get("step_seconds"):
        return ""
    steps = m["step_seconds"]
    text = f"{m.get('accelerator')}: step {steps.get('zero3', 0):.3f}s, offload cpu {steps.get('offload_cpu', 0):.3f}s"
    if "offload_nvme" in steps:
        text += f", nvme {steps['offload_nvme']:.3f}s"
    if m.get("rel_update_diff") is not None:
        text += f"; vs torch Adam: update {m['rel_update_diff']:.1e}, loss {m['max_rel_loss_diff']:.1e}"
    ops = ", ".join(f"{o['name']} {o['cache']} {o['seconds']:.1f}s" for o in m.get("ops") or [])
    if ops:
        text += f"; ops {ops}"
    nvme = m.get("nvme") or {}
    if nvme.get("status") == "passed":
        text += f"; swap write {nvme['write_gbps']:.2f} GB/s, read {nvme['read_gbps']:.2f} GB/s"
    elif nvme.get("status") == "skipped":
        text += f"; NVMe skipped ({nvme.get('reason')})"
    fit = m.get("fit") or {}
    if fit.get("max_params"):
        text += f"; fits ~{fit['max_params'] / 1e9:.1f}B params with offload"
    return text


def _run(inputs: RunInputs) -> TestResult:
    return run_zero3(inputs.target, steps=inputs.options.steps, nvme=inputs.options.nvme, timeout=inputs.timeout,
                     progress=inputs.progress, scratch=inputs.scratch,
                     rules=inputs.knowledge.rules if inputs.knowledge is not None else None)


KIND = SelftestKind("zero3", "ZeRO-3 offload", 900.0, _run, applies=applies, summary=summary)
