"""Ranks launched through torch's own launcher (torchrun), shared by `selftest allreduce` and `selftest collectives`:
the launch command, the ranks' environment, one attempt and what went wrong in it, and the NCCL transport isolation
of a failed run (reruns with one transport disabled at a time, and the finding that names the one at fault).

Bound on a crashing or hanging rank (see launch.py): the ranks' process-group timeout is `pg_timeout(timeout)`
(0.4 x the test's timeout, 5..300 s), so a rank whose peer hangs fails first and the launcher tears the others
down; a crashed rank is seen by the launcher within its 0.5 s monitor interval.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Protocol, Sequence, Union

from envdoctor.byte_sizes import format_bytes
from envdoctor.findings import Finding
from envdoctor.fixes import manual
from envdoctor.selftest.bandwidth import Expectation, largest_measured
from envdoctor.selftest.common import Progress, ProgressTail, RunDir, Target, worker_env
from envdoctor.selftest.launch import Launcher, LaunchResult
from envdoctor.selftest.result import WORKERS, TestResult, read_json
from envdoctor.snapshot import Snapshot

if TYPE_CHECKING:
    from envdoctor.selftest.kind import RunInputs
    from envdoctor.selftest.runner import SelftestOptions

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


class RankSpec(Protocol):
    """What launching the ranks needs from a test's options (AllreduceOptions and CollectivesOptions have it)."""

    nproc: int
    backend: str
    nnodes: int
    node_rank: int
    rdzv_endpoint: Optional[str]
    rdzv_id: str
    timeout: float
    env: Dict[str, str]


@dataclass(frozen=True)
class Ranks:
    """The backend and the ranks per node a distributed test runs with."""

    backend: str
    nproc: int


def choose_ranks(name: str, options: SelftestOptions, target: Target, progress: Progress,
                 nccl_rules: Optional[Any] = None) -> Union[Ranks, TestResult]:
    """The backend (nccl where CUDA and NCCL are there, said when it falls back to gloo) and the ranks per node (the
    GPUs with nccl, 2 with gloo), or the failed result that says why the test cannot run as asked. Several nodes:
    the rendezvous host must resolve first."""
    if target.error or not target.torch:
        return TestResult(name, "failed", error=f"torch does not import in {target.python}: {target.error}")
    backend = options.backend or target.default_backend
    if options.backend is None and backend == "gloo":
        why = "torch.distributed has no NCCL in this build" if not target.nccl else "CUDA is not available"
        progress(f"{name}: nccl needs CUDA GPUs and {why} (torch {target.torch}): using gloo on the CPU instead")
    if backend == "nccl" and not (target.nccl and target.cuda_available):
        why = "torch.distributed has no NCCL in this build" if not target.nccl else "CUDA is not available"
        return TestResult(name, "failed", error=f"--backend nccl: {why} (torch {target.torch}); use --backend gloo")
    if backend == "gloo" and not target.gloo:
        return TestResult(name, "failed", error=f"torch {target.torch} has no gloo backend in torch.distributed")
    nproc = options.nproc or (max(1, target.device_count) if backend == "nccl" else 2)
    if backend == "nccl" and nproc > target.device_count:
        return TestResult(name, "failed",
                          error=f"--nproc {nproc} with nccl needs {nproc} GPUs per node; torch sees {target.device_count}")
    if options.rdzv_endpoint and options.nnodes > 1:
        unresolved = _endpoint_precheck(name, options.rdzv_endpoint, options.nnodes, options.node_rank, progress,
                                        nccl_rules)
        if unresolved is not None:
            return unresolved
    return Ranks(backend, nproc)


def _endpoint_precheck(name: str, endpoint: str, nnodes: int, node_rank: int, progress: Progress,
                       nccl_rules: Optional[Any] = None) -> Optional[TestResult]:
    """Before launching: the rendezvous host must resolve (a failed result with the DNS finding at once, not a
    rendezvous timeout minutes later); a port that does not answer yet is only said, the peer may start later."""
    from envdoctor.fleet.endpoint import check_endpoint, endpoint_findings, parse_endpoint

    host, port = parse_endpoint(endpoint)
    check = check_endpoint(host, port, connect_timeout=3.0 if node_rank else None)
    findings = endpoint_findings(check, rules=nccl_rules)
    if findings:
        return TestResult(name, "failed", check.seconds, {"nnodes": nnodes},
                          f"rendezvous host {host!r} does not resolve: {check.resolve_error}", findings)
    if check.reachable is False:
        progress(f"rendezvous endpoint {host}:{port} does not answer yet ({check.connect_error}); "
                 "launching anyway, rank 0's node may not have started")
    return None


def pg_timeout(timeout: float) -> float:
    """The ranks' process-group timeout for a test bounded by `timeout` seconds."""
    return max(5.0, min(0.4 * timeout, 300.0))


@dataclass
class Attempt:
    """One launch of the ranks: how the launcher ended, each rank's result file, what went wrong."""

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
        """busbw by size from the first rank's `sizes` (the all-reduce worker's layout)."""
        return {s: round(m["busbw_gbps"], 4) for s, m in self.first.get("sizes", {}).items()}


def torchrun_argv(target: Target, spec: RankSpec, worker: str, worker_args: Sequence[str]) -> List[str]:
    """`python -m torch.distributed.run ... WORKERS/worker worker_args`: standalone on one node, else c10d rendezvous."""
    argv = [target.python, "-m", "torch.distributed.run", "--nproc_per_node", str(spec.nproc),
            "--max_restarts", "0", "--monitor_interval", "0.5"]
    if spec.nnodes == 1 and not spec.rdzv_endpoint:
        argv.append("--standalone")
    else:
        argv += ["--nnodes", str(spec.nnodes), "--node_rank", str(spec.node_rank), "--rdzv_backend", "c10d",
                 "--rdzv_endpoint", str(spec.rdzv_endpoint), "--rdzv_id", spec.rdzv_id,
                 "--rdzv_conf", f"join_timeout={max(10, int(spec.timeout))}"]
    return argv + [str(WORKERS / worker), *worker_args]


def run_env(spec: RankSpec, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The ranks' environment: the test's, NCCL logging and async error handling with nccl, then `extra`."""
    env = worker_env(spec.env)
    if spec.backend == "nccl":
        env.setdefault("NCCL_DEBUG", "INFO")  # kept in the log for the diagnosis
        env.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")  # a timed-out collective aborts instead of hanging
    env.update(extra or {})
    return env


def attempt(argv_for: Callable[[Path], List[str]], spec: RankSpec, rundir: RunDir, label: str,
            extra_env: Optional[Mapping[str, str]], progress: Progress, launcher: Launcher) -> Attempt:
    """Launch the ranks once (`argv_for(out_dir)`), echo rank 0's progress, collect every OUT/rank<R>.json."""
    out = rundir.sub(label)
    log = rundir.path / f"{label}.log"
    tail = ProgressTail(out / "progress.log", progress, "  ")
    res = launcher(argv_for(out), run_env(spec, extra_env), spec.timeout, log, tail)
    ranks: Dict[int, Dict[str, Any]] = {}
    for path in sorted(out.glob("rank*.json")):
        data = read_json(path)
        if data is not None and isinstance(data.get("rank"), int):
            ranks[data["rank"]] = data
    return Attempt(res, ranks, attempt_errors(res, ranks, spec), log)


def attempt_errors(res: LaunchResult, ranks: Dict[int, Dict[str, Any]], spec: RankSpec) -> List[str]:
    """What went wrong, root cause first: the launch itself, the deadline, ranks without a result, ranks' errors."""
    errors: List[str] = []
    if res.error:
        return [res.error]
    if res.timed_out:
        errors.append(f"timed out after {res.seconds:.0f}s (--timeout {spec.timeout:g}); every process of the run was killed")
    missing = spec.nproc - len(ranks)
    if missing > 0:  # the root cause, usually: the others fail because this one went away
        exits = {r: c for r, c in _rank_exits(res.log_text(200_000)).items() if r not in ranks}
        how = "; ".join(f"rank {r} exited {_exit_name(c)}" for r, c in sorted(exits.items()))
        errors.append(f"{missing} of {spec.nproc} local rank(s) ended without a result" + (f" ({how})" if how else ""))
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


def nccl_diagnosis(text: str, snapshot: Optional[Snapshot], rules: Optional[Any] = None) -> List[Finding]:
    """What `envdoctor nccl diagnose` makes of a failed run's output with the signatures `rules` (the Knowledge's;
    None: the bundled ones), most likely root cause first."""
    from envdoctor.nccl import diagnose_text

    return diagnose_text(text, snapshot=snapshot, rules=rules).findings


def isolation_runs(rerun: Callable[[str, Mapping[str, str]], Attempt], progress: Progress,
                   name: str) -> Dict[str, Attempt]:
    """Rerun a failed NCCL run with each of ISOLATION_VARS=1 in turn (`rerun(label, extra_env)`)."""
    tries: Dict[str, Attempt] = {}
    for var in ISOLATION_VARS:
        progress(f"{name} failed; retrying with {var}=1")
        tries[var] = rerun(var.lower(), {var: "1"})
    return tries


def isolation_metrics(tries: Mapping[str, Attempt],
                      busbw: Callable[[Attempt], Dict[str, float]] = Attempt.busbw) -> Dict[str, Any]:
    """`metrics.transport_isolation`: each rerun's status, busbw by size and first error."""
    return {var: {"status": "passed" if a.ok else "failed", "busbw_gbps": busbw(a), "error": None if a.ok else a.errors[0]}
            for var, a in tries.items()}


def isolation_finding(tries: Mapping[str, Attempt], exp: Optional[Expectation], failed: Attempt,
                      what: str = "all-reduce",
                      busbw: Callable[[Attempt], Dict[str, float]] = Attempt.busbw) -> Optional[Finding]:
    """The transport at fault (the first rerun that passed, with the busbw working around it costs), or that none
    helps. `what` names the traffic in the text; `busbw(attempt)` is the figure quoted for the workaround."""
    working = [v for v, a in tries.items() if a.ok]
    subjects = list(exp.subjects) if exp is not None else []
    if not working:
        return Finding(
            id="SELFTEST-NCCL-NO-TRANSPORT", severity="error", category="nccl_transport_failure",
            title=f"NCCL {what} fails even with P2P, SHM or IB disabled in turn",
            detail="Disabling one transport at a time does not help, so the failure is not one transport's: "
                   f"first error: {failed.errors[0] if failed.errors else 'unknown'}",
            remedy=manual("Read the kept log (NCCL_DEBUG=INFO) or run `envdoctor nccl diagnose LOG`; check driver, "
                          "torch's NCCL and the GPUs with `envdoctor check`."),
            subjects=subjects,
        )
    var = working[0]
    figures = busbw(tries[var])
    size = largest_measured(figures)
    cost = ""
    if size is not None:
        got = figures[str(size)]
        cost = f" With {var}=1 {what} works at {got:.2f} GB/s busbw ({size} bytes)"
        if exp is not None and exp.gbps:
            cost += f", {got / exp.gbps:.0%} of the ~{exp.gbps:.0f} GB/s that {exp.path} should give"
        cost += "."
    also = [v for v in working[1:]]
    return Finding(
        id="SELFTEST-NCCL-TRANSPORT",
        severity="error",
        category="p2p_unavailable" if var == "NCCL_P2P_DISABLE" else "nccl_transport_failure",
        title=f"NCCL {what} fails through the {TRANSPORT[var]} transport and works with {var}=1",
        detail=(f"The {what} failed ({failed.errors[0] if failed.errors else 'unknown error'}); rerun with "
                f"{', '.join(f'{v}=1' for v in tries)} in turn, it passed with {', '.join(f'{v}=1' for v in working)}."
                + cost + (f" Also passing: {', '.join(also)}." if also else "")),
        remedy=manual(TRANSPORT_FIX[var]),
        subjects=subjects,
    )


def record_expectation(metrics: Dict[str, Any], exp: Expectation) -> None:
    """`expected_busbw_gbps` and `expected_path` in a test's metrics."""
    metrics["expected_busbw_gbps"] = round(exp.gbps, 1) if exp.gbps is not None else None
    metrics["expected_path"] = exp.path or exp.why


def size_label(n: int) -> str:
    """1024 -> '1 KiB', 1536 -> '1.5 KiB', 100 -> '100 B' (the one byte formatter)."""
    return format_bytes(n)


def ranked_options(name: str, inputs: RunInputs, make: Callable[..., Any]) -> Any:
    """A multi-rank test's options (`make`: its options class) from the CLI's, with the ranks chosen and the
    Knowledge's NCCL signatures; or the TestResult that ends the test before any launch (no torch, an endpoint
    that does not resolve)."""
    from envdoctor.selftest.bandwidth import power_of_two_sizes

    options = inputs.options
    nccl_rules = inputs.knowledge.nccl if inputs.knowledge is not None else None
    chosen = choose_ranks(name, options, inputs.target, inputs.progress, nccl_rules)
    if isinstance(chosen, TestResult):
        return chosen
    return make(
        nproc=chosen.nproc, backend=chosen.backend, sizes=power_of_two_sizes(*options.size_range()),
        nnodes=options.nnodes, node_rank=options.node_rank, rdzv_endpoint=options.rdzv_endpoint,
        rdzv_id=options.rdzv_id, iters=options.iters, timeout=inputs.timeout, scratch=options.scratch,
        nccl_rules=nccl_rules,
    )


def run_facts(metrics: Dict[str, Any], att: Attempt, nnodes: int, node_rank: int, keys: Sequence[str]) -> Dict[str, Any]:
    """What every multi-rank result records beside its figures: this node's rank, what rank 0 reported under
    `keys` (torch, NCCL version...), and the processes the launcher had to kill."""
    first = att.first
    if nnodes > 1:
        metrics["node_rank"] = first.get("node_rank", node_rank)
    for key in keys:
        if key in first:
            metrics[key] = first[key]
    if att.launch.leftovers:
        metrics["leftover_processes_killed"] = att.launch.leftovers
    return metrics
