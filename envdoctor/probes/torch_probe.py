"""torch and DeepSpeed, each probed in a child process of the target interpreter.

A torch that cannot import, hangs, or segfaults on import is a fact about the machine: it is recorded
in the snapshot (`torch.importable = false` with the error), and envdoctor carries on.
"""

from __future__ import annotations

from typing import Any, Dict

from envdoctor.probes.base import ProbeContext, ProbeOutput
from envdoctor.probes.children_run import ChildError, run_child_lines
from envdoctor.snapshot import DeepSpeed, ProbeFailed, Torch, Unavailable

_FIELDS = ("version", "cuda", "hip", "cudnn", "nccl", "arch_list", "cuda_available", "device_count",
           "distributed_backends", "loaded_libraries", "cuda_init_error", "path")


def probe(ctx: ProbeContext) -> ProbeOutput:
    """torch first, then DeepSpeed in the same child: DeepSpeed imports torch, which is then loaded."""
    objects, res = run_child_lines(ctx, "torch_child.py", ctx.torch_timeout)
    torch_data = next((o for o in objects if "installed" in o), None)
    ds_data = next((o["deepspeed"] for o in objects if isinstance(o.get("deepspeed"), dict)), None)
    ds_import = next((o["deepspeed_import"] for o in objects if isinstance(o.get("deepspeed_import"), dict)), None)
    if ds_data is not None and ds_import is not None:
        ds_data = {**ds_data, **ds_import}
    timed_out = bool(res.error and res.error.startswith("timed out"))
    problem = res.describe() if (res.error or res.returncode != 0) else None
    stderr_tail = " ".join(res.stderr.strip().splitlines()[-3:])[:500]
    if torch_data is None:
        if timed_out:
            torch: Any = Torch(importable=False, error=f"import torch did not finish: {res.error}")
        elif res.error or res.returncode == 0:  # the interpreter could not run, or ran but said nothing
            raise ChildError(f"{ctx.python}: {res.error or 'the torch probe printed nothing'}", res)
        else:  # died while importing torch (segfault, abort): torch is installed but broken
            torch = Torch(importable=False, error=f"{problem}{': ' + stderr_tail if stderr_tail else ''}")
        sections = {"torch": torch, "deepspeed": ProbeFailed(f"not probed: {problem}")}
        return ProbeOutput(sections, note=problem, status="timeout" if timed_out else "ok")
    sections = {"torch": torch_from_child(torch_data), "deepspeed": deepspeed_from_child(ds_data, problem)}
    return ProbeOutput(sections, note=problem, status="timeout" if timed_out else "ok")


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


def deepspeed_from_child(data: Any, problem: Any) -> Any:
    if data is None:
        return ProbeFailed(f"DeepSpeed not probed: {problem}") if problem else Unavailable("not reported")
    if not data.get("installed"):
        return Unavailable("DeepSpeed is not installed")
    ds = DeepSpeed(version=data.get("version") or Unavailable("unknown"))
    if "importable" in data:
        ds.importable = bool(data["importable"])
        ds.error = data.get("error")
    else:  # the child died while importing it
        ds.importable = False
        ds.error = f"import deepspeed crashed: {problem}"
    build = data.get("build") or {}
    ds.torch_info = build.get("torch_info") or Unavailable("no build record (installed from source?)")
    if build.get("installed_ops"):
        ds.extra["installed_ops"] = build["installed_ops"]
    return ds
