"""`envdoctor fix`: plan the PyTorch (and DeepSpeed) install that runs here and, with --yes, carry it out."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from envdoctor.atomic_write import write_atomic
from envdoctor.commands.common import add_timeouts, current_settings, obtain_snapshot
from envdoctor.errors import InputError
from envdoctor.present.output import LiveLine, ask, emit, emit_json
from envdoctor.present.output import say as say_line
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
    add_target_options(p)
    add_lock_options(p)
    add_timeouts(p)
    p.set_defaults(func=run)


def add_target_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", metavar="SNAPSHOT",
                   help="plan for the GPUs and driver of this snapshot's machine, with this environment's Python "
                        "(a Docker build); --yes installs that plan here")
    p.add_argument("--gpu", metavar="CC[,CC...]", help="plan for GPUs of these compute capabilities (with --driver)")
    p.add_argument("--driver", metavar="VERSION", help="with --gpu: the target's NVIDIA driver version, e.g. 570.133.07")
    p.add_argument("--gpu-count", metavar="N", help="with --gpu CC: the target has N such GPUs")
    p.add_argument("--gpu-name", metavar="NAME", help="with --gpu: the GPU's name, for the messages")


def add_lock_options(p: argparse.ArgumentParser) -> None:
    from envdoctor.present.lockfiles import FORMATS

    p.add_argument("--format", choices=FORMATS,
                   help="print the plan as a pinned requirements file, a PEP 751 pylock.toml or a uv project snippet "
                        "(installs nothing)")
    p.add_argument("-o", "--output", metavar="FILE", help="with --format: write here instead of stdout")


def planned_target(args: argparse.Namespace) -> Optional[Any]:
    """The other machine of --target or --gpu/--driver (a wheels.target.Target), or None: plan for this one."""
    from envdoctor.wheels import target

    given = [o for o, v in (("--target", args.target), ("--gpu", args.gpu)) if v]
    if len(given) > 1:
        raise InputError("--target and --gpu both name the target machine: give one")
    if given and args.snapshot:
        raise InputError(f"{given[0]} plans for another machine with this environment's Python; --snapshot plans "
                         "for the snapshot's own environment: give one")
    if not args.gpu:
        stray = [o for o, v in (("--driver", args.driver), ("--gpu-count", args.gpu_count), ("--gpu-name", args.gpu_name)) if v]
        if stray:
            raise InputError(f"{stray[0]} goes with --gpu CC")
    if args.target:
        return target.from_snapshot(load_snapshot(args.target), args.target)
    if args.gpu:
        count = None
        if args.gpu_count is not None:
            if not re.fullmatch(r"\s*\d{1,4}\s*", args.gpu_count):
                raise InputError(f"--gpu-count {args.gpu_count!r}: not a number of GPUs")
            count = int(args.gpu_count)
        return target.from_options(args.gpu, args.driver, count, args.gpu_name)
    return None


def make_plan(args: argparse.Namespace, settings: Settings, warn: Any = None,
              target: Optional[Any] = None) -> Tuple[Any, Snapshot, Optional[str]]:
    """(plan with its commands, snapshot, target python path or None). `target`: plan for that machine's GPUs and
    driver with this environment (planned_target)."""
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
        if target is not None:
            from envdoctor.wheels.target import retarget

            snap = retarget(snap, target)
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
    if doc.get("installs"):
        lines.append("  pip will install (with the dependencies):")
        for i in doc["installs"]:
            mark = {False: "  [no hash on the index]", None: "  [not found on an index page]"}.get(i["hashed"], "")
            lines.append(f"    {i['name']} {i['version']}{mark}")
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
    from envdoctor.install.state import EnvStateError

    live = LiveLine(sys.stderr) if sys.stderr.isatty() else None

    def say(msg: str) -> None:
        if live:
            live.clear()
        say_line(f"envdoctor: {msg}")

    settings = current_settings()
    check_lock_options(args)
    target = planned_target(args)
    the_plan, snap, python_path = make_plan(args, settings, warn=say, target=target)
    doc = the_plan.to_json()
    if target is not None:
        doc["target"] = target.to_json()
        doc["notes"].append("planned for the target's GPUs and driver: the GPU check runs at the first "
                            "`envdoctor check` there (this machine's GPUs are not the target's)")
    if args.format:
        return write_lock(args, the_plan, settings, python_path or sys.executable, say)
    if python_path and the_plan.status == "planned":
        from envdoctor.install.preview import install_report
        from envdoctor.probes.pip_config import pip_index_url

        pip_index = pip_index_url(settings.pip_index_url, python_path)
        doc["installs"], notes = install_report(the_plan, python_path, os.environ, pip_index)
        doc["notes"] += notes
    install = the_plan.status == "planned" and not args.dry_run and not args.snapshot
    if install and not args.yes:
        if sys.stdin.isatty() and sys.stdout.isatty():
            emit(render(doc))
            answer = ask("install this plan? [y/N] ").strip().lower()
            install = answer in ("y", "yes")
            if not install:
                return 0
        else:
            say("not installing: stdin is not a terminal and --yes was not given")
            install = False
    if install:
        # For a target, this machine's GPUs (if any) are not the ones planned for: torch is checked without them.
        ccs = [] if target is not None else [str(g.compute_capability) for g in known_list(snap.gpus)
                                              if present(g.compute_capability)]
        try:
            out = execute(the_plan, python_path or sys.executable, ccs, say, settings.writable_state_root(), settings.use_uv,
                          break_system_packages=args.break_system_packages, live=live.show if live else None)
        except EnvStateError as exc:  # busy, or half-changed by an interrupted fix: nothing was done
            say(f"error: {exc}")
            return 3
        doc["status"] = out.status
        doc["commands"] = out.commands
        doc["message"] = out.message
        doc["rollback_ok"] = out.rollback_ok
        say(out.message)
        if target is not None and out.status == "installed":
            say("the GPUs were not checked here: run `envdoctor check` on the target machine")
    emit_json(doc) if args.json else emit(render(doc))
    if doc["status"] == "rolled_back":
        return 3
    return 1 if doc["status"] == "impossible" else 0


def check_lock_options(args: argparse.Namespace) -> None:
    from envdoctor.present.lockfiles import PYLOCK_NAME

    if args.output and not args.format:
        raise InputError("-o/--output goes with --format")
    if not args.format:
        return
    if args.json:
        raise InputError("--format and --json are two outputs: give one")
    if args.yes:
        raise InputError("--format writes a lock and installs nothing: drop --yes, or install from the lock")
    if args.snapshot:
        raise InputError("--format resolves the files with this environment's pip: use --target SNAPSHOT "
                         "instead of --snapshot")
    if args.format == "pylock" and args.output and not PYLOCK_NAME.fullmatch(Path(args.output).name):
        raise InputError(f"-o {args.output!r}: PEP 751 names a lock file pylock.toml or pylock.<name>.toml")


def write_lock(args: argparse.Namespace, the_plan: Any, settings: Settings, python_path: str, say: Any) -> int:
    """`fix --format`: the plan with what it keeps, every file as pip resolves it from scratch (installed
    packages ignored, so the lock is whole), as a lock. Exit 1 when there is no plan or no resolution."""
    from envdoctor.install.preview import install_report
    from envdoctor.present import lockfiles
    from envdoctor.probes.pip_config import pip_index_url

    if the_plan.status == "impossible":
        say(f"no lock: {the_plan.reason}")
        return 1
    base = settings.torch_index_base(args.index_base, settings.wheel_index().default_index_base)
    locked = lockfiles.lock_plan(the_plan, base)
    pip_index = pip_index_url(settings.pip_index_url, python_path)
    installs, notes = install_report(locked, python_path, {**os.environ, "PIP_IGNORE_INSTALLED": "1"}, pip_index)
    if locked.packages and not installs:
        say("no lock: " + ("; ".join(notes) or "pip resolved nothing"))
        return 1
    try:
        if args.format == "requirements":
            text = lockfiles.requirements(locked, installs, pip_index)
        elif args.format == "pylock":
            text = lockfiles.pylock(locked, installs)
        else:
            text = lockfiles.uv_snippet(locked)
    except lockfiles.LockError as exc:
        say(f"no lock: {exc}")
        return 1
    if args.output:
        write_atomic(Path(args.output), text)
        say(f"{args.format} lock written to {args.output}")
    else:
        emit(text)
    return 0
