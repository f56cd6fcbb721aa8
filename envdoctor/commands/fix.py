"""`envdoctor fix`: plan the PyTorch (and DeepSpeed) install that runs here and, with --yes, carry it out."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any, Dict, Optional, Tuple

from envdoctor.commands.common import add_timeouts, current_settings, obtain_snapshot
from envdoctor.errors import InputError
from envdoctor.present.output import emit, emit_json
from envdoctor.probes.context import target_python
from envdoctor.settings import TORCH_INDEX_ENV, Settings
from envdoctor.snapshot import Snapshot, known_list, load_snapshot, present


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fix", help="plan the compatible PyTorch (and DeepSpeed) install and, with --yes, carry it out")
    p.add_argument("--snapshot", metavar="FILE", help="plan for a snapshot taken elsewhere (plans only, installs nothing)")
    p.add_argument("--dry-run", action="store_true", help="print the plan and the exact commands, install nothing")
    p.add_argument("--yes", action="store_true", help="install without asking")
    p.add_argument("--torch", metavar="SPEC", help="torch versions to choose from, e.g. '2.9', '>=2.8,<2.11'")
    p.add_argument("--deepspeed", nargs="?", const="", default=None, metavar="SPEC", help="also install DeepSpeed")
    p.add_argument("--python", metavar="PATH",
                   help="the interpreter whose environment to fix; with --snapshot, the Python version to plan for (3.12)")
    p.add_argument("--index-base", metavar="URL",
                   help=f"PyTorch wheel index or mirror laid out as URL/<variant>/<package>/ (or ${TORCH_INDEX_ENV})")
    p.add_argument("--break-system-packages", action="store_true", help="allow installing into a PEP 668 system environment")
    p.add_argument("--json", action="store_true", help="print the envdoctor.plan/1 JSON document")
    add_timeouts(p)
    p.set_defaults(func=run)


def make_plan(args: argparse.Namespace, settings: Settings, warn: Any = None) -> Tuple[Any, Snapshot, Optional[str]]:
    """(plan with its commands, snapshot, target python path or None)."""
    from envdoctor.install.preview import attach_commands
    from envdoctor.wheels.planner import plan
    from envdoctor.wheels.wishes import Wishes

    python_path = None
    python_version = None
    if args.snapshot:
        if args.python and not re.fullmatch(r"3\.\d{1,2}t?", args.python):
            raise InputError(f"--python {args.python!r}: with --snapshot it names the Python version to plan for, e.g. 3.12")
        python_version = args.python
        snap = load_snapshot(args.snapshot)
    else:
        python_path = target_python(args.python)
        snap = obtain_snapshot(argparse.Namespace(snapshot=None, python=python_path, timeout=args.timeout), settings)
    index = settings.wheel_index(warn=warn)
    wishes = Wishes.from_options(args.torch, args.deepspeed, python_version,
                                 settings.torch_index_base(args.index_base, index.default_index_base))
    the_plan = plan(snap, index, wishes)
    attach_commands(the_plan, snap, python_path, settings.state_root, settings.use_uv)
    return the_plan, snap, python_path


def render(doc: Dict[str, Any]) -> str:
    from envdoctor.present.words import word

    lines = [f"plan: {word(doc['status'])} - {doc.get('reason', '')}"]
    for p in doc["packages"]:
        lines.append(f"  install {p['pin']}" + (f"  from {p['index_url']}" if p["index_url"] else "  from your pip index"))
        lines.append(f"    because {p['reason']}" + (f" [{word(p['status'])}]" if p["status"] != "verified" else ""))
    for k in doc.get("kept") or []:
        lines.append(f"  keep {k}")
    for u in doc.get("upgrade") or []:
        lines.append(f"  upgrade: {u}")
    for n in doc.get("notes") or []:
        lines.append(f"  note: {n}")
    ops = doc.get("deepspeed_ops")
    if ops:
        lines.append(f"  DeepSpeed ops ({'JIT at first use' if ops['build_env'].get('DS_BUILD_OPS') == '0' else 'prebuilt'}):"
                     f" nvcc {ops['nvcc'] or 'missing'}, torch CUDA {ops['torch_cuda'] or '-'}: {ops['cuda_check']['why']}")
        for name, op in ops["ops"].items():
            lines.append(f"    {name:<12} {'[OKAY]' if op['buildable'] else '[NO]  '} {op['why']}")
    rej = doc.get("rejected") or []
    if rej:
        lines.append(f"  rejected ({len(rej)}):")
        for r in rej[:12]:
            lines.append(f"    {r['name']} {r['version']} {r['variant']}: {r['why']}")
        if len(rej) > 12:
            lines.append(f"    ... {len(rej) - 12} more (--json lists all)")
    if doc["commands"]:
        lines.append("  commands:")
        for c in doc["commands"]:
            lines.append("    " + " ".join(_quote(a) for a in c))
    if doc.get("env"):
        lines.append("  with environment: " + " ".join(f"{k}={v}" for k, v in doc["env"].items()))
    if doc.get("message"):
        lines.append(f"  {doc['message']}")
    return "\n".join(lines) + "\n"


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


def run(args: argparse.Namespace) -> int:
    from envdoctor.install.installer import execute

    def say(msg: str) -> None:
        print(f"envdoctor: {msg}", file=sys.stderr, flush=True)

    settings = current_settings()
    the_plan, snap, python_path = make_plan(args, settings, warn=say)
    doc = the_plan.to_json()
    install = the_plan.status == "planned" and not args.dry_run and not args.snapshot
    if install and not args.yes:
        if sys.stdin.isatty() and sys.stdout.isatty():
            emit(render(doc))
            answer = input("install this plan? [y/N] ").strip().lower()
            install = answer in ("y", "yes")
            if not install:
                return 0
        else:
            say("not installing: stdin is not a terminal and --yes was not given")
            install = False
    if install:
        ccs = [str(g.compute_capability) for g in known_list(snap.gpus) if present(g.compute_capability)]
        out = execute(the_plan, python_path or sys.executable, ccs, say, settings.state_root, settings.use_uv,
                      break_system_packages=args.break_system_packages)
        doc["status"] = out.status
        doc["commands"] = out.commands
        doc["message"] = out.message
        doc["rollback_ok"] = out.rollback_ok
        say(out.message)
    emit_json(doc) if args.json else emit(render(doc))
    if doc["status"] == "rolled_back":
        return 3
    return 1 if doc["status"] == "impossible" else 0
