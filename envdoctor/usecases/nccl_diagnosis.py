"""Diagnose a text: the root cause and fix of an NCCL / torch.distributed failure, from log files (one per rank
or node, '-' for stdin). `NcclDiagnosis.to_json()` is the `envdoctor.nccl/1` document. (A pasted text, in the TUI,
goes through `diagnose_view`, the `diagnose` use case.)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence

if TYPE_CHECKING:
    from envdoctor.nccl import NcclReport
    from envdoctor.snapshot import Snapshot


@dataclass(frozen=True)
class NcclDiagnosis:
    """The ranked causes (`report`) and whether a machine snapshot weighed them."""

    report: NcclReport
    snapshot_used: bool = False

    def exit_code(self) -> int:
        """1 when a failure was diagnosed, else 0."""
        return self.report.exit_code()

    def to_json(self) -> Dict[str, Any]:
        return self.report.to_json()


def diagnose_logs(paths: Sequence[str], rules: Any, snapshot: Optional[Snapshot] = None) -> NcclDiagnosis:
    """Diagnose log files ('-' reads stdin); InputError names an unreadable one."""
    from envdoctor.nccl import diagnose_paths

    return NcclDiagnosis(diagnose_paths(list(paths), snapshot=snapshot, rules=rules), snapshot is not None)
