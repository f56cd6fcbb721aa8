"""What `nccl diagnose` reads: UTF-16 and BOM logs, directories of rank logs, thousands of files under a low
open-file limit, FIFOs with and without a writer; special files are refused (exit 2)."""

from __future__ import annotations

import codecs
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envdoctor.errors import InputError
from envdoctor.nccl import diagnose_paths
from envdoctor.nccl.reader import sniff_encoding
from tests.nccl.helpers import FIXTURES, ROOT

CORPUS = ROOT / "tests" / "nccl" / "corpus" / "dev.jsonl"


def corpus_log(case_id: str) -> str:
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        if line.strip() and json.loads(line)["id"] == case_id:
            return json.loads(line)["log"]
    raise KeyError(case_id)


def cli(*args: str, timeout: int = 60, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envdoctor", "nccl", "diagnose", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, **kw)


@pytest.mark.parametrize("encoding,bom", [
    ("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", codecs.BOM_UTF16_BE), ("utf-16-le", b""),
    ("utf-8", codecs.BOM_UTF8)])
def test_a_real_shm_failure_written_as_utf16_or_with_a_bom_is_diagnosed(tmp_path: Path, encoding: str, bom: bytes) -> None:
    log = corpus_log("shm-004")  # NVIDIA/nccl#525, as PowerShell's Out-File would save it
    path = tmp_path / "rank0.log"
    path.write_bytes(bom + log.replace("\n", "\r\n").encode(encoding))
    report = diagnose_paths([path])
    assert report.findings[0].category == "shm_exhausted"
    assert all("\x00" not in e and "\ufeff" not in e for e in report.findings[0].evidence)


def test_binary_garbage_is_not_taken_for_utf16() -> None:
    assert sniff_encoding(b"\x00\xff" * 2000) == (None, 0)
    assert sniff_encoding("NCCL WARN x\n".encode("utf-16-le") * 10) == ("utf-16-le", 0)


def test_a_directory_of_rank_logs(tmp_path: Path) -> None:
    run = tmp_path / "job" / "attempt_0"
    for rank in range(4):
        (run / str(rank)).mkdir(parents=True)
        (run / str(rank) / "stderr.log").write_text(f"[rank{rank}]: step 10 loss 2.3\n")
    shutil.copy(FIXTURES / "shm_exhausted.log", run / "2" / "stderr.log")
    (run / ".hidden.log").write_text("Duplicate GPU detected\n")
    report = diagnose_paths([tmp_path / "job"])
    assert report.findings[0].category == "shm_exhausted"
    assert report.inputs == [str(run / str(r) / "stderr.log") for r in range(4)]
    assert report.findings[0].locations[0].startswith(str(run / "2" / "stderr.log") + ":")
    with pytest.raises(InputError, match="is a directory with no log files"):
        diagnose_paths([_empty(tmp_path)])


def _empty(tmp_path: Path) -> Path:
    d = tmp_path / "empty"
    d.mkdir()
    return d


def test_1500_rank_logs_under_an_open_file_limit_of_1024(tmp_path: Path) -> None:
    logs = tmp_path / "ranks"
    logs.mkdir()
    for rank in range(1500):
        (logs / f"rank{rank:04d}.log").write_text(f"h{rank}:1:1 [0] NCCL INFO comm 0x1 rank {rank} nRanks 1500\n")
    (logs / "rank0999.log").write_text((FIXTURES / "port_in_use.log").read_text())
    code = ("import resource, sys, json; resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024)); "
            "from envdoctor.nccl import diagnose_paths; import glob; "
            "a = diagnose_paths([sys.argv[1]]); b = diagnose_paths(sorted(glob.glob(sys.argv[1] + '/*.log'))); "
            "print(json.dumps([len(a.inputs), a.findings[0].category, len(b.inputs), b.findings[0].category]))")
    out = subprocess.run([sys.executable, "-c", code, str(logs)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout) == [1500, "port_in_use", 1500, "port_in_use"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_a_fifo_without_a_writer_reads_as_empty_instead_of_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "job.fifo"
    os.mkfifo(fifo)
    out = cli(str(fifo), "--json", timeout=60)  # blocking on it would run into the timeout
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["summary"]["lines"] == 0


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash for process substitution")
def test_a_pipe_with_a_writer_is_read() -> None:
    cmd = f"{sys.executable} -m envdoctor nccl diagnose --json <(cat {FIXTURES / 'shm_exhausted.log'})"
    out = subprocess.run(["bash", "-c", cmd], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, out.stderr
    assert json.loads(out.stdout)["findings"][0]["category"] == "shm_exhausted"


def test_devices_are_refused_with_exit_2() -> None:
    out = cli(os.devnull, str(FIXTURES / "shm_exhausted.log"))
    assert out.returncode == 2 and out.stdout == ""
    assert f"{os.devnull}: not a log file" in out.stderr
