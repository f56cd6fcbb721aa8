"""What changed between two snapshots (`check --baseline`), and the odd node out of a cluster (`fleet`): the
facts compared and their severities are declared in rules/checks/checks.json; this module reads each fact."""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from envdoctor.byte_sizes import format_bytes
from envdoctor.findings import Finding
from envdoctor.fixes import manual
from envdoctor.rules.checks import Checks, bundled_checks
from envdoctor.snapshot import Snapshot, is_unavailable, present
from envdoctor.versions import parse, series

UNKNOWN = "unknown"  # a fact no reader can state: never compared (an unknown is not a difference)


def _val(value: Any) -> str:
    """A fact as compared: its value, "absent" when known not to exist, UNKNOWN otherwise."""
    if present(value):
        return str(value)
    return "absent" if is_unavailable(value) else UNKNOWN


def _section(value: Any, missing: str = "absent") -> Optional[str]:
    """None when the section is there; else what it reads as: `missing` when known not to exist, else UNKNOWN."""
    if present(value):
        return None
    return missing if is_unavailable(value) else UNKNOWN


def _torch(attr: str) -> Callable[[Snapshot], str]:
    return lambda s: _val(getattr(s.torch, attr)) if present(s.torch) else _section(s.torch, "not installed")


def _gpus(s: Snapshot) -> str:
    if not isinstance(s.gpus, list):  # the GPU list itself unknown (gpus: null)
        return UNKNOWN
    names = Counter(_val(g.name) for g in s.gpus)  # a name unknown on one GPU is "unknown", not a value
    return ", ".join(f"{n}x {name}" for name, n in sorted(names.items())) or "none"


def _nccl_env(s: Snapshot) -> str:
    if not present(s.env):
        return _section(s.env) or "absent"
    items = sorted((k, v) for k, v in s.env.items() if k.startswith("NCCL_"))
    return " ".join(f"{k}={v}" for k, v in items) or "none set"


def _branch(s: Snapshot) -> str:
    if not present(s.driver):
        return _section(s.driver, "none") or "none"
    v = parse(s.driver.version)
    return str(v.release[0]) if v is not None else _val(s.driver.version)


def _interfaces(s: Snapshot) -> str:
    """The physical network interfaces (what NCCL_SOCKET_IFNAME and NCCL_IB_HCA select from)."""
    if not present(s.network):
        return _section(s.network) or "absent"
    if not present(s.network.interfaces):
        return _section(s.network.interfaces) or "absent"
    names = sorted(i.name for i in s.network.interfaces if i.kind in ("ethernet", "infiniband"))
    return ", ".join(names) or "none"


def _shm(s: Snapshot) -> str:
    """The size of /dev/shm (NCCL's shared-memory transport and DataLoader workers live in it)."""
    if not present(s.host) or not present(s.host.shm_bytes):
        return _section(s.host.shm_bytes if present(s.host) else s.host) or "absent"
    if not isinstance(s.host.shm_bytes, int):
        return UNKNOWN
    return format_bytes(s.host.shm_bytes, digits=1) if s.host.shm_bytes % (1 << 20) else format_bytes(s.host.shm_bytes)


def _pkg(name: str) -> Callable[[Snapshot], str]:
    return lambda s: _val(s.package(name))


# The readers the compared facts name (rules/checks/checks.json `read`).
READERS: Dict[str, Callable[[Snapshot], str]] = {
    "driver": lambda s: _val(s.driver.version) if present(s.driver) else (_section(s.driver, "none") or "none"),
    "driver_branch": _branch,
    "gpus": _gpus,
    "torch": _torch("version"),
    "torch_cuda": _torch("cuda"),
    "nccl": _torch("nccl"),
    "cudnn": _torch("cudnn"),
    "python": lambda s: series(s.python.version) or _val(s.python.version),
    "nvcc": lambda s: _val(s.cuda_toolkit.nvcc_version) if present(s.cuda_toolkit) else _section(s.cuda_toolkit),
    "deepspeed": _pkg("deepspeed"),
    "triton": _pkg("triton"),
    "nccl_env": _nccl_env,
    "interfaces": _interfaces,
    "fabric_manager": lambda s: _val(s.fabric_manager.version) if present(s.fabric_manager) else _section(s.fabric_manager),
    "shm": _shm,
}
DRIFT, FLEET = "ED901", "ED902"  # the two checks these facts feed
NEEDED = (DRIFT, FLEET)


def drift_findings(baseline: Snapshot, current: Snapshot, checks: Optional[Checks] = None) -> List[Finding]:
    """What changed since `baseline`, for each fact the checks compare there (default: the bundled declarations)."""
    checks = checks or bundled_checks()
    rule = checks.check(DRIFT)
    out: List[Finding] = []
    for fact in checks.facts:
        if fact.drift is None:
            continue
        read = READERS[fact.read]
        before, after = read(baseline), read(current)
        if before == after or UNKNOWN in (before, after):
            continue
        out.append(Finding(
            id=rule.id,
            severity=fact.drift,
            category=rule.category,
            title=f"{fact.what} changed: {before} -> {after}",
            detail=f"The baseline snapshot taken {baseline.created} recorded {fact.what} = {before}; now it is {after}.",
            remedy=manual("If this change was not intended, restore it (`envdoctor undo` reverts the last `envdoctor fix`); "
                          "otherwise save a new baseline with `envdoctor snapshot -o baseline.json`."),
            subjects=[fact.what],
        ))
    return out


def fleet_findings(nodes: Sequence[Tuple[str, Snapshot]], checks: Optional[Checks] = None) -> List[Finding]:
    """For each fact a distributed job needs alike, name the nodes that differ from the majority: the majority
    value with its node count and the others by name, bounded at any fleet size; every node in the evidence."""
    from envdoctor.rules.fleet_listing import evidence_lines, majority, names_text, summary_line

    checks = checks or bundled_checks()
    rule = checks.check(FLEET)
    out: List[Finding] = []
    branches = len({_branch(s) for _, s in nodes}) > 1
    for fact in checks.facts:
        if fact.fleet is None:
            continue
        what = fact.what
        read = READERS[fact.read]
        values: Dict[str, str] = {name: v for name, s in nodes for v in [read(s)] if v != UNKNOWN}
        if len(set(values.values())) < 2:
            continue
        if what == "NVIDIA driver" and branches:
            continue  # the driver-branch finding says it
        common, tie = majority(values)
        odd = sorted(name for name, v in values.items() if v != common)
        out.append(Finding(
            id=rule.id,
            severity=fact.fleet,
            category=rule.category,
            title=(f"{what} differs across nodes" if tie else f"{what} differs on {names_text(odd)} (others: {common})"),
            detail=f"Ranks of one job must agree on {what}; mismatches hang or corrupt collectives. "
                   f"Values: {summary_line(values)}.",
            remedy=manual(fact.align.format(what=what) + ", then rerun `envdoctor fleet`."),
            subjects=sorted(values) if tie else odd,
            evidence=evidence_lines(values),
        ))
    return out
