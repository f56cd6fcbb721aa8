"""The self-tests as `envdoctor selftest NAME` runs them, for the app's worker: same options (the command's
own parser and checks), same dispatch, same one-line summary. Imported only when envdoctor.selftest exists."""

from __future__ import annotations

import argparse
from typing import Any, Callable, Optional

from envdoctor.snapshot import Snapshot


def selftest_args(name: str, python: str) -> argparse.Namespace:
    """`envdoctor selftest NAME --python PYTHON` with every other option at its default."""
    from envdoctor.commands import selftest as cmd

    parser = argparse.ArgumentParser(prog="envdoctor")
    cmd.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["selftest", name, "--python", python])
    cmd.check_args(args)
    return args


def run_selftest(name: str, python: str, snapshot: Optional[Snapshot], progress: Callable[[str], None]) -> Any:
    """One self-test's TestResult, exactly as the CLI computes it."""
    from envdoctor.commands import selftest as cmd
    from envdoctor.selftest.common import probe_target

    return cmd.run_test(name, selftest_args(name, python), probe_target(python), lambda: snapshot, progress)


def selftest_summary(result: Any) -> str:
    from envdoctor.commands import selftest as cmd

    return cmd.summary_line(result)
