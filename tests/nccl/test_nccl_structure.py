"""Logs as they are: messages split over lines, interleaved ranks, timestamps, and the rank that failed first."""

from __future__ import annotations

from pathlib import Path

from envdoctor.nccl import diagnose_paths, diagnose_text
from envdoctor.nccl.diagnose import continuation, opens
from envdoctor.nccl.facts import timestamp


def test_a_split_message_is_joined_without_the_shared_prefix() -> None:
    assert opens(b"opt.0 [stderr] Last error:") and opens(b"failed to connect to [h]:29500 (system error: ")
    assert not opens(b"Traceback done") and not opens(b"(balanced) text")
    assert continuation("opt.0 [stderr] Last error:", "opt.0 [stderr] Failed to find reverse path") == \
        "Failed to find reverse path"
    assert continuation("[rank0]: Last error:", "[rank0]: Cuda failure 'out of memory'") == "Cuda failure 'out of memory'"
    assert continuation("x (system error: ", "10049 - The requested address is not valid.).") == \
        "10049 - The requested address is not valid.)."


def test_timestamps_of_both_kinds() -> None:
    iso = timestamp("[2024-05-01 10:00:02,250] torch.distributed.elastic: failed")
    glog = timestamp("[rank3]:[E501 10:00:01.500000 77 ProcessGroupNCCL.cpp:1316] boom")
    assert iso is not None and iso.kind == "iso" and iso.text.startswith("2024-05-01 10:00:02")
    assert glog is not None and glog.kind == "glog"
    assert timestamp("step 10 loss 2.3") is None and timestamp("2024-13-45 10:00:00 bad") is None


def test_the_rank_that_failed_first_across_rank_logs(tmp_path: Path) -> None:
    (tmp_path / "rank0.log").write_text(
        "[2024-05-01 10:00:00,000] step 100\n"
        "[2024-05-01 10:10:05,000] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9)\n")
    (tmp_path / "rank1.log").write_text(
        "[2024-05-01 10:00:00,000] step 100\n"
        "[2024-05-01 10:00:04,500] Traceback (most recent call last):\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    report = diagnose_paths([tmp_path])
    first = report.to_json()["facts"]["first_failure"]
    assert first["origin"] == str(tmp_path / "rank1.log")
    assert first["next_origin"] == str(tmp_path / "rank0.log")
    assert first["lead_seconds"] == 600.5 and "out of memory" in first["line"]
    assert first["time"].startswith("2024-05-01 10:00:04")


def test_interleaved_ranks_of_one_file_are_origins_of_their_own() -> None:
    text = ("[rank1]:[E501 10:00:09.000000 77 ProcessGroupNCCL.cpp:1316] [Rank 1] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=9)\n"
            "[rank0]:[E501 10:00:01.000000 76 ProcessGroupNCCL.cpp:1316] [Rank 0] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=9)\n")
    first = diagnose_text(text).to_json()["facts"]["first_failure"]
    assert first["origin"] == "<text> [rank 0]" and first["lead_seconds"] == 8.0


def test_no_first_failure_without_two_timed_origins() -> None:
    assert diagnose_text("torch.OutOfMemoryError: CUDA out of memory.\n").to_json()["facts"]["first_failure"] is None
