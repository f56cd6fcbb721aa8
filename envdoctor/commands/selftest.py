"""`envdoctor selftest`: prove the machine works, with a verdict per test (CONTRACT.md, envdoctor.selftest/1).

Every test body runs in the target interpreter (`--python`); this process never imports torch.
Progress goes to stderr; stdout carries the report (the JSON document with --json).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, List, Optional

from envdoctor.commands.common import target_python
from envdoctor.errors import InputError
from envdoctor.findings import sort_findings
from envdoctor.present.findings import render_findings
from envdoctor.present.output import emit, emit_json
from envdoctor.present.style import Style
from envdoctor.snapshot import Snapshot

TESTS = ("allreduce", "backward", "compile", "gpu")
DEFAULT_TIMEOUT = {"allreduce": 300.0, "backward": 600.0, "compile": 900.0, "gpu": 600.0}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("selftest", help="run the built-in self-tests (all-reduce, backward, torch.compile, GPU)",
                       description="Run the self-tests in the target interpreter and give a verdict for each.")
    p.add_argument("test", nargs="?", default="all", choices=[*TESTS, "all"], help="which test (default: all)")
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
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="bound per test; a crashed or hung rank gives `failed` within it plus 5 s "
                        f"(defaults: {', '.join(f'{k} {v:g}' for k, v in DEFAULT_TIMEOUT.items())})")
    p.add_argument("--snapshot", metavar="FILE",
                   help="this machine's snapshot for the expected bandwidth (default: probe it when the backend is nccl)")
    p.add_argument("--python", metavar="PATH", help="the interpreter whose environment to test (default: this one)")
    p.add_argument("--json", action="store_true", help="print the envdoctor.selftest/1 JSON document")
    p.set_defaults(func=run)


MAX_NPROC = 256  # ranks on one node: more than any GPU server has GPUs, and each rank is a whole process


def check_args(args: argparse.Namespace) -> None:
    """Validate the parsed options; InputError (exit 2) names the bad one. Also fills min_bytes/max_bytes."""
    from envdoctor.selftest.bandwidth import parse_size

    if args.nproc is not None and not 1 <= args.nproc <= MAX_NPROC:
        raise InputError(f"--nproc must be between 1 and {MAX_NPROC}, not {args.nproc}")
    if args.nnodes < 1:
        raise InputError(f"--nnodes must be at least 1, not {args.nnodes}")
    if not 0 <= args.node_rank < args.nnodes:
        raise InputError(f"--node-rank {args.node_rank} is outside 0..{args.nnodes - 1}")
    if args.nnodes > 1 and not args.rdzv_endpoint:
        raise InputError("--nnodes above 1 needs --rdzv-endpoint HOST:PORT (the same on every node)")
    if args.rdzv_endpoint:
        host, sep, port = args.rdzv_endpoint.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise InputError(f"--rdzv-endpoint {args.rdzv_endpoint!r}: expected HOST:PORT")
    try:
        args.min_bytes = parse_size(args.min_size)
        args.max_bytes = parse_size(args.max_size)
    except ValueError as exc:
        raise InputError(f"--min-size/--max-size: {exc}") from None
    if not 0 < args.min_bytes <= args.max_bytes:
        raise InputError(f"--min-size {args.min_size} must be positive and not above --max-size {args.max_size}")
    if args.iters < 0:
        raise InputError("--iters must not be negative")
    if args.batch < 1:
        raise InputError("--batch must be at least 1")
    if args.repeats < 1:
        raise InputError("--repeats must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise InputError("--timeout must be positive")


def _snapshot_source(args: argparse.Namespace, python: str, progress: Callable[[str], None]) -> Callable[[], Optional[Snapshot]]:
    """The snapshot, read or probed once, on first use (only the nccl comparison needs it)."""
    if args.snapshot:
        from envdoctor.snapshot import load_snapshot

        snap = load_snapshot(args.snapshot)  # a bad file is bad input: exit 2 before any test runs
        return lambda: snap
    cache: List[Optional[Snapshot]] = []

    def probe() -> Optional[Snapshot]:
        if not cache:
            from envdoctor.probes.base import ProbeContext
            from envdoctor.probes.runner import run_probes

            progress("probing this machine's links for the expected bandwidth")
            try:
                cache.append(run_probes(ProbeContext(python=python), only=("nvml", "system", "network", "env")))
            except Exception as exc:  # the comparison is optional; the verdict is not
                progress(f"probing failed ({exc}); no bandwidth expectation")
                cache.append(None)
        return cache[0]

    return probe


def run(args: argparse.Namespace) -> int:
    from envdoctor.selftest.common import discard_open_rundirs, probe_target
    from envdoctor.selftest.result import TestResult, document, exit_code

    check_args(args)
    python = target_python(args.python)
    quiet = False

    def progress(text: str) -> None:
        if not quiet:
            print(f"envdoctor selftest: {text}", file=sys.stderr, flush=True)

    snapshot = _snapshot_source(args, python, progress)
    progress(f"target {python}")
    target = probe_target(python)
    if target.error:
        progress(f"torch does not import: {target.error}")
    else:
        cuda = f"available, {target.device_count} GPU(s)" if target.cuda_available else "not available"
        progress(f"torch {target.torch}, CUDA {cuda}")
    names = list(TESTS) if args.test == "all" else [args.test]
    results: List[TestResult] = []
    try:
        for name in names:
            result = run_test(name, args, target, snapshot, progress)
            progress(f"{name}: {result.status} ({result.seconds:.1f}s)")
            results.append(result)
    except KeyboardInterrupt:  # the launcher already ended its processes; drop the half-written scratch dirs
        discard_open_rundirs()
        raise
    if args.json:
        emit_json(document(results))
    else:
        emit(render_results(results, Style.for_stream(sys.stdout)))
    return exit_code(results)


def run_test(name: str, args: argparse.Namespace, target, snapshot: Callable[[], Optional[Snapshot]],
             progress: Callable[[str], None]):
    """One test's TestResult with the command's options (`args` as parsed and checked): the CLI's loop and
    the TUI both call this, so both run a test the same way."""
    from envdoctor.selftest import allreduce as ar
    from envdoctor.selftest import single
    from envdoctor.selftest.bandwidth import power_of_two_sizes

    timeout = args.timeout or DEFAULT_TIMEOUT[name]
    start = time.monotonic()
    if name == "allreduce":
        result = _allreduce(args, target, timeout, snapshot, progress, ar, power_of_two_sizes)
    elif name == "backward":
        result = single.run_backward(target, batch=args.batch, repeats=getattr(args, "repeats", 3), timeout=timeout,
                                     deepspeed=not args.no_deepspeed, progress=progress)
    elif name == "compile":
        result = single.run_compile(target, timeout=timeout, progress=progress)
    else:
        result = single.run_gpu(target, timeout=timeout, progress=progress)
    if not result.seconds:
        result.seconds = time.monotonic() - start
    return result


def _allreduce(args, target, timeout, snapshot, progress, ar, power_of_two_sizes):
    from envdoctor.selftest.result import TestResult

    if target.error or not target.torch:
        return TestResult("allreduce", "failed", error=f"torch does not import in {target.python}: {target.error}")
    backend = args.backend or target.default_backend
    if backend == "nccl" and not (target.nccl and target.cuda_available):
        why = "torch.distributed has no NCCL in this build" if not target.nccl else "CUDA is not available"
        return TestResult("allreduce", "failed", error=f"--backend nccl: {why} (torch {target.torch}); use --backend gloo")
    if backend == "gloo" and not target.gloo:
        return TestResult("allreduce", "failed", error=f"torch {target.torch} has no gloo backend in torch.distributed")
    nproc = args.nproc or (max(1, target.device_count) if backend == "nccl" else 2)
    if backend == "nccl" and nproc > target.device_count:
        return TestResult("allreduce", "failed",
                          error=f"--nproc {nproc} with nccl needs {nproc} GPUs per node; torch sees {target.device_count}")
    opts = ar.AllreduceOptions(
        nproc=nproc, backend=backend, sizes=power_of_two_sizes(args.min_bytes, args.max_bytes), nnodes=args.nnodes,
        node_rank=args.node_rank, rdzv_endpoint=args.rdzv_endpoint, rdzv_id=args.rdzv_id, iters=args.iters,
        timeout=timeout,
    )
    return ar.run_allreduce(target, opts, snapshot=snapshot, progress=progress)


_LABEL = {"passed": ("PASSED", "green"), "failed": ("FAILED", "red"), "skipped": ("SKIPPED", "yellow")}


def summary_line(r) -> str:
    """The one-line gist of a TestResult (text report and TUI)."""
    m = r.metrics
    if r.status != "passed":
        return ""
    if r.name == "allreduce" and m.get("busbw_gbps"):
        size = max(m["busbw_gbps"], key=int)
        if m["world_size"] > 1:
            text = f"{m['world_size']} ranks, {m['backend']}: busbw {m['busbw_gbps'][size]:.2f} GB/s at {_size(int(size))}"
        else:  # busbw = algbw * 2(n-1)/n is 0 for one rank
            text = f"1 rank, {m['backend']}: algbw {m['algbw_gbps'][size]:.2f} GB/s at {_size(int(size))} (no data moves)"
        if m.get("expected_busbw_gbps"):
            text += f" (links: ~{m['expected_busbw_gbps']:.0f} GB/s, {m.get('expected_path')})"
        if m.get("ddp"):
            text += "; DDP gradients " + ("identical on every rank" if m["ddp"].get("grads_identical") else "DIFFER")
        return text
    if r.name == "backward" and m.get("speedup"):
        text = (f"batch {m['batch']}: loop {m['looped_seconds']:.3f}s, non-scalar {m['batched_seconds']:.3f}s "
                f"(x{m['speedup']:.2f}), max rel grad diff {m['max_rel_grad_diff']:.1e}")
        ds = m.get("deepspeed") or {}
        if ds.get("status"):
            text += f"; DeepSpeed {ds['status']}" + (f" ({ds.get('reason')})" if ds.get("reason") else "")
        return text
    if r.name == "compile" and m.get("compile_seconds") is not None:
        return (f"{m.get('device')}: compiled in {m['compile_seconds']:.1f}s, output diff {m.get('max_rel_out_diff', 0):.1e}, "
                f"grad diff {m.get('max_rel_grad_diff', 0):.1e}")
    if r.name == "gpu" and m.get("devices"):
        return "; ".join(f"{d['device']} " + ", ".join(f"{k} {v:.1f} TFLOP/s" for k, v in d["tflops"].items() if v)
                         for d in m["devices"])
    return ""


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):g} {unit}"
    return f"{n} B"


def render_results(results, style: Style) -> str:
    lines = []
    for r in results:
        label, colour = _LABEL[r.status]
        head = f"{style(label.ljust(7), colour)} {style(r.name.ljust(9), 'bold')} {r.seconds:6.1f}s  {summary_line(r)}"
        lines.append(head.rstrip())
        if r.error:
            why = "why" if r.status == "skipped" else "error"
            err = r.error.strip().splitlines()
            lines.append(f"        {why}: {err[0]}")
            lines.extend(f"          {ln}" for ln in err[1:8])
        if r.log:
            lines.append(f"        log kept: {r.log}")
    findings = sort_findings([f for r in results for f in r.findings])
    counts = {s: sum(r.status == s for r in results) for s in ("passed", "failed", "skipped")}
    out = "\n".join(lines) + "\n"
    if findings:
        out += "\n" + render_findings(findings, style)
    out += f"\n{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped\n"
    return out


# Names the TUI's adapter (envdoctor/tui/adapters.py on main) was written against; keep until it uses the public ones.
