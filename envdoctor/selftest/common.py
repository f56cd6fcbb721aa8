"""What the self-tests share: the target interpreter's facts, a run directory, progress, worker launches."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set

from envdoctor.processes import run_command
from envdoctor.selftest.launch import Launcher, LaunchResult, launch
from envdoctor.selftest.result import WORKERS, TestResult, read_json

Progress = Callable[[str], None]


def no_progress(_text: str) -> None:
    pass


@dataclass
class Target:
    """The interpreter the tests run in, as its own torch sees it."""

    python: str
    torch: Optional[str] = None
    error: Optional[str] = None  # torch does not import (or the probe failed)
    cuda_available: bool = False
    device_count: int = 0
    nccl: bool = False
    gloo: bool = False
    compile: bool = False
    raw: Dict[str, Any] = field(default_factory=dict)

    @property
    def default_backend(self) -> str:
        return "nccl" if self.cuda_available and self.nccl else "gloo"


def probe_target(python: str, timeout: float = 120.0, env: Optional[Mapping[str, str]] = None) -> Target:
    res = run_command([python, str(WORKERS / "target_worker.py")], timeout=timeout, env=worker_env(env))
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith("{")), None)
    if not res.ok or line is None:
        return Target(python, error=f"probing {python}: {res.describe()}")
    try:
        data = json.loads(line)
    except ValueError as exc:
        return Target(python, error=f"probing {python}: invalid JSON: {exc}")
    return Target(
        python=python, torch=data.get("torch"), error=data.get("error"),
        cuda_available=bool(data.get("cuda_available")), device_count=int(data.get("device_count") or 0),
        nccl=bool(data.get("nccl")), gloo=bool(data.get("gloo")), compile=bool(data.get("compile")), raw=data,
    )


def worker_env(extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PYTHONIOENCODING", "utf-8")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


_OPEN_RUNDIRS: Set[Path] = set()


def discard_open_rundirs() -> None:
    """Remove the scratch directories of runs that were interrupted before they finished."""
    while _OPEN_RUNDIRS:
        shutil.rmtree(_OPEN_RUNDIRS.pop(), ignore_errors=True)


class RunDir:
    """A scratch directory for one test run under `base` (default: the system temp directory): removed when the
    test passes, kept (and named) otherwise."""

    def __init__(self, name: str, base: Optional[Path] = None) -> None:
        if base is not None:
            os.makedirs(base, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(prefix=f"envdoctor-selftest-{name}-", dir=base))
        _OPEN_RUNDIRS.add(self.path)

    def sub(self, name: str) -> Path:
        p = self.path / name
        p.mkdir(parents=True, exist_ok=True)
        return p

    def finish(self, result: TestResult, log: Optional[Path] = None) -> TestResult:
        _OPEN_RUNDIRS.discard(self.path)
        if result.status == "failed":
            result.log = str(log) if log is not None else str(self.path)
        else:
            shutil.rmtree(self.path, ignore_errors=True)
        return result


class ProgressTail:
    """Echo the lines a worker appends to its progress file (called on every launcher poll)."""

    def __init__(self, path: Path, progress: Progress, prefix: str) -> None:
        self.path, self.progress, self.prefix, self.offset = path, progress, prefix, 0

    def __call__(self) -> None:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except OSError:
            return
        complete = data[: data.rfind("\n") + 1]
        self.offset += len(complete.encode("utf-8"))
        for line in complete.splitlines():
            self.progress(f"{self.prefix}{line}")


@dataclass
class WorkerRun:
    launch: LaunchResult
    data: Optional[Dict[str, Any]]


def run_worker(
    target: Target,
    script: str,
    args: Sequence[str],
    rundir: RunDir,
    timeout: float,
    progress: Progress = no_progress,
    env: Optional[Mapping[str, str]] = None,
    launcher: Launcher = launch,
    prefix: str = "",
) -> WorkerRun:
    """One single-process worker: `python WORKER --out FILE ARGS`; its JSON result, or None."""
    out = rundir.path / f"{Path(script).stem}.json"
    progress_file = rundir.path / f"{Path(script).stem}.progress"
    argv: List[str] = [target.python, str(WORKERS / script), "--out", str(out), "--progress", str(progress_file), *args]
    tail = ProgressTail(progress_file, progress, prefix)
    res = launcher(argv, worker_env(env), timeout, rundir.path / f"{Path(script).stem}.log", tail)
    return WorkerRun(res, read_json(out))


def failure_text(run: WorkerRun, what: str) -> str:
    """Why a worker run failed: its own error if it wrote one, else how the process ended and the log's tail."""
    if run.data and run.data.get("error"):
        return str(run.data["error"])
    tail = [ln for ln in run.launch.log_text(20_000).strip().splitlines() if ln.strip()][-6:]
    return f"{what}: {run.launch.describe()}" + ("\n" + "\n".join(tail) if tail else "")


def timed(fn: Callable[[], TestResult]) -> TestResult:
    start = time.monotonic()
    result = fn()
    if not result.seconds:
        result.seconds = time.monotonic() - start
    return result


def torch_missing(name: str, target: Target) -> Optional[TestResult]:
    """A failed result when torch does not import in the target (no test can run there), else None."""
    if target.error or not target.torch:
        return TestResult(name, "failed", error=f"torch does not import in {target.python}: {target.error}")
    return None


def rounded(value: Any, digits: int = 4) -> Any:
    return round(value, digits) if isinstance(value, float) else value


def timing(key: str, value: Any) -> Any:
    """Seconds and ratios rounded; differences and tolerances (1e-05 and below) kept as measured."""
    return value if "diff" in key or key == "tolerance" else rounded(value)


def significant(value: Any, figures: int = 3) -> Any:
    """Round to significant figures, so a slow device's 0.004 TFLOP/s does not read as 0."""
    return float(f"{value:.{figures}g}") if isinstance(value, float) else value
