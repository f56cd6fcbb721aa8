"""The helper between envdoctor and every command it runs: it takes the command's whole process tree down.

`envdoctor.processes` starts it in a session of its own as

    python -I -S process_guard.py STATUS_FD PARENT_PID GRACE PROGRAM ARGV0 ARG...

It runs with the standard library only (no envdoctor import, no site-packages). It

- asks the kernel for SIGTERM when its parent dies (PR_SET_PDEATHSIG, Linux);
- becomes a child subreaper (Linux), so a descendant that starts a session of its own (torch's launcher
  does, for every rank) or loses its parent stays in the guard's tree and is found and reaped here;
- starts PROGRAM with ARGV (in the guard's process group), and waits for it;
- on SIGTERM (the gateway's deadline or interrupt, or the parent's death) sends SIGTERM to every
  descendant, and SIGKILL to whatever is left after GRACE seconds (at once when GRACE is 0);
- when the command has exited, SIGKILLs whatever of its tree is still alive (its "leftovers");
- writes one line to STATUS_FD: `exit CODE LEFTOVERS` (CODE negative for a signal) or `error TEXT`.
"""

import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
WATCHED = {signal.SIGTERM, signal.SIGCHLD}
HAVE_PROC = os.path.isdir("/proc/self")


def _prctl(option: int, arg: int) -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _children_map() -> dict:
    """ppid -> [pid, ...] of every live (not zombie) process, from /proc; {} where there is no /proc."""
    out: dict = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and fields[0] != b"Z":
            out.setdefault(int(fields[1]), []).append(int(name))
    return out


def descendants(root: int) -> list:
    children = _children_map()
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found


class Tree:
    """The command (`target`) and everything it started, as seen from the guard."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.code = None  # the command's exit code once it was reaped; negative for a signal

    def reap(self) -> bool:
        """Reap every exited child; True while the guard still has children."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            if pid == self.target:
                self.code = os.waitstatus_to_exitcode(status)

    def signal_all(self, sig: int) -> int:
        # Without /proc only the command itself is reached here; the gateway then kills the process group.
        pids = descendants(os.getpid()) if HAVE_PROC else [self.target] if self.code is None else []
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        return len(pids)

    def end(self, grace: float) -> int:
        """SIGTERM (with a grace period), then SIGKILL until nothing is left; return how many were alive."""
        if not self.reap():
            return 0
        alive = 0
        if grace > 0:
            alive = self.signal_all(signal.SIGTERM)
            until = time.monotonic() + grace
            while self.reap() and time.monotonic() < until:
                signal.sigtimedwait({signal.SIGCHLD}, min(0.1, max(0.0, until - time.monotonic())))
        for _ in range(200):  # a tree that forks while it is killed needs more than one pass
            killed = self.signal_all(signal.SIGKILL)
            alive = alive or killed
            if not self.reap():
                break
            signal.sigtimedwait({signal.SIGCHLD}, 0.05)
        return alive


def main(argv: list) -> int:
    status_fd, parent, grace, program, args = int(argv[1]), int(argv[2]), float(argv[3]), argv[4], argv[5:]
    os.set_inheritable(status_fd, False)
    signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)

    def report(line: str) -> None:
        try:
            os.write(status_fd, (line.replace("\n", " ") + "\n").encode("utf-8", "replace"))
        except OSError:
            pass

    if os.getppid() != parent:  # the parent died before PDEATHSIG was set
        report("error the parent exited before the command started")
        return 1
    try:
        tree = Tree(os.posix_spawn(program, args, os.environ, setsigmask=(),
                                   setsigdef=(signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM, signal.SIGCHLD)))
    except FileNotFoundError:
        report("error not found")
        return 127
    except OSError as exc:
        report(f"error {exc.strerror or exc}")
        return 126
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the command's pipes reach end of file when the command's tree closes them
        os.dup2(devnull, fd)
    while tree.code is None:
        if signal.sigwaitinfo(WATCHED).si_signo == signal.SIGTERM:
            tree.end(grace)
        tree.reap()
    report(f"exit {tree.code} {tree.end(0.0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
