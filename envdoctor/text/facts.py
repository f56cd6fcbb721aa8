"""What reading a report yields: the sections found, the partial snapshot they state, and the line behind each fact.

`Statements` is the one way a reader records a fact: a dotted snapshot path, the value, and the line that stated it.
The first statement of a path wins; a later one that says otherwise is kept as a conflict (a paste that holds two
environments, or a report that contradicts itself), never silently overwritten. Every string that goes into the
document or the evidence has its secrets removed (`envdoctor.redact.scrub_secrets`); host names are never recorded;
paths stay as the report gives them, as the probes keep them in a snapshot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from envdoctor.redact import scrub_secrets
from envdoctor.snapshot import distribution_key
from envdoctor.text.gpu_names import SOURCE as GPU_TABLE
from envdoctor.text.gpu_names import capability_of


@dataclass(frozen=True)
class Section:
    """One recognised block of one input: its kind (`envdoctor.text.KINDS`) and its first and last line (1-based)."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Conflict:
    """Two statements of one fact that disagree: the first is kept in the document, this one is not."""

    path: str
    kept: Any
    stated: Any
    line: str
    line_no: int


@dataclass
class ReportFacts:
    """What one input states.

    `doc` is a partial snapshot in the corpus-case form (tests/corpus/README.md): only stated fields, `absent`
    for what the report states does not exist (with why), `partial` for stated lists the report gives in part.
    `evidence` maps a dotted snapshot path to the line (text, number) that stated it. `whole` names the stated
    lists that are complete (a whole `pip list`, `pip freeze` or `conda list`): every other stated list is partial.
    `derived` maps a path to how a value not stated outright was derived (a GPU's compute capability from its name).
    """

    sections: List[Section]
    doc: Dict[str, Any]
    evidence: Dict[str, Tuple[str, int]]
    whole: List[str] = field(default_factory=list)
    conflicts: List[Conflict] = field(default_factory=list)
    derived: Dict[str, str] = field(default_factory=dict)
    truncated: List[str] = field(default_factory=list)  # the limits an input reached (what was not recorded)


# Bounds on what one input may record, so a pathological input (a gigabyte of "a==1" lines) keeps memory bounded.
MAX_FACTS = 100_000
MAX_CONFLICTS = 1_000
MAX_SECTIONS = 10_000

# Words a report uses for "this was not read": unknown, never a fact.
_NOT_READ = re.compile(r"^(n/?a|none found|could not collect|no cuda|unknown|not set|-|)$", re.I)


def not_read(value: str) -> bool:
    """`N/A`, `Could not collect`, `No CUDA`, an empty value: the report did not read it."""
    return bool(_NOT_READ.match(value.strip()))


def clean(text: str) -> str:
    """A line as a fact's evidence: no trailing newline, no secrets."""
    return scrub_secrets(text.rstrip("\r\n"))


class Statements:
    """The partial snapshot being built from one input, with the evidence of each fact."""

    def __init__(self) -> None:
        self.doc: Dict[str, Any] = {}
        self.evidence: Dict[str, Tuple[str, int]] = {}
        self.conflicts: List[Conflict] = []
        self.whole: List[str] = []
        self.derived: Dict[str, str] = {}
        self.truncated: List[str] = []
        self._gpus: Dict[int, Dict[str, Any]] = {}

    def limit(self, what: str) -> None:
        if what not in self.truncated:
            self.truncated.append(what)

    # --- recording ---------------------------------------------------------------------------------------
    def state(self, path: str, value: Any, line: str, line_no: int) -> bool:
        """Record `value` at dotted `path`; False (and a conflict) when an earlier statement said otherwise."""
        if path not in self.evidence and len(self.evidence) >= MAX_FACTS:
            self.limit(f"more than {MAX_FACTS} facts: the rest not recorded")
            return False
        if isinstance(value, str):
            value = scrub_secrets(value)
        parts = path.split(".")
        if parts[0] == "gpus":
            holder = self.gpu(int(parts[1]))
            parts = parts[2:]
        else:
            holder = self.doc
        for part in parts[:-1]:
            if isinstance(holder, list):  # extensions.0.torch_version: an entry the reader appended
                holder = holder[int(part)]
                continue
            nxt = holder.get(part)
            if not isinstance(nxt, (dict, list)):
                nxt = holder[part] = {}
            holder = nxt
        last = parts[-1]
        if last in holder and holder[last] != value:
            if len(self.conflicts) < MAX_CONFLICTS:
                self.conflicts.append(Conflict(path, holder[last], value, clean(line), line_no))
            else:
                self.limit(f"more than {MAX_CONFLICTS} conflicting statements: the rest not recorded")
            return False
        holder[last] = value
        self.evidence.setdefault(path, (clean(line), line_no))
        return True

    def absent(self, path: str, why: str, line: str, line_no: int) -> None:
        """The report states the fact does not exist here: a null with an `unavailable:` reason."""
        absent = self.doc.setdefault("absent", {})
        if path not in absent:
            absent[path] = f"unavailable: {scrub_secrets(why)}"
            self.evidence.setdefault(path, (clean(line), line_no))

    def package(self, where: str, name: str, version: str, line: str, line_no: int) -> None:
        """One row of a package list (`python.packages`, `python.conda_packages`), keyed as package lists key it."""
        self.state(f"{where}.{distribution_key(name)}", version, line, line_no)

    def partial(self, path: str, why: str) -> None:
        self.doc.setdefault("partial", {}).setdefault(path, why)

    def mark_whole(self, path: str) -> None:
        if path not in self.whole:
            self.whole.append(path)

    def gpu(self, index: int) -> Dict[str, Any]:
        entry = self._gpus.get(index)
        if entry is None:
            entry = self._gpus[index] = {"index": index}
        return entry

    def get(self, path: str) -> Any:
        value: Any = self.doc
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    # --- the result --------------------------------------------------------------------------------------
    def derive_capabilities(self) -> None:
        """A named GPU whose capability the report does not state gets the one NVIDIA's table gives its name,
        said to be derived (a name the table does not know stays unknown)."""
        for index, gpu in self._gpus.items():
            name = gpu.get("name")
            if isinstance(name, str) and "compute_capability" not in gpu:
                cc = capability_of(name)
                if cc:
                    gpu["compute_capability"] = cc
                    path = f"gpus.{index}.compute_capability"
                    self.derived[path] = f"from the GPU's name in NVIDIA's table of CUDA GPUs ({GPU_TABLE})"
                    if f"gpus.{index}.name" in self.evidence:
                        self.evidence[path] = self.evidence[f"gpus.{index}.name"]

    def facts(self, sections: List[Section]) -> ReportFacts:
        self.derive_capabilities()
        doc = dict(self.doc)
        if self._gpus:
            doc["gpus"] = [dict(self._gpus[i]) for i in sorted(self._gpus)]
        whole = list(self.whole)  # a whole listing makes the list whole, whatever else named part of it
        partial = {k: v for k, v in (doc.get("partial") or {}).items() if k not in whole}
        doc.pop("partial", None)
        if partial:
            doc["partial"] = partial
        return ReportFacts(sections=list(sections), doc=doc, evidence=dict(self.evidence), whole=whole,
                           conflicts=list(self.conflicts), derived=dict(self.derived), truncated=list(self.truncated))


_VERSION = re.compile(r"\d+(?:\.\d+)*")


def major_minor_text(text: str) -> Optional[str]:
    """'12.1' from '12.1.105' or 'release 12.1, V12.1.105'; None when no version is there."""
    m = re.search(r"\d+\.\d+", text)
    return m.group(0) if m else None


def first_version(text: str) -> Optional[str]:
    m = _VERSION.search(text)
    return m.group(0) if m else None
