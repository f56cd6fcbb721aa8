"""A simulated fleet: N copies of the recorded 8xH100 snapshot (tests/fixtures/snapshots/h100_8x_nvswitch.json)
with the variety real nodes have (host names, GPU UUIDs and serial-like ids, addresses, timestamps, probe
times, a few bus ids and kernel builds) and one odd node: driver 535 instead of 550 and /dev/shm 64 MiB.

    from bench.fleet_nodes import node_documents, write_nodes
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any, Dict, Iterator, List

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "fixtures" / "snapshots" / "h100_8x_nvswitch.json"
ODD_DRIVER = "535.161.08"
ODD_SHM = 64 * 1024 * 1024


def odd_index(n: int) -> int:
    """Which node is the odd one (not the first or last, so neither end of a listing hides it)."""
    return (n * 4) // 7


def host_name(i: int) -> str:
    return f"node{i:05d}"


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def node_document(base: Dict[str, Any], i: int, n: int) -> Dict[str, Any]:
    """Node `i` of `n`: the recorded snapshot with this node's own ids and small differences."""
    rng = random.Random(i)
    d = copy.deepcopy(base)
    d["created"] = f"2026-11-20T09:{30 + i % 30:02d}:{i % 60:02d}Z"
    host = d["host"]
    host["hostname"] = host_name(i)
    if i % 97 == 5:  # a few nodes on a newer kernel build: not something a job needs alike
        host["kernel"] = "5.15.0-107-generic"
    if i % 16 == 9:  # another BIOS build reserves a little more memory on some nodes
        host["memory_bytes"] -= (1 + i % 3) * 64 * 1024 * 1024
    for g in d["gpus"]:
        g["uuid"] = _uuid(rng)
        if i % 211 == 3 and g["index"] == 7:  # a reseated board on another bus address
            g["pci_bus_id"] = "0000:dc:00.0"
    octet3, octet4 = divmod(i, 250)
    for iface in d["network"]["interfaces"]:
        if iface["name"] == "eth0":
            iface["addresses"] = [f"10.{1 + octet3 // 250}.{octet3 % 250}.{octet4 + 2}"]
        elif iface["name"].startswith("ib"):
            k = int(iface["name"][2:])
            iface["addresses"] = [f"10.{10 + k}.{octet3}.{octet4 + 2}"]
    for p in d["probes"]:
        p["seconds"] = round(p["seconds"] * (0.8 + 0.4 * rng.random()), 3)
    if i == odd_index(n):
        d["driver"]["version"] = ODD_DRIVER
        d["driver"]["cuda_driver_version"] = "12.2"
        host["shm_bytes"] = ODD_SHM
    return d


def node_documents(n: int) -> Iterator[Dict[str, Any]]:
    base = json.loads(RECORDED.read_text(encoding="utf-8"))
    for i in range(n):
        yield node_document(base, i, n)


def write_nodes(n: int, where: Path) -> List[Path]:
    """Write n node snapshots as `where/nodeNNNNN.json`; the paths, in order."""
    where.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, doc in enumerate(node_documents(n)):
        p = where / f"{host_name(i)}.json"
        p.write_text(json.dumps(doc, indent=1), encoding="utf-8")
        paths.append(p)
    return paths
