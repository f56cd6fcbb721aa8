"""The expected-bandwidth model and nccl-tests' definitions, on snapshot objects (pure code)."""

from __future__ import annotations

import pytest

from envdoctor.selftest.bandwidth import (
    busbw_factor,
    busbw_gbps,
    expected_busbw,
    parse_size,
    power_of_two_sizes,
    shortfall_finding,
)
from envdoctor.snapshot import Gpu, Interface, Network, NvLink, Pcie, ProbeFailed, Snapshot, Topology, Unavailable


def gpus(n, nvlinks=0, nv_version=None, gen=4, width=16, max_gen=None, max_width=None, numa=None):
    out = []
    for i in range(n):
        nvl = NvLink(links_active=nvlinks, version=nv_version if nv_version else Unavailable("no active link"))
        pcie = Pcie(gen=gen, max_gen=max_gen or gen, width=width, max_width=max_width or width)
        out.append(Gpu(index=i, name="GPU", compute_capability="9.0", pcie=pcie, nvlink=nvl,
                       numa_node=(numa[i] if numa else 0)))
    return out


def topo(n, cell):
    return Topology(links=[["X" if i == j else cell for j in range(n)] for i in range(n)])


def test_busbw_is_nccl_tests_definition():
    assert busbw_factor(1) == 0.0
    assert busbw_factor(2) == 1.0
    assert busbw_factor(8) == pytest.approx(1.75)
    # 1 GiB in 0.1 s over 8 ranks: algbw 10.737 GB/s, busbw x 1.75
    assert busbw_gbps(1 << 30, 0.1, 8) == pytest.approx((1 << 30) / 0.1 / 1e9 * 1.75)


def test_h100_nvswitch_expectation():
    snap = Snapshot(gpus=gpus(8, nvlinks=18, nv_version=4), topology=topo(8, "NV18"))
    exp = expected_busbw(snap, 8)
    assert exp.gbps == pytest.approx(18 * 25 * 0.7)
    assert exp.path.startswith("NVLink 4 x18")
    assert exp.subjects == [f"gpu:{i}" for i in range(8)]


def test_nvlink_on_some_pairs_only_falls_back_to_pcie():
    t = topo(4, "NV4")
    t.links[0][3] = t.links[3][0] = "SYS"
    snap = Snapshot(gpus=gpus(4, nvlinks=4, nv_version=3, numa=[0, 0, 1, 1]), topology=t)
    exp = expected_busbw(snap, 4)
    assert exp.path.startswith("PCIe gen4 x16")
    assert "SYS" in exp.path
    assert exp.gbps == pytest.approx(1.969 * 16 * 0.4)


@pytest.mark.parametrize("cell,eff", [("PIX", 0.75), ("PXB", 0.75), ("PHB", 0.6), ("NODE", 0.6), ("SYS", 0.4)])
def test_pcie_path_derating(cell, eff):
    snap = Snapshot(gpus=gpus(2, gen=5, width=16), topology=topo(2, cell))
    assert expected_busbw(snap, 2).gbps == pytest.approx(3.938 * 16 * eff)


def test_pcie_without_topology_uses_numa_nodes():
    across = Snapshot(gpus=gpus(2, numa=[0, 1]), topology=Unavailable("NVML unavailable"))
    same = Snapshot(gpus=gpus(2, numa=[0, 0]), topology=Unavailable("NVML unavailable"))
    assert "SYS" in expected_busbw(across, 2).path
    assert expected_busbw(across, 2).gbps < expected_busbw(same, 2).gbps


def test_degraded_link_is_judged_against_its_capability_and_noted():
    snap = Snapshot(gpus=gpus(2, gen=1, width=16, max_gen=4, max_width=16), topology=topo(2, "PIX"))
    exp = expected_busbw(snap, 2)
    assert exp.gbps == pytest.approx(1.969 * 16 * 0.75)
    assert any("gen1 x16, below its gen4 x16" in n for n in exp.notes)


def test_nccl_env_in_snapshot_is_noted():
    snap = Snapshot(gpus=gpus(2), topology=topo(2, "PIX"), env={"NCCL_P2P_DISABLE": "1"})
    assert "NCCL_P2P_DISABLE=1 is set" in expected_busbw(snap, 2).notes


@pytest.mark.parametrize("world,backend,why", [
    (2, "gloo", "CPU"),
    (1, "nccl", "single rank"),
])
def test_no_expectation(world, backend, why):
    snap = Snapshot(gpus=gpus(2, nvlinks=18, nv_version=4), topology=topo(2, "NV18"))
    exp = expected_busbw(snap, world, backend)
    assert exp.gbps is None and why in exp.why


def test_no_expectation_when_links_unknown():
    g = gpus(2)
    g[1].pcie = ProbeFailed("nvml error")
    assert expected_busbw(Snapshot(gpus=g, topology=topo(2, "PIX")), 2).gbps is None
    assert "lists 1 GPU" in expected_busbw(Snapshot(gpus=gpus(1)), 2).why


def test_multi_node_uses_the_fastest_interface_or_the_slower_intra_node_link():
    net = Network(interfaces=[Interface(name="lo", up=True, kind="loopback", speed_mbps=100000),
                              Interface(name="eth0", up=True, kind="ethernet", speed_mbps=25000),
                              Interface(name="ib0", up=False, kind="infiniband", speed_mbps=400000)])
    snap = Snapshot(gpus=gpus(8, nvlinks=18, nv_version=4), topology=topo(8, "NV18"), network=net)
    exp = expected_busbw(snap, 16, nnodes=2)
    assert exp.path == "network eth0 25 Gb/s"
    assert exp.gbps == pytest.approx(25 / 8 * 0.8)
    # one GPU per node: only the network counts
    assert expected_busbw(snap, 2, nnodes=2).gbps == pytest.approx(25 / 8 * 0.8)
    assert expected_busbw(Snapshot(gpus=gpus(1)), 2, nnodes=2).gbps is None


def test_shortfall_finding_fires_only_far_below_at_large_sizes():
    snap = Snapshot(gpus=gpus(8, nvlinks=18, nv_version=4), topology=topo(8, "NV18"))
    exp = expected_busbw(snap, 8)  # 315 GB/s
    slow = {"1024": 0.1, str(64 << 20): 100.0}
    f = shortfall_finding(slow, exp, 8)
    assert f is not None and f.severity == "warning" and f.category == "allreduce_bandwidth_low"
    assert "100.0 GB/s" in f.title and "315" in f.title and f.subjects[0] == "gpu:0"
    assert "64 MiB" in f.detail and "32%" in f.detail
    assert shortfall_finding({str(64 << 20): 200.0}, exp, 8) is None  # 63%: fine
    assert shortfall_finding({str(1 << 20): 1.0}, exp, 8) is None  # latency-bound size: no verdict
    assert shortfall_finding(slow, expected_busbw(snap, 8, "gloo"), 8) is None


@pytest.mark.parametrize("text,value", [("1K", 1024), ("64M", 64 << 20), ("16MiB", 16 << 20), ("4096", 4096),
                                        ("2g", 2 << 30), (" 8 KB ", 8192)])
def test_parse_size(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "1.5M", "M", "-1K", "12T"])
def test_parse_size_rejects(text):
    with pytest.raises(ValueError):
        parse_size(text)


def test_power_of_two_sizes_default_sweep():
    sizes = power_of_two_sizes(1024, 64 << 20)
    assert sizes[0] == 1024 and sizes[-1] == 64 << 20 and len(sizes) == 17
    assert all(b == 2 * a for a, b in zip(sizes, sizes[1:]))
    assert power_of_two_sizes(1000, 5000) == [1024, 2048, 4096]
