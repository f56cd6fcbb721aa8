"""Shared by the report-reader tests: the fixtures (real posted texts from dev-side threads) and reading them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Tuple

from envdoctor.text import ReportFacts, ReportReader

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SOURCES = json.loads((FIXTURES / "SOURCES.json").read_text(encoding="utf-8"))


def text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def read(name_or_text: str, blocks: List[Tuple[int, int]] = ()) -> ReportFacts:
    """Read a fixture (or a text) in one block, or in the given (first, last) line ranges."""
    body = text(name_or_text) if name_or_text.endswith(".txt") and "\n" not in name_or_text else name_or_text
    lines = body.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    reader = ReportReader()
    for first, last in (blocks or [(1, len(lines))]):
        reader.feed_block("\n".join(lines[first - 1:last]), first)
    return reader.finish()


def line_of(name: str, needle: str) -> int:
    """The number of the first line of fixture `name` holding `needle`."""
    for no, line in enumerate(text(name).split("\n"), 1):
        if needle in line:
            return no
    raise AssertionError(f"{needle!r} not in {name}")
