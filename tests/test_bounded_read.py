"""Every input file is read as a regular file with a size cap and a deadline; standard input has an idle deadline
(issue 30.11): a FIFO, /dev/zero or a huge file is exit 2 with a clear message, never a hang or a 24 GB read."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from envdoctor.bounded_read import NotReadable, idle_reader, read_bytes, read_text
from tests.conftest import ROOT, run_cli

SNAPSHOT = str(ROOT / "tests" / "fixtures" / "snapshots" / "b200_driver_575.json")
# Run first in a child: the idle deadline of the reader `nccl diagnose -` makes, 0.5 s in place of a minute.
SHORT_IDLE = "import envdoctor.bounded_read as b; b.idle_reader.__defaults__ = (0.5,)"


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return str(path)


def test_only_a_regular_file_is_read(tmp_path, fifo):
    with pytest.raises(NotReadable, match="a FIFO, not a regular file"):
        read_bytes(fifo)
    with pytest.raises(NotReadable, match="a character device"):
        read_bytes("/dev/zero")
    with pytest.raises(NotReadable, match="a directory"):
        read_bytes(tmp_path)
    with pytest.raises(NotReadable, match="NUL"):
        read_bytes(str(tmp_path / "a\0b"))
    (tmp_path / "f").write_text("héllo")
    assert read_text(tmp_path / "f") == "héllo"


def test_a_file_over_the_cap_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(10 * 1024 * 1024)  # sparse: 10 MiB that cost nothing
    with pytest.raises(NotReadable, match="more than the 1 MiB"):
        read_bytes(big, cap=1024 * 1024)


@pytest.mark.parametrize("args", [
    ["check", "--snapshot", "{fifo}"],
    ["check", "--snapshot", "/dev/zero"],
    ["check", "--snapshot", SNAPSHOT, "--baseline", "{fifo}"],
    ["fleet", SNAPSHOT, "{fifo}"],
    ["fix", "--snapshot", "{fifo}", "--dry-run"],
    ["fleet", "collect", "--nnodes", "2", "--node-rank", "1", "--rdzv-endpoint", "127.0.0.1:9", "--timeout", "30",
     "--snapshot", "{fifo}"],
], ids=["snapshot-fifo", "snapshot-dev-zero", "baseline-fifo", "fleet-fifo", "fix-fifo", "fleet-collect-fifo"])
def test_a_special_file_given_as_input_is_exit_2_not_a_hang(args, fifo):
    res = run_cli([a.replace("{fifo}", fifo) for a in args], timeout=60)
    assert res.returncode == 2 and "not a regular file" in res.stderr, res.stderr


def test_a_wheel_index_that_is_a_fifo_is_exit_2(fifo):
    res = run_cli(["check", "--snapshot", SNAPSHOT], env={"ENVDOCTOR_WHEELS_INDEX": fifo}, timeout=60)
    assert res.returncode == 2 and "not a regular file" in res.stderr, res.stderr


def test_standard_input_whose_writer_never_closes_ends_at_the_idle_deadline():
    read_end, write_end = os.pipe()
    os.write(write_end, b"NCCL WARN Cuda failure 'out of memory'\n")
    stream = idle_reader(os.fdopen(read_end, "rb"), idle_s=0.2)
    got = []
    done = threading.Event()

    def drain():
        while True:
            chunk = stream.read(65536)
            if not chunk:
                break
            got.append(chunk)
        done.set()

    threading.Thread(target=drain, daemon=True).start()
    assert done.wait(60), "the read never ended while the writer stayed open"
    os.close(write_end)
    assert b"".join(got).startswith(b"NCCL WARN") and stream.went_idle


def test_nccl_diagnose_dash_behind_a_writer_that_never_closes_finishes():
    code = SHORT_IDLE + "; import sys; from envdoctor.cli import main; sys.exit(main(['nccl', 'diagnose', '-']))"
    writer = subprocess.Popen([sys.executable, "-c", "import sys, time; sys.stdout.write('NCCL INFO x\\n'); "
                               "sys.stdout.flush(); time.sleep(600)"], stdout=subprocess.PIPE)
    try:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        res = subprocess.run([sys.executable, "-c", code], stdin=writer.stdout, capture_output=True, text=True,
                             timeout=120, cwd=ROOT, env=env)
    finally:
        writer.kill()
        writer.wait()
    assert res.returncode in (0, 1), res.stderr
