"""`envdoctor nccl diagnose [FILE ...|-]`: the root cause and fix of an NCCL / torch.distributed failure.

Exit codes (CONTRACT.md): 0 no failure recognised (the output says so; warnings such as GPUDirect RDMA
being off may still be listed), 1 a failure was diagnosed (a finding of severity error), 2 bad input
(an unreadable log or snapshot, invalid signature files).
"""

from __future__ import annotations

import argparse
import sys

from envdoctor.commands.common import add_output_options, current_settings, emit_result, snapshot_file
from envdoctor.errors import InputError
from envdoctor.present.nccl import render_nccl
from envdoctor.present.style import Style

NCCL_SCHEMA = "envdoctor.nccl/1"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("nccl", help="name the root cause and fix of an NCCL / torch.distributed failure from its log")
    nsub = p.add_subparsers(dest="nccl_command", metavar="SUBCOMMAND")
    d = nsub.add_parser("diagnose", help="diagnose NCCL / torch.distributed log(s): one file per rank or node; '-' is stdin")
    d.add_argument("files", nargs="*", metavar="FILE", help="log files (one per rank or node); '-' or nothing reads stdin")
    add_output_options(d, NCCL_SCHEMA)
    src = d.add_mutually_exclusive_group()
    src.add_argument("--snapshot", type=snapshot_file, metavar="FILE",
                     help="weigh causes against this machine snapshot (envdoctor snapshot)")
    src.add_argument("--probe", action="store_true", help="probe this machine and weigh causes against what it finds")
    d.add_argument("--rules", metavar="DIR", help="use the NCCL signature files in DIR instead of the bundled ones")
    d.set_defaults(func=run)
    p.set_defaults(func=_usage(p))


def _usage(parser: argparse.ArgumentParser):
    def show(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2
    return show


def _snapshot(args: argparse.Namespace):
    if args.snapshot:
        from envdoctor.snapshot import load_snapshot

        return load_snapshot(args.snapshot)
    if args.probe:
        from envdoctor.probes.base import ProbeContext
        from envdoctor.probes.runner import run_probes

        # the probes that bear on NCCL; torch is included for the driver-vs-CUDA check
        return run_probes(ProbeContext(), only=("system", "network", "env", "nvml", "cuda_libraries", "torch"))
    return None


def run(args: argparse.Namespace) -> int:
    from envdoctor.usecases.nccl_diagnosis import diagnose_logs

    files = list(args.files) or ["-"]
    if files.count("-") > 1:
        raise InputError("'-' (stdin) can be given only once")
    if "-" in files and sys.stdin.isatty():
        raise InputError("no log given: name the log file(s) or pipe the output in (envdoctor nccl diagnose - < job.log)")
    # invalid signature files: exit 2 before any reading
    settings = current_settings()
    rules = settings.nccl_rules(args.rules)
    result = diagnose_logs(files, rules, _snapshot(args))
    emit_result(args, result, lambda: render_nccl(result.report, Style.for_stream(sys.stdout), result.snapshot_used))
    return result.exit_code()
