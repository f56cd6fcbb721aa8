"""torch and DeepSpeed, each probed in a child process of the target interpreter.

A torch that cannot import, hangs, or segfaults on import is a fact about the machine: it is recorded
in the snapshot (`torch.importable = false` with the error), and envdoctor carries on.
"""

from __future__ import annotations

from typing import Any, Dict

from envdoctor.probes.base import ProbeContext, ProbeOutput, ProbeSkipped
from envdoctor.probes.children_run import ChildError, run_child
from envdoctor.snapshot import DeepSpeed, Torch, Unavailable

_FIELDS = ("version", "cuda", "hip", "cudnn", "nccl", "arch_list", "cuda_available", "device_count",
           "distributed_backends", "loaded_libraries", "cuda_init_error", "path")


def probe(ctx: ProbeContext) -> ProbeOutput:
    try:
        data = run_child(ctx, "torch_child.py", ctx.torch_timeout)
    except ChildError as exc:
        res = exc.result
        if res.error and res.error.startswith("timed out"):
            torch = Torch(importable=False, error=f"import torch did not finish: {res.error}")
            return ProbeOutput({"torch": torch}, note=str(exc), status="timeout")
        # The child died while importing torch (segfault, abort): torch is installed but broken.
        stderr_tail = " ".join(res.stderr.strip().splitlines()[-3:])[:500]
        torch = Torch(importable=False, error=f"{exc}{': ' + stderr_tail if stderr_tail else ''}")
        return ProbeOutput({"torch": torch}, note=str(exc), status="ok")
    return ProbeOutput({"torch": torch_from_child(data)})


def torch_from_child(data: Dict[str, Any]) -> Any:
    if not data.get("installed"):
        return Unavailable("torch is not installed")
    torch = Torch(importable=bool(data.get("importable")))
    if not torch.importable:
        torch.error = data.get("error") or "import failed"
        torch.version = data.get("dist_version") or Unavailable("unknown")
        for name in _FIELDS[1:]:
            setattr(torch, name, Unavailable("torch does not import"))
        return torch
    errors = data.get("errors") or {}
    for name in _FIELDS:
        value = data.get(name)
        if value is None and name != "cuda_init_error":
            value = Unavailable(errors.get(name) or _why_none(name, data))
        setattr(torch, name, value)
    return torch


def _why_none(name: str, data: Dict[str, Any]) -> str:
    if name in ("cuda", "nccl", "cudnn") and not data.get("cuda") and not data.get("hip"):
        return "CPU build"
    return "not reported"


def probe_deepspeed(ctx: ProbeContext) -> ProbeOutput:
    try:
        data = run_child(ctx, "deepspeed_child.py", ctx.torch_timeout)
    except ChildError as exc:
        res = exc.result
        ds = DeepSpeed(importable=False, error=str(exc))
        status = "timeout" if res.error and res.error.startswith("timed out") else "ok"
        return ProbeOutput({"deepspeed": ds}, note=str(exc), status=status)
    if not data.get("installed"):
        raise ProbeSkipped("DeepSpeed is not installed")
    ds = DeepSpeed(version=data.get("version") or Unavailable("unknown"), importable=bool(data.get("importable")))
    ds.error = data.get("error")
    build = data.get("build") or {}
    ds.torch_info = build.get("torch_info") or Unavailable("no build record (installed from source?)")
    if build.get("installed_ops"):
        ds.extra["installed_ops"] = build["installed_ops"]
    return ProbeOutput({"deepspeed": ds})
