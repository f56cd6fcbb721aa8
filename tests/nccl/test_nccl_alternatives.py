"""Ranked alternatives: when a log cannot settle the cause, the second and third findings are other causes,
each with what speaks against it and the one check that tells it apart (rules/nccl/categories.json)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from envdoctor.errors import InputError
from envdoctor.nccl import diagnose_text, load_rules
from envdoctor.nccl.rules import default_rules_dir
from envdoctor.present.nccl import render_nccl as render
from envdoctor.present.style import Style
from tests.nccl.test_nccl_corpus import SURVEY, all_cases, cases

CONFIDENCE = ("high", "medium", "low")

BARE_SYSTEM_ERROR = """Traceback (most recent call last):
  File "train.py", line 63, in main
    dist.broadcast(ps, 0)
RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:518, unhandled system error, NCCL version 2.4.8
"""

SHM_FULL = """gpu-a:2143:2561 [1] NCCL INFO Channel 00 : 1[1b000] -> 2[3d000] via SHM/direct/direct
gpu-a:2143:2561 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device
gpu-a:2143:2561 [1] include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-1-2 (size 9637888)
RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.18.1
"""

P2P_OFF_FILLS_SHM = """gpu-a:286:301 [1] NCCL INFO NCCL_P2P_DISABLE set by environment to 1.
gpu-a:286:301 [1] NCCL INFO Channel 00 : 0[c1000] -> 1[c2000] via SHM/direct/direct
gpu-a:286:301 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device
"""

ACS_WITH_GDR = """all_reduce_perf fails once GPU Direct RDMA is used between the nodes
ACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
"""


def test_a_bare_system_error_ranks_real_alternatives_each_with_its_own_check() -> None:
    found = diagnose_text(BARE_SYSTEM_ERROR).findings
    cats = [f.category for f in found]
    assert cats[0] == "shm_exhausted" and found[0].confidence == "low"
    assert len(set(cats[:3])) == 3 and {"container_network_isolation", "socket_ifname_wrong"} <= set(cats[1:3])
    tests = [f.test["run"] for f in found[:3]]
    assert len(set(tests)) == 3 and "/dev/shm" in tests[0]
    for alt in found[1:3]:
        assert any("nothing in the log points to it alone" in a for a in alt.against), alt.against


def test_a_clear_log_keeps_its_cause_first_and_says_what_the_alternatives_miss() -> None:
    found = diagnose_text(SHM_FULL).findings
    assert found[0].category == "shm_exhausted" and found[0].confidence == "high"
    assert len(found) > 1
    for alt in found[1:]:
        assert alt.confidence == "low"
        assert any(a.startswith("does not explain (fits shm_exhausted)") and "/dev/shm" in a for a in alt.against)


def test_an_override_that_moves_traffic_to_shm_outranks_shm_and_the_test_tells_them_apart() -> None:
    found = diagnose_text(P2P_OFF_FILLS_SHM).findings
    assert [f.category for f in found[:2]] == ["nccl_env_misconfig", "shm_exhausted"]
    top, shm = found[0], found[1]
    assert "NCCL_" in top.test["run"] and "ls -la /dev/shm" in shm.test["run"]
    assert any(a.startswith("less likely:") and "/dev/shm" in a for a in shm.against), shm.against


def test_acs_with_gdr_in_play_points_to_the_nic_path_and_keeps_p2p_as_the_alternative() -> None:
    found = diagnose_text(ACS_WITH_GDR).findings
    assert [f.category for f in found[:2]] == ["gdr_acs", "p2p_acs_iommu"]
    assert "NCCL_NET_GDR_LEVEL=0" in found[0].test["run"] and "NCCL_P2P_DISABLE=1" in found[1].test["run"]
    assert found[0].confidence == "medium", "a close runner-up lowers the confidence of the first"
    assert found[1].confidence == "medium", "an alternative is never surer than the cause above it"


def test_no_alternative_is_surer_than_the_cause_above_it_anywhere_in_the_corpus() -> None:
    for case in all_cases():
        found = diagnose_text(case["log"]).findings
        for above, below in zip(found, found[1:]):
            assert CONFIDENCE.index(below.confidence) >= CONFIDENCE.index(above.confidence), case["id"]


def test_every_cause_in_the_corpora_has_a_discriminating_test() -> None:
    categories = load_rules().categories
    # survey_logs.jsonl measures mechanisms envdoctor may not name yet (a survey slug is no NCCL cause)
    survey = {c["id"] for c in cases(SURVEY)}
    for cat in {c["category"] for c in all_cases() if c["id"] not in survey or c["category"] in categories}:
        test = categories[cat].test
        assert test and test["run"].strip() and test["confirms"].strip(), cat


def test_json_and_text_show_the_evidence_against_and_the_check() -> None:
    report = diagnose_text(BARE_SYSTEM_ERROR)
    doc = report.to_json()
    for f in doc["findings"]:
        assert isinstance(f["evidence_against"], list)
        assert set(f["discriminating_test"]) == {"run", "confirms"}
    text = render(report, Style(False))
    assert text.count("   confirm: run `") == 1 and text.count("   tell apart: run `") == len(report.findings) - 1
    assert "   against: nothing in the log points to it alone" in text


def test_several_nccl_builds_named_in_the_log_point_to_a_library_mismatch() -> None:
    two = ("ls -l /usr/lib/x86_64-linux-gnu/libnccl.so.2\n"
           "/usr/lib/x86_64-linux-gnu/libnccl.so.2 -> libnccl.so.2.23.4\n"
           "/opt/nccl/build/lib/libnccl.so.2 -> libnccl.so.2.27.0\n")
    assert diagnose_text(two).findings[0].category == "nccl_library_mismatch"
    one = ("nvidia-nccl-cu12==2.21.5\n"
           "gpu-a:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n")
    assert "nccl_library_mismatch" not in [f.category for f in diagnose_text(one).findings]


@pytest.mark.parametrize("bad", [{"run": "ls"}, {"run": "", "confirms": "x"}, "ls -la /dev/shm",
                                 {"run": "ls", "confirms": "x", "extra": "y"}])
def test_a_malformed_discriminating_test_is_named(tmp_path: Path, bad) -> None:
    d = tmp_path / "rules"
    shutil.copytree(default_rules_dir(), d)
    doc = json.loads((d / "categories.json").read_text())
    doc["categories"][0]["discriminating_test"] = bad
    (d / "categories.json").write_text(json.dumps(doc))
    with pytest.raises(InputError) as info:
        load_rules(d)
    assert "shm_exhausted" in str(info.value) and "discriminating_test" in str(info.value)
