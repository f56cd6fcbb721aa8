"""Options and steps that several commands share."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from envdoctor.errors import InputError
from envdoctor.present.output import DOCUMENT_FORMATS, DocumentFormat, emit, say, write_file
from envdoctor.probes.base import ProbeContext
from envdoctor.probes.context import DEFAULT_TIMEOUT, probe_context, target_python
from envdoctor.settings import DEFAULT_TORCH_TIMEOUT, Settings

if TYPE_CHECKING:
    from envdoctor.snapshot import Snapshot


def current_settings() -> Settings:
    """The settings from this process's environment: the one place a command reads it."""
    return Settings.from_env(os.environ)


def add_python(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--python", metavar="PATH", help="the interpreter whose environment to probe (default: this one)")


def add_snapshot(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--snapshot", type=snapshot_file, metavar="FILE",
                        help="use a snapshot taken earlier (here or elsewhere) instead of probing")


def add_timeouts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=positive_seconds, default=None, metavar="SECONDS",
                        help=f"deadline for the torch probe (default {DEFAULT_TORCH_TIMEOUT:g}s; others {DEFAULT_TIMEOUT:g}s)")


def snapshot_file(text: str) -> str:
    """--snapshot's value: a path; an empty one names no file (it once meant: probe this machine instead)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("'': an empty path names no file (leave --snapshot out to probe this machine)")
    return text


def positive_seconds(text: str) -> float:
    """--timeout's value: a positive, finite number of seconds (as ENVDOCTOR_TORCH_TIMEOUT must be)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: must be a positive number of seconds")
    return value


def probe_context_for(args: argparse.Namespace, settings: Settings) -> ProbeContext:
    """The probe context for --python and --timeout (an unset --timeout: ENVDOCTOR_TORCH_TIMEOUT, else the default)."""
    python = target_python(getattr(args, "python", None))
    timeout = getattr(args, "timeout", None)
    if timeout is not None and timeout <= 0:
        raise InputError("--timeout must be positive")
    return probe_context(python, timeout, settings.torch_timeout, settings.state_root)


def obtain_snapshot(args: argparse.Namespace, settings: Settings,
                    progress: Optional[Callable[[str], None]] = None,
                    meanwhile: Optional[Callable[[], None]] = None) -> Snapshot:
    """The snapshot a command works on: from --snapshot FILE, or probed here and now (`meanwhile` runs while
    the probes do)."""
    if getattr(args, "snapshot", None):
        from envdoctor.snapshot import load_snapshot

        return load_snapshot(args.snapshot)
    from envdoctor.probes.runner import run_probes

    ctx = probe_context_for(args, settings)
    on_event = None
    if progress is not None:
        def on_event(event):
            progress(f"probe {event.record.name}: {event.record.status}")
    return run_probes(ctx, on_event=on_event, meanwhile=meanwhile)


# --- output: every command that prints a document declares and reads its formats here -------------------


def add_output_options(parser: Any, schema: str, json_help: Optional[str] = None) -> None:
    """`--json` (and every other registered document format) for a command whose result's document is `schema`;
    `json_help` replaces the --json help where a command words it its own way."""
    for fmt in DOCUMENT_FORMATS.values():
        text = json_help if fmt.name == "json" and json_help else fmt.help.format(schema=schema)
        parser.add_argument(f"--{fmt.name}", action="store_true", help=text)


def document_format(args: argparse.Namespace) -> Optional[DocumentFormat]:
    """The document format asked for (None: text); two at once is bad input."""
    chosen = [fmt for fmt in DOCUMENT_FORMATS.values() if getattr(args, fmt.name, False)]
    if len(chosen) > 1:
        raise InputError(f"--{chosen[0].name} and --{chosen[1].name} are two outputs: give one")
    return chosen[0] if chosen else None


def emit_result(args: argparse.Namespace, result: Any, text: Callable[[], str]) -> None:
    """Print a use case's result: its document in the format asked for, else `text()` for people."""
    fmt = document_format(args)
    if fmt is None:
        emit(text())
    else:
        fmt.write(result.to_json())


def add_output_file(parser: Any, help: str = "write here instead of stdout") -> None:
    parser.add_argument("-o", "--output", metavar="FILE", help=help)


def write_output(args: argparse.Namespace, text: str, what: str,
                 show: Optional[Callable[[str], Any]] = None) -> None:
    """`text` into -o FILE (saying so on stderr), else `show(text)` (default: the stdout of the moment, looked up
    now, so a redirected stdout gets it)."""
    if args.output:
        write_file(Path(args.output), text)
        say(f"envdoctor: {what} written to {args.output}")
    else:
        (show or sys.stdout.write)(text)
