"""NCCL's INFO lines as facts, and the findings that differences between ranks or nodes produce."""

from __future__ import annotations

from pathlib import Path

from envdoctor.nccl import diagnose_paths, diagnose_text
from tests.nccl.helpers import FIXTURES


def test_facts_from_a_healthy_info_log() -> None:
    facts = diagnose_paths([FIXTURES / "healthy_single_node.txt"]).facts.as_dict()
    assert facts["nccl_version"] == "2.21.5" and facts["cuda_versions"] == ["12.4"]
    assert facts["ranks"] == 4 and facts["nodes"] == 1 and facts["multi_node"] is False
    assert facts["transports"] == ["P2P/CUMEM", "P2P/IPC", "SHM"]
    assert facts["interfaces"] == ["eth0"] and facts["bootstrap_interfaces"] == ["eth0"]
    assert facts["networks"] == ["Socket"]
    assert facts["nvls"] == {"available": False, "used": False}
    assert facts["env"] == {"NCCL_DEBUG": "INFO"}
    assert facts["cuda_driver"] == 12040
    assert facts["hosts"] == ["gpu-a"]
    assert {"host": "gpu-a", "cuda_dev": 0, "bus_id": "18000"} in facts["devices"]


def test_ib_gdrdma_nvls_plugin_and_env_facts() -> None:
    text = "\n".join([
        "n1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB ens1:10.0.0.1<0>",
        "n1:1:1 [0] NCCL INFO Using network IB",
        "n1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/1/GDRDMA",
        "n1:1:2 [0] NCCL INFO NVLS multicast support is available on dev 0",
        "n1:1:2 [0] NCCL INFO NVLS comm 0x55 headRank 0 nHeads 8 buffSize 1048576",
        "n1:1:1 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 3.",
        "n1:1:1 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so",
    ])
    f = diagnose_text(text).facts.as_dict()
    assert f["ib_devices"] == ["mlx5_0:1/IB", "mlx5_1:1/RoCE"] and f["bootstrap_interfaces"] == ["ens1"]
    assert set(f["transports"]) == {"NET/IB", "GDRDMA"} and f["networks"] == ["IB"]
    assert f["nvls"] == {"available": True, "used": True}
    assert f["env"] == {"NCCL_IB_GID_INDEX": "3"}
    assert f["plugin_paths"] == ["/opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so"]


def _write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.write_text(text)
    return p


def test_ranks_with_different_nccl_versions_are_a_finding(tmp_path: Path) -> None:
    a = _write(tmp_path, "node0.log", "n0:1:1 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\n")
    b = _write(tmp_path, "node1.log", "n1:1:1 [0] NCCL INFO NCCL version 2.19.3+cuda12.3\n")
    report = diagnose_paths([a, b])
    top = report.findings[0]
    assert top.category == "nccl_library_mismatch"
    assert any("2.18.5" in e and "2.19.3" in e for e in top.evidence)
    assert report.to_json()["facts"]["nccl_versions"] == ["2.18.5", "2.19.3"]
    same = diagnose_paths([a, _write(tmp_path, "node2.log", "n2:1:1 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\n")])
    assert same.findings == []


def test_nodes_loading_different_net_plugins(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.log", "a:1:1 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so\n")
    b = _write(tmp_path, "b.log",
               "b:1:1 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation\n")
    report = diagnose_paths([a, b])
    assert report.findings[0].category == "net_plugin_mismatch"
    assert diagnose_paths([a]).findings == []


def test_gdrdma_on_one_node_only(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.log", "a:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n")
    b = _write(tmp_path, "b.log", "b:1:2 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [send] via NET/IB/0\n")
    assert diagnose_paths([a, b]).findings[0].category == "gdr_disabled"
    c = _write(tmp_path, "c.log", "c:1:2 [0] NCCL INFO Channel 00/0 : 9[1] -> 1[1] [send] via NET/IB/0/GDRDMA\n")
    assert diagnose_paths([a, c]).findings == []


def test_docker0_picked_between_nodes() -> None:
    text = "\n".join([
        "h1:1:1 [0] NCCL INFO Bootstrap : Using docker0:172.17.0.1<0>",
        "h1:1:1 [0] NCCL INFO NET/Socket : Using [0]docker0:172.17.0.1<0>",
        "h1:1:3 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0",
    ])
    report = diagnose_text(text)
    assert report.findings[0].category == "container_network_isolation"
    assert any("docker0" in e for e in report.findings[0].evidence)


def test_one_merged_log_from_two_hosts_counts_as_two_origins() -> None:
    text = "a:1:1 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\nb:2:2 [0] NCCL INFO NCCL version 2.20.3+cuda12.3\n"
    report = diagnose_text(text)
    assert report.facts.multi_node() and report.findings[0].category == "nccl_library_mismatch"
