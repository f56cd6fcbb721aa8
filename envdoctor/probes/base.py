"""What every probe shares: the context it reads the machine through, and a subprocess runner.

A probe is a function `probe(ctx) -> ProbeOutput`. It may raise: the runner turns an exception into
a `failed` record, so a bug in one probe never costs the others. Subprocesses go through
`run_command`, which never raises, kills the whole process group on timeout and never uses a shell.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence


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


@dataclass
class CommandResult:
    argv: List[str]
    returncode: Optional[int]
    stdout: str = ""
    stderr: str = ""
    error: Optional[str] = None  # "not found", "timed out after 5s", an OSError text
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0

    def describe(self) -> str:
        name = Path(self.argv[0]).name
        if self.error:
            return f"{name}: {self.error}"
        if self.returncode is not None and self.returncode < 0:
            return f"{name} was killed by signal {signal_name(-self.returncode)}"
        tail = (self.stderr.strip() or self.stdout.strip()).splitlines()[-1:] or [""]
        return f"{name} exited {self.returncode}: {tail[0][:300]}"


def signal_name(number: int) -> str:
    """15 -> 'SIGTERM'."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def run_command(
    argv: Sequence[str],
    timeout: float,
    env: Optional[Mapping[str, str]] = None,
    input_text: Optional[str] = None,
) -> CommandResult:
    """Run argv without a shell; never raises. On timeout the whole process group is killed."""
    argv = [str(a) for a in argv]
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if input_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
    except FileNotFoundError:
        return CommandResult(argv, None, error="not found")
    except OSError as exc:
        return CommandResult(argv, None, error=str(exc))
    try:
        out, err = proc.communicate(input_text.encode() if input_text is not None else None, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        return CommandResult(
            argv, None, _decode(out), _decode(err), f"timed out after {timeout:g}s", time.monotonic() - start
        )
    return CommandResult(argv, proc.returncode, _decode(out), _decode(err), None, time.monotonic() - start)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        proc.kill()


def _decode(data: Optional[bytes]) -> str:
    return (data or b"").decode("utf-8", errors="replace")


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
