"""`envdoctor undo`: put back the packages that the last `fix --yes` replaced in an environment."""

from __future__ import annotations

import argparse

from envdoctor.commands.common import add_output_options, current_settings, emit_result
from envdoctor.present.output import say
from envdoctor.probes.context import target_python
from envdoctor.usecases.undo_fix import UNDO_SCHEMA, EnvStateError, undo_fix


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("undo", help="put back the packages that the last `fix --yes` replaced")
    p.add_argument("--python", metavar="PATH", help="the environment to restore (default: this one)")
    add_output_options(p, UNDO_SCHEMA, json_help="print the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = current_settings()
    python = target_python(args.python)
    try:
        result = undo_fix(python, lambda m: say(f"envdoctor: {m}"), settings.state_root)
    except EnvStateError as exc:  # busy, or a damaged backup: nothing was changed
        say(f"envdoctor: error: {exc}")
        return 3
    emit_result(args, result, lambda: result.message + "\n")
    return result.exit_code()
