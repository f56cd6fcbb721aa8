"""Start a self-test's processes under a deadline, and leave none behind.

The run goes through the subprocess gateway (`envdoctor.processes`) with a grace period:

- its output (the launcher's and the ranks', NCCL_DEBUG included) goes to a log file;
- at the deadline, and on Ctrl-C or SIGTERM in envdoctor, every process of the run gets SIGTERM, and
  SIGKILL after `TERM_GRACE`; when envdoctor dies they get it at once;
- torch's launcher starts every rank in a session of its own: the gateway's guard keeps them in its
  tree all the same, and kills (and counts, `leftovers`) whatever is still alive when the launcher ends;
- every process of the run carries `ENVDOCTOR_SELFTEST_RUN=<run id>` in its environment, to tell it apart.

So a test's verdict comes at most `timeout + TERM_GRACE + ~1 s` after it started, and no process of it
survives the verdict.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Mapping, Optional, Sequence

from envdoctor.processes import run_command, signal_name

RUN_ENV = "ENVDOCTOR_SELFTEST_RUN"
TERM_GRACE = 5.0


@dataclass
class LaunchResult:
    argv: List[str]
    returncode: Optional[int]
    timed_out: bool
    seconds: float
    log_path: Path
    leftovers: int = 0  # processes of the run still alive after the launcher ended (killed by the sweep)
    error: Optional[str] = None  # the launcher could not be started at all

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out and self.returncode == 0

    def log_text(self, limit: int = 2_000_000) -> str:
        """The log's last `limit` bytes (a chatty NCCL_DEBUG=INFO log can be large)."""
        try:
            with open(self.log_path, "rb") as fh:
                size = fh.seek(0, os.SEEK_END)
                fh.seek(max(0, size - limit))
                return fh.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def describe(self) -> str:
        if self.error:
            return self.error
        if self.timed_out:
            return f"timed out after {self.seconds:.0f}s; every process of the run was killed"
        if self.returncode is not None and self.returncode < 0:
            return f"the launcher was killed by signal {signal_name(-self.returncode)}"
        return f"the launcher exited {self.returncode}"


# The subprocess boundary: tests of the orchestration logic replace this with a fake that writes the
# worker result files a real run would have written.
Launcher = Callable[[Sequence[str], Mapping[str, str], float, Path, Optional[Callable[[], None]]], LaunchResult]


def launch(
    argv: Sequence[str],
    env: Mapping[str, str],
    timeout: float,
    log_path: Path,
    on_tick: Optional[Callable[[], None]] = None,
) -> LaunchResult:
    """Run argv (no shell) until it exits or `timeout` passes; never raises; leaves no process behind."""
    argv = [str(a) for a in argv]
    env = dict(env)
    env.setdefault(RUN_ENV, uuid.uuid4().hex)
    try:
        log = open(log_path, "ab")
    except OSError as exc:
        return LaunchResult(argv, None, False, 0.0, log_path, error=f"cannot start {argv[0]}: {exc}")
    with log:
        res = run_command(argv, timeout, env=env, merge_stderr=True, max_bytes=0, grace=TERM_GRACE, on_tick=on_tick,
                          on_line=lambda line: log.write(line.encode("utf-8", errors="replace") + b"\n"))
    if on_tick is not None:
        on_tick()
    if res.error and not res.timed_out:
        return LaunchResult(argv, None, False, res.seconds, log_path, error=f"cannot start {argv[0]}: {res.error}")
    return LaunchResult(argv, res.returncode, res.timed_out, res.seconds, log_path, res.leftovers)
