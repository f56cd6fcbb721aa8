"""The reader: whatever the bytes, lines come out, and memory stays bounded."""

from __future__ import annotations

import io
import tracemalloc

import pytest

from envdoctor.nccl import diagnose_streams, diagnose_text
from envdoctor.nccl.reader import iter_lines


def lines(data: bytes, **kw):
    return list(iter_lines(io.BytesIO(data), **kw))


def test_line_numbers_crlf_and_missing_final_newline() -> None:
    assert lines(b"a\r\nb\n\nc") == [(1, "a"), (2, "b"), (3, ""), (4, "c")]


def test_binary_garbage_is_replaced_not_fatal() -> None:
    out = lines(b"ok\n\xff\xfe\x00\x9c garbage \x00\nnext\n")
    assert out[0] == (1, "ok") and out[2] == (3, "next")
    assert "\ufffd" in out[1][1] and "\x00" not in out[1][1]


def test_bare_carriage_returns_keep_line_numbers() -> None:
    assert lines(b"10%\r50%\r100%\nafter\n") == [(1, "10% 50% 100%"), (2, "after")]


def test_overlong_lines_are_cut_and_numbering_continues() -> None:
    data = b"first\n" + b"x" * 100_000 + b"\nlast\n"
    out = lines(data, max_line=1000, chunk_bytes=4096)
    assert [n for n, _ in out] == [1, 2, 3]
    assert len(out[1][1]) == 1000 and out[2][1] == "last"


def test_chunk_boundaries_do_not_split_or_merge_lines() -> None:
    data = b"".join(b"line %d\n" % i for i in range(5000))
    assert lines(data, chunk_bytes=7) == [(i + 1, f"line {i}") for i in range(5000)]


def test_signature_found_after_binary_and_long_lines() -> None:
    data = (b"\x00\xff" * 5000 + b"\n" + b"y" * 3_000_000 + b"\n"
            + b"n:1:2 [0] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device\n")
    report = diagnose_streams([("blob.log", io.BytesIO(data))])
    assert report.findings[0].category == "shm_exhausted"
    assert report.findings[0].locations == ["blob.log:3"]


def test_signature_split_by_a_long_line_cap_is_not_invented() -> None:
    assert diagnose_text("z" * 20000 + " Duplicate GPU detected").findings == []


class GeneratedLog(io.RawIOBase):
    """A log produced on the fly: the test's own input never sits in memory."""

    def __init__(self, total: int) -> None:
        self.left = total
        block = []
        for i in range(2000):
            block.append(b"[2026-01-01 10:00:00] INFO step %d loss 2.%03d lr 1e-4 tokens/s 12345\n" % (i, i % 1000))
            if i % 50 == 0:
                block.append(b"node1:1234:5678 [%d] NCCL INFO Channel %02d/0 : 0[0] -> 1[1] via P2P/IPC/read\n" % (i % 8, i % 32))
            if i % 500 == 0:
                block.append(b"x" * 20000 + b"\x00\xff\n")
        self.block = b"".join(block)
        self.tail = b"n:1:2 [0] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device\n"

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        if self.left <= 0:
            if not self.tail:
                return 0
            data, self.tail = self.tail, b""
        else:
            data = self.block[: min(len(buf), self.left)]
            self.left -= len(data)
        n = min(len(buf), len(data))
        buf[:n] = data[:n]
        return n


@pytest.mark.slow
def test_50_mb_log_streams_in_bounded_memory() -> None:
    size = 50 * 1024 * 1024
    tracemalloc.start()
    try:
        report = diagnose_streams([("big.log", io.BufferedReader(GeneratedLog(size), 1 << 16))])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.bytes >= size
    assert report.findings[0].category == "shm_exhausted"
    assert peak < 16 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB for a 50 MiB log"
