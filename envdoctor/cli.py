"""The command line: a thin shell over the core. It never imports Textual or torch at import time."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from typing import List, Optional, Sequence

from envdoctor import __version__
from envdoctor.errors import InputError
from envdoctor.snapshot import SnapshotError

# Each module registers its subcommand(s) and runs them; the order is the order of --help.
COMMAND_MODULES = (
    "envdoctor.commands.snapshot",
    "envdoctor.commands.check",
    "envdoctor.commands.fix",
    "envdoctor.commands.selftest",
    "envdoctor.commands.nccl",
    "envdoctor.commands.report",
    "envdoctor.commands.rules",
    "envdoctor.commands.undo",
    "envdoctor.commands.fleet",
    "envdoctor.commands.index",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="envdoctor",
        description="Make a GPU machine ready for PyTorch and DeepSpeed, and say exactly what is wrong when it is not.",
    )
    parser.add_argument("--version", action="version", version=f"envdoctor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # a command not built yet
                continue
            raise
        module.register(sub)
    return parser




def _sigterm_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: Optional[Sequence[str]] = None) -> int:
    args_list: List[str] = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not args_list:
        if sys.stdin.isatty() and sys.stdout.isatty() and os.environ.get("TERM") != "dumb":
            try:
                tui = importlib.import_module("envdoctor.tui.app")
            except ModuleNotFoundError:
                tui = None
            if tui is not None:
                return int(tui.run_tui() or 0)
        args_list = ["check"]
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse exits 2 on bad arguments, 0 on --help
        return int(exc.code or 0)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _sigterm_as_interrupt)  # so cleanups (self-test ranks, rollbacks) run
    try:
        return int(args.func(args))
    except (InputError, SnapshotError) as exc:
        print(f"envdoctor: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("envdoctor: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
