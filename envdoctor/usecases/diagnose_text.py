"""Diagnose any failure text: from what a user has (a traceback, a build log, a CUDA runtime error, an NCCL log,
report sections such as collect_env or pip list, often several in one paste) to its root cause.

One reading of each input feeds the one evidence engine (`envdoctor.evidence`: every signature, NCCL's and the
rest) and the report reader (`envdoctor.text`, where installed: report sections -> a partial snapshot). The machine
rules run over that partial snapshot (merged with a `--snapshot`/`--probe` one) and their findings are ranked with
the signatures' in one ranking. `DiagnoseResult.to_json()` is the `envdoctor.diagnose/1` document.

The negative-control contract: a finding about the environment that is not established (low confidence: only
generic lines point to it), or whose category is no fault of the environment (the signatures' `not_environment`
setting: GPU memory exhausted by the workload), has severity below "error".
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Dict, List, Optional, Sequence, Tuple, Union

from envdoctor.errors import InputError
from envdoctor.findings import Finding
from envdoctor.fixes import render_json

if TYPE_CHECKING:
    from envdoctor.evidence.signatures import RuleSet
    from envdoctor.knowledge import Knowledge
    from envdoctor.snapshot import Snapshot

SCHEMA = "envdoctor.diagnose/1"
NOTHING = "Nothing recognisable: no known failure in the input."
# what a machine rule's finding weighs beside the signatures' scores (the signatures' confidence thresholds)
MACHINE_SCORE = {"error": 9.0, "warning": 5.0}

Input = Union[str, Path, Tuple[str, str]]  # a path ("-": stdin), or (label, text) for text held in memory


@dataclass(frozen=True)
class Section:
    """A part of an input that one kind of text fills (collect_env, pip list, nvidia-smi, a traceback, ...)."""

    input: str
    kind: str
    start: int
    end: int


@dataclass
class DiagnoseResult:
    """The ranked causes, most likely first, with what was read."""

    findings: List[Finding]
    inputs: List[str]
    sections: List[Section] = field(default_factory=list)
    snapshot: Optional[Dict[str, Any]] = None  # the partial snapshot the reports gave (JSON), None: none
    lines: int = 0
    bytes: int = 0
    cut_lines: List[Tuple[str, int]] = field(default_factory=list)  # (input, line) of each line longer than the cap
    reports_read: bool = False  # was the report reader there (envdoctor.text)?
    skipped: List[str] = field(default_factory=list)  # files under a named folder that were gone when opened: why

    @property
    def failed(self) -> bool:
        """A diagnosis: at least one finding of severity error."""
        return any(f.severity == "error" for f in self.findings)

    def exit_code(self) -> int:
        """0 nothing recognisable (or only warnings), 1 a diagnosis."""
        return 1 if self.failed else 0

    @property
    def message(self) -> Optional[str]:
        return None if self.findings else NOTHING

    def to_json(self) -> Dict[str, Any]:
        ranked = self.findings
        return {
            "schema": SCHEMA,
            "inputs": list(self.inputs),
            "sections": [{"input": s.input, "kind": s.kind, "start": s.start, "end": s.end} for s in self.sections],
            "findings": [finding_json(f, ranked[1] if n == 0 and len(ranked) > 1 else ranked[0] if n else None)
                         for n, f in enumerate(ranked)],
            "snapshot": self.snapshot,
            "lines": self.lines,
            "bytes": self.bytes,
            "cut_lines": [{"input": label, "line": line, "note": "longer than the cap: read as its head and its tail"}
                          for label, line in self.cut_lines],
            "skipped": list(self.skipped),
            "summary": {"failure_diagnosed": self.failed, "message": self.message},
        }


def evidence_of(f: Finding) -> List[Dict[str, Any]]:
    """The lines a finding rests on, each with its input and line number where it has one."""
    out: List[Dict[str, Any]] = []
    for n, text in enumerate(f.evidence):
        loc = f.locations[n] if n < len(f.locations) else ""
        label, _, num = loc.rpartition(":")
        if label and num.isdigit():
            out.append({"input": label, "line": int(num), "text": text})
        else:
            out.append({"input": None, "line": None, "text": text})
    return out


def confirm_of(f: Finding) -> Optional[str]:
    """What would confirm it: its discriminating test."""
    if not f.test:
        return None
    return f"run `{f.test['run']}`: it is this cause if {f.test['confirms']}"


def versus_of(f: Finding, rival: Optional[Finding]) -> Optional[str]:
    """What tells it apart from `rival` (the runner-up for the top cause, the top cause for an alternative)."""
    if rival is None:
        return None
    # what the engine said against it, where it speaks of this rival (its ranking's runner-up may be another)
    parts = [a for a in f.against if a.startswith("less likely") or f"fits {rival.category})" in a]
    if rival.test:
        parts.append(f"it is {rival.category} instead if `{rival.test['run']}` shows {rival.test['confirms']}")
    return "; ".join(parts) or f"nothing in the input tells it apart from {rival.category}"


def finding_json(f: Finding, rival: Optional[Finding]) -> Dict[str, Any]:
    """A finding in `envdoctor.diagnose/1`: the Finding JSON plus confidence, located evidence, confirm, versus, and
    the fix as a Fix value."""
    out = f.to_json()
    out.update({"confidence": f.confidence or "low", "score": round(f.score or 0.0, 2), "evidence": evidence_of(f),
                "why": list(f.why), "confirm": confirm_of(f), "versus": versus_of(f, rival),
                "fix": {**render_json(f.remedy), "text": f.fix, "safety": f.safety, "commands": f.commands}})
    return out


# --- the report reader (envdoctor.text), where it is installed -------------------------------------------

class _Reports:
    """The report reader of one input, or nothing where `envdoctor.text` is not installed (then report sections
    are not read; the error texts still are)."""

    def __init__(self) -> None:
        try:
            from envdoctor.text import ReportReader  # type: ignore[import-not-found]
        except ImportError:
            self.reader = None
        else:
            self.reader = ReportReader()

    def feed(self, first: int, block: bytes, watched: Optional[bool] = None) -> None:
        if self.reader is not None:
            self.reader.feed_bytes(block, first, watched)

    def finish(self) -> Any:
        return self.reader.finish() if self.reader is not None else None


def _report_triggers() -> Dict[str, Any]:
    """The report reader's triggers for the scanner (`watch`, `watch_test`), where it is installed: the scanner then
    tells it which blocks hold none, and they are not searched again."""
    try:
        from envdoctor.text.reader import TRIGGER_LITERALS, may_hold_section_bytes  # type: ignore[import-not-found]
    except ImportError:
        return {}
    return {"watch": TRIGGER_LITERALS, "watch_test": may_hold_section_bytes}


def _partial_snapshot(facts: Sequence[Any], base: Optional[Snapshot]) -> Optional[Snapshot]:
    """The snapshot the reports state, over `base` (None: no report stated anything, and no base)."""
    stated = [f for f in facts if f is not None and getattr(f, "sections", None)]
    if not stated:
        return base
    from envdoctor.text import snapshot_from_report  # type: ignore[import-not-found]

    snap = base
    for f in stated:
        snap = snapshot_from_report(f, base=snap)
    return snap


# --- the use case ---------------------------------------------------------------------------------------

def diagnose_text(inputs: Sequence[Input], knowledge: Knowledge, snapshot: Optional[Snapshot] = None,
                  signatures: Optional[RuleSet] = None, stdin: Optional[BinaryIO] = None) -> DiagnoseResult:
    """Diagnose failure texts: paths ("-" reads stdin) or (label, text) pairs. Every path is checked before any is
    read (InputError, exit 2, names an unreadable one). `signatures`: the signature set (default: the Knowledge's);
    `snapshot`: machine facts to weigh the causes against."""
    from envdoctor.evidence.engine import Scanner
    from envdoctor.evidence.inputs import Vanished, expand, open_log
    rules = signatures or knowledge.signatures
    expanded = [None if isinstance(given, tuple) else expand([given]) for given in inputs]  # check every path first
    scanner = Scanner(rules, **_report_triggers())
    cut_lines: List[Tuple[str, int]] = []
    sections: List[Section] = []
    report_facts: List[Any] = []
    reports_read = False
    skipped: List[str] = []

    def read(label: str, stream: BinaryIO) -> None:
        nonlocal reports_read
        cuts: List[int] = []
        reports = _Reports()
        reports_read = reports_read or reports.reader is not None
        try:
            scanner.scan(label, stream, cuts=cuts, on_block=reports.feed)
        except OSError as exc:
            raise InputError(f"{label}: read failed: {exc.strerror or exc}") from None
        cut_lines.extend((label, n) for n in cuts)
        facts = reports.finish()
        if facts is not None:
            report_facts.append(facts)
            sections.extend(Section(label, s.kind, s.start, s.end) for s in facts.sections)

    for given, items in zip(inputs, expanded):
        if items is None:
            label, text = given  # type: ignore[misc]
            read(label, io.BytesIO(text.encode("utf-8", errors="replace")))
            continue
        for item in items:
            if item.path is None:
                read(item.label, stdin if stdin is not None else sys.stdin.buffer)
            else:
                try:
                    stream = open_log(item)
                except Vanished as gone:
                    skipped.append(str(gone))
                    continue
                with stream as f:
                    read(item.label, f)
    text_findings = scanner.findings(snapshot)
    partial = _partial_snapshot(report_facts, snapshot)
    machine: List[Finding] = []
    if partial is not None:
        from envdoctor.diagnose import diagnose

        machine = [f for f in diagnose(partial, knowledge.rules, knowledge.index) if f.severity in MACHINE_SCORE]
    stated = None
    if report_facts and partial is not None and partial is not snapshot:
        stated = partial.to_json()
    renamed = rules.settings.get("report_as", {})
    text_findings = [replace(f, category=renamed[f.category]) if f.category in renamed else f for f in text_findings]
    findings = rank_together(text_findings, machine, rules.settings)
    return DiagnoseResult(findings, list(scanner.inputs), sections, stated, scanner.lines, scanner.bytes,
                          cut_lines, reports_read, skipped)


def rank_together(text: Sequence[Finding], machine: Sequence[Finding], settings: Dict[str, Any]) -> List[Finding]:
    """One ranking of the signatures' findings and the machine rules': a cause both name is one finding (the
    machine's facts confirm the text: high confidence); a cause only generic lines point to (low confidence) ranks
    below every established one; then by score. The negative-control contract is applied last."""
    by_cat: Dict[str, Finding] = {}
    merged: List[Finding] = []
    for f in text:
        by_cat.setdefault(f.category, f)
        merged.append(f)
    for m in machine:
        known = by_cat.get(m.category)
        if known is not None:
            i = merged.index(known)
            merged[i] = replace(known, confidence="high", severity="error" if "error" in (known.severity, m.severity)
                                else known.severity, score=max(known.score or 0.0, MACHINE_SCORE[m.severity]),
                                why=[*known.why, f"the machine facts agree ({m.id}: {m.title})"])
            continue
        merged.append(replace(m, confidence="high" if m.severity == "error" else "medium",
                              score=MACHINE_SCORE[m.severity], why=[*m.why, f"machine rule {m.id} holds on the facts read"]))
    order = {id(f): n for n, f in enumerate(merged)}
    merged.sort(key=lambda f: ((f.confidence or "low") == "low", -(f.score or 0.0), order[id(f)]))
    return [_contract(f, settings) for f in causes_first(merged, settings.get("explains") or {})]


def causes_first(ranked: List[Finding], explains: Dict[str, Sequence[str]]) -> List[Finding]:
    """`ranked` with each established cause moved just above the first finding it explains (`explains`: category ->
    the categories it causes, from the signature settings): a CPU-only torch above the extensions built for CUDA that
    it makes fail. A cause that only generic lines point to (low confidence) is never moved."""
    out = list(ranked)
    for cause in [f for f in ranked if (f.confidence or "low") != "low" and explains.get(f.category)]:
        effects = set(explains[cause.category])
        first = next((n for n, f in enumerate(out) if f.category in effects), None)
        at = out.index(cause)
        if first is not None and first < at:
            out.insert(first, out.pop(at))
    return out


def _contract(f: Finding, settings: Dict[str, Any]) -> Finding:
    """A finding that is not established, or no fault of the environment, is at most a warning."""
    if f.severity != "error":
        return f
    if (f.confidence or "low") == "low":
        return replace(f, severity="warning", why=[*f.why, "not established (only generic lines): a warning, not an error"])
    if f.category in settings.get("not_environment", ()):
        return replace(f, severity="warning", why=[*f.why, "a matter of the workload or its data, not of the environment"])
    return f
