"""The one way envdoctor runs another program: `run_command`.

- argv only, never a shell; a program that cannot be started is a result with an `error`, never an exception.
- The deadline holds whether or not the command prints: output is read with a selector that wakes up by
  the deadline, not by the next line.
- Output is captured up to `max_bytes` per stream (the tail is kept) and, optionally, handed line by line
  to `on_line` as it arrives.
- Nothing the command starts outlives the call. The command runs under `process_guard.py`, a small
  stdlib-only helper in a session of its own, which is a child subreaper (descendants that start their
  own session, like torch's ranks, stay in its tree) and kills that whole tree on a deadline, on an
  interrupt of this process (KeyboardInterrupt, or SIGTERM turned into one by the CLI; re-raised after
  the tree is gone), when the command exits and left processes behind, and when this process dies.

Parent death: the guard asks for PR_SET_PDEATHSIG, which the kernel sends when the *thread* that started
it exits, not the process. Probes call this from short-lived daemon threads, so that thread must outlive
the guard: `run_command` is synchronous and returns only after the guard has been reaped, so the calling
thread can only go away early by the whole process dying, which is the case the signal is for. Setting the
signal in the guard (one thread, before it starts the command) instead of in a `preexec_fn` also keeps
Python code out of the fork of a multi-threaded process, and reaches grandchildren (PDEATHSIG is not
inherited). The price is one stdlib-only interpreter start per command.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Set

GUARD = Path(__file__).with_name("process_guard.py")
DEFAULT_MAX_BYTES = 8 << 20  # captured per stream; a flooding command keeps only its last 8 MiB
LINE_LIMIT = 64 << 10  # a "line" longer than this is handed to on_line in pieces
TICK = 0.25  # on_tick period, seconds
STOP_MARGIN = 5.0  # beyond the grace period, how long the guard gets to clean up before it is killed too

LineCallback = Callable[[str], None]
STOPPED = "stopped: envdoctor is quitting"

_live: Set[_Run] = set()  # the commands running now, in any thread (stop_all ends them)
_live_lock = threading.Lock()
_refusing = False  # stop_all(refuse_new=True) was called: a command started later is ended as it starts


@dataclass
class CommandResult:
    argv: List[str]
    returncode: Optional[int]  # negative: killed by that signal; None: never started, or timed out
    stdout: str = ""
    stderr: str = ""
    error: Optional[str] = None  # "not found", "timed out after 5s", an OSError text
    seconds: float = 0.0
    timed_out: bool = False
    leftovers: int = 0  # processes the command left running when it exited (killed)
    truncated: int = 0  # bytes dropped from the capture (over max_bytes)

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0

    @property
    def killed_by(self) -> Optional[str]:
        """'SIGKILL' when the command was ended by a signal."""
        return signal_name(-self.returncode) if self.returncode is not None and self.returncode < 0 else None

    def describe(self) -> str:
        name = Path(self.argv[0]).name if self.argv else "command"
        if self.error:
            return f"{name}: {self.error}"
        if self.killed_by:
            return f"{name} was killed by signal {self.killed_by}"
        tail = (self.stderr.strip() or self.stdout.strip()).splitlines()[-1:] or [""]
        return f"{name} exited {self.returncode}: {tail[0][:300]}"


def signal_name(number: int) -> str:
    """15 -> 'SIGTERM'."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


class _Stream:
    """One output pipe: the captured tail and the line splitter."""

    def __init__(self, max_bytes: int, on_line: Optional[LineCallback]) -> None:
        self.max_bytes, self.on_line = max_bytes, on_line
        self.buf = bytearray()
        self.partial = b""
        self.dropped = 0

    def feed(self, data: bytes) -> None:
        if self.max_bytes > 0:
            self.buf += data
            if len(self.buf) > 2 * self.max_bytes:
                self._trim()
        if self.on_line is None:
            return
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        while len(self.partial) > LINE_LIMIT:
            lines.append(self.partial[:LINE_LIMIT])
            self.partial = self.partial[LINE_LIMIT:]
        for line in lines:
            self.on_line(line.rstrip(b"\r").decode("utf-8", errors="replace"))

    def finish(self) -> None:
        if self.on_line is not None and self.partial:
            self.on_line(self.partial.decode("utf-8", errors="replace"))
        self.partial = b""

    def _trim(self) -> None:
        drop = len(self.buf) - self.max_bytes
        cut = self.buf.find(b"\n", drop)  # keep whole lines where there is a line end to cut at
        drop = cut + 1 if 0 <= cut < len(self.buf) - 1 else drop
        del self.buf[:drop]
        self.dropped += drop

    def text(self) -> str:
        if len(self.buf) > self.max_bytes:
            self._trim()
        return self.buf.decode("utf-8", errors="replace")


def _resolve(program: str, env: Mapping[str, str], cwd: Optional[str]) -> Optional[str]:
    """The file to execute, looked up on the command's own PATH like subprocess does; None when there is none."""
    if os.sep in program or (os.altsep and os.altsep in program):
        return program if os.path.exists(os.path.join(cwd or "", program)) else None
    found = shutil.which(program, path=env.get("PATH", os.defpath))
    return os.path.abspath(found) if found else None


def run_command(
    argv: Sequence[str],
    timeout: float,
    env: Optional[Mapping[str, str]] = None,
    input_text: Optional[str] = None,
    *,
    cwd: Optional[str] = None,
    on_line: Optional[LineCallback] = None,
    on_tick: Optional[Callable[[], None]] = None,
    merge_stderr: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    grace: float = 0.0,
) -> CommandResult:
    """Run argv (no shell) until it exits or `timeout` seconds pass; never raises for the command's sake.

    env: the command's whole environment (None: this process's). on_line: every line it prints, on stdout
    or stderr, as it comes. on_tick: called every TICK seconds while it runs. merge_stderr: stderr goes
    to stdout. max_bytes: the captured tail per stream (0: capture nothing). grace: on a deadline or an
    interrupt, SIGTERM first and SIGKILL after this many seconds (0: SIGKILL at once).
    KeyboardInterrupt (and any exception from a callback) ends the command's tree and is re-raised.
    """
    argv = [str(a) for a in argv]
    start = time.monotonic()
    if not argv:
        return CommandResult(argv, None, error="empty command")
    full_env: Dict[str, str] = dict(os.environ if env is None else env)
    program = _resolve(argv[0], full_env, cwd)
    if program is None:
        return CommandResult(argv, None, error="not found")
    status_r, status_w = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", str(GUARD), str(status_w), str(os.getpid()), repr(float(grace)), program, *argv],
            stdin=subprocess.PIPE if input_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
            env=full_env, cwd=cwd, start_new_session=True, pass_fds=(status_w,),
        )
    except OSError as exc:
        os.close(status_r)
        return CommandResult(argv, None, error=str(exc))
    finally:
        os.close(status_w)
    run = _Run(proc, max_bytes, on_line, input_text)
    with _live_lock:
        _live.add(run)
        if _refusing:  # a thread that was between two commands (or checks) when its program began to quit
            run.stopped = True
            _terminate(proc.pid)
    timed_out = False
    try:
        timed_out = not run.follow(start + timeout, on_tick)
        if timed_out:
            run.stop(grace)
    except BaseException:
        run.stop(grace)
        _forget(run)
        run.close()
        os.close(status_r)
        raise
    _forget(run)
    run.close()
    status = _read_status(status_r)
    out, err = run.streams[0], run.streams[1] if len(run.streams) > 1 else None
    res = CommandResult(argv, None, out.text(), err.text() if err else "", seconds=time.monotonic() - start,
                        truncated=out.dropped + (err.dropped if err else 0))
    if run.stopped:  # its exit status says nothing about the command
        res.error = STOPPED
    elif timed_out:
        res.timed_out, res.error = True, f"timed out after {timeout:g}s"
    elif status.startswith("exit "):
        code, leftovers = status.split()[1:3]
        res.returncode, res.leftovers = int(code), int(leftovers)
    elif status.startswith("error "):
        res.error = status[len("error "):]
    else:
        res.error = f"the process guard ended without a result (exit {proc.returncode})"
    return res


def stop_all(refuse_new: bool = False) -> int:
    """End every command this process is running, in any thread, with its whole tree, as a deadline would (the
    guards' grace periods hold). Each `run_command` returns at once with `error` STOPPED and what the command had
    printed. For a program that is quitting while its threads wait on commands. refuse_new: every command started
    later ends the same way, at once (a quitting program's threads go on to their next command otherwise).
    Returns how many were running."""
    global _refusing
    with _live_lock:  # a run leaves the set before its guard is reaped, so the pid still names that guard
        _refusing = _refusing or refuse_new
        for run in _live:
            run.stopped = True
            _terminate(run.proc.pid)
        return len(_live)


def _terminate(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        pass


def _forget(run: _Run) -> None:
    with _live_lock:
        _live.discard(run)


def _read_status(fd: int) -> str:
    try:
        return os.read(fd, 65536).decode("utf-8", errors="replace").strip()
    except OSError:
        return ""
    finally:
        os.close(fd)


class _Run:
    """A started guard: its pipes, read until end of file, and its exit."""

    def __init__(self, proc: subprocess.Popen, max_bytes: int, on_line: Optional[LineCallback],
                 input_text: Optional[str]) -> None:
        self.proc = proc
        self.stopped = False  # by stop_all
        self.sel = selectors.DefaultSelector()
        self.streams: List[_Stream] = []
        self.by_fd: Dict[int, _Stream] = {}
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                stream = _Stream(max_bytes, on_line)
                self.streams.append(stream)
                self.by_fd[pipe.fileno()] = stream
                os.set_blocking(pipe.fileno(), False)
                self.sel.register(pipe.fileno(), selectors.EVENT_READ)
        self.pending = (input_text or "").encode("utf-8")
        self.stdin_fd = proc.stdin.fileno() if proc.stdin is not None else -1
        if proc.stdin is not None:
            if self.pending:
                os.set_blocking(proc.stdin.fileno(), False)
                self.sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
            else:
                proc.stdin.close()

    def follow(self, deadline: float, on_tick: Optional[Callable[[], None]]) -> bool:
        """Read until the guard has exited; False when the deadline came first."""
        next_tick = time.monotonic() + TICK
        while True:
            now = time.monotonic()
            if on_tick is not None and now >= next_tick:
                on_tick()
                next_tick = now + TICK
            if now >= deadline:
                return False
            wait = min(deadline - now, next_tick - now) if on_tick is not None else deadline - now
            if not self.sel.get_map():
                if self.exited(now + min(wait, TICK)):
                    return True
                continue
            for key, _events in self.sel.select(wait):
                if key.fd == self.stdin_fd:
                    self._write(key.fd)
                else:
                    self._read(key.fd)

    def _read(self, fd: int) -> None:
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.by_fd[fd].feed(data)
        else:
            self.sel.unregister(fd)
            self.by_fd[fd].finish()

    def _write(self, fd: int) -> None:
        try:
            n = os.write(fd, self.pending[: 1 << 16])
            self.pending = self.pending[n:]
        except BlockingIOError:
            return
        except OSError:
            self.pending = b""
        if not self.pending:
            self.sel.unregister(fd)
            assert self.proc.stdin is not None
            self.proc.stdin.close()

    def exited(self, until: float) -> bool:
        """Wait until `until` for the guard to exit, without reaping it (its pid keeps naming its group)."""
        delay = 0.002
        while True:
            if self._gone():
                return True
            now = time.monotonic()
            if now >= until:
                return False
            time.sleep(min(delay, until - now))
            delay = min(delay * 2, 0.05)

    def _gone(self) -> bool:
        waitid = getattr(os, "waitid", None)
        if waitid is None:
            return self.proc.poll() is not None
        try:
            return waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None
        except ChildProcessError:
            return True

    def stop(self, grace: float) -> None:
        """Have the guard end the command's tree; kill the guard's group if it does not finish in time."""
        until = time.monotonic() + grace + STOP_MARGIN
        try:
            os.kill(self.proc.pid, signal.SIGTERM)  # not Popen.send_signal: it would reap the guard
        except OSError:
            pass
        while True:
            try:
                if self.exited(until):
                    return
                break
            except KeyboardInterrupt:  # a second Ctrl-C does not abandon the cleanup; it is bounded anyway
                continue
        _killpg(self.proc.pid, signal.SIGKILL)

    def close(self) -> None:
        """Kill what is left of the guard's process group, reap the guard, close the pipes."""
        _killpg(self.proc.pid, signal.SIGKILL)  # safe: the unreaped guard still holds the group's id
        self.proc.wait()
        for fd in list(self.sel.get_map()):  # a stopped command's last words, already in the pipe
            stream = self.by_fd.get(fd)
            while stream is not None:
                try:
                    data = os.read(fd, 1 << 16)
                except OSError:
                    break
                if not data:
                    break
                stream.feed(data)
            if stream is not None:
                stream.finish()
        self.sel.close()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass


def _killpg(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (OSError, AttributeError):
        pass


def sigterm_as_interrupt(signum: int, frame: object) -> None:
    """A SIGTERM handler that unwinds like Ctrl-C, so cleanups (killing a child's tree, rolling back) run."""
    raise KeyboardInterrupt
