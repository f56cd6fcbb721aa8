"""Start a self-test's processes under a deadline, and leave none behind.

`probes.base.run_command` kills the launcher's process group on timeout, but torch's launcher starts
every rank in a session of its own, so a group kill misses the ranks. Here the whole tree is tracked:

- the launcher runs in a new session; its output (and the ranks', NCCL_DEBUG included) goes to a log file;
- every 0.25 s its descendants are remembered, so ranks orphaned by a dying launcher can still be found;
- every process of the run carries `ENVDOCTOR_SELFTEST_RUN=<run id>` in its environment;
- at the deadline: SIGTERM to the launcher's group and every descendant, SIGKILL after `TERM_GRACE`;
- when the launcher has ended (by itself or killed), any process of the run still alive - remembered, or
  found by its run id - is killed with SIGKILL and counted in `leftovers`.

So a test's verdict comes at most `timeout + TERM_GRACE + ~1 s` after it started, and no process of it
survives the verdict.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence

import psutil

from envdoctor.probes.base import signal_name

RUN_ENV = "ENVDOCTOR_SELFTEST_RUN"
TERM_GRACE = 5.0
POLL = 0.25


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
    run_id = env.setdefault(RUN_ENV, uuid.uuid4().hex)
    start = time.monotonic()
    try:
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    env=env, start_new_session=True)
    except OSError as exc:
        return LaunchResult(argv, None, False, 0.0, log_path, error=f"cannot start {argv[0]}: {exc}")
    known: Dict[int, psutil.Process] = {}
    timed_out = False
    deadline = start + timeout
    try:
        while True:
            try:
                rc: Optional[int] = proc.wait(timeout=POLL)
                break
            except subprocess.TimeoutExpired:
                pass
            _remember(proc.pid, known)
            if on_tick is not None:
                on_tick()
            if time.monotonic() >= deadline:
                timed_out = True
                _terminate(proc, known)
                rc = proc.poll()
                break
    except BaseException:  # Ctrl-C or SIGTERM in envdoctor: the ranks run in their own session, end them too
        _terminate(proc, known)
        sweep(run_id, known)
        raise
    if on_tick is not None:
        on_tick()
    leftovers = sweep(run_id, known)
    return LaunchResult(argv, rc, timed_out, time.monotonic() - start, log_path, leftovers)


def _remember(pid: int, known: Dict[int, psutil.Process]) -> None:
    try:
        root = psutil.Process(pid)
        for p in [root, *root.children(recursive=True)]:
            known.setdefault(p.pid, p)
    except psutil.Error:
        pass


def _alive(procs: Sequence[psutil.Process]) -> List[psutil.Process]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:  # is_running also guards pid reuse
                out.append(p)
        except psutil.Error:
            pass
    return out


def _signal_all(procs: Sequence[psutil.Process], sig: int) -> None:
    for p in procs:
        try:
            p.send_signal(sig)
        except psutil.Error:
            pass


def _killpg(pid: int, sig: int) -> None:
    killpg = getattr(os, "killpg", None)  # POSIX only; elsewhere the remembered tree is all there is
    if killpg is not None:
        try:
            killpg(pid, sig)
        except OSError:
            pass


def _terminate(proc: subprocess.Popen, known: Dict[int, psutil.Process]) -> None:
    _remember(proc.pid, known)
    _killpg(proc.pid, signal.SIGTERM)
    _signal_all(_alive(list(known.values())), signal.SIGTERM)
    end = time.monotonic() + TERM_GRACE
    while time.monotonic() < end and _alive(list(known.values())):
        time.sleep(0.1)
    _killpg(proc.pid, signal.SIGKILL)
    _signal_all(_alive(list(known.values())), signal.SIGKILL)
    try:
        proc.wait(timeout=TERM_GRACE)
    except subprocess.TimeoutExpired:
        pass


def tagged(run_id: str) -> List[psutil.Process]:
    """This user's live processes that carry the run id in their environment."""
    found = []
    uid = os.getuid() if hasattr(os, "getuid") else None
    me = os.getpid()
    for p in psutil.process_iter(["pid", "uids"]):
        try:
            if p.pid == me or (uid is not None and p.info["uids"] is not None and p.info["uids"].real != uid):
                continue
            if p.environ().get(RUN_ENV) == run_id and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            continue
    return found


def sweep(run_id: str, known: Optional[Dict[int, psutil.Process]] = None) -> int:
    """Kill (SIGKILL) every process of the run that is still alive; return how many there were."""
    procs = {p.pid: p for p in _alive(list((known or {}).values()))}
    for p in tagged(run_id):
        procs.setdefault(p.pid, p)
    if not procs:
        return 0
    _signal_all(list(procs.values()), signal.SIGKILL)
    psutil.wait_procs(list(procs.values()), timeout=TERM_GRACE)
    return len(procs)
