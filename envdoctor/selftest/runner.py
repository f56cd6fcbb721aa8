"""The self-tests' typed options, and one test run through its record (the run-selftests use case's steps)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from envdoctor.errors import InputError
from envdoctor.selftest.kind import SnapshotSource
from envdoctor.selftest.result import TestResult
from envdoctor.snapshot import Snapshot

if TYPE_CHECKING:  # the launcher (psutil) loads when a test runs, not when the CLI builds its parser
    from envdoctor.selftest.common import Progress, Target

MAX_STRESS_SECONDS = 3600.0  # `selftest gpu --stress`: an hour is a burn-in, not a self-test
MAX_NPROC = 256  # ranks on one node: more than any GPU server has GPUs, and each rank is a whole process


@dataclass(frozen=True)
class SelftestOptions:
    """The self-tests' options (the CLI's flags, at their defaults here); `check()` validates them."""

    nproc: Optional[int] = None  # allreduce ranks per node (None: the GPUs with nccl, 2 with gloo)
    backend: Optional[str] = None  # nccl | gloo (None: nccl when CUDA is available in the target)
    nnodes: int = 1
    node_rank: int = 0
    rdzv_endpoint: Optional[str] = None
    rdzv_id: str = "envdoctor-selftest"
    min_size: str = "1K"
    max_size: str = "64M"
    iters: int = 0  # timed all-reduce iterations per size (0: as many as fit in 0.25 s)
    batch: int = 8
    repeats: int = 3
    deepspeed: bool = True  # the DeepSpeed engine step in the backward test
    timeout: Optional[float] = None  # per test (None: each test's own default, its record's `timeout`)
    scratch: Optional[Path] = None  # run directories (Settings.selftest_dir; None: the system temp directory)
    steps: int = 4  # zero3: optimizer steps
    nvme: Optional[Path] = None  # zero3: directory for NVMe swap files (None: try one when libaio is there)
    stress: float = 0.0  # gpu: seconds of matmul burn and a memory pattern test after the checks (0: none)

    def check(self) -> None:
        """InputError (exit 2) naming the bad option."""
        if self.nproc is not None and not 1 <= self.nproc <= MAX_NPROC:
            raise InputError(f"--nproc must be between 1 and {MAX_NPROC}, not {self.nproc}")
        if self.nnodes < 1:
            raise InputError(f"--nnodes must be at least 1, not {self.nnodes}")
        if not 0 <= self.node_rank < self.nnodes:
            raise InputError(f"--node-rank {self.node_rank} is outside 0..{self.nnodes - 1}")
        if self.nnodes > 1 and not self.rdzv_endpoint:
            raise InputError("--nnodes above 1 needs --rdzv-endpoint HOST:PORT (the same on every node)")
        if self.rdzv_endpoint:
            host, sep, port = self.rdzv_endpoint.rpartition(":")
            if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise InputError(f"--rdzv-endpoint {self.rdzv_endpoint!r}: expected HOST:PORT")
        min_bytes, max_bytes = self.size_range()
        if not 0 < min_bytes <= max_bytes:
            raise InputError(f"--min-size {self.min_size} must be positive and not above --max-size {self.max_size}")
        if self.iters < 0:
            raise InputError("--iters must not be negative")
        if self.batch < 1:
            raise InputError("--batch must be at least 1")
        if self.repeats < 1:
            raise InputError("--repeats must be at least 1")
        if self.timeout is not None and self.timeout <= 0:
            raise InputError("--timeout must be positive")
        if not 0 <= self.stress <= MAX_STRESS_SECONDS:
            raise InputError(f"--stress must be between 0 and {MAX_STRESS_SECONDS:g} seconds, not {self.stress:g}")
        if not 2 <= self.steps <= 100:
            raise InputError(f"--steps must be between 2 and 100, not {self.steps}")
        if self.nvme is not None and not (self.nvme.is_dir() and os.access(self.nvme, os.W_OK | os.X_OK)):
            raise InputError(f"--nvme {self.nvme}: not a writable directory")

    def size_range(self) -> Tuple[int, int]:
        from envdoctor.selftest.bandwidth import parse_size

        try:
            return parse_size(self.min_size), parse_size(self.max_size)
        except ValueError as exc:
            raise InputError(f"--min-size/--max-size: {exc}") from None


def run_test(name: str, options: SelftestOptions, target: Target, snapshot: SnapshotSource,
             progress: Progress, knowledge: Optional[Any] = None) -> TestResult:
    """One test's TestResult; `snapshot` is called only when a test needs the machine's links (allreduce);
    `knowledge` is the rules database a failure is diagnosed with (None: none was given)."""
    from envdoctor.selftest.kind import RunInputs
    from envdoctor.selftest.registry import get

    kind = get(name)
    start = time.monotonic()
    result = kind.run(RunInputs(options, target, options.timeout or kind.timeout, snapshot, progress, knowledge))
    if not result.seconds:
        result.seconds = time.monotonic() - start
    return result


def names_for_all(target: Target) -> List[str]:
    """What `selftest all` runs: every test whose record applies to the target (zero3 only with DeepSpeed)."""
    from envdoctor.selftest.registry import ALL, select

    return select([ALL], target)


def link_snapshot(python: str, progress: Progress) -> SnapshotSource:
    """This machine's snapshot for the expected bandwidth, probed once on first use; None if probing fails."""
    cache: List[Optional[Snapshot]] = []

    def probe() -> Optional[Snapshot]:
        if not cache:
            from envdoctor.probes.base import ProbeContext
            from envdoctor.probes.runner import run_probes

            progress("probing this machine's links for the expected bandwidth")
            try:
                cache.append(run_probes(ProbeContext(python=python), only=("nvml", "system", "network", "env")))
            except Exception as exc:  # the comparison is optional; the verdict is not
                progress(f"probing failed ({exc}); no bandwidth expectation")
                cache.append(None)
        return cache[0]

    return probe
