"""`envdoctor undo`: put back the packages that the last `fix --yes` replaced in an environment."""

from __future__ import annotations

import argparse
import json
import sys

from envdoctor.commands.common import current_settings
from envdoctor.present.output import emit, say
from envdoctor.probes.context import target_python


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("undo", help="put back the packages that the last `fix --yes` replaced")
    p.add_argument("--python", metavar="PATH", help="the environment to restore (default: this one)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from envdoctor.install.installer import undo
    from envdoctor.install.state import EnvStateError

    settings = current_settings()
    python = target_python(args.python)
    try:
        out = undo(python, lambda m: say(f"envdoctor: {m}"), settings.state_root)
    except EnvStateError as exc:  # busy, or a damaged backup: nothing was changed
        say(f"envdoctor: error: {exc}")
        return 3
    if args.json:
        sys.stdout.write(json.dumps({"schema": "envdoctor.undo/1", "status": out.status, "message": out.message,
                                     "before": out.before, "after": out.after}, indent=2) + "\n")
    else:
        emit(out.message + "\n")
    return 0 if out.status == "undone" else 3
