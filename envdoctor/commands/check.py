"""`envdoctor check`: diagnose this machine (or a snapshot taken elsewhere)."""

from __future__ import annotations

import argparse
import sys

from envdoctor.commands.common import (
    add_output_options,
    add_python,
    add_snapshot,
    add_timeouts,
    current_settings,
    emit_result,
    obtain_snapshot,
)
from envdoctor.errors import InputError
from envdoctor.settings import Settings
from envdoctor.usecases.check import CHECK_SCHEMA

__all__ = ["CHECK_SCHEMA", "register", "run"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="diagnose this machine, or a snapshot taken elsewhere")
    add_snapshot(p)
    p.add_argument("--baseline", metavar="FILE", help="also report what drifted from this saved snapshot")
    add_output_options(p, CHECK_SCHEMA)
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    p.add_argument("--facts", action=argparse.BooleanOptionalAction, default=True,
                   help="print the machine's facts before the findings (text output)")
    add_python(p)
    add_timeouts(p)
    p.set_defaults(func=run)


def _prepare(settings: Settings) -> None:
    """While the probes wait on torch: load and validate the knowledge (it is cached), and the modules that
    diagnose and present. A bad file is left for the main thread's own load to report."""
    import importlib

    from envdoctor.usecases.check import warm_up

    warm_up()
    importlib.import_module("envdoctor.present.check")
    try:
        settings.knowledge()
    except InputError:
        pass


def run(args: argparse.Namespace) -> int:
    settings = current_settings()
    baseline = None
    if args.baseline:
        from envdoctor.snapshot import load_snapshot

        baseline = load_snapshot(args.baseline)
    # A bad ENVDOCTOR_WHEELS_INDEX is exit 2 before any probing (diagnose takes the index once it is passed in).
    settings.wheel_index()
    snap = obtain_snapshot(args, settings, meanwhile=lambda: _prepare(settings))
    from envdoctor.present.check import render_check
    from envdoctor.present.style import Style
    from envdoctor.probes.context import target_python
    from envdoctor.usecases.check import check

    python = None if args.snapshot else target_python(args.python) if args.python else None
    result = check(snap, settings.knowledge(), baseline, python)
    emit_result(args, result, lambda: render_check(result, Style.for_stream(sys.stdout), args.facts))
    return result.exit_code(strict=args.strict)
