"""The drift and fleet checks declared as data (`rules/checks/*.json`, envdoctor/data/checks.schema.json):
what each finds, why and how to fix it, and the facts compared between a snapshot and its baseline (ED901)
and between the nodes of a cluster (ED902). The code that reads each fact is named by `read`
(envdoctor/rules/drift.py READERS)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

from envdoctor import data_schemas
from envdoctor.data_files import data_path, read_json
from envdoctor.errors import InputError

SCHEMA = "checks.schema.json"


@dataclass(frozen=True)
class Check:
    """One drift or fleet check, for the catalog (`envdoctor rules list/explain`) and the findings it makes."""

    id: str
    name: str
    category: str
    severity: str  # "varies": each compared fact has its own
    what: str
    why: str
    fix: str


@dataclass(frozen=True)
class ComparedFact:
    """A fact compared between snapshots: `check --baseline` (drift, ED901) and `fleet` (ED902)."""

    what: str
    read: str  # a name in drift.READERS
    drift: Optional[str]  # severity when it changed since the baseline; None: not compared there
    fleet: Optional[str]  # severity when the nodes of a job differ; None: a job does not need it alike
    align: str  # how to make the nodes agree ({what} is the fact)


@dataclass(frozen=True)
class Checks:
    checks: Tuple[Check, ...]
    facts: Tuple[ComparedFact, ...]

    def check(self, check_id: str) -> Check:
        """The declared check `check_id`; KeyError when the data does not declare it."""
        found = next((c for c in self.checks if c.id == check_id), None)
        if found is None:
            raise KeyError(f"no check {check_id!r} declared")
        return found


def load_checks(directory: Path, readers: Tuple[str, ...], needed: Tuple[str, ...] = ()) -> Checks:
    """Every `*.json` of `directory` (a rules database's `checks/`), checked against the schema; `readers` are the
    fact readers that exist and `needed` the check ids the code makes findings for. InputError lists every problem."""
    problems: List[str] = []
    checks: List[Check] = []
    facts: List[ComparedFact] = []
    files = sorted(directory.glob("*.json"))
    if not files:
        raise InputError(f"{directory}: no check files (*.json)")
    for path in files:
        doc, error = read_json(path)
        if error:
            problems.append(error)
            continue
        bad = data_schemas.problems(doc, SCHEMA, where=str(path))
        if bad:
            problems += bad
            continue
        texts = doc.get("align_texts", {})
        checks += [Check(**c) for c in doc["checks"]]
        for i, f in enumerate(doc["facts"]):
            if f["read"] not in readers:
                problems.append(f"{path}: facts[{i}] ({f['what']}): unknown reader {f['read']!r} (one of {', '.join(readers)})")
            facts.append(ComparedFact(f["what"], f["read"], f["drift"], f["fleet"], texts.get(f["align"], f["align"])))
    seen = set()
    for c in checks:
        if c.id in seen or c.name in seen:
            problems.append(f"{directory}: check {c.id} ({c.name}) is declared twice")
        seen |= {c.id, c.name}
    problems += [f"{directory}: check {i} is not declared (the code makes its findings)" for i in needed if i not in seen]
    if problems:
        raise InputError("invalid drift and fleet checks: " + "; ".join(problems))
    return Checks(tuple(checks), tuple(facts))


def checks_dir(rules_dir: Path) -> Path:
    """`checks/` of a rules database, else the bundled one (a rule author's copy may hold only rule files)."""
    own = rules_dir / "checks"
    return own if own.is_dir() else data_path("rules") / "checks"


@functools.lru_cache(maxsize=1)
def bundled_checks() -> Checks:
    """The bundled declarations, for callers that are given no Knowledge (tests, the fleet functions' default)."""
    from envdoctor.rules.drift import NEEDED, READERS

    return load_checks(data_path("rules") / "checks", tuple(READERS), NEEDED)
