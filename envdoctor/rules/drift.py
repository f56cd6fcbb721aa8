"""What changed between two snapshots (`check --baseline`), and the odd node out of a cluster (`fleet`)."""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Dict, List, Sequence, Tuple

from envdoctor.findings import Finding
from envdoctor.snapshot import Snapshot, present


def _val(value: Any) -> str:
    return str(value) if present(value) else "absent"


def _torch(attr: str) -> Callable[[Snapshot], str]:
    return lambda s: _val(getattr(s.torch, attr)) if present(s.torch) else "not installed"


def _gpus(s: Snapshot) -> str:
    names = Counter(g.name for g in s.gpus)
    return ", ".join(f"{n}x {name}" for name, n in sorted(names.items())) or "none"


def _nccl_env(s: Snapshot) -> str:
    if not present(s.env):
        return "absent"
    items = sorted((k, v) for k, v in s.env.items() if k.startswith("NCCL_"))
    return " ".join(f"{k}={v}" for k, v in items) or "none set"


def _branch(s: Snapshot) -> str:
    return s.driver.version.split(".")[0] if present(s.driver) else "none"


def _interfaces(s: Snapshot) -> str:
    """The physical network interfaces (what NCCL_SOCKET_IFNAME and NCCL_IB_HCA select from)."""
    if not present(s.network) or not present(s.network.interfaces):
        return "absent"
    names = sorted(i.name for i in s.network.interfaces if i.kind in ("ethernet", "infiniband"))
    return ", ".join(names) or "none"


def _pkg(name: str) -> Callable[[Snapshot], str]:
    return lambda s: _val(s.python.packages.get(name)) if present(s.python.packages) else "absent"


_SAME_STACK = "Install the same {what} on every node (one container image, or `envdoctor fix --torch ==VERSION` on each)"
_SAME_DRIVER = "Install the same NVIDIA driver release on every node (and its matching Fabric Manager)"

# (what, how to read it, severity when it drifts, does a distributed job need it alike, how to align the nodes)
FACTS: Tuple[Tuple[str, Callable[[Snapshot], str], str, bool, str], ...] = (
    ("NVIDIA driver", lambda s: s.driver.version if present(s.driver) else "none", "warning", True, _SAME_DRIVER),
    ("driver branch", _branch, "warning", True, _SAME_DRIVER),
    ("GPUs", _gpus, "warning", False, "Check the node's GPUs with `nvidia-smi -L`"),
    ("torch", _torch("version"), "warning", True, _SAME_STACK),
    ("torch CUDA", _torch("cuda"), "warning", True, _SAME_STACK),
    ("NCCL", _torch("nccl"), "warning", True, _SAME_STACK),
    ("cuDNN", _torch("cudnn"), "info", False, _SAME_STACK),
    ("Python", lambda s: ".".join(s.python.version.split(".")[:2]), "warning", True,
     "Use the same Python minor version in every node's environment"),
    ("CUDA toolkit (nvcc)", lambda s: _val(s.cuda_toolkit.nvcc_version) if present(s.cuda_toolkit) else "absent",
     "info", True, "Install the same CUDA toolkit (CUDA_HOME) on every node"),
    ("DeepSpeed", _pkg("deepspeed"), "warning", True, _SAME_STACK),
    ("Triton", _pkg("triton"), "info", True, _SAME_STACK),
    ("NCCL_* settings", _nccl_env, "warning", True,
     "Set the same NCCL_* variables on every node (the job script or the image ENV, not one node's shell profile)"),
    ("network interfaces", _interfaces, "warning", True,
     "Name the interfaces alike on every node (udev rules or predictable names), or give NCCL_SOCKET_IFNAME a prefix "
     "that matches each node's interface"),
    ("Fabric Manager", lambda s: _val(s.fabric_manager.version) if present(s.fabric_manager) else "absent", "info",
     False, _SAME_DRIVER),
)


def drift_findings(baseline: Snapshot, current: Snapshot) -> List[Finding]:
    out: List[Finding] = []
    for what, read, severity, _, _ in FACTS:
        before, after = read(baseline), read(current)
        if what in ("driver branch", "network interfaces") or before == after:
            continue
        out.append(Finding(
            id="ED901",
            severity=severity,
            category="drift",
            title=f"{what} changed: {before} -> {after}",
            detail=f"The baseline snapshot taken {baseline.created} recorded {what} = {before}; now it is {after}.",
            fix="If this change was not intended, restore it (`envdoctor undo` reverts the last `envdoctor fix`); "
                "otherwise save a new baseline with `envdoctor snapshot -o baseline.json`.",
            subjects=[what],
        ))
    return out


def fleet_findings(nodes: Sequence[Tuple[str, Snapshot]]) -> List[Finding]:
    """For each fact a distributed job needs alike, name the nodes that differ from the majority."""
    out: List[Finding] = []
    for what, read, _, must_match, how in FACTS:
        if not must_match:
            continue
        values: Dict[str, str] = {name: read(s) for name, s in nodes}
        counts = Counter(values.values())
        if len(counts) < 2:
            continue
        if what == "NVIDIA driver" and len({_branch(s) for _, s in nodes}) > 1:
            continue  # the driver-branch finding says it
        majority, _n = counts.most_common(1)[0]
        odd = sorted(name for name, v in values.items() if v != majority)
        detail = "; ".join(f"{name}: {v}" for name, v in sorted(values.items()))
        tie = counts.most_common(2)[0][1] == counts.most_common(2)[1][1]
        out.append(Finding(
            id="ED902",
            severity="error" if what in ("torch", "torch CUDA", "NCCL", "Python") else "warning",
            category="fleet_mismatch",
            title=(f"{what} differs across nodes" if tie else f"{what} differs on {', '.join(odd)} (others: {majority})"),
            detail=f"Ranks of one job must agree on {what}; mismatches hang or corrupt collectives. Values: {detail}.",
            fix=how.format(what=what) + ", then rerun `envdoctor fleet`.",
            subjects=sorted(values) if tie else odd,
        ))
    return out
