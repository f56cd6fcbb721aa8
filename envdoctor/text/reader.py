"""`ReportReader`: finds report sections in a stream of text and gathers what they state.

The engine feeds it blocks of whole lines, in order, of a stream of any size. A block is first tested once for the
needles that open a section (a lower-cased substring test, and one precompiled regex for the two listings that have
no distinctive word); only a block that holds one, or that continues an open section, is split into lines and
parsed. So a multi-gigabyte log without a report section costs one `lower()` and a few substring searches per
block, and memory holds only the facts found and the open section's state.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional

from envdoctor.text import collect_env, conda_list, ds_report, nvidia_smi, pip_list, startup_log
from envdoctor.text.facts import MAX_SECTIONS, ReportFacts, Section, Statements
from envdoctor.text.lines import SectionReader, unquote


class LineNeedle:
    """A needle that counts only where its line matches `line`: each occurrence of `literal` (found by a plain
    substring search) has its line matched, so no regex ever scans a whole block."""

    def __init__(self, literal: str, line: str) -> None:
        self.literal = literal
        self.line = re.compile(line)

    def find(self, block: str, start: int) -> int:
        at = block.find(self.literal, start)
        while at >= 0:
            line_start = block.rfind("\n", start, at) + 1 or start
            line_end = block.find("\n", at)
            line_end = len(block) if line_end < 0 else line_end
            if self.line.match(block, line_start, line_end):
                return line_start
            at = block.find(self.literal, line_end)
        return -1

    def in_bytes(self, block: bytes) -> bool:
        """`find(block.decode("utf-8", errors="replace"), 0) >= 0`, decoding only the lines that hold the literal
        (an ASCII literal decodes as itself, and no invalid sequence spans a newline)."""
        literal = self.literal.encode("ascii")
        at = block.find(literal)
        while at >= 0:
            line_start = block.rfind(b"\n", 0, at) + 1
            line_end = block.find(b"\n", at)
            line_end = len(block) if line_end < 0 else line_end
            if self.line.match(block[line_start:line_end].decode("utf-8", errors="replace")):
                return True
            at = block.find(literal, line_end)
        return False


# The cheap test: a few substrings searched in the raw block (each search costs about as much as copying the block,
# so there are few, and no lower-cased copy). Only when one is there are its needles looked for; only when one of
# those is there is the block parsed. Every line that opens a section or states a startup-log fact holds an anchor
# and one of its needles (tests/text/test_stream.py reads every fixture one line per block to hold this).
TRIGGERS = (
    ("ersion", ("pytorch version", "Python version", "Python Version", "vLLM Version", "Version: v",
                LineNeedle("Package", r"[ \t>]*Package[ \t]+Version"),
                LineNeedle("Name", r"[ \t>]*#[ \t]*Name[ \t]+Version"))),
    ("PyTorch", ("PyTorch version", "PyTorch Version", "used to build PyTorch", "(you have")),
    ("==", ("==========", "NVSMI LOG",
            LineNeedle("==", r"[ \t>]*[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?[ \t]*==[ \t]*\d"))),
    ("cuda:", ("Device: cuda:", "**Name:** cuda:")),
    ("VRAM", ("Total VRAM", "VRAM Total")),
    ("NVIDIA-SMI", ("NVIDIA-SMI",)),
    ("DeepSpeed", ("extension op report", "DeepSpeed general environment info")),
    ("Collecting environment", ("Collecting environment information",)),
    ("Python 3", (LineNeedle("Python 3.", r"[ \t>]*Python 3\.\d+\.\d+ \("),)),
    ("ormers", ("xFormers was built for", "xformers: ")),
    ("# packages in", ("# packages in environment",)),
)


def may_hold_section(block: str) -> bool:
    """Whether `block` can hold a section's first line or a startup-log fact: the cheap test every block gets."""
    for anchor, needles in TRIGGERS:
        if anchor in block:
            for needle in needles:
                if (needle in block) if isinstance(needle, str) else needle.find(block, 0) >= 0:
                    return True
    return False


# The same test over the undecoded block: every trigger is ASCII, and an ASCII byte decodes as itself whatever
# surrounds it, so a block that fails it is never decoded.
_BYTE_TRIGGERS = tuple((anchor.encode("ascii"), tuple(n.encode("ascii") if isinstance(n, str) else n for n in needles))
                       for anchor, needles in TRIGGERS)


def may_hold_section_bytes(block: bytes) -> bool:
    """`may_hold_section(block.decode("utf-8", errors="replace"))`, without decoding the block."""
    for anchor, needles in _BYTE_TRIGGERS:
        if anchor in block:
            for needle in needles:
                if (needle in block) if isinstance(needle, bytes) else needle.in_bytes(block):
                    return True
    return False


# The literal each needle holds, lower-cased: a line without one of them opens no section (the evidence engine
# looks for them with its own literals, and hands on whether a block's lines pass may_hold_section_bytes).
TRIGGER_LITERALS = tuple(dict.fromkeys((n if isinstance(n, str) else n.literal).lower()
                                       for _, needles in TRIGGERS for n in needles))


def next_trigger(block: str, start: int, seen: Optional[Dict[object, int]] = None) -> int:
    """Where the first line at or after `start` that may open a section or state a fact begins; -1 if none.

    `seen` (one dict per block, calls with `start` never decreasing): where each anchor and needle was last found,
    so that a block with many trigger lines is searched once per needle, not once per line (the first occurrence
    at or after an earlier start is still the first at or after a later one it does not precede)."""
    best = -1

    def find(needle: object) -> int:
        at = seen.get(needle) if seen is not None else None
        if at is None or 0 <= at < start:
            at = block.find(needle, start) if isinstance(needle, str) else needle.find(block, start)  # type: ignore[union-attr]
            if seen is not None:
                seen[needle] = at
        return at

    for anchor, needles in TRIGGERS:
        if find(anchor) < 0:
            continue
        for needle in needles:
            at = find(needle)
            if at >= 0 and (best < 0 or at < best):
                best = at
    return best if best < 0 else block.rfind("\n", start, best) + 1 or start


class ReportReader:
    """Feed it the blocks of one input in order; `finish` gives what the input states.

    `stats` counts the blocks seen, the blocks parsed line by line, and the lines parsed (tests read it to show
    that a log without sections never reaches the parser)."""

    def __init__(self) -> None:
        self._facts = Statements()
        self._open: Optional[SectionReader] = None
        self._sections: List[Section] = []
        self._startup = startup_log.StartupLog(self._facts)
        self.stats = {"blocks": 0, "parsed_blocks": 0, "lines": 0}

    def feed_bytes(self, block: bytes, first_line: int, may_hold: Optional[bool] = None) -> None:
        """`feed_block` of the block's bytes (decoded with errors="replace"), decoding only a block that may hold a
        section or continues an open one. `may_hold`: whether a line of the block passes may_hold_section_bytes,
        where the caller knows (None: test the block here)."""
        if self._open is None and (not may_hold if may_hold is not None else not may_hold_section_bytes(block)):
            self.stats["blocks"] += 1  # what feed_block does with a block no trigger is in
            return
        self.feed_block(block.decode("utf-8", errors="replace"), first_line)

    def feed_block(self, block: str, first_line: int) -> None:
        """Read `block` (whole lines joined by "\\n"), whose first line is line `first_line` of the input."""
        self.stats["blocks"] += 1
        pos, no, size = 0, first_line, len(block)
        seen: Dict[object, int] = {}
        while pos < size:
            if self._open is None:  # no section open: go straight to the next line that may open one
                line_start = next_trigger(block, pos, seen)
                if line_start < 0:
                    return
                if pos == 0:
                    self.stats["parsed_blocks"] += 1
                no += block.count("\n", pos, line_start)
                pos = line_start
            elif pos == 0:
                self.stats["parsed_blocks"] += 1
            end = block.find("\n", pos)
            if end < 0:
                end = size
            self._line(unquote(block[pos:end]), no)
            pos, no = end + 1, no + 1

    def _line(self, line: str, no: int) -> None:
        self.stats["lines"] += 1
        if self._open is not None:
            if self._open.feed(line, no):
                return
            self._close()
        opened = self._opener(line, no)
        if opened is not None:
            self._open = opened
        else:
            self._startup.line(line, no)

    def _opener(self, line: str, no: int) -> Optional[SectionReader]:
        f = self._facts
        if collect_env.opens(line):
            return collect_env.CollectEnv(f, no).first(line, no)
        if collect_env.opens_banner(line):
            reader = collect_env.CollectEnv(f, no)
            reader.tentative = True
            return reader
        for opens, cls in _OPENERS:
            if opens(line):
                reader = cls(f, no)
                reader.feed(line, no)
                return reader
        return None

    def _close(self) -> None:
        section = self._open.close() if self._open is not None else None
        if section is not None:
            if len(self._sections) < MAX_SECTIONS:
                self._sections.append(section)
            else:
                self._facts.limit(f"more than {MAX_SECTIONS} sections: the rest not listed")
        self._open = None

    def finish(self) -> ReportFacts:
        """What the input stated; the reader is spent after it."""
        self._close()
        self._startup.flush()
        sections = sorted(self._sections + self._startup.sections, key=lambda s: (s.start, s.end))
        return self._facts.facts(sections)


_OPENERS = (
    (ds_report.opens, ds_report.DsReport),
    (nvidia_smi.opens_table, nvidia_smi.SmiTable),
    (nvidia_smi.opens_query, nvidia_smi.SmiQuery),
    (pip_list.opens_list, pip_list.PipList),
    (conda_list.opens, conda_list.CondaList),
    (pip_list.opens_freeze, pip_list.PipFreeze),
)


def read_text(text: str, first_line: int = 1) -> ReportFacts:
    """What one whole text states (one block)."""
    reader = ReportReader()
    reader.feed_block(text, first_line)
    return reader.finish()
