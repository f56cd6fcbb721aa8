"""The NCCL-only paths (bandwidth verdict, transport isolation, diagnosis hand-off), on this CPU machine.

Only the launcher's result is faked, at the subprocess boundary: the fake writes the rank result files and
the log that torchrun and the ranks would have written, as a function of the environment it was given.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict, List, Optional

from envdoctor.findings import Finding
from envdoctor.selftest.allreduce import AllreduceOptions, nccl_diagnosis, run_allreduce
from envdoctor.selftest.common import Target
from envdoctor.selftest.launch import LaunchResult
from envdoctor.snapshot import Gpu, NvLink, Pcie, Snapshot, Topology

SIZES = [1 << 20, 16 << 20, 64 << 20]
NCCL_LOG = """host:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4
host:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC
host:1:9 [0] transport/p2p.cc:275 NCCL WARN Cuda failure 'peer access is not supported between these two devices'
"""


class FakeTorchrun:
    """Stands in for `python -m torch.distributed.run`: ranks fail unless `works_with` is in their environment."""

    def __init__(self, works_with: Optional[str], busbw: float, world: int = 2) -> None:
        self.works_with, self.busbw, self.world = works_with, busbw, world
        self.calls: List[Dict[str, str]] = []

    def __call__(self, argv, env, timeout, log_path: Path, on_tick=None) -> LaunchResult:
        self.calls.append({k: v for k, v in env.items() if k.startswith(("NCCL_", "TORCH_NCCL"))})
        out = Path(argv[argv.index("--out") + 1])
        assert argv[argv.index("--backend") + 1] == "nccl" and "torch.distributed.run" in argv
        works = self.works_with == "always" or (self.works_with is not None and env.get(self.works_with) == "1")
        for rank in range(self.world):
            data = {"rank": rank, "world_size": self.world, "ok": works, "errors": [],
                    "sizes": {str(s): {"iters": 20, "seconds": s / (self.busbw * 1e9), "algbw_gbps": self.busbw,
                                       "busbw_gbps": self.busbw, "correct": True} for s in SIZES} if works else {}}
            if not works:
                data["errors"] = ["Traceback ...\ntorch.distributed.DistBackendError: NCCL error: unhandled cuda error"]
            (out / f"rank{rank}.json").write_text(json.dumps(data))
        log_path.write_text("" if works else NCCL_LOG)
        return LaunchResult(list(argv), 0 if works else 1, False, 2.0, log_path)


def target() -> Target:
    return Target(python=sys.executable, torch="2.13.0+cu130", cuda_available=True, device_count=2, nccl=True, gloo=True)


def pcie_pair() -> Snapshot:
    g = [Gpu(index=i, name="L40S", compute_capability="8.9", pcie=Pcie(gen=4, max_gen=4, width=16, max_width=16),
             nvlink=NvLink(links_active=0), numa_node=0) for i in range(2)]
    return Snapshot(gpus=g, topology=Topology(links=[["X", "PIX"], ["PIX", "X"]]))


def opts() -> AllreduceOptions:
    return AllreduceOptions(nproc=2, backend="nccl", sizes=SIZES, timeout=60)


def test_failed_nccl_run_isolates_the_broken_transport():
    fake = FakeTorchrun(works_with="NCCL_P2P_DISABLE", busbw=9.0)
    lines: List[str] = []
    res = run_allreduce(target(), opts(), snapshot=pcie_pair, progress=lines.append, launcher=fake)
    assert res.status == "failed"
    assert "rank 0: torch.distributed.DistBackendError: NCCL error: unhandled cuda error" in res.error
    # the original run, then each transport disabled in turn; NCCL_DEBUG=INFO throughout
    assert [sorted(k for k in c if k.endswith("_DISABLE")) for c in fake.calls] == [
        [], ["NCCL_P2P_DISABLE"], ["NCCL_SHM_DISABLE"], ["NCCL_IB_DISABLE"]]
    assert all(c["NCCL_DEBUG"] == "INFO" for c in fake.calls)
    iso = res.metrics["transport_isolation"]
    assert iso["NCCL_P2P_DISABLE"] == {"status": "passed", "busbw_gbps": {str(s): 9.0 for s in SIZES}, "error": None}
    assert iso["NCCL_SHM_DISABLE"]["status"] == iso["NCCL_IB_DISABLE"]["status"] == "failed"
    f = res.findings[0]
    assert f.id == "SELFTEST-NCCL-TRANSPORT" and f.category == "p2p_unavailable" and f.severity == "error"
    assert "works with NCCL_P2P_DISABLE=1" in f.title
    # the cost: 9 GB/s against PCIe gen4 x16 through one switch (1.969 * 16 * 0.75 = 23.6 GB/s)
    assert "9.00 GB/s busbw" in f.detail and "38% of the ~24 GB/s" in f.detail
    assert res.metrics["expected_busbw_gbps"] == 23.6
    assert "allreduce failed; retrying with NCCL_SHM_DISABLE=1" in lines
    assert res.log and "NCCL WARN Cuda failure" in Path(res.log).read_text()  # the NCCL_DEBUG log is kept
    assert res.seconds == 8.0


def test_no_single_transport_to_blame():
    res = run_allreduce(target(), opts(), snapshot=lambda: None, launcher=FakeTorchrun(works_with=None, busbw=1.0))
    assert res.status == "failed"
    assert res.findings[0].id == "SELFTEST-NCCL-NO-TRANSPORT"
    assert all(v["status"] == "failed" for v in res.metrics["transport_isolation"].values())


def test_isolation_is_not_attempted_with_gloo_or_across_nodes():
    fake = FakeTorchrun(works_with=None, busbw=1.0)
    o = opts()
    o.nnodes, o.rdzv_endpoint = 2, "127.0.0.1:29500"
    res = run_allreduce(target(), o, snapshot=lambda: None, launcher=fake)
    assert res.status == "failed" and len(fake.calls) == 1 and "transport_isolation" not in res.metrics


def test_passing_nccl_run_is_judged_against_the_links():
    slow = run_allreduce(target(), opts(), snapshot=pcie_pair, launcher=FakeTorchrun("always", busbw=5.0))
    assert slow.status == "passed"  # a verdict on correctness; slowness is a finding
    assert [f.id for f in slow.findings] == ["SELFTEST-ALLREDUCE-SLOW"]
    assert "5.0 GB/s" in slow.findings[0].title and slow.findings[0].subjects == ["gpu:0", "gpu:1"]
    fast = run_allreduce(target(), opts(), snapshot=pcie_pair, launcher=FakeTorchrun("always", busbw=20.0))
    assert fast.status == "passed" and fast.findings == []
    assert fast.metrics["expected_path"].startswith("PCIe gen4 x16")


def test_nccl_diagnosis_findings_are_findings_with_their_confidence():
    found = nccl_diagnosis(NCCL_LOG, None)
    assert found and all(isinstance(f, Finding) for f in found)
    top = found[0]
    assert top.id.startswith("NCCL-") and top.severity == "error" and top.confidence in ("high", "medium", "low")
    assert "peer access is not supported" in top.detail and f"[{top.confidence} confidence]" in top.detail
