"""Driver, GPUs and the GPU link matrix: NVML first, then `nvidia-smi`, then /proc/driver/nvidia."""

from __future__ import annotations

import csv
import io
import re
from typing import Any, Dict, List, Optional, Tuple

from envdoctor.cpulist import format_cpulist
from envdoctor.probes.base import ProbeContext, ProbeOutput, ProbeSkipped
from envdoctor.probes.gpu_health import read_health, read_kernel_xids
from envdoctor.probes.nvml import Nvml
from envdoctor.processes import run_command
from envdoctor.snapshot import (
    Driver,
    Gpu,
    NvLink,
    Pcie,
    ProbeFailed,
    Topology,
    Unavailable,
    Unknown,
    is_absent,
    present,
)

_NVLINK_GENERATION = {1: 1, 2: 2, 3: 2, 4: 3, 5: 3, 6: 4, 7: 5, 8: 6}  # nvmlNvlinkVersion_t -> generation
_LEVELS = {0: "X", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}  # NVML_TOPOLOGY_* -> topo -m
_MAX_LINKS = 18
_DEVICE_TYPE_SWITCH = 2

SMI_FIELDS = (
    "index,name,uuid,pci.bus_id,compute_cap,memory.total,driver_version,pcie.link.gen.current,"
    "pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,persistence_mode,mig.mode.current,"
    "ecc.errors.uncorrected.volatile.total"
)


def probe(ctx: ProbeContext) -> ProbeOutput:
    nvml = Nvml(ctx.nvml)
    why = nvml.init()
    if why is None:
        try:
            return _from_nvml(ctx, nvml)
        finally:
            nvml.shutdown()
    return _fallback(ctx, why.reason if isinstance(why, Unavailable) else why.error)


# --- NVML -----------------------------------------------------------------------------------


def _from_nvml(ctx: ProbeContext, nvml: Nvml) -> ProbeOutput:
    version = nvml.query("nvmlSystemGetDriverVersion")
    cuda = nvml.query(("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"))
    source = "nvml"
    if not isinstance(version, str):  # NVML answered but not the version: /proc may still know it
        proc = parse_proc_version(ctx.read_text("/proc/driver/nvidia/version") or "")
        version, source = (proc, "procfs") if proc else (version, source)
    driver: Any = Driver(
        version=version,
        cuda_driver_version=f"{cuda // 1000}.{cuda % 1000 // 10}" if isinstance(cuda, int) else cuda,
        source=source,
    ) if isinstance(version, str) else _failed(version, "nvmlSystemGetDriverVersion")
    count = nvml.query("nvmlDeviceGetCount")
    if not isinstance(count, int):
        # The driver answered but the GPUs could not be counted: unknown, never "no GPUs".
        why = _failed(count, "nvmlDeviceGetCount")
        return ProbeOutput({"driver": driver, "gpus": why, "topology": why}, note=why.error, status="failed")
    handles = [nvml.query("nvmlDeviceGetHandleByIndex", i) for i in range(count)]
    kernel = read_kernel_xids(ctx) if count else (Unknown("no GPUs"), Unknown("no GPUs"))
    gpus = [_gpu(ctx, nvml, i, h, kernel) for i, h in enumerate(handles)]
    topology = _topology(nvml, handles, gpus)
    note = None
    if nvml.missing:
        note = "NVML functions missing (nvidia-ml-py and driver differ?): " + ", ".join(sorted(nvml.missing))
    return ProbeOutput({"driver": driver, "gpus": gpus, "topology": topology}, note=note)


def _failed(marker: Any, what: str) -> ProbeFailed:
    """A fact the driver should always give: its absence is a failed probe, whatever NVML said."""
    if isinstance(marker, ProbeFailed):
        return marker
    return ProbeFailed(marker.reason if isinstance(marker, Unavailable) else f"{what}: unexpected answer {marker!r}")


def _gpu(ctx: ProbeContext, nvml: Nvml, index: int, h: Any, kernel: Any) -> Gpu:
    cc = nvml.query("nvmlDeviceGetCudaComputeCapability", h)
    name = nvml.query("nvmlDeviceGetName", h)
    gpu = Gpu(
        index=index,
        name=name if isinstance(name, str) else _failed(name, "nvmlDeviceGetName"),
        compute_capability=f"{cc[0]}.{cc[1]}" if isinstance(cc, (tuple, list)) and len(cc) == 2
        else _failed(cc, "nvmlDeviceGetCudaComputeCapability"),
    )
    gpu.uuid = nvml.query("nvmlDeviceGetUUID", h)
    pci = nvml.query(("nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo"), h)
    gpu.pci_bus_id = _bus_id(_decode(getattr(pci, "busId", ""))) if not is_absent(pci) else pci
    mem = nvml.query("nvmlDeviceGetMemoryInfo", h)
    gpu.memory_bytes = int(mem.total) if not is_absent(mem) else mem
    gpu.numa_node = _numa_node(ctx, nvml, h, gpu.pci_bus_id)
    gpu.cpu_affinity = _affinity(ctx, nvml, h)
    gpu.pcie = Pcie(
        gen=nvml.query("nvmlDeviceGetCurrPcieLinkGeneration", h),
        max_gen=nvml.query(("nvmlDeviceGetGpuMaxPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkGeneration"), h),
        width=nvml.query("nvmlDeviceGetCurrPcieLinkWidth", h),
        max_width=nvml.query("nvmlDeviceGetMaxPcieLinkWidth", h),
    )
    gpu.nvlink = _nvlink(nvml, h)
    mig = nvml.query("nvmlDeviceGetMigMode", h)
    gpu.mig_enabled = bool(mig[0]) if isinstance(mig, (tuple, list)) else mig
    pm = nvml.query("nvmlDeviceGetPersistenceMode", h)
    gpu.persistence_mode = bool(pm) if isinstance(pm, int) else pm
    # NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1, NVML_VOLATILE_ECC = 0
    ecc = nvml.query("nvmlDeviceGetTotalEccErrors", h, 1, 0)
    gpu.ecc_uncorrected = int(ecc) if isinstance(ecc, int) else ecc
    gpu.retired_pages_pending = _pending(nvml, h)
    gpu.health = read_health(nvml, h, gpu.pci_bus_id, kernel)
    return gpu


def _bus_id(raw: str) -> str:
    """NVML pads the domain to 8 digits ('00000000:07:00.0'); sysfs and nvidia-smi topo use 4."""
    raw = raw.strip().lower()
    m = re.fullmatch(r"([0-9a-f]+):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])", raw)
    if not m:
        return raw
    return f"{int(m.group(1), 16):04x}:{m.group(2)}:{m.group(3)}.{m.group(4)}"


def _decode(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _numa_node(ctx: ProbeContext, nvml: Nvml, h: Any, bus_id: Any) -> Any:
    node = nvml.query("nvmlDeviceGetNumaNodeId", h)
    if isinstance(node, int) and node >= 0:
        return node
    if isinstance(bus_id, str):
        text = ctx.read_text(f"/sys/bus/pci/devices/{bus_id}/numa_node")
        if text is not None and text.strip().lstrip("-").isdigit():
            value = int(text)
            return value if value >= 0 else Unavailable("single NUMA node (numa_node is -1)")
    return node if is_absent(node) else Unavailable("unknown")


def _affinity(ctx: ProbeContext, nvml: Nvml, h: Any) -> Any:
    words = max(1, ((ctx_cpu_count() + 63) // 64))
    mask = nvml.query("nvmlDeviceGetCpuAffinity", h, words)
    if is_absent(mask):
        return mask
    cpus = [w * 64 + b for w, word in enumerate(mask) for b in range(64) if int(word) >> b & 1]
    return format_cpulist(cpus) if cpus else Unavailable("empty affinity mask")


def ctx_cpu_count() -> int:
    import os

    return os.cpu_count() or 64


def _nvlink(nvml: Nvml, h: Any) -> Any:
    active = 0
    version: Optional[int] = None
    for link in range(_MAX_LINKS):
        state = nvml.query("nvmlDeviceGetNvLinkState", h, link)
        if is_absent(state):
            if link == 0:
                return NvLink(links_active=0, version=Unavailable("no NVLink"))
            break
        if state:
            active += 1
            v = nvml.query("nvmlDeviceGetNvLinkVersion", h, link)
            if isinstance(v, int):
                version = _NVLINK_GENERATION.get(v, v)
    return NvLink(links_active=active, version=version if version else Unavailable("no active link"))


def _pending(nvml: Nvml, h: Any) -> Any:
    rows = nvml.query("nvmlDeviceGetRemappedRows", h)  # Ampere and newer: (corr, unc, pending, failed)
    if isinstance(rows, (tuple, list)) and len(rows) >= 3:
        return bool(rows[2])
    pages = nvml.query("nvmlDeviceGetRetiredPagesPendingStatus", h)
    return bool(pages) if isinstance(pages, int) else pages


def _topology(nvml: Nvml, handles: List[Any], gpus: List[Gpu]) -> Any:
    n = len(handles)
    if n == 0:
        return Unavailable("no GPUs")
    bus_to_index = {g.pci_bus_id: g.index for g in gpus if isinstance(g.pci_bus_id, str)}
    nv = [[0] * n for _ in range(n)]
    switch_links = [0] * n
    for i, h in enumerate(handles):
        for link in range(_MAX_LINKS):
            state = nvml.query("nvmlDeviceGetNvLinkState", h, link)
            if is_absent(state):
                break
            if not state:
                continue
            kind = nvml.query("nvmlDeviceGetNvLinkRemoteDeviceType", h, link)
            if kind == _DEVICE_TYPE_SWITCH:
                switch_links[i] += 1
                continue
            remote = nvml.query(("nvmlDeviceGetNvLinkRemotePciInfo_v2", "nvmlDeviceGetNvLinkRemotePciInfo"), h, link)
            if not is_absent(remote):
                j = bus_to_index.get(_bus_id(_decode(getattr(remote, "busId", ""))))
                if j is not None and j != i:
                    nv[i][j] += 1
    links: List[List[str]] = []
    p2p: List[List[Optional[bool]]] = []
    for i in range(n):
        row: List[str] = []
        prow: List[Optional[bool]] = []
        for j in range(n):
            if i == j:
                row.append("X")
                prow.append(None)
                continue
            count = nv[i][j] or min(switch_links[i], switch_links[j])
            if count:
                row.append(f"NV{count}")
            else:
                level = nvml.query("nvmlDeviceGetTopologyCommonAncestor", handles[i], handles[j])
                row.append(_LEVELS.get(level, "SYS") if isinstance(level, int) else "SYS")
            status = nvml.query("nvmlDeviceGetP2PStatus", handles[i], handles[j], 0)  # CAPS_INDEX_READ
            prow.append(status == 0 if isinstance(status, int) else None)
        links.append(row)
        p2p.append(prow)
    return Topology(links=links, p2p=p2p)


# --- fallbacks ------------------------------------------------------------------------------


def _fallback(ctx: ProbeContext, nvml_why: str) -> ProbeOutput:
    smi = ctx.which("nvidia-smi")
    proc_version = parse_proc_version(ctx.read_text("/proc/driver/nvidia/version") or "")
    if smi:
        res = run_command([smi, f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader,nounits"], ctx.timeout / 2)
        if res.ok:
            driver, gpus = parse_smi_csv(res.stdout)
            if driver is None and proc_version:
                driver = Driver(version=proc_version, source="procfs")
            no_driver: Any = ProbeFailed("nvidia-smi did not give the driver version") if gpus \
                else Unavailable("nvidia-smi listed no GPU")
            return ProbeOutput(
                {"driver": driver or no_driver, "gpus": gpus,
                 "topology": Unavailable("NVML unavailable; nvidia-smi fallback reads no link matrix")},
                note=f"NVML: {nvml_why}; read nvidia-smi instead",
            )
        problem = res.describe()
        driver_value: Any = (
            Driver(version=proc_version, source="procfs") if proc_version else ProbeFailed(problem)
        )
        return ProbeOutput(
            {"driver": driver_value, "gpus": ProbeFailed(f"nvidia-smi: {problem}"), "topology": ProbeFailed(problem)},
            note=f"NVML: {nvml_why}; {problem}",
            status="timeout" if res.error and res.error.startswith("timed out") else "failed",
        )
    if proc_version:
        return ProbeOutput(
            {"driver": Driver(version=proc_version, source="procfs"),
             "gpus": ProbeFailed(f"a driver is loaded but nothing could list its GPUs (NVML: {nvml_why}; no nvidia-smi)"),
             "topology": Unavailable("NVML unavailable")},
            note=f"NVML: {nvml_why}; no nvidia-smi; driver version from /proc/driver/nvidia/version",
            status="failed",
        )
    raise ProbeSkipped(f"{nvml_why}; no nvidia-smi and no /proc/driver/nvidia")


def parse_proc_version(text: str) -> Optional[str]:
    m = re.search(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


def _smi_value(raw: str) -> Optional[str]:
    raw = raw.strip()
    if not raw or raw.startswith("[") or raw in ("N/A", "Not Supported"):
        return None
    return raw


def _smi_int(raw: str, why: str) -> Any:
    v = _smi_value(raw)
    try:
        return int(float(v)) if v is not None else Unavailable(why)
    except ValueError:
        return Unavailable(f"unparsable {raw!r}")


def parse_smi_csv(text: str) -> Tuple[Optional[Driver], List[Gpu]]:
    """Parse `nvidia-smi --query-gpu=SMI_FIELDS --format=csv,noheader,nounits`, one GPU a line."""
    gpus: List[Gpu] = []
    driver: Optional[Driver] = None
    names = SMI_FIELDS.split(",")
    for row in csv.reader(io.StringIO(text)):
        if len(row) != len(names):
            continue
        rec: Dict[str, str] = dict(zip(names, (c.strip() for c in row)))
        cc = _smi_value(rec["compute_cap"])
        if not rec["index"].isdigit():
            continue
        gpu = Gpu(index=int(rec["index"]), name=_smi_value(rec["name"]) or ProbeFailed("nvidia-smi did not name it"),
                  compute_capability=cc or Unavailable("nvidia-smi does not report compute_cap (driver before 510?)"))
        gpu.uuid = _smi_value(rec["uuid"]) or Unavailable("not reported")
        bus = _smi_value(rec["pci.bus_id"])
        gpu.pci_bus_id = _bus_id(bus) if bus else Unavailable("not reported")
        mib = _smi_int(rec["memory.total"], "not reported")
        gpu.memory_bytes = mib * 1024 * 1024 if isinstance(mib, int) else mib
        gpu.pcie = Pcie(
            gen=_smi_int(rec["pcie.link.gen.current"], "not reported"),
            max_gen=_smi_int(rec["pcie.link.gen.max"], "not reported"),
            width=_smi_int(rec["pcie.link.width.current"], "not reported"),
            max_width=_smi_int(rec["pcie.link.width.max"], "not reported"),
        )
        pm = _smi_value(rec["persistence_mode"])
        gpu.persistence_mode = (pm == "Enabled") if pm else Unavailable("not reported")
        mig = _smi_value(rec["mig.mode.current"])
        gpu.mig_enabled = (mig == "Enabled") if mig else Unavailable("MIG not supported")
        gpu.ecc_uncorrected = _smi_int(rec["ecc.errors.uncorrected.volatile.total"], "ECC not supported")
        gpu.nvlink = Unavailable("nvidia-smi fallback reads no NVLink state")
        gpu.numa_node = Unavailable("nvidia-smi fallback")
        gpu.cpu_affinity = Unavailable("nvidia-smi fallback")
        gpu.retired_pages_pending = Unavailable("nvidia-smi fallback")
        gpu.health = Unavailable("nvidia-smi fallback reads no health counters (NVML unavailable)")
        version = _smi_value(rec["driver_version"])
        if version and driver is None:
            driver = Driver(version=version, source="nvidia-smi",
                            cuda_driver_version=Unavailable("not in nvidia-smi --query-gpu"))
        gpus.append(gpu)
    return driver, gpus


__all__ = ["probe", "parse_smi_csv", "parse_proc_version", "present"]
