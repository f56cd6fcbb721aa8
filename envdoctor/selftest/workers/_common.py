"""What every self-test worker shares. Target interpreter, Python 3.8+, stdlib + torch; no envdoctor.

Results go to a JSON file (written atomically), not stdout, so NCCL/torch chatter on stdout and stderr
can never corrupt them and is kept whole in the log.
"""
import argparse
import json
import os
import signal
import sys
import threading
import time
import traceback

FAULT_ENV = "ENVDOCTOR_SELFTEST_FAULT"  # testing hook: "crash:RANK:ITER" or "hang:RANK:ITER"


def write_json(path, data):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)


def exit_now(code):
    """Leave without the interpreter's teardown: the result is written, and torch's C++ teardown can abort
    a process that did everything right ("terminate called without an active exception" from gloo)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def error_text(exc, lines=12):
    """The exception and the last frames of its traceback, short enough for a report."""
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    text = "".join(tb).strip().splitlines()
    return "\n".join(text[-lines:])


def watch_parent(interval=1.0):
    """Exit when our parent goes away: a worker must never outlive the launcher that owns it."""
    parent = os.getppid()

    def loop():
        while True:
            time.sleep(interval)
            if os.getppid() != parent:
                os._exit(70)

    t = threading.Thread(target=loop, name="envdoctor-parent-watch", daemon=True)
    t.start()


class Fault(object):
    """An injected fault at the worker boundary, for tests of the failure path."""

    def __init__(self, spec):
        self.kind = None
        self.rank = -1
        self.at = 0
        if spec:
            kind, rank, at = (spec.split(":") + ["0", "0"])[:3]
            if kind not in ("crash", "hang"):
                raise ValueError("%s must be crash:RANK:ITER or hang:RANK:ITER, not %r" % (FAULT_ENV, spec))
            self.kind, self.rank, self.at = kind, int(rank), int(at)

    @classmethod
    def from_env(cls):
        return cls(os.environ.get(FAULT_ENV, ""))

    def point(self, rank, iteration):
        if self.kind is None or rank != self.rank or iteration != self.at:
            return
        sys.stderr.write("envdoctor fault injection: rank %d %s at iteration %d\n" % (rank, self.kind, iteration))
        sys.stderr.flush()
        if self.kind == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        while True:  # hang: never return, never answer a collective
            time.sleep(3600)


class Progress(object):
    """Lines that envdoctor echoes on its stderr while the test runs (rank 0 writes them)."""

    def __init__(self, path, enabled=True):
        self.path = path if enabled else None

    def __call__(self, text):
        if not self.path:
            return
        with open(self.path, "a") as fh:
            fh.write(text.rstrip("\n") + "\n")


def sync(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def rel_diff(torch, a, b):
    """Normwise relative difference ||a - b|| / ||b|| in float64 (0 when both are zero)."""
    a = a.detach().double()
    b = b.detach().double()
    denom = float(torch.linalg.vector_norm(b))
    num = float(torch.linalg.vector_norm(a - b))
    if denom == 0.0:
        return 0.0 if num == 0.0 else float("inf")
    return num / denom


def median(values):
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def join_group(torch, dist, args, rank, result):
    """A multi-rank worker joins the process group (args.backend, args.pg_timeout): `result` gets torch's and
    NCCL's versions and where this rank runs, and the rank says that every rank joined. Returns `rank`."""
    import datetime

    result["torch"] = torch.__version__
    if args.backend == "nccl":
        try:
            v = torch.cuda.nccl.version()
            result["nccl_version"] = ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
        except Exception:
            pass
    result.update(local_rank=rank.local_rank, world_size=rank.world, device=str(rank.device),
                  node_rank=int(os.environ.get("GROUP_RANK", "0")))
    dist.init_process_group(args.backend, timeout=datetime.timedelta(seconds=args.pg_timeout))
    rank.progress("%d ranks joined (%s)" % (rank.world, args.backend))
    return rank


def worker_main(add_arguments, body, argv=None, result=None, on_error=None):
    """The scaffold of a single-process worker's main(), whose exit code it returns: the arguments (`--out FILE`,
    `--progress FILE`, and what `add_arguments(parser)` adds), the parent watch, torch imported and its version
    noted, then `body(torch, args, result, progress)` fills `result` (a dict starting as
    `{"ok": False, "error": None}` plus `result`). Whatever happens, `result` is written to `--out`: an exception
    becomes its `error` (or what `on_error(exc, result)` makes of it). Exit 0 when ok or skipped, else 1."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--progress", default=None)
    add_arguments(parser)
    args = parser.parse_args(argv)
    watch_parent()
    progress = Progress(args.progress, enabled=bool(args.progress))
    out = {"ok": False, "error": None}
    out.update(result or {})
    try:
        import torch

        out["torch"] = torch.__version__
        body(torch, args, out, progress)
    except BaseException as exc:  # the verdict must reach envdoctor whatever happened
        if on_error is None:
            out["error"] = error_text(exc)
        else:
            on_error(exc, out)
    write_json(args.out, out)
    return 0 if out["ok"] or out.get("skipped") else 1
