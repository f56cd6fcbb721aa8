"""`selftest allreduce`: ranks launched through torch's own launcher, exact results, busbw, a DDP step.

One node: `python -m torch.distributed.run --standalone --nproc_per_node N worker ...`. Several nodes:
every node runs envdoctor with `--nnodes N --node-rank R --rdzv-endpoint HOST:PORT` and the launchers
meet through c10d rendezvous. Each node reports the ranks it started; the bandwidth figures are the same
on every node (the ranks reduce them).

Bound on a crashing or hanging rank (see launch.py): the ranks' process-group timeout is
`pg_timeout(timeout)` (0.4 x the test's timeout, 5..300 s), so a rank whose peer hangs fails first and
the launcher tears the others down; a crashed rank is seen by the launcher within its 0.5 s monitor
interval. Whatever happens, the verdict comes within `timeout + TERM_GRACE` (+ about a second) and no
process of the run is left.

A failing NCCL run (one node) is rerun with NCCL_P2P_DISABLE=1, NCCL_SHM_DISABLE=1 and NCCL_IB_DISABLE=1
in turn, to name the transport at fault and the bandwidth that working around it costs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from envdoctor.findings import Finding
from envdoctor.selftest.bandwidth import (
    Expectation,
    expected_busbw,
    shortfall_finding,
    size_done,
)
from envdoctor.selftest.common import Progress, RunDir, Target, no_progress
from envdoctor.selftest.kind import Plot, RunInputs, SelftestKind, SizePlot
from envdoctor.selftest.launch import Launcher, launch
from envdoctor.selftest.ranks import (
    ISOLATION_VARS,
    TRANSPORT,
    TRANSPORT_FIX,
    Attempt,
    isolation_metrics,
    isolation_runs,
    nccl_diagnosis,
    pg_timeout,
    ranked_options,
    record_expectation,
    run_facts,
    size_label,
    torchrun_argv,
)
from envdoctor.selftest.ranks import attempt as ranks_attempt
from envdoctor.selftest.ranks import isolation_finding as ranks_isolation_finding
from envdoctor.selftest.result import TestResult
from envdoctor.snapshot import Snapshot

__all__ = ["ISOLATION_VARS", "TRANSPORT", "TRANSPORT_FIX", "Attempt", "AllreduceOptions", "nccl_diagnosis", "pg_timeout",
           "run_allreduce", "KIND"]


@dataclass
class AllreduceOptions:
    nproc: int
    backend: str
    sizes: List[int]
    nnodes: int = 1
    node_rank: int = 0
    rdzv_endpoint: Optional[str] = None
    rdzv_id: str = "envdoctor-selftest"
    iters: int = 0  # 0: as many as fit in seconds_per_size
    seconds_per_size: float = 0.25
    timeout: float = 300.0
    ddp: bool = True
    isolate: bool = True
    env: Dict[str, str] = field(default_factory=dict)
    scratch: Optional[Path] = None  # where the run directory goes (default: the system temp directory)
    nccl_rules: Optional[Any] = None  # the Knowledge's NCCL signatures a failure is diagnosed with (None: bundled)


def launcher_argv(target: Target, opts: AllreduceOptions, out_dir: Path) -> List[str]:
    args = ["--out", str(out_dir), "--backend", opts.backend,
            "--sizes", ",".join(str(s) for s in opts.sizes), "--iters", str(opts.iters),
            "--seconds-per-size", f"{opts.seconds_per_size:g}", "--pg-timeout", f"{pg_timeout(opts.timeout):g}"]
    if not opts.ddp:
        args.append("--no-ddp")
    return torchrun_argv(target, opts, "allreduce_worker.py", args)


def attempt(target: Target, opts: AllreduceOptions, rundir: RunDir, label: str, extra_env: Optional[Mapping[str, str]],
            progress: Progress, launcher: Launcher) -> Attempt:
    return ranks_attempt(lambda out: launcher_argv(target, opts, out), opts, rundir, label, extra_env, progress, launcher)


def metrics_of(att: Attempt, opts: AllreduceOptions) -> Dict[str, Any]:
    first = att.first
    sizes = first.get("sizes", {})
    m: Dict[str, Any] = {
        "world_size": first.get("world_size", opts.nproc * opts.nnodes),
        "backend": opts.backend,
        "nproc_per_node": opts.nproc,
        "nnodes": opts.nnodes,
        "busbw_gbps": att.busbw(),
        "algbw_gbps": {s: round(v["algbw_gbps"], 4) for s, v in sizes.items()},
        "iters": {s: v["iters"] for s, v in sizes.items()},
        "correct": all(v.get("correct") for v in sizes.values()) if sizes else None,
        "ranks_reported": sorted(att.ranks),
    }
    return run_facts(m, att, opts.nnodes, opts.node_rank, ("ddp", "torch", "nccl_version"))


def run_allreduce(
    target: Target,
    opts: AllreduceOptions,
    snapshot: Optional[Callable[[], Optional[Snapshot]]] = None,
    progress: Progress = no_progress,
    launcher: Launcher = launch,
) -> TestResult:
    rundir = RunDir("allreduce", opts.scratch)
    where = f" node {opts.node_rank}/{opts.nnodes}" if opts.nnodes > 1 else ""
    progress(f"allreduce: {opts.nproc} rank(s){where}, {opts.backend}, {len(opts.sizes)} size(s)")
    att = attempt(target, opts, rundir, "run", None, progress, launcher)
    metrics = metrics_of(att, opts)
    snap = snapshot() if snapshot is not None and opts.backend == "nccl" else None
    if att.ok:
        findings: List[Finding] = []
        if snap is not None:
            exp = expected_busbw(snap, metrics["world_size"], opts.backend, opts.nnodes)
            record_expectation(metrics, exp)
            finding = shortfall_finding(metrics["busbw_gbps"], exp, metrics["world_size"])
            if finding is not None:
                findings.append(finding)
        return rundir.finish(TestResult("allreduce", "passed", att.launch.seconds, metrics, None, findings))

    findings = []
    try:
        findings.extend(nccl_diagnosis(att.launch.log_text(), snap, opts.nccl_rules))
    except Exception as exc:  # another module's bug must not cost the verdict
        metrics["nccl_diagnosis_error"] = f"{type(exc).__name__}: {exc}"
    seconds = att.launch.seconds
    if opts.backend == "nccl" and opts.isolate and opts.nnodes == 1 and not att.launch.error:
        tries = isolation_runs(lambda label, env: attempt(target, opts, rundir, label, env, progress, launcher),
                               progress, "allreduce")
        seconds += sum(a.launch.seconds for a in tries.values())
        exp = expected_busbw(snap, metrics["world_size"], "nccl", 1) if snap is not None else None
        if exp is not None:
            record_expectation(metrics, exp)
        metrics["transport_isolation"] = isolation_metrics(tries)
        finding = isolation_finding(tries, exp, att)
        if finding is not None:
            findings.insert(0, finding)
    error = "; ".join(att.errors)
    return rundir.finish(TestResult("allreduce", "failed", seconds, metrics, error, findings), att.log)


def isolation_finding(tries: Mapping[str, Attempt], exp: Optional[Expectation], failed: Attempt) -> Optional[Finding]:
    return ranks_isolation_finding(tries, exp, failed, "all-reduce")


def summary(m: Dict[str, Any]) -> str:
    if not m.get("busbw_gbps"):
        return ""
    size = max(m["busbw_gbps"], key=int)
    if m["world_size"] > 1:
        text = f"{m['world_size']} ranks, {m['backend']}: busbw {m['busbw_gbps'][size]:.2f} GB/s at {size_label(int(size))}"
    else:  # busbw = algbw * 2(n-1)/n is 0 for one rank
        text = f"1 rank, {m['backend']}: algbw {m['algbw_gbps'][size]:.2f} GB/s at {size_label(int(size))} (no data moves)"
    if m.get("expected_busbw_gbps"):
        text += f" (links: ~{m['expected_busbw_gbps']:.0f} GB/s, {m.get('expected_path')})"
    if m.get("ddp"):
        text += "; DDP gradients " + ("identical on every rank" if m["ddp"].get("grads_identical") else "DIFFER")
    return text


def plots(result: TestResult) -> Sequence[Plot]:
    """busbw by size; for one rank algbw (busbw is 0 when no data moves)."""
    m = result.metrics or {}
    if not m.get("busbw_gbps"):
        return ()
    ranks = m.get("world_size", 2) > 1
    values = m["busbw_gbps"] if ranks else (m.get("algbw_gbps") or m["busbw_gbps"])
    return (SizePlot({int(k): float(v) for k, v in values.items()}, "busbw" if ranks else "algbw"),)


def _run(inputs: RunInputs) -> TestResult:
    opts = ranked_options("allreduce", inputs, AllreduceOptions)
    if isinstance(opts, TestResult):
        return opts
    return run_allreduce(inputs.target, opts, snapshot=inputs.snapshot, progress=inputs.progress)


KIND = SelftestKind("allreduce", "all-reduce", 300.0, _run, size_line=size_done, summary=summary, plots=plots)
