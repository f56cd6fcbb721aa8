"""`envdoctor selftest`: prove the machine works, with a verdict per test (CONTRACT.md, envdoctor.selftest/1).

Every test body runs in the target interpreter (`--python`); this process never imports torch.
Progress goes to stderr; stdout carries the report (the JSON document with --json).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from envdoctor.commands.common import add_output_options, current_settings, emit_result, snapshot_file
from envdoctor.present.output import say
from envdoctor.present.style import Style
from envdoctor.probes.context import target_python
from envdoctor.selftest.registry import ALL, kinds
from envdoctor.selftest.runner import SelftestOptions


def register(sub: argparse._SubParsersAction) -> None:
    tests = kinds()
    p = sub.add_parser("selftest", help=f"run the built-in self-tests ({', '.join(k.title for k in tests)})",
                       description="Run the self-tests in the target interpreter and give a verdict for each.")
    p.add_argument("test", nargs="?", default=ALL, choices=[*(k.name for k in tests), ALL],
                   help="which test (default: all; zero3 only where DeepSpeed is installed)")
    p.add_argument("--nproc", type=int, default=None, metavar="N",
                   help="ranks per node for allreduce (default: the GPUs with nccl, 2 with gloo)")
    p.add_argument("--backend", choices=["nccl", "gloo"], default=None,
                   help="allreduce backend (default: nccl when CUDA is available in the target, else gloo)")
    p.add_argument("--nnodes", type=int, default=1, metavar="N", help="nodes taking part in allreduce (default 1)")
    p.add_argument("--node-rank", type=int, default=0, metavar="R", help="this node's rank (0..nnodes-1)")
    p.add_argument("--rdzv-endpoint", metavar="HOST:PORT", help="c10d rendezvous endpoint, the same on every node")
    p.add_argument("--rdzv-id", default="envdoctor-selftest", metavar="ID", help="rendezvous id, the same on every node")
    p.add_argument("--min-size", default="1K", metavar="SIZE", help="smallest all-reduce message (default 1K)")
    p.add_argument("--max-size", default="64M", metavar="SIZE", help="largest all-reduce message (default 64M)")
    p.add_argument("--iters", type=int, default=0, metavar="N",
                   help="timed all-reduce iterations per size (default: as many as fit in 0.25 s, 3..200)")
    p.add_argument("--batch", type=int, default=8, metavar="N", help="image-text pairs in the backward test (default 8)")
    p.add_argument("--repeats", type=int, default=3, metavar="N",
                   help="timed rounds per mode in the backward test; the median counts (default 3)")
    p.add_argument("--no-deepspeed", action="store_true", help="skip the DeepSpeed engine step in the backward test")
    p.add_argument("--stress", type=float, default=0.0, metavar="SECONDS",
                   help="gpu: after the checks, a matmul burn of SECONDS on every GPU and a memory pattern test over "
                        "half the free memory; reports throttling, ECC/Xid/NVLink growth and TFLOP/s against the "
                        "GPU's datasheet peak (default 0: none)")
    p.add_argument("--steps", type=int, default=4, metavar="N", help="optimizer steps in the zero3 test (default 4)")
    p.add_argument("--nvme", type=Path, default=None, metavar="PATH",
                   help="zero3: also offload to NVMe swap files in this directory (default: when libaio and a local "
                        "disk are there)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="bound per test; a crashed or hung rank gives `failed` within it plus 5 s "
                        f"(defaults: {', '.join(f'{k.name} {k.timeout:g}' for k in tests)})")
    p.add_argument("--snapshot", type=snapshot_file, metavar="FILE",
                   help="this machine's snapshot for the expected bandwidth (default: probe it when the backend is nccl)")
    p.add_argument("--python", metavar="PATH", help="the interpreter whose environment to test (default: this one)")
    add_output_options(p, "envdoctor.selftest/1")
    p.set_defaults(func=run)


def options_from_args(args: argparse.Namespace) -> SelftestOptions:
    """The parsed flags as typed options, checked (InputError names the bad flag)."""
    opts = SelftestOptions(
        nproc=args.nproc, backend=args.backend, nnodes=args.nnodes, node_rank=args.node_rank,
        rdzv_endpoint=args.rdzv_endpoint, rdzv_id=args.rdzv_id, min_size=args.min_size, max_size=args.max_size,
        iters=args.iters, batch=args.batch, repeats=args.repeats, deepspeed=not args.no_deepspeed,
        timeout=args.timeout, scratch=current_settings().selftest_dir, steps=args.steps, nvme=args.nvme,
        stress=args.stress,
    )
    opts.check()
    return opts


def run(args: argparse.Namespace) -> int:
    from envdoctor.present.selftest import event_line, render_results
    from envdoctor.usecases.selftest import SelftestEvent, run_selftests

    options = options_from_args(args)
    python = target_python(args.python)
    links = None
    if args.snapshot:
        from envdoctor.snapshot import load_snapshot

        links = load_snapshot(args.snapshot)  # a bad file is bad input: exit 2 before any test runs

    def on_event(event: SelftestEvent) -> None:
        line = event_line(event)
        if line is not None:
            say(f"envdoctor selftest: {line}")

    done = run_selftests(python, [args.test], options, links=links, probe_links=links is None, on_event=on_event,
                         knowledge=current_settings().rules_knowledge())
    emit_result(args, done, lambda: render_results(done.results, Style.for_stream(sys.stdout)))
    return done.exit_code()
