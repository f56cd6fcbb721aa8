"""`envdoctor diagnose [FILE ...|-]`: the root cause of any failure text (a traceback, a build log, a CUDA runtime
error, an NCCL log, report sections such as collect_env or pip list, or a paste of several).

Exit codes (docs/contract.md), as `nccl diagnose`: 0 nothing recognisable (or warnings only), 1 a diagnosis (a
finding of severity error), 2 unreadable input (a file, the snapshot, invalid signature files).
"""

from __future__ import annotations

import argparse
import sys

from envdoctor.commands.common import add_output_options, current_settings, emit_result, obtain_snapshot, snapshot_file
from envdoctor.errors import InputError
from envdoctor.present.diagnose import render_diagnose
from envdoctor.present.style import Style

DIAGNOSE_SCHEMA = "envdoctor.diagnose/1"


def register(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("diagnose", help="name the root cause and fix of any failure text: a traceback, build log, "
                                        "CUDA error, NCCL log, collect_env / pip list output, or a paste of several")
    d.add_argument("files", nargs="*", metavar="FILE", help="text files; '-' or nothing reads stdin")
    add_output_options(d, DIAGNOSE_SCHEMA)
    src = d.add_mutually_exclusive_group()
    src.add_argument("--snapshot", type=snapshot_file, metavar="FILE",
                     help="weigh causes against this machine snapshot (envdoctor snapshot)")
    src.add_argument("--probe", action="store_true", help="probe this machine and weigh causes against what it finds")
    d.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from envdoctor.usecases.diagnose_text import diagnose_text

    files = list(args.files) or ["-"]
    if files.count("-") > 1:
        raise InputError("'-' (stdin) can be given only once")
    if "-" in files and sys.stdin.isatty():
        raise InputError("no text given: name the file(s) or pipe the text in (envdoctor diagnose - < error.txt)")
    settings = current_settings()
    knowledge = settings.knowledge()
    snapshot = obtain_snapshot(args, settings) if args.snapshot or args.probe else None
    result = diagnose_text(files, knowledge, snapshot)
    emit_result(args, result, lambda: render_diagnose(result, Style.for_stream(sys.stdout)))
    return result.exit_code()
