"""What every probe shares: the context it reads the machine through.

A probe is a function `probe(ctx) -> ProbeOutput`. It may raise: the runner turns an exception into
a `failed` record, so a bug in one probe never costs the others. Subprocesses go through
`envdoctor.processes.run_command` (re-exported here for older importers), which never raises, never uses
a shell and leaves no process behind.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from envdoctor.processes import run_command as run_command  # for envdoctor.commands; new code imports processes


class ProbeSkipped(Exception):
    """Raised by a probe whose subject does not exist here (no NVML, not Linux): a `skipped` record."""


@dataclass
class ProbeOutput:
    """The snapshot sections a probe fills in, plus an optional note for its record."""

    sections: Dict[str, Any] = field(default_factory=dict)
    note: Optional[str] = None
    status: str = "ok"


@dataclass
class ProbeContext:
    """Where probes look. Tests point `root` at a fake /sys and /proc tree and `env` at a fake PATH."""

    python: str = sys.executable
    root: Path = Path("/")
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    nvml: Any = None  # the pynvml module, or a fake of it; None means import pynvml
    timeout: float = 20.0
    torch_timeout: float = 90.0

    def path(self, absolute: str) -> Path:
        return self.root / absolute.lstrip("/")

    def read_text(self, absolute: str) -> Optional[str]:
        try:
            return self.path(absolute).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def which(self, name: str) -> Optional[str]:
        return shutil.which(name, path=self.env.get("PATH", os.defpath))


def parse_cpulist(text: str) -> List[int]:
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11]."""
    cpus: List[int] = []
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            lo, hi = part.split("-", 1)
            cpus.extend(range(int(lo), int(hi) + 1))
        else:
            cpus.append(int(part))
    return cpus


def format_cpulist(cpus: Sequence[int]) -> str:
    """[0, 1, 2, 3, 8] -> '0-3,8'."""
    out: List[str] = []
    ordered = sorted(set(cpus))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        out.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(out)
