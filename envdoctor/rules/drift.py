"""What changed between two snapshots (`check --baseline`), and the odd node out of a cluster (`fleet`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from envdoctor.findings import Finding
from envdoctor.fixes import manual
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

@dataclass(frozen=True)
class DriftFact:
    """A fact compared between snapshots: `check --baseline` (drift, ED901) and `fleet` (ED902)."""

    what: str
    read: Callable[[Snapshot], str]
    drift: Optional[str]  # severity when it changed since the baseline; None: not compared there
    fleet: Optional[str]  # severity when the nodes of a job differ; None: a job does not need it alike
    align: str  # how to make the nodes agree


_F = DriftFact
FACTS: Tuple[DriftFact, ...] = (
    _F("NVIDIA driver", lambda s: s.driver.version if present(s.driver) else "none", "warning", "warning", _SAME_DRIVER),
    _F("driver branch", _branch, None, "warning", _SAME_DRIVER),
    _F("GPUs", _gpus, "warning", None, "Check the node's GPUs with `nvidia-smi -L`"),
    _F("torch", _torch("version"), "warning", "error", _SAME_STACK),
    _F("torch CUDA", _torch("cuda"), "warning", "error", _SAME_STACK),
    _F("NCCL", _torch("nccl"), "warning", "error", _SAME_STACK),
    _F("cuDNN", _torch("cudnn"), "info", None, _SAME_STACK),
    _F("Python", lambda s: ".".join(s.python.version.split(".")[:2]), "warning", "error",
       "Use the same Python minor version in every node's environment"),
    _F("CUDA toolkit (nvcc)", lambda s: _val(s.cuda_toolkit.nvcc_version) if present(s.cuda_toolkit) else "absent",
       "info", "warning", "Install the same CUDA toolkit (CUDA_HOME) on every node"),
    _F("DeepSpeed", _pkg("deepspeed"), "warning", "warning", _SAME_STACK),
    _F("Triton", _pkg("triton"), "info", "warning", _SAME_STACK),
    _F("NCCL_* settings", _nccl_env, "warning", None,  # the fleet compares them one variable at a time (ED903)
       "Set the same NCCL_* variables on every node (the job script or the image ENV, not one node's shell profile)"),
    _F("network interfaces", _interfaces, None, "warning",
       "Name the interfaces alike on every node (udev rules or predictable names), or give NCCL_SOCKET_IFNAME a prefix "
       "that matches each node's interface"),
    _F("Fabric Manager", lambda s: _val(s.fabric_manager.version) if present(s.fabric_manager) else "absent", "info",
       None, _SAME_DRIVER),
)

# The two rules these facts feed, for `envdoctor rules list/explain` (what, why).
DRIFT_RULE = ("ED901", "snapshot-drift", "drift",
              "A fact of the machine changed since a saved baseline snapshot (`check --baseline FILE`).",
              "An unintended upgrade or downgrade (driver, torch, NCCL, settings) is the usual cause of 'it worked "
              "yesterday'.")
FLEET_RULE = ("ED902", "fleet-node-differs", "fleet_mismatch",
              "A node of a cluster differs from the majority in a fact every rank of a job must share (`fleet`).",
              "Ranks of one job must agree on these facts; mismatches hang or corrupt collectives.")


def drift_findings(baseline: Snapshot, current: Snapshot) -> List[Finding]:
    out: List[Finding] = []
    for fact in FACTS:
        if fact.drift is None:
            continue
        before, after = fact.read(baseline), fact.read(current)
        if before == after:
            continue
        out.append(Finding(
            id=DRIFT_RULE[0],
            severity=fact.drift,
            category=DRIFT_RULE[2],
            title=f"{fact.what} changed: {before} -> {after}",
            detail=f"The baseline snapshot taken {baseline.created} recorded {fact.what} = {before}; now it is {after}.",
            remedy=manual("If this change was not intended, restore it (`envdoctor undo` reverts the last `envdoctor fix`); "
                          "otherwise save a new baseline with `envdoctor snapshot -o baseline.json`."),
            subjects=[fact.what],
        ))
    return out


def fleet_findings(nodes: Sequence[Tuple[str, Snapshot]]) -> List[Finding]:
    """For each fact a distributed job needs alike, name the nodes that differ from the majority."""
    out: List[Finding] = []
    for fact in FACTS:
        if fact.fleet is None:
            continue
        what = fact.what
        values: Dict[str, str] = {name: fact.read(s) for name, s in nodes}
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
            id=FLEET_RULE[0],
            severity=fact.fleet,
            category=FLEET_RULE[2],
            title=(f"{what} differs across nodes" if tie else f"{what} differs on {', '.join(odd)} (others: {majority})"),
            detail=f"Ranks of one job must agree on {what}; mismatches hang or corrupt collectives. Values: {detail}.",
            remedy=manual(fact.align.format(what=what) + ", then rerun `envdoctor fleet`."),
            subjects=sorted(values) if tie else odd,
        ))
    return out
