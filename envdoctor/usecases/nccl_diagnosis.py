"""Diagnose a text: the root cause and fix of an NCCL / torch.distributed failure, from log files (one per rank
or node, '-' for stdin) or a pasted log. `NcclDiagnosis.to_json()` is the `envdoctor.nccl/1` document."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence

if TYPE_CHECKING:
    from envdoctor.nccl import NcclReport
    from envdoctor.snapshot import Snapshot


@dataclass(frozen=True)
class NcclDiagnosis:
    """The ranked causes (`report`), whether a machine snapshot weighed them, and the log's text where it was
    asked for (a pasted log, or one file no bigger than `keep_text`)."""

    report: NcclReport
    snapshot_used: bool = False
    log_text: Optional[str] = None

    def exit_code(self) -> int:
        """1 when a failure was diagnosed, else 0."""
        return self.report.exit_code()

    def to_json(self) -> Dict[str, Any]:
        return self.report.to_json()


def diagnose_logs(paths: Sequence[str], rules: Any, snapshot: Optional[Snapshot] = None,
                  keep_text: int = 0) -> NcclDiagnosis:
    """Diagnose log files ('-' reads stdin); InputError names an unreadable one. `keep_text`: also return the text
    of a single file of at most that many bytes."""
    from envdoctor.nccl import diagnose_paths

    report = diagnose_paths(list(paths), snapshot=snapshot, rules=rules)
    text = None
    if keep_text and len(paths) == 1 and paths[0] != "-":
        p = Path(paths[0])
        text = p.read_text(encoding="utf-8", errors="replace") if p.stat().st_size <= keep_text else None
    return NcclDiagnosis(report, snapshot is not None, text)


def diagnose_pasted(text: str, rules: Any, snapshot: Optional[Snapshot] = None) -> NcclDiagnosis:
    """Diagnose a log held in memory (pasted into the TUI)."""
    from envdoctor.nccl import diagnose_text

    return NcclDiagnosis(diagnose_text(text, snapshot=snapshot, rules=rules), snapshot is not None, text)
