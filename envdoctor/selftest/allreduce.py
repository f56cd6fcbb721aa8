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

import re
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from envdoctor.byte_sizes import format_bytes
from envdoctor.findings import Finding
from envdoctor.fixes import manual
from envdoctor.selftest.bandwidth import (
    Expectation,
    expected_busbw,
    largest_measured,
    power_of_two_sizes,
    shortfall_finding,
    size_done,
)
from envdoctor.selftest.common import Progress, ProgressTail, RunDir, Target, no_progress, worker_env
from envdoctor.selftest.kind import Plot, RunInputs, SelftestKind, SizePlot
from envdoctor.selftest.launch import Launcher, LaunchResult, launch
from envdoctor.selftest.result import WORKERS, TestResult, read_json
from envdoctor.snapshot import Snapshot

ISOLATION_VARS = ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE")
TRANSPORT = {"NCCL_P2P_DISABLE": "P2P (GPU peer-to-peer)", "NCCL_SHM_DISABLE": "SHM (shared memory)",
             "NCCL_IB_DISABLE": "IB (InfiniBand / RoCE)"}
TRANSPORT_FIX = {
    "NCCL_P2P_DISABLE": ("GPU peer-to-peer is broken: check ACS and the IOMMU (`envdoctor check`, `nvidia-smi topo -p2p r`); "
                         "in a VM, enable peer-to-peer in the hypervisor. Until then export NCCL_P2P_DISABLE=1."),
    "NCCL_SHM_DISABLE": ("the shared-memory transport fails: in a container give it room (`--shm-size=8g` or `--ipc=host`) "
                         "and check /dev/shm. Until then export NCCL_SHM_DISABLE=1."),
    "NCCL_IB_DISABLE": ("InfiniBand/RoCE fails: check `ibstat`, the nvidia-peermem module and NCCL_IB_HCA. Until then "
                        "export NCCL_IB_DISABLE=1 (NCCL falls back to TCP sockets)."),
}
RANK_EXIT_RE = re.compile(r"rank\s*:\s*(\d+)\s*\(local_rank:\s*\d+\)\s*\n\s*exitcode\s*:\s*(-?\d+)")


def pg_timeout(timeout: float) -> float:
    return max(5.0, min(0.4 * timeout, 300.0))


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


@dataclass
class Attempt:
    launch: LaunchResult
    ranks: Dict[int, Dict[str, Any]]
    errors: List[str]
    log: Path

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def first(self) -> Dict[str, Any]:
        return self.ranks[min(self.ranks)] if self.ranks else {}

    def busbw(self) -> Dict[str, float]:
        return {s: round(m["busbw_gbps"], 4) for s, m in self.first.get("sizes", {}).items()}


def launcher_argv(target: Target, opts: AllreduceOptions, out_dir: Path) -> List[str]:
    argv = [target.python, "-m", "torch.distributed.run", "--nproc_per_node", str(opts.nproc),
            "--max_restarts", "0", "--monitor_interval", "0.5"]
    if opts.nnodes == 1 and not opts.rdzv_endpoint:
        argv.append("--standalone")
    else:
        argv += ["--nnodes", str(opts.nnodes), "--node_rank", str(opts.node_rank), "--rdzv_backend", "c10d",
                 "--rdzv_endpoint", str(opts.rdzv_endpoint), "--rdzv_id", opts.rdzv_id,
                 "--rdzv_conf", f"join_timeout={max(10, int(opts.timeout))}"]
    argv += [str(WORKERS / "allreduce_worker.py"), "--out", str(out_dir), "--backend", opts.backend,
             "--sizes", ",".join(str(s) for s in opts.sizes), "--iters", str(opts.iters),
             "--seconds-per-size", f"{opts.seconds_per_size:g}", "--pg-timeout", f"{pg_timeout(opts.timeout):g}"]
    if not opts.ddp:
        argv.append("--no-ddp")
    return argv


def run_env(opts: AllreduceOptions, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    env = worker_env(opts.env)
    if opts.backend == "nccl":
        env.setdefault("NCCL_DEBUG", "INFO")  # kept in the log for the diagnosis
        env.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")  # a timed-out collective aborts instead of hanging
    env.update(extra or {})
    return env


def attempt(target: Target, opts: AllreduceOptions, rundir: RunDir, label: str, extra_env: Optional[Mapping[str, str]],
            progress: Progress, launcher: Launcher) -> Attempt:
    out = rundir.sub(label)
    log = rundir.path / f"{label}.log"
    tail = ProgressTail(out / "progress.log", progress, "  ")
    res = launcher(launcher_argv(target, opts, out), run_env(opts, extra_env), opts.timeout, log, tail)
    ranks: Dict[int, Dict[str, Any]] = {}
    for path in sorted(out.glob("rank*.json")):
        data = read_json(path)
        if data is not None and isinstance(data.get("rank"), int):
            ranks[data["rank"]] = data
    return Attempt(res, ranks, _errors(res, ranks, opts), log)


def _errors(res: LaunchResult, ranks: Dict[int, Dict[str, Any]], opts: AllreduceOptions) -> List[str]:
    errors: List[str] = []
    if res.error:
        return [res.error]
    if res.timed_out:
        errors.append(f"timed out after {res.seconds:.0f}s (--timeout {opts.timeout:g}); every process of the run was killed")
    missing = opts.nproc - len(ranks)
    if missing > 0:  # the root cause, usually: the others fail because this one went away
        exits = {r: c for r, c in _rank_exits(res.log_text(200_000)).items() if r not in ranks}
        how = "; ".join(f"rank {r} exited {_exit_name(c)}" for r, c in sorted(exits.items()))
        errors.append(f"{missing} of {opts.nproc} local rank(s) ended without a result" + (f" ({how})" if how else ""))
    for rank, data in sorted(ranks.items()):
        for err in data.get("errors") or []:
            errors.append(f"rank {rank}: {_last_line(err)}")
    if not errors and not res.ok:
        errors.append(res.describe())
    if not errors and not all(d.get("ok") for d in ranks.values()):
        errors.append("a rank reported a failure")
    return errors


def _last_line(text: str) -> str:
    lines = [ln for ln in str(text).strip().splitlines() if ln.strip()]
    return lines[-1][:400] if lines else ""


def _rank_exits(log: str) -> Dict[int, int]:
    return {int(m.group(1)): int(m.group(2)) for m in RANK_EXIT_RE.finditer(log)}


def _exit_name(code: int) -> str:
    if code < 0:
        try:
            return f"{code} ({signal.Signals(-code).name})"
        except ValueError:
            pass
    return str(code)


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
    if opts.nnodes > 1:
        m["node_rank"] = first.get("node_rank", opts.node_rank)
    for key in ("ddp", "torch", "nccl_version"):
        if key in first:
            m[key] = first[key]
    if att.launch.leftovers:
        m["leftover_processes_killed"] = att.launch.leftovers
    return m


def nccl_diagnosis(text: str, snapshot: Optional[Snapshot]) -> List[Finding]:
    """What `envdoctor nccl diagnose` makes of a failed run's output, most likely root cause first."""
    from envdoctor.nccl import diagnose_text

    return diagnose_text(text, snapshot=snapshot).findings


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
            _record_expectation(metrics, exp)
            finding = shortfall_finding(metrics["busbw_gbps"], exp, metrics["world_size"])
            if finding is not None:
                findings.append(finding)
        return rundir.finish(TestResult("allreduce", "passed", att.launch.seconds, metrics, None, findings))

    findings = []
    try:
        findings.extend(nccl_diagnosis(att.launch.log_text(), snap))
    except Exception as exc:  # another module's bug must not cost the verdict
        metrics["nccl_diagnosis_error"] = f"{type(exc).__name__}: {exc}"
    seconds = att.launch.seconds
    if opts.backend == "nccl" and opts.isolate and opts.nnodes == 1 and not att.launch.error:
        tries: Dict[str, Attempt] = {}
        for var in ISOLATION_VARS:
            progress(f"allreduce failed; retrying with {var}=1")
            tries[var] = attempt(target, opts, rundir, var.lower(), {var: "1"}, progress, launcher)
            seconds += tries[var].launch.seconds
        exp = expected_busbw(snap, metrics["world_size"], "nccl", 1) if snap is not None else None
        if exp is not None:
            _record_expectation(metrics, exp)
        metrics["transport_isolation"] = {
            var: {"status": "passed" if a.ok else "failed", "busbw_gbps": a.busbw(), "error": None if a.ok else a.errors[0]}
            for var, a in tries.items()
        }
        finding = isolation_finding(tries, exp, att)
        if finding is not None:
            findings.insert(0, finding)
    error = "; ".join(att.errors)
    return rundir.finish(TestResult("allreduce", "failed", seconds, metrics, error, findings), att.log)


def _record_expectation(metrics: Dict[str, Any], exp: Expectation) -> None:
    metrics["expected_busbw_gbps"] = round(exp.gbps, 1) if exp.gbps is not None else None
    metrics["expected_path"] = exp.path or exp.why


def isolation_finding(tries: Mapping[str, Attempt], exp: Optional[Expectation], failed: Attempt) -> Optional[Finding]:
    working = [v for v, a in tries.items() if a.ok]
    subjects = list(exp.subjects) if exp is not None else []
    if not working:
        return Finding(
            id="SELFTEST-NCCL-NO-TRANSPORT", severity="error", category="nccl_transport_failure",
            title="NCCL all-reduce fails even with P2P, SHM or IB disabled in turn",
            detail="Disabling one transport at a time does not help, so the failure is not one transport's: "
                   f"first error: {failed.errors[0] if failed.errors else 'unknown'}",
            remedy=manual("Read the kept log (NCCL_DEBUG=INFO) or run `envdoctor nccl diagnose LOG`; check driver, "
                          "torch's NCCL and the GPUs with `envdoctor check`."),
            subjects=subjects,
        )
    var = working[0]
    busbw = tries[var].busbw()
    size = largest_measured(busbw)
    cost = ""
    if size is not None:
        got = busbw[str(size)]
        cost = f" With {var}=1 all-reduce works at {got:.2f} GB/s busbw ({size} bytes)"
        if exp is not None and exp.gbps:
            cost += f", {got / exp.gbps:.0%} of the ~{exp.gbps:.0f} GB/s that {exp.path} should give"
        cost += "."
    also = [v for v in working[1:]]
    return Finding(
        id="SELFTEST-NCCL-TRANSPORT",
        severity="error",
        category="p2p_unavailable" if var == "NCCL_P2P_DISABLE" else "nccl_transport_failure",
        title=f"NCCL all-reduce fails through the {TRANSPORT[var]} transport and works with {var}=1",
        detail=(f"The all-reduce failed ({failed.errors[0] if failed.errors else 'unknown error'}); rerun with "
                f"{', '.join(f'{v}=1' for v in tries)} in turn, it passed with {', '.join(f'{v}=1' for v in working)}."
                + cost + (f" Also passing: {', '.join(also)}." if also else "")),
        remedy=manual(TRANSPORT_FIX[var]),
        subjects=subjects,
    )


def summary(m: Dict[str, Any]) -> str:
    if not m.get("busbw_gbps"):
        return ""
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


def _size(n: int) -> str:
    return format_bytes(n)


def plots(result: TestResult) -> Sequence[Plot]:
    """busbw by size; for one rank algbw (busbw is 0 when no data moves)."""
    m = result.metrics or {}
    if not m.get("busbw_gbps"):
        return ()
    ranks = m.get("world_size", 2) > 1
    values = m["busbw_gbps"] if ranks else (m.get("algbw_gbps") or m["busbw_gbps"])
    return (SizePlot({int(k): float(v) for k, v in values.items()}, "busbw" if ranks else "algbw"),)


def _run(inputs: RunInputs) -> TestResult:
    options, target, progress = inputs.options, inputs.target, inputs.progress
    if target.error or not target.torch:
        return TestResult("allreduce", "failed", error=f"torch does not import in {target.python}: {target.error}")
    backend = options.backend or target.default_backend
    if options.backend is None and backend == "gloo":
        why = "torch.distributed has no NCCL in this build" if not target.nccl else "CUDA is not available"
        progress(f"allreduce: nccl needs CUDA GPUs and {why} (torch {target.torch}): using gloo on the CPU instead")
    if backend == "nccl" and not (target.nccl and target.cuda_available):
        why = "torch.distributed has no NCCL in this build" if not target.nccl else "CUDA is not available"
        return TestResult("allreduce", "failed", error=f"--backend nccl: {why} (torch {target.torch}); use --backend gloo")
    if backend == "gloo" and not target.gloo:
        return TestResult("allreduce", "failed", error=f"torch {target.torch} has no gloo backend in torch.distributed")
    nproc = options.nproc or (max(1, target.device_count) if backend == "nccl" else 2)
    if backend == "nccl" and nproc > target.device_count:
        return TestResult("allreduce", "failed",
                          error=f"--nproc {nproc} with nccl needs {nproc} GPUs per node; torch sees {target.device_count}")
    if options.rdzv_endpoint and options.nnodes > 1:
        unresolved = _endpoint_precheck(options.rdzv_endpoint, options.nnodes, options.node_rank, progress)
        if unresolved is not None:
            return unresolved
    opts = AllreduceOptions(
        nproc=nproc, backend=backend, sizes=power_of_two_sizes(*options.size_range()),
        nnodes=options.nnodes, node_rank=options.node_rank, rdzv_endpoint=options.rdzv_endpoint,
        rdzv_id=options.rdzv_id, iters=options.iters, timeout=inputs.timeout, scratch=options.scratch,
    )
    return run_allreduce(target, opts, snapshot=inputs.snapshot, progress=progress)


def _endpoint_precheck(endpoint: str, nnodes: int, node_rank: int, progress: Progress) -> Optional[TestResult]:
    """Before launching: the rendezvous host must resolve (a failed result with the DNS finding at once, not a
    rendezvous timeout minutes later); a port that does not answer yet is only said, the peer may start later."""
    from envdoctor.fleet.endpoint import check_endpoint, endpoint_findings, parse_endpoint

    host, port = parse_endpoint(endpoint)
    check = check_endpoint(host, port, connect_timeout=3.0 if node_rank else None)
    findings = endpoint_findings(check)
    if findings:
        return TestResult("allreduce", "failed", check.seconds, {"nnodes": nnodes},
                          f"rendezvous host {host!r} does not resolve: {check.resolve_error}", findings)
    if check.reachable is False:
        progress(f"rendezvous endpoint {host}:{port} does not answer yet ({check.connect_error}); "
                 "launching anyway, rank 0's node may not have started")
    return None


KIND = SelftestKind("allreduce", "all-reduce", 300.0, _run, size_line=size_done, summary=summary, plots=plots)
