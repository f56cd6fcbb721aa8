"""Reading a log with bounded memory, whatever it holds.

Input is read in fixed-size binary chunks and handed on as blocks of whole lines (bytes). Only the
lines worth a look are decoded, with errors="replace" (binary garbage becomes U+FFFD). A line longer
than the cap is cut to its first `max_line` bytes and the rest of it is skipped, so one 1 GB line costs
no more memory than a short one. A log written as UTF-16 (a byte-order mark, or NULs in every other byte
as Windows tools write it) is turned into UTF-8 chunk by chunk; a UTF-8 byte-order mark is dropped.
"""

from __future__ import annotations

import codecs
from typing import BinaryIO, Iterator, List, Optional, Tuple

CHUNK_BYTES = 1 << 20
MAX_LINE = 8192


def iter_blocks(stream: BinaryIO, max_line: int = MAX_LINE, chunk_bytes: int = CHUNK_BYTES,
                cuts: Optional[List[int]] = None) -> Iterator[Tuple[int, bytes]]:
    """Yield (number of the block's first line, block): whole lines joined by b"\\n", no final newline.

    Memory is bounded by chunk_bytes plus max_line bytes of an unfinished line. A line longer than max_line is
    handed on as its first max_line bytes; with `cuts` (a list), its number is appended there and the line is
    handed on as its head and its tail joined by CUT_MARK, no longer than max_line, so that what a failure
    prints at the end of a 200 MB line is read too.
    """
    if cuts is not None:
        for first, block, _lines in blocks_keeping_tails(stream, max_line, chunk_bytes, cuts):
            yield first, block
        return
    lineno = 1
    pending = b""  # the start of a line whose end has not been read yet
    skipping = False  # inside an over-long line whose head was already handed on
    for chunk in utf8_chunks(stream, chunk_bytes):
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


CUT_MARK = b" [... line cut by envdoctor ...] "


def blocks_keeping_tails(stream: BinaryIO, max_line: int, chunk_bytes: int, cuts: List[int]
                         ) -> Iterator[Tuple[int, bytes, Optional[List[bytes]]]]:
    """iter_blocks with `cuts`: an over-long line becomes head + CUT_MARK + tail (max_line bytes in all). Each block
    comes with its lines where they were split to look for long ones (None: not split), none longer than max_line."""
    half = max(1, (max_line - len(CUT_MARK)) // 2)
    for first, block in _long_lines_whole(stream, max_line, chunk_bytes, cuts, half):
        if len(block) <= max_line:
            yield first, block, None
            continue
        lines = block.split(b"\n")
        if max(map(len, lines)) <= max_line:
            yield first, block, lines
            continue
        for i, line in enumerate(lines):
            if len(line) > max_line:
                cuts.append(first + i)
                lines[i] = line[:half] + CUT_MARK + line[-half:]
        yield first, b"\n".join(lines), lines


def _long_lines_whole(stream: BinaryIO, max_line: int, chunk_bytes: int, cuts: List[int], half: int
                      ) -> Iterator[Tuple[int, bytes]]:
    """The blocks, a line that outgrows the pending buffer already cut (head + CUT_MARK + tail); lines within one
    chunk come whole (the caller cuts them)."""
    lineno = 1
    pending = b""
    head: Optional[bytes] = None  # the head of the over-long line being read (None: not in one)
    tail = b""

    def cut_line() -> bytes:
        cuts.append(lineno)
        return (head or b"")[:half] + CUT_MARK + tail[-half:]

    for chunk in utf8_chunks(stream, chunk_bytes):
        start = 0
        if head is not None:
            nl = chunk.find(b"\n")
            if nl < 0:
                tail = (tail + chunk)[-half:]
                continue
            tail = (tail + chunk[:nl])[-half:]
            line = cut_line()
            head, tail = None, b""
            start = nl + 1
            last_nl = chunk.rfind(b"\n", start)
            if last_nl < 0:
                yield lineno, line
                lineno += 1
                pending = chunk[start:]
            else:
                body = chunk[start:last_nl]
                yield lineno, line + b"\n" + body
                lineno += body.count(b"\n") + 2
                pending = chunk[last_nl + 1:]
        else:
            last_nl = chunk.rfind(b"\n", start)
            if last_nl < 0:
                pending += chunk[start:]
            else:
                body = pending + chunk[start:last_nl] if pending else chunk[start:last_nl]
                pending = chunk[last_nl + 1:]
                yield lineno, body
                lineno += body.count(b"\n") + 1
        if head is None and len(pending) > max_line:
            head, tail = pending[:half], pending[-half:]
            pending = b""
    if head is not None:
        yield lineno, cut_line()
    elif pending:
        yield lineno, pending


def sniff_encoding(head: bytes) -> Tuple[Optional[str], int]:
    """(codec to turn the input into UTF-8, or None when it is UTF-8 already; bytes of byte-order mark to skip)."""
    if head.startswith(codecs.BOM_UTF8):
        return None, 3
    if head.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le", 2
    if head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be", 2
    pairs = len(head) // 2
    if pairs >= 8:
        even, odd = head[0:pairs * 2:2], head[1:pairs * 2:2]
        if odd.count(0) >= 0.9 * pairs and _texty(even, pairs):
            return "utf-16-le", 0
        if even.count(0) >= 0.9 * pairs and _texty(odd, pairs):
            return "utf-16-be", 0
    return None, 0


_NOT_TEXT = bytes(b for b in range(256) if not (32 <= b < 127 or b in b"\t\n\r"))


def _texty(low_bytes: bytes, pairs: int) -> bool:
    """Are these the low bytes of UTF-16 text (mostly printable ASCII), not binary garbage?"""
    return len(low_bytes.translate(None, _NOT_TEXT)) >= 0.9 * pairs


def utf8_chunks(stream: BinaryIO, chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """The stream's bytes in chunks of about chunk_bytes, as UTF-8 whatever the log's encoding."""
    head = stream.read(chunk_bytes)
    encoding, skip = sniff_encoding(head[:4096])
    chunk = head[skip:]
    if encoding is None:
        while head:
            if chunk:
                yield chunk
            head = chunk = stream.read(chunk_bytes)
        return
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    while head:
        if chunk:
            yield decoder.decode(chunk).encode("utf-8", errors="replace")
        head = chunk = stream.read(chunk_bytes)
    tail = decoder.decode(b"", final=True)
    if tail:
        yield tail.encode("utf-8", errors="replace")


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
