"""The command line: a thin shell over the core. It never imports Textual or torch at import time."""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any, List, Optional, Sequence

from envdoctor import __version__
from envdoctor.errors import InputError, SnapshotError
from envdoctor.processes import sigterm_as_interrupt

if TYPE_CHECKING:
    import argparse

EXIT_INTERNAL_ERROR = 70  # EX_SOFTWARE: a bug in envdoctor, never a finding about the machine (that is 1)

# command -> the module that registers and runs it; the order is the order of --help.
COMMANDS = {
    "snapshot": "envdoctor.commands.snapshot",
    "check": "envdoctor.commands.check",
    "fix": "envdoctor.commands.fix",
    "selftest": "envdoctor.commands.selftest",
    "nccl": "envdoctor.commands.nccl",
    "diagnose": "envdoctor.commands.diagnose",
    "report": "envdoctor.commands.report",
    "rules": "envdoctor.commands.rules",
    "undo": "envdoctor.commands.undo",
    "fleet": "envdoctor.commands.fleet",
    "index": "envdoctor.commands.index",
}


def _safe_parser_class() -> type:
    import argparse

    class SafeParser(argparse.ArgumentParser):
        """argparse whose messages (usage, "unrecognized arguments: ...", "invalid choice: ...") reach the terminal
        with secrets out and control and bidi characters escaped: they quote what the user typed."""

        def _print_message(self, message: str, file: Any = None) -> None:
            if message:
                from envdoctor.lost_output import write_or_drop
                from envdoctor.present.terminal import for_terminal

                write_or_drop(file or sys.stderr, for_terminal(message))

    return SafeParser


def build_parser(only: Optional[str] = None) -> argparse.ArgumentParser:
    """The whole parser, or with `only` one command's: a command imports just its own module (`check` starts
    probing sooner; the TUI needs none)."""
    parser = _safe_parser_class()(
        prog="envdoctor",
        description="Make a GPU machine ready for PyTorch and DeepSpeed, and say exactly what is wrong when it is not.",
    )
    parser.add_argument("--version", action="version", version=f"envdoctor {__version__}")
    parser.add_argument("--snapshot", metavar="FILE", dest="tui_snapshot",
                        help="with no command: open the TUI on this snapshot (taken elsewhere with `envdoctor snapshot "
                             "-o FILE`) instead of probing this machine; not in a terminal: `check --snapshot FILE`")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command, name in COMMANDS.items():
        if only is None or command == only:
            importlib.import_module(name).register(sub)
    return parser



def main(argv: Optional[Sequence[str]] = None) -> int:
    args_list: List[str] = list(sys.argv[1:] if argv is None else argv)
    try:
        return _run(args_list)
    except (InputError, SnapshotError) as exc:
        from envdoctor.present.terminal import for_terminal

        print(for_terminal(f"envdoctor: error: {exc}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("envdoctor: interrupted", file=sys.stderr)
        return 130
    except ValueError as exc:
        if not _too_many_digits(exc):
            return _internal_error(exc, args_list)
        print("envdoctor: error: the input holds a number of more than 4300 digits, which no field takes",
              file=sys.stderr)
        return 2
    except BrokenPipeError:  # the output went away before the command finished: not done, and never success
        try:
            sys.stdout = open(os.devnull, "w")
            sys.stderr = open(os.devnull, "w")
        except OSError:
            pass
        return 2
    except Exception as exc:  # a bug: say so in one line, keep the traceback for the bug report
        return _internal_error(exc, args_list)


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


def tui_snapshot(args_list: Sequence[str]) -> Optional[str]:
    """FILE of `envdoctor --snapshot FILE` (the TUI over that snapshot); None for any other command line.
    InputError when --snapshot comes without a file or before a command (which takes its own --snapshot)."""
    first = args_list[0] if args_list else ""
    if first.startswith("--snapshot="):
        path, rest = first.split("=", 1)[1], list(args_list[1:])
    elif first == "--snapshot":
        path, rest = (args_list[1] if len(args_list) > 1 else ""), list(args_list[2:])
    else:
        return None
    if not path:
        raise InputError("--snapshot needs a FILE: `envdoctor --snapshot FILE` opens that snapshot in the TUI")
    if rest:
        raise InputError(f"--snapshot FILE before a command opens the TUI and takes nothing more (got {rest[0]!r}); "
                         "a command takes its own: `envdoctor check --snapshot FILE`")
    return path


def _run(args_list: List[str]) -> int:
    if not args_list:
        if _interactive():
            return int(importlib.import_module("envdoctor.tui.app").run_tui() or 0)
        args_list = ["check"]
    path = tui_snapshot(args_list)
    if path is not None:
        if not _interactive():
            return _run(["check", "--snapshot", path])
        from envdoctor.snapshot import load_snapshot

        snap = load_snapshot(path)  # a bad file: the error `check --snapshot` gives, exit 2, before the app starts
        return int(importlib.import_module("envdoctor.tui.app").run_tui(snap, path) or 0)
    parser = build_parser(args_list[0] if args_list[0] in COMMANDS else None)
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse exits 2 on bad arguments, 0 on --help
        return int(exc.code or 0)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, sigterm_as_interrupt)  # so cleanups (self-test ranks, rollbacks) run
    return int(args.func(args))


def _too_many_digits(exc: BaseException) -> bool:
    """Python's refusal to convert an integer of more than sys.get_int_max_str_digits() digits: only an input
    (a snapshot, an index, a log) holds one."""
    return isinstance(exc, ValueError) and "integer string conversion" in str(exc)


def _internal_error(exc: Exception, args_list: List[str]) -> int:
    """Write the traceback to a file and print one line naming the exception and that file; exit 70."""
    import datetime
    import traceback

    from envdoctor.redact import scrub_secrets

    text = scrub_secrets("".join([
        f"envdoctor {__version__} internal error, {datetime.datetime.now(datetime.timezone.utc).isoformat()}\n",
        f"python {sys.version.split()[0]} ({sys.executable})\n",
        f"argv: envdoctor {' '.join(args_list)}\n\n",
        *traceback.format_exception(type(exc), exc, exc.__traceback__),
    ]))
    where = _write_traceback(text)
    message = " ".join(scrub_secrets(str(exc)).split())
    what = type(exc).__name__ + (": " + "".join(c if c.isprintable() else "?" for c in message)[:300] if message else "")
    kept = f"traceback in {where}" if where else "no writable directory for the traceback"
    print(f"envdoctor: internal error: {what} ({kept})", file=sys.stderr)
    return EXIT_INTERNAL_ERROR


def _write_traceback(text: str) -> Optional[str]:
    """The file the traceback went to: under envdoctor's cache directory, else the temp directory."""
    import datetime
    import tempfile

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    name = f"internal-error-{stamp}-{os.getpid()}.txt"
    try:
        from envdoctor.settings import user_cache_dir

        folder = user_cache_dir(os.environ) / "crash"
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = folder / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:  # mode 0600: a traceback holds paths and arguments
            f.write(text)
        return str(path)
    except Exception:  # no home, a read-only cache, a broken install: fall back to the temp directory
        pass
    try:
        fd, tmp = tempfile.mkstemp(prefix="envdoctor-internal-error-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        return tmp
    except OSError:
        return None
