"""The NCCL view of the evidence engine (`envdoctor.evidence.engine`): log(s) [+ machine snapshot] -> ranked root
causes as the `envdoctor.nccl/1` document, read with the NCCL signatures (`rules/nccl/`).
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Dict, List, Optional, Sequence, Tuple, Union

from envdoctor.bounded_read import idle_reader
from envdoctor.errors import InputError
from envdoctor.evidence import engine
from envdoctor.evidence.engine import (  # noqa: F401  (the names this module has always offered)
    LOOKBACK,
    SignalHit,
    continuation,
    opens,
    prefilter_for,
    rank,
    told_first_failure,
)
from envdoctor.evidence.inputs import Vanished, expand, open_log
from envdoctor.evidence.signatures import RuleSet, load_rules
from envdoctor.findings import Finding
from envdoctor.nccl.facts import NcclFacts, first_failure_line
from envdoctor.snapshot import Snapshot

SCHEMA = "envdoctor.nccl/1"
NO_FAILURE = "No recognisable NCCL failure in the input."
WARN_SIGNAL = "nccl-warn"  # the signature every NCCL WARN line matches (rules/nccl/signatures.json)


@dataclass
class NcclReport:
    findings: List[Finding]
    facts: NcclFacts
    inputs: List[str]
    lines: int = 0
    bytes: int = 0
    first_failure: Optional[str] = None  # the rank that failed first, as said (None: no rank stands out)
    warn_lines: List[str] = field(default_factory=list)  # the first NCCL WARN lines read ("label:line\ttext")
    warn_count: int = 0  # how many NCCL WARN lines were read

    @property
    def info_output(self) -> bool:
        """Is the input NCCL_DEBUG=INFO output? Its INFO lines gave facts (version, devices, transports, ...)."""
        f = self.facts
        return bool(f.nccl_versions or f.cuda_driver or f.transports or f.interfaces or f.bootstrap_interfaces
                    or f.devices or f.networks or f.env or f.plugin_paths or f.ranks)

    @property
    def no_failure_note(self) -> Optional[str]:
        """What follows NO_FAILURE (None when a failure was diagnosed): what was read when the input already is
        NCCL_DEBUG=INFO output or holds NCCL WARN lines, else the advice to rerun with NCCL_DEBUG=INFO."""
        if self.failed:
            return None
        warns = ""
        if self.warn_count:
            first = self.warn_lines[0].split("\t", 1)[-1] if self.warn_lines else ""
            warns = f"{self.warn_count} NCCL WARN line(s), the first: {first[:160]}"
        if self.info_output:
            version = f"NCCL {', '.join(sorted(self.facts.nccl_versions))}" if self.facts.nccl_versions else \
                "no NCCL version line"
            return f"Read NCCL_DEBUG=INFO output ({version}; {warns or 'no NCCL WARN line'}): no known cause matched it."
        if warns:
            return f"Read {warns}: no known cause matched it."
        return "Run the job with NCCL_DEBUG=INFO for more detail."

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
                        "message": None if self.failed else NO_FAILURE, "first_failure": self.first_failure},
        }


class Scanner(engine.Scanner):
    """The engine's scanner, whose `report` is the NCCL view (`NcclReport`)."""

    def report(self, snapshot: Optional[Snapshot] = None) -> NcclReport:
        ff = told_first_failure(self.rules, self.facts)
        warn = self.signals.get(WARN_SIGNAL)
        return NcclReport(rank(self.rules, self.signals, self.facts, snapshot), self.facts, list(self.inputs),
                          self.lines, self.bytes, first_failure_line(ff) if ff else None,
                          list(warn.lines) if warn else [], warn.count if warn else 0)


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
    """Diagnose log files, one per rank or node, or directories of them; "-" reads standard input.

    Every input is checked before any is read, so a missing or unreadable one fails fast: InputError
    naming it. The files are then read one at a time (see inputs.py).
    """
    rules = rules or load_rules()
    items = expand(paths)
    scanner = Scanner(rules)
    for item in items:
        if item.path is None:
            _scan(scanner, item.label, stdin if stdin is not None else idle_reader(sys.stdin.buffer))
            continue
        try:
            stream = open_log(item)
        except Vanished:
            continue  # gone from its folder before its turn: the rest is read (`diagnose` lists it as skipped)
        with stream as f:
            _scan(scanner, item.label, f)
    return scanner.report(snapshot)


def _scan(scanner: Scanner, label: str, stream: BinaryIO) -> None:
    try:
        scanner.scan(label, stream)
    except OSError as exc:
        raise InputError(f"{label}: read failed: {exc.strerror or exc}") from None
