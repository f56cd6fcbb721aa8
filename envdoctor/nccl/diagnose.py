"""Log(s) [+ machine snapshot] -> ranked root causes.

One pass over each input: a union of every fact pattern and a union of every signature find the few
lines worth a closer look; those lines alone are matched one pattern at a time. Signatures add weight
to categories, context rules (data, `rules/nccl/context.json`) then raise or lower categories from
what else the log, its NCCL INFO facts or the machine snapshot show. The highest score is the most
likely root cause.
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Dict, List, Optional, Sequence, Tuple, Union

from envdoctor.errors import InputError
from envdoctor.findings import Finding
from envdoctor.nccl.facts import FACT_NEEDLES, FACT_PATTERNS, NcclFacts
from envdoctor.nccl.needles import Prefilter
from envdoctor.nccl.reader import MAX_LINE, decode_line, iter_blocks
from envdoctor.nccl.rules import RuleSet, load_rules
from envdoctor.rules.conditions import PREDICATES, Context, Found, holds
from envdoctor.snapshot import Snapshot

SCHEMA = "envdoctor.nccl/1"
NO_FAILURE = "No recognisable NCCL failure in the input."


@dataclass
class SignalHit:
    """One signature's matches: how many, the first line's number, and the first few lines."""

    count: int = 0
    first: Tuple[int, int] = (0, 0)  # (input index, line number): the order lines were read in
    lines: List[str] = field(default_factory=list)


@dataclass
class NcclReport:
    findings: List[Finding]
    facts: NcclFacts
    inputs: List[str]
    lines: int = 0
    bytes: int = 0

    @property
    def failed(self) -> bool:
        """A failure was diagnosed: at least one finding of severity error."""
        return any(f.severity == "error" for f in self.findings)

    @property
    def root_cause(self) -> Optional[Finding]:
        return self.findings[0] if self.findings else None

    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def to_json(self) -> Dict[str, Any]:
        return {
            "schema": SCHEMA,
            "findings": [f.to_nccl_json() for f in self.findings],
            "facts": self.facts.as_dict(),
            "inputs": list(self.inputs),
            "summary": {"failure_diagnosed": self.failed, "lines": self.lines, "bytes": self.bytes,
                        "message": None if self.failed else NO_FAILURE},
        }


class Scanner:
    """Accumulates signals and facts over any number of inputs, block by block."""

    def __init__(self, rules: RuleSet, max_line: int = MAX_LINE) -> None:
        self.rules = rules
        self.max_line = max_line
        self.max_evidence = int(rules.settings["max_evidence"])
        self.prefilter = prefilter_for(rules)
        self.signals: Dict[str, SignalHit] = {}
        self.facts = NcclFacts()
        self.inputs: List[str] = []
        self.lines = 0
        self.bytes = 0

    def scan(self, label: str, stream: BinaryIO) -> None:
        index = len(self.inputs)
        self.inputs.append(label)
        self.facts.files.append(label)
        last = 0
        for first, block in iter_blocks(stream, self.max_line):
            self._block(index, label, first, block)
            last = first + block.count(b"\n")
            self.bytes += len(block) + 1
        self.lines += last

    def _block(self, index: int, label: str, first: int, block: bytes) -> None:
        counted, lineno = 0, first
        for start, end in self.prefilter.lines(block):
            lineno += block.count(b"\n", counted, start)
            counted = start
            raw = block[start:end]
            keys = self.prefilter.candidates(raw)
            if keys:
                self._line(index, label, lineno, decode_line(raw, self.max_line), keys)

    def _line(self, index: int, label: str, lineno: int, line: str, keys: List) -> None:
        sigs = self.rules.signatures
        touched = False
        for kind, key in keys:
            if kind == "f":
                self.facts.feed(key, line, label)
                touched = True
                continue
            sig = sigs[key]
            if sig.regex.search(line) is None:
                continue
            touched = True
            hit = self.signals.get(sig.id)
            if hit is None:
                hit = self.signals[sig.id] = SignalHit(first=(index, lineno))
            hit.count += 1
            if len(hit.lines) < self.max_evidence:
                hit.lines.append(f"{label}:{lineno}\t{line.strip()}")
        if touched:
            self.facts.origin(label, line)  # note the host that printed it

    def report(self, snapshot: Optional[Snapshot] = None) -> NcclReport:
        return NcclReport(rank(self.rules, self.signals, self.facts, snapshot), self.facts, list(self.inputs),
                          self.lines, self.bytes)


_PREFILTERS: Dict[int, Tuple[RuleSet, Prefilter]] = {}


def prefilter_for(rules: RuleSet) -> Prefilter:
    """The literal prefilter over every fact pattern and signature of a rule set (built once per set)."""
    cached = _PREFILTERS.get(id(rules))
    if cached is None or cached[0] is not rules:
        entries = [(("f", k), FACT_NEEDLES[k]) for k in FACT_PATTERNS]
        entries += [(("s", i), s.needles) for i, s in enumerate(rules.signatures)]
        cached = _PREFILTERS[id(rules)] = (rules, Prefilter(entries))
    return cached[1]


def rank(rules: RuleSet, signals: Dict[str, SignalHit], facts: NcclFacts,
         snapshot: Optional[Snapshot] = None) -> List[Finding]:
    """Score every category from the signals, apply the context rules, and rank.

    Every finding but the first is an alternative: each carries what speaks against it (the evidence it does not
    explain, the rules that made it less likely) and the one check that tells it apart (its category's
    `discriminating_test`); the first carries the runner-up's evidence it does not explain.
    """
    scores: Dict[str, float] = {}
    sigs_for: Dict[str, List[str]] = {}
    why: Dict[str, List[str]] = {}
    extra: Dict[str, List[str]] = {}
    support: Dict[str, Dict[str, Tuple[float, str]]] = {}  # category -> source -> (weight, what it means)
    for sig in rules.signatures:
        if sig.id not in signals:
            continue
        for cat, w in sig.weights.items():
            scores[cat] = scores.get(cat, 0.0) + w
            sigs_for.setdefault(cat, []).append(sig.id)
            if w > 0:
                why.setdefault(cat, []).append(sig.means)
                support.setdefault(cat, {})[sig.id] = (w, sig.means)
    ctx = Context(snapshot, {"log": facts.as_dict()}, tables=rules.tables, signals=signals, log=facts)
    scales: List[Tuple[str, float, str, List[str]]] = []
    for rule in rules.rules:
        found = Found()
        if not holds(rule.when, ctx, PREDICATES, found):
            continue
        ev = found.evidence
        for cat, w in rule.boost.items():
            scores[cat] = scores.get(cat, 0.0) + w
            why.setdefault(cat, []).append(rule.note)
            extra.setdefault(cat, []).extend(ev)
            sigs_for.setdefault(cat, []).extend(s for s in rule.evidence if s in signals)
            if w > 0:
                support.setdefault(cat, {})[f"rule:{rule.id}"] = (w, rule.note)
        scales.extend((cat, f, rule.note, ev) for cat, f in rule.scale.items())
    lowered: Dict[str, List[str]] = {}
    for cat, factor, note, ev in scales:
        if cat in scores:
            scores[cat] *= factor
            why.setdefault(cat, []).append(note if factor >= 1 else f"less likely: {note}")
            if factor >= 1:
                extra.setdefault(cat, []).extend(ev)
            else:
                lowered.setdefault(cat, []).append(note)

    by_sig = {s.id: s for s in rules.signatures}
    settings = rules.settings
    high, medium = float(settings["confidence"]["high"]), float(settings["confidence"]["medium"])
    cands = []
    for cat, score in scores.items():
        if score < float(settings["report_min_score"]) or cat not in rules.categories:
            continue
        used = sorted(dict.fromkeys(s for s in sigs_for.get(cat, []) if s in by_sig and s in signals),
                      key=lambda s: signals[s].first)
        first = signals[used[0]].first if used else (sys.maxsize, 0)
        cands.append((score, first, cat, used))
    cands.sort(key=lambda c: (-c[0], c[1], c[2]))
    out: List[Finding] = []
    for n, (score, _first, cat, used) in enumerate(cands[: int(settings["max_findings"])]):
        c = rules.categories[cat]
        lines: List[str] = []
        for s in used:
            for ln in signals[s].lines:
                if ln not in lines:
                    lines.append(ln)
        lines = sorted(lines, key=_line_order)[:8]
        conf = "high" if score >= high else "medium" if score >= medium else "low"
        if n == 0 and conf == "high" and len(cands) > 1 and cands[1][0] >= 0.8 * score:
            conf = "medium"  # a close runner-up: the log cannot tell them apart well
        if n > 0 and _CONFIDENCE.index(conf) < _CONFIDENCE.index(out[0].confidence or "low"):
            conf = out[0].confidence or "low"  # an alternative is never surer than the cause ranked above it
        evidence = [ln.split("\t", 1)[1] for ln in lines] + list(dict.fromkeys(extra.get(cat, [])))
        locations = [ln.split("\t", 1)[0] for ln in lines]
        reasons = list(dict.fromkeys(why.get(cat, [])))
        rival = cands[0][2] if n > 0 else cands[1][2] if len(cands) > 1 else None
        against = _against(cat, rival, support, lowered.get(cat, []))
        detail = "\n".join([*reasons, *(f"log: {e}" for e in evidence)])
        out.append(Finding(
            id=c.finding_id, category=cat, title=c.title, severity=c.severity,
            detail=f"[{conf} confidence] {detail}".strip(), fix=c.fix, subjects=["nccl"],
            confidence=conf, score=score, evidence=evidence, locations=locations, why=reasons,
            against=against, test=dict(c.test) if c.test else None,
        ))
    return out


_CONFIDENCE = ("high", "medium", "low")


def _against(cat: str, rival: Optional[str], support: Dict[str, Dict[str, Tuple[float, str]]],
             lowered: List[str]) -> List[str]:
    """What speaks against `cat`: the rules that made it less likely, and the strongest evidence of its rival
    (the top cause for an alternative, the runner-up for the top cause) that `cat` does not explain."""
    out = [f"less likely: {note}" for note in dict.fromkeys(lowered)]
    if rival is not None:
        mine, theirs = support.get(cat, {}), support.get(rival, {})
        out += [f"does not explain (fits {rival}): {text}"
                for src, (_w, text) in sorted(theirs.items(), key=lambda kv: -kv[1][0]) if src not in mine][:2]
        if mine and set(mine) <= set(theirs):
            out.append(f"nothing in the log points to it alone: every line for it also fits {rival}")
    return out


def _line_order(entry: str) -> Tuple[str, int]:
    loc = entry.split("\t", 1)[0]
    label, _, num = loc.rpartition(":")
    return (label, int(num) if num.isdigit() else 0)


# --- the public entry points -----------------------------------------------------------------

PathLike = Union[str, Path]


def diagnose_streams(streams: Sequence[Tuple[str, BinaryIO]], snapshot: Optional[Snapshot] = None,
                     rules: Optional[RuleSet] = None) -> NcclReport:
    """Diagnose already-open binary streams, each (label, stream): one per rank or node."""
    scanner = Scanner(rules or load_rules())
    for label, stream in streams:
        scanner.scan(label, stream)
    return scanner.report(snapshot)


def diagnose_text(text: str, snapshot: Optional[Snapshot] = None, rules: Optional[RuleSet] = None,
                  label: str = "<text>") -> NcclReport:
    """Diagnose captured output held in memory (e.g. a failed all-reduce self-test's stderr)."""
    return diagnose_streams([(label, io.BytesIO(text.encode("utf-8", errors="replace")))], snapshot, rules)


def diagnose_paths(paths: Sequence[PathLike], snapshot: Optional[Snapshot] = None,
                   rules: Optional[RuleSet] = None, stdin: Optional[BinaryIO] = None) -> NcclReport:
    """Diagnose log files, one per rank or node; "-" reads standard input.

    Every file is opened before any is read, so an unreadable one fails fast: InputError naming it.
    """
    rules = rules or load_rules()
    opened: List[Tuple[str, BinaryIO]] = []
    try:
        for p in paths:
            label = str(p)
            if label == "-":
                opened.append(("<stdin>", stdin if stdin is not None else sys.stdin.buffer))
                continue
            try:
                if Path(p).is_dir():
                    raise InputError(f"{label}: is a directory, not a log file")
                opened.append((label, open(p, "rb")))
            except FileNotFoundError:
                raise InputError(f"{label}: no such file") from None
            except OSError as exc:
                raise InputError(f"{label}: cannot read: {exc.strerror or exc}") from None
        try:
            return diagnose_streams(opened, snapshot, rules)
        except OSError as exc:
            raise InputError(f"{getattr(exc, 'filename', None) or 'input'}: read failed: {exc.strerror or exc}") from None
    finally:
        for label, f in opened:
            if label != "<stdin>":
                f.close()
