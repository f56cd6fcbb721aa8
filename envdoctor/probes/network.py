"""What NCCL can use between hosts: interfaces, RDMA devices, GPUDirect RDMA, and Fabric Manager."""

from __future__ import annotations

import re
from typing import Any, List

from envdoctor.probes.base import ProbeContext, ProbeOutput
from envdoctor.processes import run_command
from envdoctor.snapshot import FabricManager, Interface, Network, RdmaDevice, Unavailable

_ARPHRD = {"1": "ethernet", "32": "infiniband", "772": "loopback"}


def probe(ctx: ProbeContext) -> ProbeOutput:
    net = Network(interfaces=_interfaces(ctx), rdma_devices=_rdma(ctx), peermem_loaded=_peermem(ctx))
    return ProbeOutput({"network": net, "fabric_manager": _fabric_manager(ctx)})


def _interfaces(ctx: ProbeContext) -> Any:
    base = ctx.path("/sys/class/net")
    try:
        names = sorted(p.name for p in base.iterdir())
    except OSError:
        names = []
    addrs: dict = {}
    stats: dict = {}
    if ctx.root.as_posix() == "/":
        try:
            import psutil

            addrs = psutil.net_if_addrs()
            stats = psutil.net_if_stats()
            names = sorted(set(names) | set(addrs))
        except Exception:
            pass
    if not names:
        return Unavailable("no /sys/class/net and psutil found no interface")
    out: List[Interface] = []
    for name in names:
        iface = Interface(name=name)
        d = base / name
        kind_code = _read(d / "type")
        if (d / "bridge").is_dir():
            iface.kind = "bridge"
        elif kind_code in _ARPHRD and _ARPHRD[kind_code] != "ethernet":
            iface.kind = _ARPHRD[kind_code]
        elif kind_code == "1":
            iface.kind = "ethernet" if (d / "device").exists() else "virtual"
        else:
            iface.kind = "other" if kind_code else Unavailable("no /sys/class/net entry")
        oper = _read(d / "operstate")
        st = stats.get(name)
        iface.up = bool(st.isup) if st is not None else (oper in ("up", "unknown") if oper else Unavailable("unknown"))
        speed = _read(d / "speed")
        if speed and speed.lstrip("-").isdigit() and int(speed) > 0:
            iface.speed_mbps = int(speed)
        elif st is not None and st.speed:
            iface.speed_mbps = int(st.speed)
        else:
            iface.speed_mbps = Unavailable("speed not reported")
        fam = [a.address for a in addrs.get(name, []) if getattr(a.family, "name", "") in ("AF_INET", "AF_INET6")]
        iface.addresses = fam if addrs else Unavailable("not read")
        out.append(iface)
    return out


def _rdma(ctx: ProbeContext) -> Any:
    base = ctx.path("/sys/class/infiniband")
    if not base.is_dir():
        return []
    out = []
    for dev in sorted(base.iterdir()):
        ports = sorted((dev / "ports").glob("*")) if (dev / "ports").is_dir() else []
        port = ports[0] if ports else None
        state = _read(port / "state") if port else None
        layer = _read(port / "link_layer") if port else None
        out.append(RdmaDevice(
            name=dev.name,
            state=state.split(":", 1)[-1].strip() if state else Unavailable("no port state"),
            link_layer=layer or Unavailable("no link layer"),
        ))
    return out


def _peermem(ctx: ProbeContext) -> Any:
    modules = ctx.read_text("/proc/modules")
    if modules is None:
        return Unavailable("no /proc/modules")
    return bool(re.search(r"^(nvidia_peermem|nv_peer_mem)\s", modules, re.M))


def nvswitch_present(ctx: ProbeContext) -> Any:
    """An NVIDIA (0x10de) PCI device of class 0x0680 ('other bridge') is an NVSwitch."""
    base = ctx.path("/sys/bus/pci/devices")
    if not base.is_dir():
        return Unavailable("no /sys/bus/pci/devices")
    for dev in base.iterdir():
        if (_read(dev / "vendor") or "").lower() == "0x10de" and (_read(dev / "class") or "").startswith("0x0680"):
            return True
    return False


def _fabric_manager(ctx: ProbeContext) -> Any:
    present = nvswitch_present(ctx)
    fm = FabricManager(nvswitch_present=present)
    if present is not True:
        why = Unavailable("no NVSwitch: Fabric Manager not needed")
        fm.running, fm.version = why, why
        return fm
    fm.running = _process_running(ctx, "nv-fabricmanager")
    binary = ctx.which("nv-fabricmanager")
    if binary:
        res = run_command([binary, "--version"], ctx.timeout / 2)
        m = re.search(r"(\d+\.\d+(?:\.\d+)?)", res.stdout)
        fm.version = m.group(1) if m else Unavailable(res.describe())
    else:
        fm.version = Unavailable("nv-fabricmanager not on PATH")
    return fm


def _process_running(ctx: ProbeContext, name: str) -> Any:
    proc = ctx.path("/proc")
    try:
        entries = [p for p in proc.iterdir() if p.name.isdigit()]
    except OSError:
        return Unavailable("no /proc")
    for entry in entries:
        if (_read(entry / "comm") or "") in (name, name[:15]):  # the kernel keeps 15 chars
            return True
    return False


def _read(path) -> Any:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
