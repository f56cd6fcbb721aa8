"""The host: OS, kernel, distro, glibc, CPU, memory, /dev/shm, NUMA, IOMMU, ACS, container, WSL."""

from __future__ import annotations

import os
import platform
import re
import socket
from typing import List, Optional

from envdoctor.cpulist import format_cpulist, parse_cpulist
from envdoctor.probes.base import ProbeContext, ProbeOutput
from envdoctor.snapshot import Cpu, Host, NumaNode, ProbeFailed, Unavailable

_OS = {"Linux": "linux", "Windows": "windows", "Darwin": "darwin"}


def probe(ctx: ProbeContext) -> ProbeOutput:
    system = platform.system()
    os_name = _OS.get(system, "other")
    host = Host(os=os_name, arch=platform.machine() or "unknown")
    host.hostname = socket.gethostname() or Unavailable("no host name")
    host.kernel = platform.release() or Unavailable("unknown")
    host.cpu = _cpu(ctx)
    host.memory_bytes = _memory()
    if os_name != "linux":
        why = Unavailable(f"not Linux ({system})")
        for name in ("distro", "glibc", "shm_bytes", "numa_nodes", "iommu", "acs_enabled_bridges",
                     "container", "wsl", "container_gpu_access", "gpu_device_nodes", "process_cpus"):
            setattr(host, name, why)
        return ProbeOutput({"host": host})
    host.distro = _distro(ctx)
    host.glibc = _glibc()
    host.shm_bytes = _shm(ctx)
    host.numa_nodes = _numa(ctx)
    host.iommu = _iommu(ctx)
    host.acs_enabled_bridges = _acs(ctx)
    host.wsl = _wsl(ctx)
    host.container = _container(ctx)
    nodes = _gpu_nodes(ctx)
    host.gpu_device_nodes = nodes
    host.container_gpu_access = (
        bool([n for n in nodes if re.fullmatch(r"/dev/nvidia\d+", n)]) if host.container not in ("none",)
        else Unavailable("not in a container")
    )
    host.process_cpus = _process_cpus()
    return ProbeOutput({"host": host})


def _cpu(ctx: ProbeContext) -> Cpu:
    cpu = Cpu()
    info = ctx.read_text("/proc/cpuinfo") or ""
    names = re.findall(r"^model name\s*:\s*(.+)$", info, re.M)
    cpu.model = names[0].strip() if names else (platform.processor() or Unavailable("unknown CPU model"))
    sockets = set(re.findall(r"^physical id\s*:\s*(\d+)$", info, re.M))
    cpu.sockets = len(sockets) if sockets else Unavailable("/proc/cpuinfo has no physical id")
    try:
        import psutil

        cpu.logical_cpus = psutil.cpu_count(logical=True) or Unavailable("unknown")
        cpu.physical_cores = psutil.cpu_count(logical=False) or Unavailable("unknown")
    except Exception as exc:  # psutil missing or broken
        cpu.logical_cpus = os.cpu_count() or Unavailable("unknown")
        cpu.physical_cores = ProbeFailed(f"psutil: {exc}")
    return cpu


def _memory():
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except Exception as exc:
        return ProbeFailed(f"psutil: {exc}")


def _distro(ctx: ProbeContext):
    text = ctx.read_text("/etc/os-release")
    if text is None:
        return Unavailable("no /etc/os-release")
    m = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', text, re.M)
    return m.group(1) if m else Unavailable("/etc/os-release has no PRETTY_NAME")


def _glibc():
    lib, version = platform.libc_ver()
    return version if lib == "glibc" and version else Unavailable("not glibc")


def _shm(ctx: ProbeContext):
    try:
        st = os.statvfs(ctx.path("/dev/shm"))
    except OSError as exc:
        return Unavailable(f"/dev/shm: {exc.strerror}")
    return int(st.f_blocks * st.f_frsize)


def _numa(ctx: ProbeContext):
    base = ctx.path("/sys/devices/system/node")
    if not base.is_dir():
        return Unavailable("no /sys/devices/system/node")
    nodes: List[NumaNode] = []
    for entry in sorted(base.glob("node[0-9]*"), key=lambda p: int(p.name[4:])):
        node = NumaNode(id=int(entry.name[4:]))
        cpus = _read(entry / "cpulist")
        node.cpus = cpus.strip() if cpus is not None else Unavailable("cpulist unreadable")
        meminfo = _read(entry / "meminfo")
        m = re.search(r"MemTotal:\s+(\d+) kB", meminfo or "")
        node.memory_bytes = int(m.group(1)) * 1024 if m else Unavailable("meminfo unreadable")
        nodes.append(node)
    return nodes


def _iommu(ctx: ProbeContext):
    groups = ctx.path("/sys/kernel/iommu_groups")
    cmdline = ctx.read_text("/proc/cmdline") or ""
    if "iommu=pt" in cmdline or "iommu.passthrough=1" in cmdline:
        return "passthrough"
    if re.search(r"\b(intel_iommu|amd_iommu)=off\b", cmdline) or "iommu=off" in cmdline:
        return "off"
    try:
        has_groups = groups.is_dir() and any(groups.iterdir())
    except OSError:
        return Unavailable("/sys/kernel/iommu_groups unreadable")
    if not groups.is_dir():
        return Unavailable("no /sys/kernel/iommu_groups")
    if not has_groups:
        return "off"
    # A domain type of "DMA"/"DMA-FQ" translates device addresses; "identity" passes them through.
    for group in groups.iterdir():
        kind = _read(group / "type")
        if kind is not None:
            return "passthrough" if kind.strip() == "identity" else "translated"
    return "translated"


def _acs(ctx: ProbeContext):
    """Bridges whose ACS control has source validation or P2P request redirect on.

    The ACS control register lives in PCI extended config space (capability id 0x000D), which only
    root can read past the first 256 bytes; without it the count is unknown, never a guess.
    """
    base = ctx.path("/sys/bus/pci/devices")
    if not base.is_dir():
        return Unavailable("no /sys/bus/pci/devices")
    count = 0
    readable = 0
    for dev in base.iterdir():
        cls = _read(dev / "class")
        if not cls or not cls.strip().startswith("0x0604"):
            continue
        try:
            config = (dev / "config").read_bytes()
        except OSError:
            continue
        if len(config) <= 256:
            continue
        readable += 1
        ctrl = _acs_control(config)
        if ctrl is not None and ctrl & 0b11101:  # SrcValid, ReqRedir, CmpltRedir, UpstreamFwd
            count += 1
    if readable == 0:
        return Unavailable("PCI extended config space not readable (needs root)")
    return count


def _acs_control(config: bytes) -> Optional[int]:
    offset = 0x100
    seen = 0
    while offset and offset + 8 <= len(config) and seen < 64:
        header = int.from_bytes(config[offset:offset + 4], "little")
        cap_id = header & 0xFFFF
        if cap_id == 0x000D:
            return int.from_bytes(config[offset + 6:offset + 8], "little")
        offset = (header >> 20) & 0xFFC
        seen += 1
    return None


def _wsl(ctx: ProbeContext) -> bool:
    release = (ctx.read_text("/proc/sys/kernel/osrelease") or "").lower()
    return "microsoft" in release or "wsl" in release or ctx.path("/dev/dxg").exists()


def _container(ctx: ProbeContext) -> str:
    env = ctx.env
    if env.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if env.get("APPTAINER_CONTAINER") or env.get("SINGULARITY_CONTAINER"):
        return "apptainer"
    if ctx.path("/run/.containerenv").exists():
        return "podman"
    if ctx.path("/.dockerenv").exists():
        return "docker"
    cgroup = ctx.read_text("/proc/1/cgroup") or ""
    for marker, kind in (("kubepods", "kubernetes"), ("docker", "docker"), ("libpod", "podman"), ("lxc", "lxc")):
        if marker in cgroup:
            return kind
    container_env = (ctx.read_text("/proc/1/environ") or "")
    if "container=lxc" in container_env:
        return "lxc"
    if "container=" in container_env:
        return "other"
    return "none"


def _gpu_nodes(ctx: ProbeContext) -> List[str]:
    dev = ctx.path("/dev")
    try:
        names = sorted(p.name for p in dev.iterdir() if p.name.startswith(("nvidia", "dxg")))
    except OSError:
        return []
    return ["/dev/" + n for n in names]


def _process_cpus():
    try:
        return format_cpulist(sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return Unavailable("no sched_getaffinity")


def _read(path) -> Optional[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


__all__ = ["probe", "parse_cpulist"]
