"""Named predicates of the NCCL context rules (`rules/nccl/context.json`): the facts that need real
computation over the log (`ctx.log`, an NcclFacts) and the machine snapshot. Each returns None, or
{"evidence": [lines]} saying which fact of the log or of the snapshot raised it. They live in the one
predicate registry (`envdoctor.rules.conditions.PREDICATES`), marked as reading the log.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from packaging.version import Version

from envdoctor.rules.conditions import Context, predicate
from envdoctor.snapshot import present
from envdoctor.versions import major_minor, parse

GiB = 1 << 30
MiB = 1 << 20
Result = Optional[Dict[str, Any]]


def _snap(ctx: Context, path: str) -> Any:
    """A snapshot value, None where the snapshot lacks it (or there is no snapshot)."""
    value = ctx.resolve(path)
    return value if present(value) else None


def _env(ctx: Context, name: str) -> Optional[Tuple[str, str]]:
    """(value, where it was seen): what NCCL logged first, else the snapshot's environment."""
    if ctx.log is not None and name in ctx.log.env:
        return ctx.log.env[name], "log"
    env = _snap(ctx, "env")
    if isinstance(env, dict) and name in env:
        return env[name], "snapshot"
    return None


def _size(text: str) -> Optional[int]:
    m = re.fullmatch(r"\s*(\d+)\s*([KkMmGg]?)\s*[Bb]?\s*", text)
    if not m:
        return None
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": MiB, "g": GiB}[m.group(2).lower()]


@predicate(log=True, reads=("shm",))
def shm_small(ctx: Context) -> Result:
    shm = _snap(ctx, "host.shm_bytes")
    if isinstance(shm, int) and shm < ctx.tables.shm_min_mib * MiB:
        return {"evidence": [f"snapshot: /dev/shm is {shm / MiB:.0f} MiB (containers default to 64 MiB; NCCL wants more)"]}
    return None


@predicate(log=True, reads=("shm",))
def shm_roomy(ctx: Context) -> Result:
    shm = _snap(ctx, "host.shm_bytes")
    if isinstance(shm, int) and shm >= ctx.tables.shm_min_mib * MiB:
        return {"evidence": [f"snapshot: /dev/shm is {shm / GiB:.1f} GiB"]}
    return None


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


def _snapshot_interfaces(ctx: Context) -> Optional[List[str]]:
    ifaces = _snap(ctx, "network.interfaces")
    if not isinstance(ifaces, list) or not ifaces:
        return None
    return [i.name for i in ifaces if getattr(i, "name", "")]


@predicate(log=True)
def socket_ifname_selects_nothing(ctx: Context) -> Result:
    setting = _env(ctx, "NCCL_SOCKET_IFNAME")
    names = _snapshot_interfaces(ctx)
    if setting is None or names is None:
        return None
    value, where = setting
    if ifname_matches(value, [n for n in names if n != "lo"]):
        return None
    return {"evidence": [f"{where}: NCCL_SOCKET_IFNAME={value} matches no interface on the machine "
                  f"(snapshot: {', '.join(names)})"]}


@predicate(log=True)
def socket_ifname_fine(ctx: Context) -> Result:
    setting = _env(ctx, "NCCL_SOCKET_IFNAME")
    names = _snapshot_interfaces(ctx)
    if setting is None or names is None:
        return None
    chosen = ifname_matches(setting[0], [n for n in names if n != "lo"])
    return {"evidence": [f"snapshot: NCCL_SOCKET_IFNAME={setting[0]} selects {', '.join(chosen)}"]} if chosen else None


@predicate(log=True)
def fabric_manager_down(ctx: Context) -> Result:
    fm = _snap(ctx, "fabric_manager")
    if fm is None or getattr(fm, "nvswitch_present", None) is not True or getattr(fm, "running", None) is not False:
        return None
    return {"evidence": ["snapshot: NVSwitch present but nv-fabricmanager is not running"]}


@predicate(log=True)
def fabric_manager_running(ctx: Context) -> Result:
    fm = _snap(ctx, "fabric_manager")
    if fm is not None and getattr(fm, "running", None) is True:
        return {"evidence": ["snapshot: nv-fabricmanager is running"]}
    return None


@predicate(log=True)
def rdma_devices_present(ctx: Context) -> Result:
    devs = _snap(ctx, "network.rdma_devices")
    if isinstance(devs, list) and devs:
        return {"evidence": [f"snapshot: RDMA devices {', '.join(d.name for d in devs)}"]}
    return None


@predicate(log=True)
def peermem_missing(ctx: Context) -> Result:
    if _snap(ctx, "network.peermem_loaded") is False:
        return {"evidence": ["snapshot: neither nvidia_peermem nor nv_peer_mem is loaded"]}
    return None


@predicate(log=True)
def mig_enabled(ctx: Context) -> Result:
    if ctx.snapshot is None:
        return None
    migs = [g.index for g in ctx.snapshot.gpus if getattr(g, "mig_enabled", None) is True]
    return {"evidence": [f"snapshot: MIG mode is on for GPU {', '.join(map(str, migs))}"]} if migs else None


@predicate(log=True)
def wsl_host(ctx: Context) -> Result:
    return {"evidence": ["snapshot: running under WSL"]} if _snap(ctx, "host.wsl") is True else None


@predicate(log=True)
def windows_host(ctx: Context) -> Result:
    return {"evidence": ["snapshot: native Windows"]} if _snap(ctx, "host.os") == "windows" else None


@predicate(log=True)
def p2p_blockers(ctx: Context) -> Result:
    ev = []
    acs = _snap(ctx, "host.acs_enabled_bridges")
    if isinstance(acs, int) and acs > 0:
        ev.append(f"snapshot: ACS is enabled on {acs} PCIe bridge(s)")
    if _snap(ctx, "host.iommu") == "translated":
        ev.append("snapshot: the IOMMU translates DMA (not passthrough)")
    return {"evidence": ev} if ev else None


@predicate(log=True)
def p2p_path_clear(ctx: Context) -> Result:
    acs, iommu = _snap(ctx, "host.acs_enabled_bridges"), _snap(ctx, "host.iommu")
    if acs == 0 and iommu in ("off", "passthrough"):
        return {"evidence": [f"snapshot: no ACS on the PCIe bridges, IOMMU {iommu}: nothing in the P2P path to blame"]}
    return None


@predicate(log=True)
def driver_older_than_torch_cuda(ctx: Context) -> Result:
    snap = ctx.snapshot
    if snap is None or not present(snap.torch):
        return None
    err = snap.torch.cuda_init_error or ""
    if "too old" in err or "insufficient" in err:
        return {"evidence": [f"snapshot: torch says: {err[:200]}"]}
    drv, cuda = _snap(ctx, "driver.cuda_driver_version"), _snap(ctx, "torch.cuda")
    have, built = major_minor(drv) if drv else None, major_minor(cuda) if cuda else None
    if have and built and have[0] < built[0]:
        return {"evidence": [f"snapshot: the driver supports CUDA {drv}, torch is built for CUDA {cuda}"]}
    return None


@predicate(log=True)
def several_nccl_copies(ctx: Context) -> Result:
    copies = _snap(ctx, "libraries.nccl")
    if not isinstance(copies, list):
        return None
    versions = {str(getattr(c, "version", None)) for c in copies if present(getattr(c, "version", None))}
    if len(copies) > 1 and len(versions) > 1:
        paths = [f"{getattr(c, 'path', None)} ({getattr(c, 'version', None)})" for c in copies]
        return {"evidence": [f"snapshot: several libnccl copies on the loader path: {'; '.join(paths)}"]}
    return None


@predicate(log=True)
def cuda_interposer_preloaded(ctx: Context) -> Result:
    pre = _env(ctx, "LD_PRELOAD")
    if pre and re.search(r"vgpu|hami|cuda_hook|libcuda_intercept", pre[0], re.I):
        return {"evidence": [f"{pre[1]}: LD_PRELOAD={pre[0]}"]}
    return None


def _by_origin(by: Dict[str, Any]) -> str:
    return "; ".join(f"{k}: {', '.join(sorted(v))}" for k, v in sorted(by.items()))


@predicate(log=True)
def nccl_versions_differ(ctx: Context) -> Result:
    by = ctx.log.versions_by_origin()
    seen = {v for vs in by.values() for v in vs}
    if len(seen) > 1:
        return {"evidence": ["log: NCCL versions differ: " + _by_origin(by)]}
    return None


@predicate(log=True)
def plugins_differ(ctx: Context) -> Result:
    by = ctx.log.plugins_by_origin()
    kinds = {frozenset(v - {"none"}) if v - {"none"} else frozenset({"none"}) for v in by.values()}
    if len(by) > 1 and len(kinds) > 1:
        return {"evidence": ["log: net plugins differ: " + _by_origin(by)]}
    return None


@predicate(log=True)
def gdr_differs(ctx: Context) -> Result:
    by = ctx.log.gdr_by_origin()
    if len(set(by.values())) > 1:
        without = sorted(k for k, v in by.items() if not v)
        return {"evidence": [f"log: GPUDirect RDMA (GDRDMA) used by some ranks but not by {', '.join(without)}"]}
    return None


@predicate(log=True)
def socket_on_ib_interface(ctx: Context) -> Result:
    ib = [n for n in ctx.log.interfaces if re.match(r"ib|ibp|ibs", n)]
    if ib:
        return {"evidence": [f"log: NET/Socket runs over the InfiniBand interface {', '.join(ib)} (IPoIB), not over IB verbs"]}
    return None


@predicate(log=True)
def docker_bridge_interface(ctx: Context) -> Result:
    names = [n for n in ctx.log.interfaces + ctx.log.bootstrap_interfaces if re.match(r"docker\d|veth", n)]
    if names:
        return {"evidence": [f"log: NCCL uses the container bridge interface {', '.join(dict.fromkeys(names))}"]}
    return None


@predicate(log=True)
def buffsize_large(ctx: Context) -> Result:
    setting = _env(ctx, "NCCL_BUFFSIZE")
    if setting is None:
        return None
    size = _size(setting[0])
    if size is not None and size > 16 * MiB:
        return {"evidence": [f"{setting[1]}: NCCL_BUFFSIZE={setting[0]} ({size / MiB:.0f} MiB; the default is 4 MiB)"]}
    return None


@predicate(log=True)
def p2p_disabled_override(ctx: Context) -> Result:
    ev = []
    dis = _env(ctx, "NCCL_P2P_DISABLE")
    if dis and dis[0].strip() not in ("0", ""):
        ev.append(f"{dis[1]}: NCCL_P2P_DISABLE={dis[0]}")
    lvl = _env(ctx, "NCCL_P2P_LEVEL")
    if lvl and lvl[0].strip().upper() in ("LOC", "0"):
        ev.append(f"{lvl[1]}: NCCL_P2P_LEVEL={lvl[0]} (no peer-to-peer between GPUs: traffic goes through SHM)")
    return {"evidence": ev} if ev else None


@predicate(log=True)
def hpcx_ofed_mismatch(ctx: Context) -> Result:
    built, installed = ctx.log.hpcx_ofed, ctx.log.installed_ofed
    if built and installed and not built & installed:
        return {"evidence": [f"log: HPC-X built for MLNX_OFED {', '.join(sorted(built))}, installed MLNX_OFED "
                      f"{', '.join(sorted(installed))}"]}
    return None


_NCCL_BUILD = re.compile(r"(?:libnccl\.so\.|nvidia-nccl-cu\d+==|libnccl2=)(\d+\.\d+\.\d+)")


@predicate(log=True)
def nccl_library_versions_differ(ctx: Context) -> Result:
    """The log names several different NCCL builds: libnccl.so.2.x files, nvidia-nccl wheels, NCCL version lines."""
    hit = ctx.signals.get("nccl-library-version")
    if hit is None:
        return None
    listed = {m.group(1) for ln in hit.lines for m in _NCCL_BUILD.finditer(ln.split("\t", 1)[-1])}
    seen = listed | set(ctx.log.nccl_versions) if ctx.log is not None else listed
    if len(listed) >= 1 and len(seen) > 1:
        return {"evidence": [f"log: NCCL builds {', '.join(sorted(seen, key=_vkey))} are all named"]}
    return None


def _vkey(v: str) -> Any:
    return parse(v) or Version("0")
