"""The self-tests as `envdoctor selftest NAME` runs them, for the app's worker: same options (the command's
own parser and checks), same dispatch, same one-line summary. Imported only when envdoctor.selftest exists."""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable, Optional

from envdoctor.snapshot import Snapshot


def selftest_args(name: str, python: str) -> argparse.Namespace:
    """`envdoctor selftest NAME --python PYTHON` with every other option at its default."""
    from envdoctor.commands import selftest as cmd

    parser = argparse.ArgumentParser(prog="envdoctor")
    cmd.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["selftest", name, "--python", python])
    cmd._check_args(args)
    return args


def run_selftest(name: str, python: str, snapshot: Optional[Snapshot], progress: Callable[[str], None]) -> Any:
    """One self-test's TestResult, exactly as the CLI's `run` computes it."""
    from envdoctor.commands import selftest as cmd
    from envdoctor.selftest import allreduce as ar
    from envdoctor.selftest import single
    from envdoctor.selftest.bandwidth import power_of_two_sizes
    from envdoctor.selftest.common import probe_target

    args = selftest_args(name, python)
    target = probe_target(python)
    timeout = args.timeout or cmd.DEFAULT_TIMEOUT[name]
    start = time.monotonic()
    if name == "allreduce":
        result = cmd._allreduce(args, target, timeout, lambda: snapshot, progress, ar, power_of_two_sizes)
    elif name == "backward":
        result = single.run_backward(target, batch=args.batch, timeout=timeout, deepspeed=not args.no_deepspeed,
                                     progress=progress)
    elif name == "compile":
        result = single.run_compile(target, timeout=timeout, progress=progress)
    else:
        result = single.run_gpu(target, timeout=timeout, progress=progress)
    if not result.seconds:
        result.seconds = time.monotonic() - start
    return result


def selftest_summary(result: Any) -> str:
    from envdoctor.commands import selftest as cmd

    return cmd._summary_line(result)
