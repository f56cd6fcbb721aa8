"""Feeding the report reader undecoded blocks (what `envdoctor diagnose` does): the same facts as feeding decoded
text, at any block boundaries, with invalid UTF-8 about; a block that holds no trigger is never decoded."""

from __future__ import annotations

import random

from envdoctor.text import ReportReader
from envdoctor.text.reader import TRIGGERS, may_hold_section, may_hold_section_bytes, next_trigger
from tests.text.helpers import FIXTURES


def _facts(blocks, as_bytes):
    reader = ReportReader()
    for block, first in blocks:
        if as_bytes:
            reader.feed_bytes(block, first)
        else:
            reader.feed_block(block.decode("utf-8", errors="replace"), first)
    return reader.finish(), reader.stats


def _cut(lines, rng, n):
    cuts = sorted(set(rng.sample(range(1, len(lines)), min(n, len(lines) - 1)))) + [len(lines)]
    out, start = [], 0
    for cut in cuts:
        if cut > start:
            out.append((b"\n".join(lines[start:cut]), start + 1))
            start = cut
    return out


def test_every_fixture_read_from_bytes_states_the_same() -> None:
    rng = random.Random(29)
    for path in sorted(FIXTURES.glob("*.txt")):
        lines = path.read_bytes().split(b"\n")
        if len(lines) < 2:
            continue
        for blocks in ([(b"\n".join(lines), 1)], _cut(lines, rng, 5), _cut(lines, rng, len(lines))):
            text, text_stats = _facts(blocks, False)
            raw, raw_stats = _facts(blocks, True)
            assert raw.sections == text.sections and raw.doc == text.doc, path.name
            assert raw.evidence == text.evidence and raw.whole == text.whole, path.name
            assert raw_stats == text_stats, path.name


def test_invalid_utf8_around_a_trigger_still_opens_it() -> None:
    body = (b"\xff\xfe garbage \xe2\x96\n\xc3PyTorch version: 2.3.0+cu121\xe2\x96\nIs debug build: False\n"
            b"CUDA used to build PyTorch: 12.1\n\x80\x81")
    lines = body.split(b"\n")
    rng = random.Random(3)
    want, _ = _facts([(body, 1)], False)
    assert want.sections  # the test means something
    for blocks in ([(body, 1)], _cut(lines, rng, 2), _cut(lines, rng, len(lines))):
        got, _ = _facts(blocks, True)
        assert got.sections == want.sections and got.doc == want.doc


def test_the_byte_test_says_what_the_text_test_says() -> None:
    assert all(a.isascii() and all((n if isinstance(n, str) else n.literal).isascii() for n in ns) for a, ns in TRIGGERS)
    rng = random.Random(7)
    pieces = [a for a, _ in TRIGGERS] + [n if isinstance(n, str) else n.literal for _, ns in TRIGGERS for n in ns]
    pieces += ["Package   Version", "# Name  Version", "torch==2.3.0", "Python 3.10.12 (main", "vllm nccl==2.28",
               "\xff", "█", "\n", "x"]
    for _ in range(3000):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 4)))
        assert may_hold_section_bytes(text.encode("utf-8")) == may_hold_section(text), text


def test_a_block_without_triggers_is_not_decoded(monkeypatch) -> None:
    reader = ReportReader()
    monkeypatch.setattr(reader, "feed_block", lambda *_: (_ for _ in ()).throw(AssertionError("decoded")))
    reader.feed_bytes(b"INFO step=1 loss=0.5\n" * 1000, 1)
    assert reader.stats["blocks"] == 1


def test_next_trigger_remembering_what_it_found_finds_the_same(monkeypatch) -> None:
    rng = random.Random(11)
    lines = ["step 1 loss 0.5", "torch==2.3.0", "Package    Version", "PyTorch version: 2.1", "Python version: 3.10",
             "==========", "nothing", "NVIDIA-SMI 550.54", "Version: v0.4", "# Name   Version"]
    for _ in range(200):
        block = "\n".join(rng.choice(lines) for _ in range(rng.randint(1, 40)))
        seen: dict = {}
        pos = 0
        while pos < len(block):
            want = next_trigger(block, pos)
            assert next_trigger(block, pos, seen) == want
            if want < 0:
                break
            end = block.find("\n", want)
            pos = len(block) if end < 0 else end + 1

