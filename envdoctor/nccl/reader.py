"""Reading a log with bounded memory, whatever it holds.

Input is read in fixed-size binary chunks, decoded with errors="replace" (binary garbage becomes U+FFFD)
and handed on as blocks of whole lines. A line longer than the cap is cut to its first `max_line`
characters and the rest of it is skipped, so one 1 GB line costs no more memory than a short one.
"""

from __future__ import annotations

from typing import BinaryIO, Iterator, Tuple

CHUNK_BYTES = 1 << 20
MAX_LINE = 8192


def iter_blocks(stream: BinaryIO, max_line: int = MAX_LINE, chunk_bytes: int = CHUNK_BYTES) -> Iterator[Tuple[int, str]]:
    """Yield (number of the block's first line, block text): whole lines joined by "\\n", no final newline.

    Memory is bounded by chunk_bytes plus the line cap (max_line * 4 bytes of undecoded text).
    """
    lineno = 1
    pending = b""  # the start of a line whose end has not been read yet
    skipping = False  # inside an over-long line whose head was already handed on
    cap_bytes = max_line * 4  # a UTF-8 character is at most 4 bytes
    while True:
        chunk = stream.read(chunk_bytes)
        if not chunk:
            break
        start = 0
        if skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                continue
            skipping = False
            start = nl + 1
        last_nl = chunk.rfind(b"\n", start)
        if last_nl < 0:
            pending += chunk[start:]
        else:
            body = pending + chunk[start:last_nl] if pending else chunk[start:last_nl]
            pending = chunk[last_nl + 1:]
            text = _decode(body)
            yield lineno, text
            lineno += text.count("\n") + 1
        if len(pending) > cap_bytes:
            yield lineno, _decode(pending[:cap_bytes])[:max_line]
            lineno += 1
            pending = b""
            skipping = True
    if pending:
        yield lineno, _decode(pending)


def iter_lines(stream: BinaryIO, max_line: int = MAX_LINE, chunk_bytes: int = CHUNK_BYTES) -> Iterator[Tuple[int, str]]:
    """Yield (line number starting at 1, text without the newline, at most max_line characters)."""
    for first, block in iter_blocks(stream, max_line, chunk_bytes):
        for i, line in enumerate(block.split("\n")):
            yield first + i, line[:max_line]


def _decode(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", " ")  # a bare CR (progress bars) keeps file line numbers
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text
