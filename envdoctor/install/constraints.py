"""The user's pip constraints (PIP_CONSTRAINT, `constraint` in a pip configuration file) and the planned pins
they exclude. pip honours them in the download; a pin they exclude is named before anything is fetched,
instead of pip's ResolutionImpossible report."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import List, Mapping, Optional, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envdoctor.bounded_read import read_text
from envdoctor.processes import run_command

_CONFIG_LINE = re.compile(r"^(?P<where>[\w:.-]*?)\.?constraint='(?P<value>[^']*)'$")


@dataclass(frozen=True)
class Constraint:
    requirement: Requirement
    source: str  # "PIP_CONSTRAINT (/path/c.txt)", "pip configuration global.constraint (/etc/...)"

    def __str__(self) -> str:
        return str(self.requirement)


def configured_files(python: str, environ: Mapping[str, str], timeout: float = 30.0) -> List[Tuple[str, str]]:
    """(where, path or URL) of every constraints file pip in `python` reads, PIP_CONSTRAINT included
    (`pip config list` names it `:env:.constraint`). Nothing when pip cannot say."""
    res = run_command([python, "-m", "pip", "config", "list"], timeout, env=dict(environ))
    out: List[Tuple[str, str]] = []
    for line in res.stdout.splitlines() if res.ok else []:
        m = _CONFIG_LINE.match(line.strip())
        if not m:
            continue
        where = "PIP_CONSTRAINT" if m["where"].startswith(":env:") else f"pip configuration {m['where']}.constraint"
        out += [(where, v) for v in m["value"].split()]
    return out


def read_constraints(files: List[Tuple[str, str]], depth: int = 3) -> Tuple[List[Constraint], List[str]]:
    """The requirements in these files (nested -c/-r files too), and why a local file could not be read (pip
    would stop on it too). A remote URL is left to pip."""
    out: List[Constraint] = []
    problems: List[str] = []
    for where, name in files:
        if "://" in name and not name.startswith("file://"):
            continue
        path = Path(name[len("file://"):] if name.startswith("file://") else name)
        try:
            text = read_text(path, errors="replace")
        except OSError as exc:
            hint = ""
            try:
                Requirement(name)
                hint = f" (pip reads constraints from files: write {name!r} into a file and name that file)"
            except InvalidRequirement:
                pass
            problems.append(f"{where} names {name!r}, which pip cannot read: {exc.strerror or exc}{hint}")
            continue
        for raw in text.splitlines():
            line = raw.split(" #", 1)[0].strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("-"):
                parts = shlex.split(line, comments=True) if depth > 0 else []
                if len(parts) == 2 and parts[0] in ("-c", "--constraint", "-r", "--requirement"):
                    more, why = read_constraints([(where, str(path.parent / parts[1]))], depth - 1)
                    out += more
                    problems += why
                continue
            try:
                out.append(Constraint(Requirement(line), f"{where} ({path})"))
            except InvalidRequirement:
                continue
    return out, problems


def excluded(pins: List[str], constraints: List[Constraint]) -> List[Tuple[str, Constraint]]:
    """(pin, constraint) for every exact pin ('torch==2.9.1+cu128') a constraint excludes."""
    out = []
    for pin in pins:
        name, _, version = pin.partition("==")
        try:
            v: Optional[Version] = Version(version)
        except InvalidVersion:
            v = None  # a series ("0.29.*"): pip picks within it, so only pip can tell
        if v is None:
            continue
        for c in constraints:
            req = c.requirement
            if canonicalize_name(req.name) != canonicalize_name(name):
                continue
            if req.marker is not None and not req.marker.evaluate():
                continue
            if not req.specifier.contains(v, prereleases=True):
                out.append((pin, c))
    return out


def check(pins: List[str], python: str, environ: Mapping[str, str]) -> Optional[str]:
    """Why pip's constraints stop these pins (one line), or None."""
    constraints, problems = read_constraints(configured_files(python, environ))
    if problems:
        return problems[0]
    conflicts = excluded(pins, constraints)
    return conflict_message(conflicts) if conflicts else None


def conflict_message(conflicts: List[Tuple[str, Constraint]]) -> str:
    pin, c = conflicts[0]
    more = f" (and {len(conflicts) - 1} more)" if len(conflicts) > 1 else ""
    return (f"the constraint {c} from {c.source} excludes the planned {pin}{more}: remove it from the constraints, "
            "or plan within it (--torch)")
