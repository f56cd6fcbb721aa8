"""Evidence ranks by specificity: a decisive line (an errno with its peer, an NCCL WARN with a reason, an undefined
symbol) outranks a generic one (an abort, a final RuntimeError, "unhandled cuda error"); a generic line never moves
the cause a decisive line backs, and a generic-only answer is low confidence and names the check that decides it."""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path
from typing import Dict, List, Set

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envdoctor.errors import InputError
from envdoctor.nccl import diagnose_paths, diagnose_text, load_rules
from envdoctor.nccl.diagnose import Scanner
from envdoctor.nccl.rules import SPECIFICITIES, default_rules_dir
from envdoctor.present.nccl import render_nccl
from envdoctor.present.style import Style
from tests.nccl.helpers import FIXTURES, ROOT

sys.path.insert(0, str(ROOT / "tests" / "corpus"))
from split import DEV, split_of


def signals_of(text: str) -> Set[str]:
    """The signatures that match somewhere in `text` (the one engine's own scan)."""
    scanner = Scanner(load_rules())
    scanner.scan("<t>", io.BytesIO(text.encode()))
    return set(scanner.signals)


def test_every_bundled_signature_declares_its_specificity() -> None:
    for path in sorted(default_rules_dir().glob("*signatures.json")):
        for entry in json.loads(path.read_text())["signatures"]:
            assert entry.get("specificity") in SPECIFICITIES, (path.name, entry["id"])


def test_an_unknown_specificity_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "rules"
    shutil.copytree(default_rules_dir(), d)
    doc = json.loads((d / "signatures.json").read_text())
    doc["signatures"][0]["specificity"] = "strong"
    (d / "signatures.json").write_text(json.dumps(doc))
    with pytest.raises(InputError) as info:
        load_rules(d)
    assert "shm-fallocate-enospc" in str(info.value) and "specificity" in str(info.value)


def _generic_lines() -> List[str]:
    """Every generic signature's example lines that match generic signatures only and give no fact."""
    rules = load_rules()
    generic = {s.id for s in rules.signatures if s.generic}
    out = []
    for path in sorted(default_rules_dir().glob("*signatures.json")):
        for e in json.loads(path.read_text())["signatures"]:
            if e["id"] not in generic:
                continue
            for line in [e["example"], *e.get("more_examples", [])]:
                scanner = Scanner(rules)
                scanner.scan("<t>", io.BytesIO(line.encode()))
                facts = scanner.facts.as_dict()
                if set(scanner.signals) <= generic and not facts["nccl_versions"] and not facts["env"]:
                    out.append(line)
    return out


GENERIC_LINES = _generic_lines()


def _decisive_logs() -> Dict[str, str]:
    """Fixtures and dev corpus cases that hold a decisive line (for their top cause or another)."""
    rules = load_rules()
    decisive = {s.id: s for s in rules.signatures if s.specificity == "decisive"}
    texts = {p.name: p.read_text() for p in sorted(FIXTURES.glob("*.log"))}
    for path in sorted((ROOT / "tests" / "nccl" / "corpus").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                if split_of(case) == DEV:  # validation cases are never read here
                    texts[case["id"]] = case["log"]
    out = {}
    for name, text in texts.items():
        found = diagnose_text(text).findings
        if not found:
            continue
        if any(any(w > 0 for w in decisive[s].weights.values()) for s in signals_of(text) if s in decisive):
            out[name] = text  # a decisive line somewhere in it
    return out


DECISIVE_LOGS = _decisive_logs()


def test_the_property_has_material() -> None:
    assert len(GENERIC_LINES) >= 8 and len(DECISIVE_LOGS) >= 30
    assert any("Aborted (core dumped)" in g for g in GENERIC_LINES)
    assert any("unhandled cuda error" in g for g in GENERIC_LINES)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(DECISIVE_LOGS)),
       inserts=st.lists(st.tuples(st.floats(0, 1), st.sampled_from(GENERIC_LINES),
                                  st.sampled_from(["", "[rank0]: ", "[rank3]:[E ProcessGroupNCCL.cpp:1316] ",
                                                   "gpu-b:77:99 [3] "])), min_size=1, max_size=6))
def test_generic_lines_anywhere_never_move_a_decisively_backed_cause(name: str, inserts) -> None:
    text = DECISIVE_LOGS[name]
    before = diagnose_text(text).findings[0].category
    lines = text.splitlines()
    for where, generic, prefix in inserts:  # as any rank or host would print it
        lines.insert(int(where * len(lines)), prefix + generic)
    after = diagnose_text("\n".join(lines) + "\n").findings
    assert after[0].category == before, (name, inserts, [(f.category, f.score) for f in after[:3]])


@pytest.mark.parametrize("line", GENERIC_LINES)
def test_a_generic_line_alone_is_a_low_answer_that_says_what_decides_it(line: str) -> None:
    report = diagnose_text(line + "\n")
    found = report.findings
    assert all(f.confidence == "low" for f in found), [(f.category, f.confidence) for f in found]
    if not found:  # a generic line that weighs no cause (ncclInternalError, mpirun's summary) names none
        assert not any(s.weights for s in load_rules().signatures if s.id in signals_of(line + "\n"))
        return
    top = found[0]
    assert top.test and top.test["run"]
    dist = report.facts.as_dict()["distributed"]
    if not any(dist.values()):  # nothing but the line itself: it says that it cannot decide, and what would
        said = " ".join(top.why)
        assert "only generic lines point here" in said and "to decide, run `" in said and top.test["run"] in said


def test_unhandled_cuda_error_alone_is_an_undecided_cuda_failure_not_nccl_oom() -> None:
    found = diagnose_text("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled cuda error "
                          "(run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n").findings
    assert found[0].category == "cuda_failure_undecided" and found[0].confidence == "low"
    assert "nccl_oom" not in [f.category for f in found]
    assert "NCCL_DEBUG=INFO" in found[0].test["run"]
    # the abort that ends the process on that exception is not a second failure
    ended = diagnose_text("RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n"
                          "terminate called after throwing an instance of 'c10::DistBackendError'\n"
                          "Aborted (core dumped)\n").findings
    assert ended[0].category == "cuda_failure_undecided" and ended[0].confidence == "low"


@pytest.mark.parametrize("reason, cause", [
    ("Cuda failure 'out of memory'", "nccl_oom"),
    ("Cuda failure 2 'out of memory'", "nccl_oom"),
    ("Cuda failure 700 'an illegal memory access was encountered'", "cuda_illegal_memory_access"),
    ("Cuda failure 217 'peer access is not supported between these two devices'", "cumem_host"),
    ("Cuda failure 'operation not supported'", "cuda_feature_unsupported"),
    ("Cuda failure 801 'operation not supported'", "cuda_feature_unsupported"),
])
def test_an_nccl_warn_naming_the_cuda_reason_decides_it(reason: str, cause: str) -> None:
    log = (f"gpu-a:911:930 [1] transport/p2p.cc:220 NCCL WARN {reason}\n"
           "gpu-a:911:930 [1] NCCL INFO transport/p2p.cc:377 -> 1\n"
           "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n"
           "Aborted (core dumped)\n")
    found = diagnose_text(log).findings
    assert found[0].category == cause and found[0].confidence != "low", [(f.category, f.score) for f in found]
    assert "cuda_failure_undecided" not in [f.category for f in found]


# (signature, a line it is for, a near miss it must stay quiet on)
EXCERPTS = [
    ("nccl-cuda-illegal-access", "misc/strongstream.cc:312 NCCL WARN Cuda failure 'an illegal memory access was encountered'",
     "RuntimeError: CUDA error: an illegal instruction was encountered"),
    ("nccl-cuda-not-supported", "transport/nvls.cc:153 NCCL WARN Cuda failure 801 'operation not supported'",
     "include/shm.h:28 NCCL WARN Call to posix_fallocate failed : Operation not supported"),
    ("nccl-warn-cuda-failure", "enqueue.cc:88 NCCL WARN Cuda failure 'invalid device function'",
     "misc/ibvwrap.cc:212 NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory"),
    ("nccl-warn", "graph/search.cc:1021 NCCL WARN Could not find a path for pattern 4",
     "gpu-a:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>"),
    ("process-aborted", "torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 0 (pid: 4121)",
     "torch.distributed.elastic.multiprocessing.api:failed (exitcode: -60) local_rank: 0 (pid: 4121)"),
    ("peer-connection-lost", "RuntimeError: [3] is setting up NCCL communicator: Connection reset by peer",
     "Connection to 10.0.0.2 closed by remote host."),
    ("gloo-loopback-fallback",
     "[W ProcessGroupGloo.cpp:715] Warning: Unable to resolve hostname to a (local) address. Using the loopback address "
     "as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME. (function operator())",
     "[W socket.cpp:464] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use)."),
    ("gloo-connect-loopback-peer", "[/opt/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:805] connect [127.0.1.1]:40117: "
     "Connection refused", "[../third_party/gloo/gloo/transport/tcp/pair.cc:805] connect [10.4.0.9]:40117: Connection refused"),
    ("gloo-connect-peer-refused", "[../third_party/gloo/gloo/transport/tcp/pair.cc:805] connect [10.4.0.9]:40117: Connection "
     "refused", "[W socket.cpp:601] [c10d] The client socket has failed to connect to [10.4.0.9]:29500 (errno: 111 - "
     "Connection refused)."),
    ("gloo-peer-closed", "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:589] Connection closed by peer "
     "[10.4.0.9]:61290", "ssh_exchange_identification: Connection closed by remote host"),
    ("gloo-ifname-not-found", "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:84] ifa != "
     "nullptr. Unable to find address for: ens5f0", "[enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:127] "
     "rp != nullptr. Unable to find address for: worker-3"),
    ("gloo-ifname-nccl-syntax", "[enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:84] ifa != nullptr. "
     "Unable to find address for: ^docker0,lo", "export NCCL_SOCKET_IFNAME=^docker0,lo"),
    ("gloo-ifname-address", "[enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:84] ifa != nullptr. Unable to "
     "find address for: 192.168.1.20", "[enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:84] ifa != "
     "nullptr. Unable to find address for: eth0"),
    ("gloo-hostname-lookup-failed", "[enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:127] rp != nullptr. "
     "Unable to find address for: worker-3", "[enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:84] ifa "
     "!= nullptr. Unable to find address for: eth1"),
    ("gloo-connectfullmesh-failed", "[E ProcessGroupGloo.cpp:138] Gloo connectFullMesh failed with "
     "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error", "[I ProcessGroupGloo.cpp:120] Gloo connectFullMesh "
     "done in 1.2 s"),
    ("gloo-fullmesh-timeout", "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/"
     "pair.cc:144] Timed out connecting to peer rank 97 after 60000ms", "RuntimeError: Gloo connectFullMesh failed with "
     "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] timed out connecting: SO_ERROR: Connection refused, "
     "remote=[10.4.0.9]:50012"),
    ("gloo-op-size-mismatch", "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:510] "
     "op.preamble.length <= op.nbytes. 4194304 vs 2097152", "[enforce fail at pair.cc:510] op.nbytes > 0"),
    ("gloo-op-timeout", "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting "
     "600000ms for send operation to complete", "torch.distributed.DistStoreError: Timed out after 901 seconds waiting "
     "for clients. 1/2 clients joined."),
    ("gloo-store-wait-timeout", "what():  [horovod/common/gloo/http_store.cc:53] Wait timeout for key(s): 0",
     "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined."),
    ("ib-async-port-error", "node3:1234:1290 [0] NCCL WARN NET/IB : Got async event : port error",
     "node3:1234:1290 [0] NCCL WARN NET/IB : Got async event : GID table change"),
    ("ib-reg-mr-failed", "node1:77:91 [3] NCCL WARN NET/IB : ibv_reg_mr failed", "NET/IB : ibv_reg_mr_iova2 done"),
    ("peer-access-not-supported", "RuntimeError: CUDA error: peer access is not supported between these two devices",
     "peer access is already enabled"),
]


@pytest.mark.parametrize("sig, line, near", EXCERPTS, ids=[e[0] for e in EXCERPTS])
def test_each_new_signature_fires_on_its_line_and_not_on_a_near_miss(sig: str, line: str, near: str) -> None:
    assert sig in signals_of(line + "\n")
    assert sig not in signals_of(near + "\n")


@pytest.mark.parametrize("log, cause", [
    ("[W ProcessGroupGloo.cpp:715] Warning: Unable to resolve hostname to a (local) address. Using the loopback address as "
     "fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME. (function operator())\n"
     "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error\n",
     "gloo_hostname_loopback"),
    ("gloo::IoException: [../third_party/gloo/gloo/transport/tcp/pair.cc:805] connect [127.0.1.1]:40117: Connection "
     "refused\nAborted (core dumped)\n", "gloo_hostname_loopback"),
    ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:84] ifa != nullptr. Unable to find "
     "address for: ^lo\n", "gloo_socket_ifname_invalid"),
    ("RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] timed out "
     "connecting: SO_ERROR: Connection refused, remote=[10.4.0.9]:50012\n", "gloo_peer_unreachable"),
    ("RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] Timed out "
     "connecting to peer rank 97 after 60000ms\n", "gloo_fullmesh_scale_timeout"),
    ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:510] op.preamble.length <= "
     "op.nbytes. 4194304 vs 2097152\n", "collective_mismatch"),
])
def test_gloo_failures_name_their_mechanism(log: str, cause: str) -> None:
    found = diagnose_text(log).findings
    assert found[0].category == cause, [(f.category, f.score) for f in found]
    assert found[0].test and found[0].fix


def test_a_bare_connectfullmesh_failure_is_low_and_names_the_check() -> None:
    found = diagnose_text("RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/"
                          "pair.cc:144] no error\n").findings
    assert found[0].category.startswith("gloo_") and found[0].confidence == "low"
    assert {f.category for f in found[:3]} == {"gloo_hostname_loopback", "gloo_peer_unreachable",
                                               "gloo_socket_ifname_invalid"}
    assert any("getent hosts" in w for w in found[0].why)


INFO_WITH_WARN = ("gpu-b:77:77 [3] NCCL INFO cudaDriverVersion 12040\n"
                  "gpu-b:77:77 [3] NCCL INFO Bootstrap : Using eth0:10.0.0.3<0>\n"
                  "gpu-b:77:90 [3] NCCL INFO Channel 00/0 : 3[3] -> 0[0] via P2P/IPC\n"
                  "gpu-b:77:90 [3] graph/search.cc:1021 NCCL WARN Could not find a path for pattern 4, falling back\n")


def test_info_output_with_no_known_cause_says_what_was_read(tmp_path: Path) -> None:
    report = diagnose_text(INFO_WITH_WARN)
    assert not report.failed and report.info_output and report.warn_count == 1
    text = render_nccl(report, Style(False))
    assert "No recognisable NCCL failure in the input." in text
    assert "NCCL_DEBUG=INFO for more detail" not in text
    assert "Read NCCL_DEBUG=INFO output" in text and "Could not find a path for pattern 4" in text
    assert report.to_json()["summary"]["message"] == "No recognisable NCCL failure in the input."
    healthy = diagnose_paths([FIXTURES / "healthy_single_node.txt"])
    assert "NCCL 2.21.5" in (healthy.no_failure_note or "")


def test_input_that_is_not_info_output_still_asks_for_it() -> None:
    report = diagnose_text("epoch 3 step 1200 loss 2.01\n")
    assert not report.info_output
    assert report.no_failure_note == "Run the job with NCCL_DEBUG=INFO for more detail."
    assert "NCCL_DEBUG=INFO for more detail" in render_nccl(report, Style(False))


def test_the_bench_reports_calibration_per_side_and_names_no_validation_case(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import nccl_bench

    corpus = tmp_path / "tiny.jsonl"
    cases = [{"id": "shm", "category": "shm_exhausted", "log": (FIXTURES / "shm_exhausted.log").read_text()},
             {"id": "bare", "category": "container_network_isolation",
              "log": "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:518, unhandled system error\n"}]
    corpus.write_text("\n".join(json.dumps(c) for c in cases) + "\n")
    acc = nccl_bench.accuracy([corpus])
    dev = acc["calibration"]["dev"]
    assert dev["high"] == {"n": 1, "right": 1, "precision": 1.0}
    assert dev["low"] == {"n": 1, "right": 0, "precision": 0.0}
    assert acc["calibration"]["validation"]["high"]["n"] == 0
    assert [m["id"] for m in acc["misses"]] == ["bare"] and acc["validation_misses"] == 0
