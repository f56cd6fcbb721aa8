"""`selftest collectives`: what nccl-tests' *_perf binaries check, in one command, through torch.distributed.

all_reduce, all_gather, reduce_scatter, alltoall, broadcast and sendrecv, at every power-of-two message size of
`--min-size..--max-size`: every element of every result compared exactly with the one it must be, then algbw and
busbw as nccl-tests defines them (doc/PERFORMANCE.md). The size S is the buffer nccl-tests' size column counts:

| collective | S is | busbw = algbw x |
|---|---|---|
| all_reduce | the buffer, in and out | 2(n-1)/n |
| all_gather | the gathered output (each rank sends S/n) | (n-1)/n |
| reduce_scatter | the input (each rank keeps S/n) | (n-1)/n |
| alltoall | each rank's send (and receive) buffer, S/n per peer | (n-1)/n |
| broadcast | the buffer rank 0 sends | 1 |
| sendrecv | what each rank sends to the next (and receives from the previous) | 1 |

algbw = S / time (S rounded down to n elements of 4 bytes for the chunked ones: `bytes` records what was moved).
The ranks are launched, bounded, cleaned up and diagnosed as `selftest allreduce`'s are (ranks.py): a crashed or
hung rank is reported within `--timeout + 5 s` with no process left, a failed NCCL run goes through the NCCL log
diagnosis and is rerun with one transport disabled at a time, and a passing NCCL run is compared with the links
(bandwidth.py): `SELFTEST-COLLECTIVE-SLOW` per collective whose busbw at the largest size is below half of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from envdoctor.findings import Finding
from envdoctor.selftest.bandwidth import expected_busbw, shortfall_finding
from envdoctor.selftest.common import Progress, RunDir, Target, no_progress
from envdoctor.selftest.kind import Plot, RunInputs, SelftestKind, SizePlot
from envdoctor.selftest.launch import Launcher, launch
from envdoctor.selftest.ranks import (
    Attempt,
    attempt,
    isolation_finding,
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
from envdoctor.selftest.result import TestResult
from envdoctor.snapshot import Snapshot

NAME = "collectives"
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "sendrecv")
# nccl-tests' busbw factors (doc/PERFORMANCE.md); workers/collectives_worker.py holds the same table
BUSBW_FACTOR: Dict[str, Callable[[int], float]] = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}
# what a size S means for each collective, as nccl-tests' size column counts it
BYTES_COUNTED = {
    "all_reduce": "the buffer, in and out",
    "all_gather": "the gathered output (S/n from each rank)",
    "reduce_scatter": "the input (S/n kept by each rank)",
    "alltoall": "each rank's send buffer (S/n to each peer)",
    "broadcast": "the buffer rank 0 sends",
    "sendrecv": "the buffer each rank sends to the next",
}
SLOW_ID = "SELFTEST-COLLECTIVE-SLOW"


def busbw_factor(collective: str, world_size: int) -> float:
    """nccl-tests' busbw / algbw for `collective` over `world_size` ranks (0 for a single rank where data moves
    nowhere, except broadcast and sendrecv whose factor is 1)."""
    if world_size < 1:
        return 0.0
    return BUSBW_FACTOR[collective](world_size)


def algbw_gbps(nbytes: int, seconds: float) -> float:
    """nccl-tests' algbw: the size S over the time of one collective, GB/s (1e9 bytes)."""
    return nbytes / seconds / 1e9


def busbw_gbps(collective: str, nbytes: int, seconds: float, world_size: int) -> float:
    """nccl-tests' busbw: algbw x the collective's factor, comparable with the links whatever the collective."""
    return algbw_gbps(nbytes, seconds) * busbw_factor(collective, world_size)


@dataclass
class CollectivesOptions:
    nproc: int
    backend: str
    sizes: List[int]
    collectives: Sequence[str] = COLLECTIVES
    nnodes: int = 1
    node_rank: int = 0
    rdzv_endpoint: Optional[str] = None
    rdzv_id: str = "envdoctor-selftest"
    iters: int = 0  # 0: as many as fit in seconds_per_size
    seconds_per_size: float = 0.25
    timeout: float = 600.0
    isolate: bool = True
    env: Dict[str, str] = field(default_factory=dict)
    scratch: Optional[Path] = None
    nccl_rules: Optional[Any] = None  # the Knowledge's NCCL signatures a failure is diagnosed with (None: bundled)


def launcher_argv(target: Target, opts: CollectivesOptions, out_dir: Path) -> List[str]:
    args = ["--out", str(out_dir), "--backend", opts.backend, "--sizes", ",".join(str(s) for s in opts.sizes),
            "--collectives", ",".join(opts.collectives), "--iters", str(opts.iters),
            "--seconds-per-size", f"{opts.seconds_per_size:g}", "--pg-timeout", f"{pg_timeout(opts.timeout):g}"]
    return torchrun_argv(target, opts, "collectives_worker.py", args)


def _attempt(target: Target, opts: CollectivesOptions, rundir: RunDir, label: str,
             extra_env: Optional[Mapping[str, str]], progress: Progress, launcher: Launcher) -> Attempt:
    return attempt(lambda out: launcher_argv(target, opts, out), opts, rundir, label, extra_env, progress, launcher)


def per_collective(att: Attempt) -> Dict[str, Dict[str, Any]]:
    """Each collective's figures by size from the first rank (the ranks reduced the timings: all agree); `correct`
    only where every reported rank's result was."""
    out: Dict[str, Dict[str, Any]] = {}
    world = att.first.get("world_size", 1)
    for name, entry in (att.first.get("collectives") or {}).items():
        if entry.get("skipped"):
            out[name] = {"skipped": entry["skipped"]}
            continue
        sizes = entry.get("sizes") or {}
        every = [m for data in att.ranks.values()
                 for m in (((data.get("collectives") or {}).get(name) or {}).get("sizes") or {}).values()]
        out[name] = {
            "busbw_gbps": {s: round(m["busbw_gbps"], 4) for s, m in sizes.items()},
            "algbw_gbps": {s: round(m["algbw_gbps"], 4) for s, m in sizes.items()},
            "bytes": {s: m["bytes"] for s, m in sizes.items()},
            "iters": {s: m["iters"] for s, m in sizes.items()},
            "busbw_factor": round(busbw_factor(name, world), 6),
            "correct": all(m.get("correct") for m in every) if sizes else None,
        }
    return out


def headline_busbw(att: Attempt) -> Dict[str, float]:
    """busbw by size of the first collective measured (all_reduce by default): the figure a rerun quotes."""
    for entry in per_collective(att).values():
        if entry.get("busbw_gbps"):
            return entry["busbw_gbps"]
    return {}


def metrics_of(att: Attempt, opts: CollectivesOptions) -> Dict[str, Any]:
    first = att.first
    colls = per_collective(att)
    measured = {n: c for n, c in colls.items() if "busbw_gbps" in c}
    m: Dict[str, Any] = {
        "world_size": first.get("world_size", opts.nproc * opts.nnodes),
        "backend": opts.backend,
        "nproc_per_node": opts.nproc,
        "nnodes": opts.nnodes,
        "collectives": colls,
        "correct": all(c["correct"] for c in measured.values()) if measured else None,
        "ranks_reported": sorted(att.ranks),
    }
    largest = max((int(s) for c in measured.values() for s in c["busbw_gbps"]), default=None)
    if largest is not None:
        m["largest_size"] = largest
        m["busbw_at_largest_gbps"] = {n: c["busbw_gbps"][str(largest)] for n, c in measured.items()
                                      if str(largest) in c["busbw_gbps"]}
    return run_facts(m, att, opts.nnodes, opts.node_rank, ("torch", "nccl_version"))


def run_collectives(
    target: Target,
    opts: CollectivesOptions,
    snapshot: Optional[Callable[[], Optional[Snapshot]]] = None,
    progress: Progress = no_progress,
    launcher: Launcher = launch,
) -> TestResult:
    """Launch the ranks, check and time every collective; diagnose a failure as `run_allreduce` does."""
    rundir = RunDir(NAME, opts.scratch)
    where = f" node {opts.node_rank}/{opts.nnodes}" if opts.nnodes > 1 else ""
    progress(f"{NAME}: {opts.nproc} rank(s){where}, {opts.backend}, {len(opts.collectives)} collective(s) x "
             f"{len(opts.sizes)} size(s)")
    att = _attempt(target, opts, rundir, "run", None, progress, launcher)
    metrics = metrics_of(att, opts)
    snap = snapshot() if snapshot is not None and opts.backend == "nccl" else None
    if att.ok:
        findings: List[Finding] = []
        if snap is not None:
            exp = expected_busbw(snap, metrics["world_size"], opts.backend, opts.nnodes)
            record_expectation(metrics, exp)
            for name, c in metrics["collectives"].items():
                finding = shortfall_finding(c.get("busbw_gbps") or {}, exp, metrics["world_size"], name, SLOW_ID,
                                            "collective_bandwidth_low")
                if finding is not None:
                    findings.append(finding)
        return rundir.finish(TestResult(NAME, "passed", att.launch.seconds, metrics, None, findings))

    findings = []
    try:
        findings.extend(nccl_diagnosis(att.launch.log_text(), snap, opts.nccl_rules))
    except Exception as exc:  # another module's bug must not cost the verdict
        metrics["nccl_diagnosis_error"] = f"{type(exc).__name__}: {exc}"
    seconds = att.launch.seconds
    if opts.backend == "nccl" and opts.isolate and opts.nnodes == 1 and not att.launch.error:
        tries = isolation_runs(lambda label, env: _attempt(target, opts, rundir, label, env, progress, launcher),
                               progress, NAME)
        seconds += sum(a.launch.seconds for a in tries.values())
        exp = expected_busbw(snap, metrics["world_size"], "nccl", 1) if snap is not None else None
        if exp is not None:
            record_expectation(metrics, exp)
        metrics["transport_isolation"] = isolation_metrics(tries, headline_busbw)
        finding = isolation_finding(tries, exp, att, "collective traffic", headline_busbw)
        if finding is not None:
            findings.insert(0, finding)
    return rundir.finish(TestResult(NAME, "failed", seconds, metrics, "; ".join(att.errors), findings), att.log)


def summary(m: Dict[str, Any]) -> str:
    """'2 ranks, gloo, at 64 MiB: busbw all_reduce 1.20, all_gather 0.95, ... GB/s'."""
    at = m.get("busbw_at_largest_gbps")
    if not at:
        return ""
    world = m.get("world_size", 1)
    if world > 1:
        figures = ", ".join(f"{n} {v:.2f}" for n, v in at.items())
        text = f"{world} ranks, {m['backend']}, at {size_label(m['largest_size'])}: busbw {figures} GB/s"
    else:
        figures = ", ".join(f"{n} {c['algbw_gbps'][str(m['largest_size'])]:.2f}"
                            for n, c in m["collectives"].items() if str(m["largest_size"]) in c.get("algbw_gbps", {}))
        text = f"1 rank, {m['backend']}, at {size_label(m['largest_size'])}: algbw {figures} GB/s (no data moves)"
    if m.get("expected_busbw_gbps"):
        text += f" (links: ~{m['expected_busbw_gbps']:.0f} GB/s, {m.get('expected_path')})"
    return text


def busiest(m: Dict[str, Any]) -> Optional[Tuple[str, Dict[str, float]]]:
    """The collective with the highest busbw at the largest size, and its busbw (algbw for one rank) by size."""
    at = m.get("busbw_at_largest_gbps") or {}
    if not at:
        return None
    key = "busbw_gbps" if m.get("world_size", 1) > 1 else "algbw_gbps"
    size = str(m["largest_size"])
    name = max(at, key=lambda n: m["collectives"][n][key].get(size, 0.0))
    return name, m["collectives"][name][key]


def plots(result: TestResult) -> Sequence[Plot]:
    """One size plot: the TUI draws one SizePlot, so it is the busiest collective's (named in the plot's title);
    every collective's figures are in the detail's metrics."""
    top = busiest(result.metrics or {})
    if top is None:
        return ()
    name, values = top
    what = "busbw" if (result.metrics or {}).get("world_size", 1) > 1 else "algbw"
    among = len((result.metrics or {}).get("busbw_at_largest_gbps", {}))
    return (SizePlot({int(k): float(v) for k, v in values.items()}, f"{name} {what} [busiest of {among}]"),)


def _run(inputs: RunInputs) -> TestResult:
    opts = ranked_options(NAME, inputs, CollectivesOptions)
    if isinstance(opts, TestResult):
        return opts
    return run_collectives(inputs.target, opts, snapshot=inputs.snapshot, progress=inputs.progress)


# progress: the record's line, "N ranks joined", then one line per collective and size (17 sizes by default)
KIND = SelftestKind(NAME, "nccl-tests collectives", 600.0, _run, steps=2 + len(COLLECTIVES) * 17, summary=summary,
                    plots=plots)
