"""`envdoctor index update|show`: refresh the user copy of the wheel index from the live package indexes
(`envdoctor.wheels.remote`), or say which index is in use. The copy is validated before it is written;
the settings prefer it while it is valid and current."""

from __future__ import annotations

import argparse
import sys

from envdoctor.commands.common import current_settings, snapshot_file
from envdoctor.errors import InputError
from envdoctor.present.output import write_file
from envdoctor.present.terminal import for_terminal
from envdoctor.settings import writable_dir
from envdoctor.usecases.wheel_index import (
    DEFAULT_DEADLINE,
    index_sources,
    machine_variant_properties,
    refresh_wheel_index,
    snapshot_variant_properties,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("index", help="the wheel index: refresh it from the live package indexes")
    s = p.add_subparsers(dest="index_command", metavar="ACTION")
    u = s.add_parser("update", help="refresh the user copy of the wheel index")
    u.add_argument("--index-base", metavar="URL",
                   help="PyTorch wheel index or mirror (default: ENVDOCTOR_TORCH_INDEX or the official)")
    u.add_argument("--timeout", type=float, default=20.0, metavar="SECONDS", help="per read (default 20)")
    u.add_argument("--deadline", type=float, default=DEFAULT_DEADLINE, metavar="SECONDS",
                   help=f"for the whole update (default {DEFAULT_DEADLINE:g})")
    u.set_defaults(func=run_update)
    sh = s.add_parser("show", help="where the wheel index in use comes from")
    sh.set_defaults(func=run_show)
    vp = s.add_parser("variant-properties",
                      help="this machine's wheel-variant properties (PEP 817) as an NVIDIA variant provider reports them")
    vp.add_argument("--snapshot", type=snapshot_file, metavar="FILE",
                    help="of the machine a snapshot was taken on")
    vp.add_argument("--gpu", metavar="CC[,CC...]", help="for GPUs of these compute capabilities (with --driver)")
    vp.add_argument("--driver", metavar="VERSION", help="with --gpu: the NVIDIA driver version")
    vp.set_defaults(func=run_variant_properties)
    p.set_defaults(func=lambda args: (p.print_help(sys.stderr), 2)[1])


def _say(msg: str) -> None:
    print(for_terminal(f"envdoctor: {msg}"), file=sys.stderr, flush=True)


def run_update(args: argparse.Namespace) -> int:
    settings = current_settings()
    sources = index_sources(args.index_base, settings.torch_index, settings.pip_index_url)
    for name in ("timeout", "deadline"):
        if not 0 < getattr(args, name) < float("inf"):
            raise InputError(f"--{name} must be a positive number of seconds")
    writable_dir(settings.cache_dir)  # before any fetching: a cache that cannot take the copy is exit 2 now
    result = refresh_wheel_index(sources, args.timeout, args.deadline, _say)
    for f in result.failures[:5]:
        _say(f"could not refresh: {f}")
    if len(result.failures) > 5:
        _say(f"... and {len(result.failures) - 5} more")
    if result.pages == 0:
        _say(f"offline or unreachable ({sources.base}): nothing refreshed; envdoctor keeps using {sources.bundled.path}")
        return 1
    result.check()
    dest = settings.user_index_path
    write_file(dest, result.text())
    sys.stdout.write(f"wrote {dest}\n")
    return 0


def run_show(args: argparse.Namespace) -> int:
    idx = current_settings().wheel_index(warn=_say)
    sys.stdout.write(f"{idx.path} (generated {idx.generated}; {len(idx.releases)} torch releases, "
                     f"{len(idx.deepspeed)} DeepSpeed releases)\n")
    return 0


def run_variant_properties(args: argparse.Namespace) -> int:
    settings = current_settings()
    index = settings.wheel_index(warn=_say)
    if args.gpu or args.driver:
        from envdoctor.wheels.target import from_options

        if not args.gpu:
            raise InputError("--driver goes with --gpu CC")
        target = from_options(args.gpu, args.driver)
        result = machine_variant_properties(target.driver, [str(g.compute_capability) for g in target.gpus],
                                            sys.platform, index)
    else:
        from envdoctor.commands.common import obtain_snapshot

        snap = obtain_snapshot(argparse.Namespace(snapshot=args.snapshot, python=None, timeout=None), settings)
        result = snapshot_variant_properties(snap, index)
    for line in result.lines():
        sys.stdout.write(for_terminal(line) + "\n")
    return 0
