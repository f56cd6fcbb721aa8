"""What every probe shares: the context it reads the machine through.

A probe is a function `probe(ctx) -> ProbeOutput`, declared in `envdoctor.probes.runner.PROBES` with the
snapshot sections it provides, the values it shares with other probes and those it needs (docs/extend-probe.md).
It may raise: the runner turns an exception into
a `failed` record, so a bug in one probe never costs the others. Subprocesses go through
`envdoctor.processes.run_command`, which never raises, never uses
a shell and leaves no process behind.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Mapping, Optional


class ProbeSkipped(Exception):
    """Raised by a probe whose subject does not exist here (no NVML, not Linux): a `skipped` record."""


@dataclass
class ProbeOutput:
    """The snapshot sections a probe fills in (those its ProbeSpec `provides`), the values it hands to other
    probes (those it `shares`: no snapshot section, read by another probe's `merge`), and a note for its record."""

    sections: Dict[str, Any] = field(default_factory=dict)
    note: Optional[str] = None
    status: str = "ok"
    shared: Dict[str, Any] = field(default_factory=dict)


@dataclass
class ProbeContext:
    """Where probes look. Tests point `root` at a fake /sys and /proc tree and `env` at a fake PATH."""

    python: str = sys.executable
    root: Path = Path("/")
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    nvml: Any = None  # the pynvml module, or a fake of it; None means import pynvml
    timeout: float = 20.0
    torch_timeout: float = 90.0
    state_root: Optional[Path] = None  # envdoctor's per-environment fix state (Settings.state_root); None: not read

    def path(self, absolute: str) -> Path:
        return self.root / absolute.lstrip("/")

    def read_text(self, absolute: str) -> Optional[str]:
        try:
            return self.path(absolute).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def which(self, name: str) -> Optional[str]:
        return shutil.which(name, path=self.env.get("PATH", os.defpath))
