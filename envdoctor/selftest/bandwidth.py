"""All-reduce bandwidth: nccl-tests' definitions, and what the snapshot's links should give. Pure code.

nccl-tests (doc/PERFORMANCE.md): algbw = size / time; for all-reduce busbw = algbw * 2(n-1)/n, the
bandwidth each rank's link actually carries, comparable with the link's own speed whatever n is.

The expectation is a deliberately rough model of a healthy machine's large-message busbw:
per-GPU NVLink bandwidth (links x per-link unidirectional rate), else the PCIe link (generation x
width), derated for the path between GPUs (same switch, host bridge, across CPU sockets), and the
network interface across nodes. A finding fires only when the measurement falls below half of it, so
the model must be right within a factor of two, not more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from envdoctor.byte_sizes import format_bytes
from envdoctor.findings import Finding
from envdoctor.fixes import manual
from envdoctor.snapshot import Gpu, Snapshot, known_list, present, value_or

GIB = 1 << 30
MIN_SIZE_FOR_VERDICT = 8 << 20  # below this, all-reduce is latency-bound: no bandwidth verdict
SHORTFALL = 0.5

# Unidirectional GB/s per NVLink link, by NVLink generation (NVIDIA's per-GPU totals / links / 2):
# P100 NVLink1 160 GB/s over 4 links; V100 NVLink2 300/6; A100 NVLink3 600/12; H100 NVLink4 900/18;
# B200 NVLink5 1800/18.
NVLINK_GBPS_PER_LINK = {1: 20.0, 2: 25.0, 3: 25.0, 4: 25.0, 5: 50.0}
# Unidirectional GB/s per PCIe lane after line coding: gen1-2 8b/10b, gen3-5 128b/130b, gen6 FLIT.
PCIE_GBPS_PER_LANE = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
NVLINK_EFFICIENCY = 0.7
# PCIe: share of the raw link that all-reduce reaches, by the path between the GPUs (nvidia-smi topo).
PCIE_PATH_EFFICIENCY = {"PIX": 0.75, "PXB": 0.75, "PHB": 0.6, "NODE": 0.6, "SYS": 0.4}
PATH_ORDER = ["PIX", "PXB", "PHB", "NODE", "SYS"]  # best to worst
NETWORK_EFFICIENCY = 0.8


def algbw_gbps(nbytes: int, seconds: float) -> float:
    return nbytes / seconds / 1e9


def busbw_factor(world_size: int) -> float:
    return 2.0 * (world_size - 1) / world_size if world_size > 0 else 0.0


def busbw_gbps(nbytes: int, seconds: float, world_size: int) -> float:
    return algbw_gbps(nbytes, seconds) * busbw_factor(world_size)


@dataclass
class Expectation:
    gbps: Optional[float]  # expected large-message busbw; None when no estimate is possible
    path: str  # "NVLink 4 x18", "PCIe gen4 x16 (PHB)", "network 100 Gb/s"
    why: str = ""  # the reason when gbps is None
    subjects: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)  # facts worth quoting (a degraded link, NCCL_* settings)


def expected_busbw(
    snapshot: Snapshot, world_size: int, backend: str = "nccl", nnodes: int = 1, gpu_indices: Optional[Sequence[int]] = None
) -> Expectation:
    """What a healthy machine with these links gives for large all-reduce messages (busbw, GB/s)."""
    if backend != "nccl":
        return Expectation(None, "", f"the {backend} backend moves data through the CPU: no link expectation")
    if world_size < 2:
        return Expectation(None, "", "a single rank moves no data (busbw is 0 by definition)")
    local = max(1, world_size // max(1, nnodes))
    chosen = list(gpu_indices) if gpu_indices is not None else list(range(local))
    by_index = {g.index: g for g in known_list(snapshot.gpus)}
    gpus = [by_index[i] for i in chosen if i in by_index]
    if len(gpus) < len(chosen):
        return Expectation(None, "", f"the snapshot lists {len(by_index)} GPU(s), the test used {len(chosen)}")
    notes = _nccl_env_notes(snapshot)
    subjects = [f"gpu:{g.index}" for g in gpus]
    intra = _intra_node(snapshot, gpus) if len(gpus) > 1 else None
    if intra is not None:
        intra.notes = notes + intra.notes
        intra.subjects = subjects
    if nnodes <= 1:
        return intra or Expectation(None, "", "one GPU per node", subjects=subjects)
    net = _network(snapshot)
    if net.gbps is None:
        return net
    net.notes = notes
    net.subjects = subjects
    if intra is not None and intra.gbps is not None and intra.gbps < net.gbps:
        return intra
    return net


def _intra_node(snapshot: Snapshot, gpus: List[Gpu]) -> Expectation:
    nv = _nvlink(snapshot, gpus)
    if nv is not None:
        return nv
    return _pcie(snapshot, gpus)


def _links_matrix(snapshot: Snapshot) -> Optional[List[List[str]]]:
    topo = snapshot.topology
    if present(topo) and topo.links:
        return topo.links
    return None


def _nvlink(snapshot: Snapshot, gpus: List[Gpu]) -> Optional[Expectation]:
    counts, versions = [], []
    for g in gpus:
        nvl = g.nvlink
        if not present(nvl) or not isinstance(value_or(nvl.links_active), int) or nvl.links_active <= 0:
            return None
        counts.append(nvl.links_active)
        versions.append(value_or(nvl.version))
    matrix = _links_matrix(snapshot)
    if matrix is not None:  # every pair must be NVLink-connected, else the ring falls back to PCIe somewhere
        for g in gpus:
            for h in gpus:
                if g.index != h.index and not _cell(matrix, g.index, h.index).startswith("NV"):
                    return None
    known = [v for v in versions if isinstance(v, int) and v in NVLINK_GBPS_PER_LINK]
    if not known:
        return Expectation(None, "NVLink", "NVLink generation unknown")
    gen = min(known)
    links = min(counts)
    raw = links * NVLINK_GBPS_PER_LINK[gen]
    return Expectation(raw * NVLINK_EFFICIENCY, f"NVLink {gen} x{links} ({raw:.0f} GB/s per direction)")


def _cell(matrix: List[List[str]], i: int, j: int) -> str:
    try:
        return str(matrix[i][j])
    except (IndexError, TypeError):
        return ""


def _pcie(snapshot: Snapshot, gpus: List[Gpu]) -> Expectation:
    rates: List[float] = []
    labels: List[str] = []
    notes: List[str] = []
    for g in gpus:
        pcie = g.pcie
        if not present(pcie):
            return Expectation(None, "PCIe", f"gpu:{g.index} PCIe link not in the snapshot")
        gen = value_or(pcie.max_gen) or value_or(pcie.gen)
        width = value_or(pcie.max_width) or value_or(pcie.width)
        if gen not in PCIE_GBPS_PER_LANE or not isinstance(width, int) or width <= 0:
            return Expectation(None, "PCIe", f"gpu:{g.index} PCIe generation/width unknown")
        rates.append(PCIE_GBPS_PER_LANE[gen] * width)
        labels.append(f"gen{gen} x{width}")
        cur_gen, cur_width = value_or(pcie.gen), value_or(pcie.width)
        if isinstance(cur_gen, int) and isinstance(cur_width, int) and (cur_gen < gen or cur_width < width):
            notes.append(f"gpu:{g.index} PCIe link runs at gen{cur_gen} x{cur_width}, below its gen{gen} x{width}")
    raw = min(rates)
    label = labels[rates.index(raw)]
    path = _worst_path(snapshot, gpus)
    eff = PCIE_PATH_EFFICIENCY[path]
    where = {"SYS": "across CPU sockets", "NODE": "through the host bridges of one socket",
             "PHB": "through the host bridge", "PXB": "through PCIe switches", "PIX": "through one PCIe switch"}[path]
    return Expectation(raw * eff, f"PCIe {label} {where} ({path})", notes=notes)


def _worst_path(snapshot: Snapshot, gpus: List[Gpu]) -> str:
    matrix = _links_matrix(snapshot)
    worst = 0
    for g in gpus:
        for h in gpus:
            if g.index == h.index:
                continue
            cell = _cell(matrix, g.index, h.index) if matrix is not None else ""
            if cell in PATH_ORDER:
                worst = max(worst, PATH_ORDER.index(cell))
                continue
            a, b = value_or(g.numa_node), value_or(h.numa_node)
            if isinstance(a, int) and isinstance(b, int) and a != b:
                worst = max(worst, PATH_ORDER.index("SYS"))
            else:
                worst = max(worst, PATH_ORDER.index("PHB"))  # unknown: assume through the host bridge
    return PATH_ORDER[worst]


def _network(snapshot: Snapshot) -> Expectation:
    net = snapshot.network
    if not present(net) or not present(net.interfaces):
        return Expectation(None, "network", "network interfaces not in the snapshot")
    best = None
    for itf in net.interfaces:
        if itf.name == "lo" or value_or(itf.kind) == "loopback" or value_or(itf.up) is False:
            continue
        speed = value_or(itf.speed_mbps)
        if isinstance(speed, int) and speed > 0 and (best is None or speed > best[1]):
            best = (itf.name, speed)
    if best is None:
        return Expectation(None, "network", "no network interface with a known speed")
    raw = best[1] / 8 / 1000  # Mb/s -> GB/s
    return Expectation(raw * NETWORK_EFFICIENCY, f"network {best[0]} {best[1] / 1000:g} Gb/s")


def _nccl_env_notes(snapshot: Snapshot) -> List[str]:
    env = snapshot.env if present(snapshot.env) else {}
    return [f"{k}={env[k]} is set" for k in ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE", "NCCL_P2P_LEVEL",
                                             "NCCL_ALGO", "NCCL_PROTO", "NCCL_NET") if env.get(k)]


def largest_measured(busbw: Dict[str, float]) -> Optional[int]:
    sizes = [int(s) for s in busbw]
    return max(sizes) if sizes else None


def shortfall_finding(busbw: Dict[str, float], expectation: Expectation, world_size: int, what: str = "all-reduce",
                      finding_id: str = "SELFTEST-ALLREDUCE-SLOW",
                      category: str = "allreduce_bandwidth_low") -> Optional[Finding]:
    """A warning when the largest measured message's busbw is below SHORTFALL x the expectation; `what` names the
    collective measured (busbw makes every collective comparable with the links)."""
    if expectation.gbps is None:
        return None
    size = largest_measured(busbw)
    if size is None or size < MIN_SIZE_FOR_VERDICT:
        return None
    measured = busbw[str(size)]
    if measured >= SHORTFALL * expectation.gbps:
        return None
    notes = "".join(f"\n{n}." for n in expectation.notes)
    return Finding(
        id=finding_id,
        severity="warning",
        category=category,
        title=f"{what} reaches {measured:.1f} GB/s bus bandwidth, far below the ~{expectation.gbps:.0f} GB/s "
              f"that {expectation.path.split(' (')[0]} should give",
        detail=(f"At {_size(size)} over {world_size} ranks the measured busbw is {measured:.2f} GB/s, "
                f"{measured / expectation.gbps:.0%} of the ~{expectation.gbps:.0f} GB/s expected from "
                f"{expectation.path}.{notes}"),
        remedy=manual("Run `envdoctor check` (degraded PCIe links, ACS/IOMMU blocking peer access, NCCL_* variables that "
             "disable transports) and rerun with NCCL_DEBUG=INFO to see which transport NCCL chose; compare with "
             "`nvidia-smi topo -m`."),
        subjects=list(expectation.subjects),
        references=["https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"],
    )


def _size(nbytes: int) -> str:
    return format_bytes(nbytes, exact=True)


SIZE_RE = re.compile(r"^\s*(\d+)\s*([kmg]?)(i?b?)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """'1K', '64M', '16MiB', '4096' -> bytes (binary units). ValueError on anything else."""
    m = SIZE_RE.match(text)
    if not m:
        raise ValueError(f"not a size: {text!r} (use bytes or K/M/G, e.g. 1K, 64M)")
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]
    return int(m.group(1)) * mult


def power_of_two_sizes(lo: int, hi: int) -> List[int]:
    """Every power of two from lo to hi (both rounded up to a power of two, at least 4 bytes)."""
    size = 4
    while size < lo:
        size <<= 1
    out = []
    while size <= hi:
        out.append(size)
        size <<= 1
    if not out:
        out.append(size)
    return out


# The line the all-reduce worker writes to its progress file as each message size completes.
_SIZE_LINE = re.compile(r"^\s*(\d+) B\s+\d+ iters\s+busbw\s+([0-9.]+) GB/s\s+(ok|WRONG)\s*$")


def size_done(line: str) -> Optional[tuple]:
    """(bytes, busbw GB/s) from a progress line that reports one finished message size; None for other lines."""
    m = _SIZE_LINE.match(line)
    return (int(m.group(1)), float(m.group(2))) if m else None
