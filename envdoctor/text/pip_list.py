"""`pip list` (two columns under a "Package  Version" header) and `pip freeze` (name==version, name @ url).

Both list every distribution of the environment, so a complete one makes `python.packages` whole: a package it
does not name is not installed. A listing is complete when it has its header (pip list) or at least three rows
(pip freeze) and every row reads as a row; a row cut short (a name with no version) or a "..." makes it partial.
A CUDA extension it names (flash-attn, xformers, vllm, ...) is also stated as an installed extension.
"""

from __future__ import annotations

import re
from typing import Optional

from envdoctor.text.facts import Section, Statements
from envdoctor.text.lines import SectionReader, extension_of_package

PIP_LIST, PIP_FREEZE = "pip_list", "pip_freeze"
CUT_WHY = "the pasted package list is cut short"
_HEADER = re.compile(r"^\s*Package\s+Version(\s+(Editable project location|Location|Installer))*\s*$")
_RULE = re.compile(r"^\s*-{3,}(\s+-{3,})+\s*$")
_ROW = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s+(\d[^\s]*)(\s+\S.*)?$")
_NAME_ONLY = re.compile(r"^\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*$")
FREEZE_ROW = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(===?)\s*(\d\S*)\s*$")
_FREEZE_URL = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s+@\s+\S+\s*$")
_EDITABLE = re.compile(r"^\s*-e\s+\S+")
MIN_FREEZE_ROWS = 3


def opens_list(line: str) -> bool:
    return bool(_HEADER.match(line))


def opens_freeze(line: str) -> bool:
    return bool(FREEZE_ROW.match(line))


class PipList(SectionReader):
    kind = PIP_LIST

    def __init__(self, facts: Statements, start: int) -> None:
        super().__init__(facts, start)
        self.ruled = False
        self.rows = 0
        self.cut = False

    def feed(self, line: str, no: int) -> bool:
        if no == self.start:
            return True
        if not self.ruled:
            if _RULE.match(line):
                self.ruled = True
                self.end = no
                return True
            return False
        m = _ROW.match(line)
        if m:
            self.rows += 1
            self.end = no
            name, version = m.group(1), m.group(2)
            self.facts.package("python.packages", name, version, line, no)
            extension_of_package(self.facts, name, version, line, no)
            return True
        if _NAME_ONLY.match(line) or line.strip() in ("...", "…"):
            self.cut = True
        return False

    def close(self) -> Optional[Section]:
        if not self.ruled:
            return None
        if self.rows and not self.cut:
            self.facts.mark_whole("python.packages")
        elif self.rows:
            self.facts.partial("python.packages", CUT_WHY)
        return super().close() if self.rows else None


class PipFreeze(SectionReader):
    """Rows are held until the third one confirms a listing (one "torch==2.1.0" line in a log is none)."""

    kind = PIP_FREEZE

    def __init__(self, facts: Statements, start: int) -> None:
        super().__init__(facts, start)
        self.held: list = []
        self.rows = 0
        self.cut = False

    def feed(self, line: str, no: int) -> bool:
        m = FREEZE_ROW.match(line)
        if m:
            self._row(m.group(1), m.group(3), line, no)
            return True
        url = _FREEZE_URL.match(line)
        if url or _EDITABLE.match(line):
            self.end = no
            return True  # installed from a URL or editable: installed, version not stated
        if line.strip() in ("...", "…") or _NAME_ONLY.match(line):
            self.cut = True
        return False

    def _row(self, name: str, version: str, line: str, no: int) -> None:
        self.rows += 1
        self.end = no
        if self.rows < MIN_FREEZE_ROWS:
            self.held.append((name, version, line, no))
            return
        for held in self.held:
            self._commit(*held)
        self.held = []
        self._commit(name, version, line, no)

    def _commit(self, name: str, version: str, line: str, no: int) -> None:
        self.facts.package("python.packages", name, version, line, no)
        extension_of_package(self.facts, name, version, line, no)

    def close(self) -> Optional[Section]:
        if self.rows < MIN_FREEZE_ROWS:
            return None
        if self.cut:
            self.facts.partial("python.packages", CUT_WHY)
        else:
            self.facts.mark_whole("python.packages")
        return super().close()
