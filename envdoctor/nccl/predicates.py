"""Conditions of the context rules: the small declarative language, and the named predicates that need
real computation. A predicate returns (holds, evidence lines), so a finding can say which fact of the
log or of the machine snapshot raised it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from packaging.version import InvalidVersion, Version

from envdoctor.nccl.facts import NcclFacts
from envdoctor.snapshot import Snapshot, is_absent, present

GiB = 1 << 30
MiB = 1 << 20


@dataclass
class SignalHit:
    """One signature's matches: how many, the first line's number, and the first few lines."""

    count: int = 0
    first: Tuple[int, int] = (0, 0)  # (input index, line number): the order lines were read in
    lines: List[str] = field(default_factory=list)


@dataclass
class EvalContext:
    signals: Dict[str, SignalHit]
    facts: NcclFacts
    snapshot: Optional[Snapshot] = None
    _facts_dict: Optional[Dict[str, Any]] = None

    @property
    def facts_dict(self) -> Dict[str, Any]:
        if self._facts_dict is None:
            self._facts_dict = self.facts.as_dict()
        return self._facts_dict

    def env(self, name: str) -> Optional[Tuple[str, str]]:
        """(value, where it was seen): what NCCL logged first, else the snapshot's environment."""
        if name in self.facts.env:
            return self.facts.env[name], "log"
        if self.snapshot is not None and isinstance(self.snapshot.env, dict) and name in self.snapshot.env:
            return self.snapshot.env[name], "snapshot"
        return None


Result = Tuple[bool, List[str]]


def evaluate(cond: Mapping[str, Any], ctx: EvalContext) -> Result:
    """Does a (validated) condition hold? Evidence comes from facts and predicates, not from signals."""
    if "all" in cond:
        evidence: List[str] = []
        for c in cond["all"]:
            ok, ev = evaluate(c, ctx)
            if not ok:
                return False, []
            evidence.extend(ev)
        return True, evidence
    if "any" in cond:
        for c in cond["any"]:
            ok, ev = evaluate(c, ctx)
            if ok:
                return True, ev
        return False, []
    if "not" in cond:
        ok, _ = evaluate(cond["not"], ctx)
        return (not ok), []
    if "signal" in cond:
        names = cond["signal"] if isinstance(cond["signal"], list) else [cond["signal"]]
        return any(n in ctx.signals for n in names), []
    if "predicate" in cond:
        return PREDICATES[cond["predicate"]](ctx)
    if "fact" in cond:
        value = _lookup(ctx.facts_dict, cond["fact"])
        ok = _compare(value, cond.get("op", "exists"), cond.get("value"))
        return ok, ([f"log: {cond['fact']} = {_show(value)}"] if ok and value is not None else [])
    value = _lookup(ctx.snapshot, cond["snapshot"]) if ctx.snapshot is not None else None
    ok = _compare(value, cond.get("op", "exists"), cond.get("value"))
    return ok, ([f"snapshot: {cond['snapshot']} = {_show(value)}"] if ok and value is not None else [])


def _lookup(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if obj is None or is_absent(obj):
            return None
        if isinstance(obj, Mapping):
            obj = obj.get(part)
        elif isinstance(obj, list) and part.isdigit():
            obj = obj[int(part)] if int(part) < len(obj) else None
        else:
            obj = getattr(obj, part, None)
    return None if is_absent(obj) else obj


def _compare(value: Any, op: str, expected: Any) -> bool:
    if op == "exists":
        return value is not None and value != [] and value != {}
    if op == "missing":
        return value is None or value == [] or value == {}
    if value is None:
        return False
    try:
        if op == "true":
            return value is True
        if op == "false":
            return value is False
        if op == "eq":
            return value == expected
        if op == "ne":
            return value != expected
        if op in ("lt", "le", "gt", "ge"):
            a, b = _num(value), _num(expected)
            return {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]
        if op == "in":
            return value in expected
        if op == "contains":
            return expected in value
        if op == "matches":
            return re.search(expected, str(value)) is not None
        if op in ("version_lt", "version_ge"):
            v, w = Version(str(value)), Version(str(expected))
            return v < w if op == "version_lt" else v >= w
    except (TypeError, ValueError, InvalidVersion):
        return False
    return False


def _num(x: Any) -> float:
    if isinstance(x, bool):
        raise TypeError("not a number")
    return float(x)


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple, set)):
        return ", ".join(str(v) for v in value)
    return str(value)


def _size(text: str) -> Optional[int]:
    m = re.fullmatch(r"\s*(\d+)\s*([KkMmGg]?)\s*[Bb]?\s*", text)
    if not m:
        return None
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": MiB, "g": GiB}[m.group(2).lower()]


# --- named predicates ------------------------------------------------------------------------


def shm_small(ctx: EvalContext) -> Result:
    shm = _lookup(ctx.snapshot, "host.shm_bytes")
    if isinstance(shm, int) and shm < GiB:
        return True, [f"snapshot: /dev/shm is {shm / MiB:.0f} MiB (containers default to 64 MiB; NCCL wants more)"]
    return False, []


def shm_roomy(ctx: EvalContext) -> Result:
    shm = _lookup(ctx.snapshot, "host.shm_bytes")
    if isinstance(shm, int) and shm >= GiB:
        return True, [f"snapshot: /dev/shm is {shm / GiB:.1f} GiB"]
    return False, []


def ifname_matches(spec: str, names: List[str]) -> List[str]:
    """The interfaces NCCL_SOCKET_IFNAME selects: a comma list of prefixes, `=name` exact, `^` excludes."""
    spec = spec.strip()
    exclude = spec.startswith("^")
    if exclude:
        spec = spec[1:]
    exact = spec.startswith("=")
    if exact:
        spec = spec[1:]
    parts = [p.strip() for p in spec.split(",") if p.strip()]

    def hit(name: str) -> bool:
        return any(name == p if exact else name.startswith(p) for p in parts)

    return [n for n in names if (not hit(n) if exclude else hit(n))]


def _snapshot_interfaces(ctx: EvalContext) -> Optional[List[str]]:
    ifaces = _lookup(ctx.snapshot, "network.interfaces")
    if not isinstance(ifaces, list) or not ifaces:
        return None
    return [i.name for i in ifaces if getattr(i, "name", "")]


def socket_ifname_matches_nothing(ctx: EvalContext) -> Result:
    setting = ctx.env("NCCL_SOCKET_IFNAME")
    names = _snapshot_interfaces(ctx)
    if setting is None or names is None:
        return False, []
    value, where = setting
    if ifname_matches(value, [n for n in names if n != "lo"]):
        return False, []
    return True, [f"{where}: NCCL_SOCKET_IFNAME={value} matches no interface on the machine "
                  f"(snapshot: {', '.join(names)})"]


def socket_ifname_fine(ctx: EvalContext) -> Result:
    setting = ctx.env("NCCL_SOCKET_IFNAME")
    names = _snapshot_interfaces(ctx)
    if setting is None or names is None:
        return False, []
    chosen = ifname_matches(setting[0], [n for n in names if n != "lo"])
    return (True, [f"snapshot: NCCL_SOCKET_IFNAME={setting[0]} selects {', '.join(chosen)}"]) if chosen else (False, [])


def fabric_manager_down(ctx: EvalContext) -> Result:
    fm = _lookup(ctx.snapshot, "fabric_manager")
    if fm is None or getattr(fm, "nvswitch_present", None) is not True or getattr(fm, "running", None) is not False:
        return False, []
    return True, ["snapshot: NVSwitch present but nv-fabricmanager is not running"]


def fabric_manager_running(ctx: EvalContext) -> Result:
    fm = _lookup(ctx.snapshot, "fabric_manager")
    if fm is not None and getattr(fm, "running", None) is True:
        return True, ["snapshot: nv-fabricmanager is running"]
    return False, []


def rdma_devices_present(ctx: EvalContext) -> Result:
    devs = _lookup(ctx.snapshot, "network.rdma_devices")
    if isinstance(devs, list) and devs:
        return True, [f"snapshot: RDMA devices {', '.join(d.name for d in devs)}"]
    return False, []


def peermem_missing(ctx: EvalContext) -> Result:
    if _lookup(ctx.snapshot, "network.peermem_loaded") is False:
        return True, ["snapshot: neither nvidia_peermem nor nv_peer_mem is loaded"]
    return False, []


def mig_enabled(ctx: EvalContext) -> Result:
    if ctx.snapshot is None:
        return False, []
    migs = [g.index for g in ctx.snapshot.gpus if getattr(g, "mig_enabled", None) is True]
    return (True, [f"snapshot: MIG mode is on for GPU {', '.join(map(str, migs))}"]) if migs else (False, [])


def wsl_host(ctx: EvalContext) -> Result:
    return (True, ["snapshot: running under WSL"]) if _lookup(ctx.snapshot, "host.wsl") is True else (False, [])


def windows_host(ctx: EvalContext) -> Result:
    return (True, ["snapshot: native Windows"]) if _lookup(ctx.snapshot, "host.os") == "windows" else (False, [])


def p2p_blockers(ctx: EvalContext) -> Result:
    ev = []
    acs = _lookup(ctx.snapshot, "host.acs_enabled_bridges")
    if isinstance(acs, int) and acs > 0:
        ev.append(f"snapshot: ACS is enabled on {acs} PCIe bridge(s)")
    if _lookup(ctx.snapshot, "host.iommu") == "translated":
        ev.append("snapshot: the IOMMU translates DMA (not passthrough)")
    return bool(ev), ev


def p2p_path_clear(ctx: EvalContext) -> Result:
    acs, iommu = _lookup(ctx.snapshot, "host.acs_enabled_bridges"), _lookup(ctx.snapshot, "host.iommu")
    if acs == 0 and iommu in ("off", "passthrough"):
        return True, [f"snapshot: no ACS on the PCIe bridges, IOMMU {iommu}: nothing in the P2P path to blame"]
    return False, []


def driver_older_than_torch_cuda(ctx: EvalContext) -> Result:
    snap = ctx.snapshot
    if snap is None or not present(snap.torch):
        return False, []
    err = snap.torch.cuda_init_error or ""
    if "too old" in err or "insufficient" in err:
        return True, [f"snapshot: torch says: {err[:200]}"]
    drv, cuda = _lookup(snap, "driver.cuda_driver_version"), _lookup(snap, "torch.cuda")
    try:
        if drv and cuda and Version(str(drv)).major < Version(str(cuda)).major:
            return True, [f"snapshot: the driver supports CUDA {drv}, torch is built for CUDA {cuda}"]
    except InvalidVersion:
        pass
    return False, []


def several_nccl_copies(ctx: EvalContext) -> Result:
    copies = _lookup(ctx.snapshot, "libraries.nccl")
    if not isinstance(copies, list):
        return False, []
    versions = {str(getattr(c, "version", None)) for c in copies if present(getattr(c, "version", None))}
    if len(copies) > 1 and len(versions) > 1:
        paths = [f"{_lookup(c, 'path')} ({_lookup(c, 'version')})" for c in copies]
        return True, [f"snapshot: several libnccl copies on the loader path: {'; '.join(paths)}"]
    return False, []


def cuda_interposer_preloaded(ctx: EvalContext) -> Result:
    pre = ctx.env("LD_PRELOAD")
    if pre and re.search(r"vgpu|hami|cuda_hook|libcuda_intercept", pre[0], re.I):
        return True, [f"{pre[1]}: LD_PRELOAD={pre[0]}"]
    return False, []


def nccl_versions_differ(ctx: EvalContext) -> Result:
    by = ctx.facts.versions_by_origin()
    seen = {v for vs in by.values() for v in vs}
    if len(seen) > 1:
        return True, ["log: NCCL versions differ: " + "; ".join(f"{k}: {', '.join(sorted(v))}" for k, v in sorted(by.items()))]
    return False, []


def plugins_differ(ctx: EvalContext) -> Result:
    by = ctx.facts.plugins_by_origin()
    kinds = {frozenset(v - {"none"}) if v - {"none"} else frozenset({"none"}) for v in by.values()}
    if len(by) > 1 and len(kinds) > 1:
        return True, ["log: net plugins differ: " + "; ".join(f"{k}: {', '.join(sorted(v))}" for k, v in sorted(by.items()))]
    return False, []


def gdr_differs(ctx: EvalContext) -> Result:
    by = ctx.facts.gdr_by_origin()
    if len(set(by.values())) > 1:
        without = sorted(k for k, v in by.items() if not v)
        return True, [f"log: GPUDirect RDMA (GDRDMA) used by some ranks but not by {', '.join(without)}"]
    return False, []


def socket_on_ib_interface(ctx: EvalContext) -> Result:
    ib = [n for n in ctx.facts.interfaces if re.match(r"ib|ibp|ibs", n)]
    if ib:
        return True, [f"log: NET/Socket runs over the InfiniBand interface {', '.join(ib)} (IPoIB), not over IB verbs"]
    return False, []


def docker_bridge_interface(ctx: EvalContext) -> Result:
    names = [n for n in ctx.facts.interfaces + ctx.facts.bootstrap_interfaces if re.match(r"docker\d|veth", n)]
    if names:
        return True, [f"log: NCCL uses the container bridge interface {', '.join(dict.fromkeys(names))}"]
    return False, []


def buffsize_large(ctx: EvalContext) -> Result:
    setting = ctx.env("NCCL_BUFFSIZE")
    if setting is None:
        return False, []
    size = _size(setting[0])
    if size is not None and size > 16 * MiB:
        return True, [f"{setting[1]}: NCCL_BUFFSIZE={setting[0]} ({size / MiB:.0f} MiB; the default is 4 MiB)"]
    return False, []


def p2p_disabled_override(ctx: EvalContext) -> Result:
    ev = []
    dis = ctx.env("NCCL_P2P_DISABLE")
    if dis and dis[0].strip() not in ("0", ""):
        ev.append(f"{dis[1]}: NCCL_P2P_DISABLE={dis[0]}")
    lvl = ctx.env("NCCL_P2P_LEVEL")
    if lvl and lvl[0].strip().upper() in ("LOC", "0"):
        ev.append(f"{lvl[1]}: NCCL_P2P_LEVEL={lvl[0]} (no peer-to-peer between GPUs: traffic goes through SHM)")
    return bool(ev), ev


def hpcx_ofed_mismatch(ctx: EvalContext) -> Result:
    built, installed = ctx.facts.hpcx_ofed, ctx.facts.installed_ofed
    if built and installed and not built & installed:
        return True, [f"log: HPC-X built for MLNX_OFED {', '.join(sorted(built))}, installed MLNX_OFED "
                      f"{', '.join(sorted(installed))}"]
    return False, []


PREDICATES: Dict[str, Callable[[EvalContext], Result]] = {
    f.__name__: f for f in (
        shm_small, shm_roomy, socket_ifname_matches_nothing, socket_ifname_fine, fabric_manager_down,
        fabric_manager_running, rdma_devices_present, peermem_missing, mig_enabled, wsl_host, windows_host,
        p2p_blockers, p2p_path_clear, driver_older_than_torch_cuda, several_nccl_copies, cuda_interposer_preloaded,
        nccl_versions_differ, plugins_differ, gdr_differs, socket_on_ib_interface, docker_bridge_interface,
        buffsize_large, p2p_disabled_override, hpcx_ofed_mismatch,
    )
}
