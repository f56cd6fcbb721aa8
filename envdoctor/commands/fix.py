"""`envdoctor fix`: plan the PyTorch (and DeepSpeed) install that runs here and, with --yes, carry it out."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Optional

from envdoctor.commands.common import (
    add_output_file,
    add_output_options,
    add_timeouts,
    current_settings,
    document_format,
    emit_result,
    obtain_snapshot,
    snapshot_file,
    write_output,
)
from envdoctor.errors import InputError
from envdoctor.present.output import LiveLine, ask, emit
from envdoctor.present.output import say as say_line
from envdoctor.present.plan import render_plan
from envdoctor.probes.context import target_python
from envdoctor.settings import TORCH_INDEX_ENV, Settings
from envdoctor.snapshot import load_snapshot
from envdoctor.usecases.plan_fix import FixWishes, PlanResult, other_machine, plan_fix, report_installs, resolve_files

PLAN_SCHEMA = "envdoctor.plan/1"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fix", help="plan the compatible PyTorch (and DeepSpeed) install and, with --yes, carry it out")
    p.add_argument("--snapshot", type=snapshot_file, metavar="FILE",
                   help="plan for a snapshot taken elsewhere (plans only, installs nothing)")
    p.add_argument("--dry-run", action="store_true", help="print the plan and the exact commands, install nothing")
    p.add_argument("--yes", action="store_true", help="install without asking")
    p.add_argument("--torch", metavar="SPEC", help="torch versions to choose from, e.g. '2.9', '>=2.8,<2.11'")
    p.add_argument("--deepspeed", nargs="?", const="", default=None, metavar="SPEC", help="also install DeepSpeed")
    p.add_argument("--python", metavar="PATH",
                   help="the interpreter whose environment to fix; with --snapshot, the Python version to plan for (3.12)")
    p.add_argument("--index-base", metavar="URL",
                   help=f"PyTorch wheel index or mirror laid out as URL/<variant>/<package>/ (or ${TORCH_INDEX_ENV})")
    p.add_argument("--break-system-packages", action="store_true", help="allow installing into a PEP 668 system environment")
    p.add_argument("--only", action="append", default=[], metavar="ID",
                   help="run only this step (a step id from --dry-run, or the finding id it answers); repeatable")
    p.add_argument("--skip", action="append", default=[], metavar="ID",
                   help="leave this step out (a step id or finding id); repeatable; the steps planned on it go too")
    p.add_argument("--unsafe", action="store_true",
                   help="also run the unsafe steps: rebuilds of a compiled extension from source (they compile)")
    add_output_options(p, PLAN_SCHEMA)
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
    add_output_file(p, "with --format: write here instead of stdout")


def planned_target(args: argparse.Namespace) -> Optional[Any]:
    """The other machine of --target or --gpu/--driver (a wheels.target.Target), or None: plan for this one."""
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
        return other_machine(load_snapshot(args.target), args.target)
    count = None
    if args.gpu and args.gpu_count is not None:
        if not re.fullmatch(r"\s*\d{1,4}\s*", args.gpu_count):
            raise InputError(f"--gpu-count {args.gpu_count!r}: not a number of GPUs")
        count = int(args.gpu_count)
    return other_machine(gpu=args.gpu, driver=args.driver, count=count, name=args.gpu_name)


def make_plan(args: argparse.Namespace, settings: Settings, warn: Any = None,
              target: Optional[Any] = None) -> PlanResult:
    """The plan use case for the parsed flags: for --snapshot FILE (with --python as the Python version), else
    for the environment of --python as probed here; `target`: for that machine's GPUs and driver."""
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
    wishes = FixWishes(args.torch, args.deepspeed, python_version, args.index_base,
                       tuple(getattr(args, "only", None) or ()), tuple(getattr(args, "skip", None) or ()))
    return plan_fix(snap, settings.fix_setup(warn), wishes, python_path, target)


def run(args: argparse.Namespace) -> int:
    from envdoctor.usecases.apply_fix import EnvStateError, apply_fix, refuse_unsafe

    live = LiveLine(sys.stderr) if sys.stderr.isatty() else None

    def say(msg: str) -> None:
        if live:
            live.clear()
        say_line(f"envdoctor: {msg}")

    settings = current_settings()
    check_lock_options(args)
    target = planned_target(args)
    result: Any = make_plan(args, settings, warn=say, target=target)
    if args.format:
        return write_lock(args, result, settings, say)
    result = report_installs(result, os.environ, settings.pip_index_url)
    install = result.status == "planned" and not args.dry_run and not args.snapshot
    if install:
        refuse_unsafe(result, args.unsafe)  # before asking: exit 2, nothing changed
    if install and not args.yes:
        if sys.stdin.isatty() and sys.stdout.isatty():
            emit(render_plan(result))
            answer = ask("install this plan? [y/N] ").strip().lower()
            install = answer in ("y", "yes")
            if not install:
                return 0
        else:
            say("not installing: stdin is not a terminal and --yes was not given")
            install = False
    if install:
        try:
            result = apply_fix(result, settings.fix_setup(), say, break_system_packages=args.break_system_packages,
                               live=live.show if live else None, unsafe=args.unsafe)
        except EnvStateError as exc:  # busy, or half-changed by an interrupted fix: nothing was done
            say(f"error: {exc}")
            return 3
        say(result.message)
        if target is not None and result.status == "installed":
            say("the GPUs were not checked here: run `envdoctor check` on the target machine")
    emit_result(args, result, lambda: render_plan(result))
    return result.exit_code()


def check_lock_options(args: argparse.Namespace) -> None:
    from envdoctor.present.lockfiles import PYLOCK_NAME

    if args.output and not args.format:
        raise InputError("-o/--output goes with --format")
    if not args.format:
        return
    fmt = document_format(args)
    if fmt is not None:
        raise InputError(f"--format and --{fmt.name} are two outputs: give one")
    if args.yes:
        raise InputError("--format writes a lock and installs nothing: drop --yes, or install from the lock")
    if args.snapshot:
        raise InputError("--format resolves the files with this environment's pip: use --target SNAPSHOT "
                         "instead of --snapshot")
    if args.format == "pylock" and args.output and not PYLOCK_NAME.fullmatch(Path(args.output).name):
        raise InputError(f"-o {args.output!r}: PEP 751 names a lock file pylock.toml or pylock.<name>.toml")


def write_lock(args: argparse.Namespace, result: PlanResult, settings: Settings, say: Callable[[str], None]) -> int:
    """`fix --format`: the plan with what it keeps, every file as pip resolves it from scratch (installed
    packages ignored, so the lock is whole), as a lock. Exit 1 when there is no plan or no resolution."""
    from envdoctor.present import lockfiles

    if result.status == "impossible":
        say(f"no lock: {result.plan.reason}")
        return 1
    python = result.python or sys.executable
    locked = lockfiles.lock_plan(result.plan, result.index_base)
    got = resolve_files(locked, python, os.environ, settings.pip_index_url, from_scratch=True)
    if (locked.packages or locked.requirements) and not got.installs:
        why = "; ".join(got.notes) or "pip resolved nothing"
        if args.format != "requirements":
            say("no lock: " + why)
            return 1
        say(f"hashes left out: pip could not resolve the files ({why}); the requirements file pins the plan only")
        write_output(args, lockfiles.requirements_unhashed(locked, got.pip_index, why), f"{args.format} lock", show=emit)
        return 0
    local = lockfiles.local_links(got.installs, got.pip_index if args.format == "requirements" else None)
    if local and args.format != "uv":
        say(lockfiles.local_warning(local))
    try:
        if args.format == "requirements":
            text = lockfiles.requirements(locked, got.installs, got.pip_index)
        elif args.format == "pylock":
            text = lockfiles.pylock(locked, got.installs)
        else:
            text = lockfiles.uv_snippet(locked)
    except lockfiles.LockError as exc:
        say(f"no lock: {exc}")
        return 1
    write_output(args, text, f"{args.format} lock", show=emit)
    return 0
