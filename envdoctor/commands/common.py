"""Options and steps that several commands share."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Callable, Optional

from envdoctor.errors import InputError
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
    parser.add_argument("--snapshot", metavar="FILE", help="use a snapshot taken earlier (here or elsewhere) instead of probing")


def add_timeouts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help=f"deadline for the torch probe (default {DEFAULT_TORCH_TIMEOUT:g}s; others {DEFAULT_TIMEOUT:g}s)")


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
