"""`envdoctor nccl diagnose [FILE ...|-]`: the root cause and fix of an NCCL / torch.distributed failure.

Exit codes (CONTRACT.md): 0 no failure recognised (the output says so; warnings such as GPUDirect RDMA
being off may still be listed), 1 a failure was diagnosed (a finding of severity error), 2 bad input
(an unreadable log or snapshot, invalid signature files).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Optional

from envdoctor.commands.common import current_settings
from envdoctor.errors import InputError
from envdoctor.present.output import emit, emit_json
from envdoctor.present.style import Style


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("nccl", help="name the root cause and fix of an NCCL / torch.distributed failure from its log")
    nsub = p.add_subparsers(dest="nccl_command", metavar="SUBCOMMAND")
    d = nsub.add_parser("diagnose", help="diagnose NCCL / torch.distributed log(s): one file per rank or node; '-' is stdin")
    d.add_argument("files", nargs="*", metavar="FILE", help="log files (one per rank or node); '-' or nothing reads stdin")
    d.add_argument("--json", action="store_true", help="print the envdoctor.nccl/1 JSON document")
    src = d.add_mutually_exclusive_group()
    src.add_argument("--snapshot", metavar="FILE", help="weigh causes against this machine snapshot (envdoctor snapshot)")
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
    from envdoctor.nccl import diagnose_paths, load_rules

    files = list(args.files) or ["-"]
    if files.count("-") > 1:
        raise InputError("'-' (stdin) can be given only once")
    if "-" in files and sys.stdin.isatty():
        raise InputError("no log given: name the log file(s) or pipe the output in (envdoctor nccl diagnose - < job.log)")
    # invalid signature files: exit 2 before any reading
    rules = load_rules(args.rules) if args.rules else current_settings().nccl_rules()
    snapshot = _snapshot(args)
    report = diagnose_paths(files, snapshot=snapshot, rules=rules)
    if args.json:
        emit_json(report.to_json())
    else:
        emit(render(report, Style.for_stream(sys.stdout), snapshot_used=snapshot is not None))
    return report.exit_code()


_CONF = {"high": "green", "medium": "yellow", "low": "dim"}


def render(report, style: Style, snapshot_used: bool = False) -> str:
    f = report.facts
    out = []
    what = f"{len(report.inputs)} input(s), {report.lines} line(s)" + (", with the machine snapshot" if snapshot_used else "")
    out.append(style("NCCL diagnosis", "bold") + f" ({what})")
    facts = _facts_line(report)
    if facts:
        out.append(f"  facts: {facts}")
    if report.first_failure:
        out.append("  " + _clip(report.first_failure, 200))
    out.append("")
    if not report.failed:
        out.append(style("No recognisable NCCL failure in the input.", "green")
                   + (" Run the job with NCCL_DEBUG=INFO for more detail." if not f.nccl_versions else ""))
        if report.findings:
            out.append("")
    for n, fd in enumerate(report.findings, 1):
        label = "most likely root cause" if n == 1 and report.failed else ("also possible" if report.failed else "warning")
        out.append(f"{n}. {style(fd.title, 'bold')}")
        out.append(f"   {label}, {style(fd.confidence + ' confidence', _CONF.get(fd.confidence, 'dim'))}  [{fd.id}]")
        if fd.evidence:
            out.append("   evidence:")
            for i, line in enumerate(fd.evidence):
                loc = f"{fd.locations[i]}: " if i < len(fd.locations) else ""
                out.append("     " + _clip(loc + line, 160))
        for reason in fd.why[:3]:
            out.extend(textwrap.wrap(reason, 100, initial_indent="   why: ", subsequent_indent="        "))
        for reason in fd.against[:3]:
            out.extend(textwrap.wrap(reason, 100, initial_indent="   against: ", subsequent_indent="            "))
        if fd.test:
            head = "confirm" if n == 1 else "tell apart"
            out.extend(textwrap.wrap(f"run `{fd.test['run']}`: it is this cause if {fd.test['confirms']}", 100,
                                     initial_indent=f"   {head}: ", subsequent_indent="        "))
        out.extend(textwrap.wrap(fd.fix, 100, initial_indent="   " + style("fix:", "green") + " ",
                                 subsequent_indent="        "))
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _facts_line(report) -> Optional[str]:
    d = report.facts.as_dict()
    parts = []
    if d["nccl_versions"]:
        cuda = f" (CUDA {', '.join(d['cuda_versions'])})" if d["cuda_versions"] else ""
        parts.append("NCCL " + ", ".join(d["nccl_versions"]) + cuda)
    if d["ranks"]:
        parts.append(f"{d['ranks']} ranks" + (f" on {d['nodes']} node(s)" if d["nodes"] else ""))
    if d["transports"]:
        parts.append("transports " + ", ".join(d["transports"]))
    if d["interfaces"] or d["bootstrap_interfaces"]:
        parts.append("interfaces " + ", ".join(dict.fromkeys(d["bootstrap_interfaces"] + d["interfaces"])))
    if d["nvls"]["used"] or d["nvls"]["available"] is not None:
        parts.append("NVLS " + ("used" if d["nvls"]["used"] else "available" if d["nvls"]["available"] else "unavailable"))
    if d["env"]:
        parts.append("env " + " ".join(f"{k}={v}" for k, v in d["env"].items()))
    return " · ".join(parts) or None


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
