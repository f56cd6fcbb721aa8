"""`conda list`: "# packages in environment at PATH:" and rows "name  version  build  [features]  [channel]".

The rows become `python.conda_packages` (whole: conda lists the whole environment). Rows from the `pypi` channel
are what pip installed: those are also `python.packages`, partial there (the conda-installed ones carry conda's
names, which are not always the distribution's: `pytorch` is the `torch` distribution); old conda marks them with
the build `<pip>`. A row cut short (a name without its build) ends the listing and makes it partial.
"""

from __future__ import annotations

import re
from typing import Optional

from envdoctor.text.facts import Section, Statements
from envdoctor.text.lines import SectionReader, extension_of_package

KIND = "conda_list"
PYPI_WHY = "conda list names pip's packages only where pip installed them"
_HEADER = re.compile(r"^\s*# packages in environment at\s+(.+?):?\s*$")
_COLUMNS = re.compile(r"^\s*#\s*Name\s+Version\s+Build(\s+Channel)?\s*$")
_ROW = re.compile(r"^\s*([A-Za-z0-9_][A-Za-z0-9._-]*)\s+(\d\S*)\s+(\S+)((?:\s+\S+)*)\s*$")
_CUT = re.compile(r"^\s*[A-Za-z0-9_][A-Za-z0-9._-]*(\s+\S+)?\s*$")  # a row without its build: cut short
CUT_WHY = "the pasted conda list is cut short"


def opens(line: str) -> bool:
    return bool(_HEADER.match(line) or _COLUMNS.match(line))


class CondaList(SectionReader):
    kind = KIND

    def __init__(self, facts: Statements, start: int) -> None:
        super().__init__(facts, start)
        self.rows = 0
        self.cut = False

    def feed(self, line: str, no: int) -> bool:
        if no == self.start or _COLUMNS.match(line) or (not self.rows and (not line.strip() or line.strip() == "#")):
            self.end = no if line.strip() else self.end
            return True
        m = _ROW.match(line)
        if not m:
            self.cut = self.cut or bool(self.rows and _CUT.match(line))
            return False
        self.rows += 1
        self.end = no
        name, version, build, rest = m.groups()
        channel = rest.split()[-1] if rest.split() else ""
        self.facts.package("python.conda_packages", name, version, line, no)
        if channel == "pypi" or build.startswith("pypi") or build == "<pip>":
            self.facts.package("python.packages", name, version, line, no)
            self.facts.partial("python.packages", PYPI_WHY)
            extension_of_package(self.facts, name, version, line, no)
        return True

    def close(self) -> Optional[Section]:
        if not self.rows:
            return None
        if self.cut:
            self.facts.partial("python.conda_packages", CUT_WHY)
        else:
            self.facts.mark_whole("python.conda_packages")
        return super().close()
