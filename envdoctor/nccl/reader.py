"""Reading a log with bounded memory, whatever it holds.

Input is read in fixed-size binary chunks and handed on as blocks of whole lines (bytes). Only the
lines worth a look are decoded, with errors="replace" (binary garbage becomes U+FFFD). A line longer
than the cap is cut to its first `max_line` bytes and the rest of it is skipped, so one 1 GB line costs
no more memory than a short one.
"""

from __future__ import annotations

from typing import BinaryIO, Iterator, Tuple

CHUNK_BYTES = 1 << 20
MAX_LINE = 8192


def iter_blocks(stream: BinaryIO, max_line: int = MAX_LINE, chunk_bytes: int = CHUNK_BYTES) -> Iterator[Tuple[int, bytes]]:
    """Yield (number of the block's first line, block): whole lines joined by b"\\n", no final newline.

    Memory is bounded by chunk_bytes plus max_line bytes of an unfinished line.
    """
    lineno = 1
    pending = b""  # the start of a line whose end has not been read yet
    skipping = False  # inside an over-long line whose head was already handed on
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
            yield lineno, body
            lineno += body.count(b"\n") + 1
        if len(pending) > max_line:
            yield lineno, pending[:max_line]
            lineno += 1
            pending = b""
            skipping = True
    if pending:
        yield lineno, pending


def decode_line(raw: bytes, max_line: int = MAX_LINE) -> str:
    """One line as text: invalid UTF-8 replaced, NULs dropped, a bare CR (progress bars) made a space."""
    text = raw[:max_line].decode("utf-8", errors="replace")
    if "\r" in text:
        text = text.rstrip("\r").replace("\r", " ")
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text


def iter_lines(stream: BinaryIO, max_line: int = MAX_LINE, chunk_bytes: int = CHUNK_BYTES) -> Iterator[Tuple[int, str]]:
    """Yield (line number starting at 1, decoded text without the newline, at most max_line bytes of it)."""
    for first, block in iter_blocks(stream, max_line, chunk_bytes):
        for i, raw in enumerate(block.split(b"\n")):
            yield first + i, decode_line(raw, max_line)
