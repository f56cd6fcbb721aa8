"""Named predicates over torch.distributed's messages (`DistFacts`, in `ctx.log.dist`), for the context rules
of `rules/nccl/dist_context.json`. Each returns None, or {"evidence": [lines]} saying, as the engineer who
answers these issues would, which rank / collective / port / host the log names and what to run next.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Tuple

from envdoctor.nccl.dist_facts import DistFacts, RankExit, Timeout, odd_address
from envdoctor.nccl.facts import first_failure_line
from envdoctor.rules.conditions import Context, predicate

Result = Optional[Dict[str, Any]]
SMALL_NUMEL = 16  # a collective this small is a barrier, a loss or a metric, not a gradient bucket


def _dist(ctx: Context) -> Optional[DistFacts]:
    return getattr(ctx.log, "dist", None)


def _ranks(ranks: Iterable[int]) -> str:
    """0,1,2,3,5 -> '0-3,5'."""
    out: List[str] = []
    run: List[int] = []
    for r in sorted(set(ranks)):
        if run and r == run[-1] + 1:
            run.append(r)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 2 else ",".join(map(str, run)))
        run = [r]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 2 else ",".join(map(str, run)))
    return ",".join(out)


def _plural(ranks: List[int]) -> str:
    return f"rank{'s' if len(set(ranks)) > 1 else ''} {_ranks(ranks)}"


# --- the watchdog ---------------------------------------------------------------------------


@predicate(log=True)
def dist_watchdog(ctx: Context) -> Result:
    """Which ranks the ProcessGroupNCCL watchdog caught, in which collective, and which ranks it did not."""
    d = _dist(ctx)
    if d is None or not d.timeouts:
        return None
    groups: Dict[Tuple[Any, ...], List[Timeout]] = {}
    for t in d.timeouts:  # one hang is one SeqNum; a line that lacks a field joins the others at that SeqNum
        key = ("seq", t.seq) if t.seq is not None else ("op", t.op, t.numel_in)
        groups.setdefault(key, []).append(t)
    lines = []
    for key, ts in sorted(groups.items(), key=lambda kv: (-len(kv[1]), str(kv[0])))[:4]:
        ranks = [t.rank for t in ts if t.rank is not None]
        ops = sorted({t.op for t in ts if t.op})
        sizes = {t.numel_in for t in ts if t.numel_in is not None}
        numel = sizes.pop() if len(sizes) == 1 and len(ops) <= 1 else None
        pgs = sorted({t.pg for t in ts if t.pg is not None})
        timeout = next((t.timeout_ms for t in ts if t.timeout_ms), None)
        ran = max((t.ran_ms for t in ts if t.ran_ms), default=None)
        line = f"watchdog: {_plural(ranks) if ranks else 'a rank'} timed out in {'/'.join(ops) or 'a collective'}"
        if key[0] == "seq":
            line += f" at SeqNum {key[1]}"
        size = f"{numel} element{'s' if numel != 1 else ''}" if numel is not None else ""
        detail = [f"PG {', '.join(pgs)}" if pgs else "", size]
        if any(detail):
            line += f" ({', '.join(x for x in detail if x)})"
        if ran and timeout:
            line += f", {ran} ms > timeout {timeout} ms"
        elif timeout:
            line += f", timeout {timeout} ms"
        lines.append(line)
        if numel is not None and numel <= SMALL_NUMEL and any("REDUCE" in op for op in ops):
            lines.append(f"a {numel}-element {'/'.join(ops)} is a barrier or a loss/metric sync: some rank never "
                         "reached it (eval, logging or saving on one rank, or a crash)")
    seen = {t.rank for t in d.timeouts if t.rank is not None}
    world = ctx.log.ranks if isinstance(getattr(ctx.log, "ranks", None), int) else None
    if world and seen and len(seen) < world and max(seen) < world:
        silent = [r for r in range(world) if r not in seen]
        lines.append(f"no timeout from {_plural(silent)} of {world} in these logs: if their logs are here, "
                     "they never entered that collective")
    lines.append("next: rerun with TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 (flight recorder) "
                 "for every rank's last collective")
    return {"evidence": lines}


@predicate(log=True)
def dist_ops_differ(ctx: Context) -> Result:
    """Ranks of one process group caught at the same SeqNum in different collectives (or sizes): a desync."""
    d = _dist(ctx)
    if d is None:
        return None
    by_seq: Dict[Tuple[str, int], Dict[Tuple[str, Optional[int]], List[int]]] = {}
    for t in d.timeouts:
        if t.pg is None or t.seq is None or t.op is None or t.rank is None:
            continue  # without the process group, equal SeqNums need not be the same collective
        by_seq.setdefault((t.pg, t.seq), {}).setdefault((t.op, t.numel_in), []).append(t.rank)
    lines = []
    for (pg, seq), ops in sorted(by_seq.items()):
        if len(ops) > 1:
            parts = [f"{_plural(r)} in {op}" + (f" ({n} elements)" if n is not None else "")
                     for (op, n), r in sorted(ops.items(), key=lambda kv: min(kv[1]))]
            lines.append(f"SeqNum {seq} (PG {pg}): " + " but ".join(parts) + ": different collectives")
    return {"evidence": lines} if lines else None


@predicate(log=True)
def dist_rank_behind(ctx: Context) -> Result:
    """Ranks of one process group caught at an earlier SeqNum than the others: they are the ones behind."""
    d = _dist(ctx)
    if d is None:
        return None
    by_pg: Dict[Optional[str], Dict[int, int]] = {}
    for t in d.timeouts:
        if t.seq is not None and t.rank is not None:
            by_pg.setdefault(t.pg, {})[t.rank] = t.seq
    lines = []
    for pg, seqs in by_pg.items():
        low, high = min(seqs.values()), max(seqs.values())
        if low < high and len(seqs) > 1:
            behind = [r for r, s in seqs.items() if s == low]
            ahead = [r for r, s in seqs.items() if s == high]
            lines.append(f"{_plural(behind)} timed out at SeqNum {low}, {_plural(ahead)} at {high}"
                         + (f" (PG {pg})" if pg is not None else "") + f": {_plural(behind)} fell behind first")
    return {"evidence": lines} if lines else None


# --- ranks that died --------------------------------------------------------------------------

_NEXT = {
    "SIGKILL": ["SIGKILL leaves no traceback: almost always the kernel or cgroup OOM killer (host RAM, not GPU memory)",
                "next: `dmesg -T | grep -i -E 'killed process|out of memory'` on {host} (pods: OOMKilled; Slurm: sacct MaxRSS)"],
    "SIGSEGV": ["a native crash, usually an extension built for another torch / CUDA / Python",
                "next: rerun with PYTHONFAULTHANDLER=1 (and `ulimit -c unlimited` for a core to open in gdb)"],
    "SIGABRT": ["an abort from native code: the message just before it in that rank's output says why",
                "next: rerun with TORCH_SHOW_CPP_STACKTRACES=1"],
    "SIGBUS": ["SIGBUS in PyTorch is almost always /dev/shm too small for DataLoader workers or NCCL",
               "next: `df -h /dev/shm` in the container (docker --shm-size / --ipc=host)"],
}


def _deaths(ctx: Context, signal: str) -> Result:
    d = _dist(ctx)
    if d is None:
        return None
    first = d.first_failures()
    hits: List[RankExit] = [e for e in first if e.signal == signal]
    if not hits:
        return None
    lines = []
    for e in hits[:4]:
        how = "was killed by the kernel" if e.launcher == "kernel" else f"died of {signal}"
        code = f" (exit {e.code})" if e.code is not None and e.launcher != "kernel" else ""
        root = " (torchrun's first observed failure)" if e.root_cause else ""
        lines.append(f"{e.who()} {how}{code}{root}")
    others = [e for e in d.exits if e not in hits and e.signal == "SIGTERM"]
    if others:
        lines.append(f"{len(others)} other worker(s) got SIGTERM from the launcher after that: a consequence")
    host = next((e.host for e in hits if e.host), None) or "that node"
    lines.extend(x.format(host=host) for x in _NEXT[signal])
    return {"evidence": lines}


@predicate(log=True)
def dist_killed_ranks(ctx: Context) -> Result:
    return _deaths(ctx, "SIGKILL")


@predicate(log=True)
def dist_segfault_ranks(ctx: Context) -> Result:
    return _deaths(ctx, "SIGSEGV")


@predicate(log=True)
def dist_aborted_ranks(ctx: Context) -> Result:
    return _deaths(ctx, "SIGABRT")


@predicate(log=True)
def dist_sigbus_ranks(ctx: Context) -> Result:
    return _deaths(ctx, "SIGBUS")


# --- rendezvous: ports, endpoints, names ----------------------------------------------------------


@predicate(log=True)
def dist_port_taken(ctx: Context) -> Result:
    d = _dist(ctx)
    if d is None or not d.ports_in_use:
        return None
    lines = []
    for port, addrs in sorted(d.ports_in_use.items())[:4]:
        lines.append(f"port {port} is already in use on this host (bind to {' and '.join(addrs)} failed)")
        lines.append(f"next: `ss -ltnp 'sport = :{port}'` names the holder (an earlier run still alive? kill it), "
                     "or use another --master-port")
    return {"evidence": lines}


@predicate(log=True)
def dist_endpoint_unreachable(ctx: Context) -> Result:
    d = _dist(ctx)
    if d is None or not d.endpoints:
        return None
    lines = []
    for e in d.endpoints[:4]:
        if e.host in d.unresolved:
            continue  # said by dist_unresolved_hosts
        lines.append(f"could not reach the rendezvous endpoint {e.host}:{e.port} ({e.why}){_meaning(e.why)}")
        lines.append(f"next: `nc -zv {e.host} {e.port}` from this node; on rank 0's host `ss -ltnp 'sport = :{e.port}'`")
    return {"evidence": lines} if lines else None


def _meaning(why: str) -> str:
    if "errno 111" in why or "refused" in why.lower():
        return ": nothing listens there (rank 0 not up, crashed, or another port)"
    if "errno 113" in why:
        return ": no route (a firewall REJECT rule, or routing)"
    if "errno 110" in why or "timed out" in why:
        return ": no answer (a wrong address, or a firewall drops it)"
    return ""


@predicate(log=True)
def dist_rendezvous_incomplete(ctx: Context) -> Result:
    d = _dist(ctx)
    if d is None or d.joined is None:
        return None
    waited, joined, want = d.joined
    return {"evidence": [f"only {joined} of {want} clients joined the rendezvous in {waited} s: start the missing "
                         "node(s), and give every node the same --nnodes, --rdzv-id and --rdzv-endpoint"]}


@predicate(log=True)
def dist_endpoint_invalid(ctx: Context) -> Result:
    """A rendezvous address that cannot be a host: MASTER_ADDR / --rdzv-endpoint was set wrong."""
    d = _dist(ctx)
    if d is None:
        return None
    lines = []
    for e in d.endpoints:
        why = odd_address(e.host)
        if why:
            lines.append(f"{e.host} is {why}: MASTER_ADDR / --rdzv-endpoint is wrong (use rank 0's IP)")
    return {"evidence": lines} if lines else None


@predicate(log=True)
def dist_unresolved_hosts(ctx: Context) -> Result:
    d = _dist(ctx)
    if d is None or not d.unresolved:
        return None
    lines = []
    for h, why in sorted(d.unresolved.items())[:4]:
        lines.append(f"`{h}` does not resolve ({why})")
        lines.append(f"next: `getent hosts {h}` on every node; use an IP for MASTER_ADDR or add the name to /etc/hosts")
    return {"evidence": lines}


# --- GPU memory, and a store that went away ------------------------------------------------------


@predicate(log=True)
def dist_gpu_oom(ctx: Context) -> Result:
    d = _dist(ctx)
    if d is None or not d.gpu_ooms:
        return None
    lines = []
    for o in d.gpu_ooms[:2]:
        who = f"rank {o['rank']}" if o["rank"] else "a rank"
        gpu = f" (GPU {o['gpu']})" if o["gpu"] else ""
        have = f" with {o['free']} free of {o['total']}" if o["free"] and o["total"] else ""
        lines.append(f"{who}{gpu} ran out of GPU memory: tried to allocate {o['want']}{have}")
    lines.append("next: `nvidia-smi` on that node for other processes on the GPU; then a smaller micro-batch, "
                 "checkpointing or sharding")
    return {"evidence": lines}


@predicate(log=True)
def dist_store_lost(ctx: Context) -> Result:
    """A rank lost its connection to the TCPStore server: the process hosting it (rank 0 or the agent) went away."""
    d = _dist(ctx)
    if d is None or not d.stores_lost:
        return None
    lines = [f"TCPStore at {e.host}:{e.port} went away ({e.why}): the process hosting it (rank 0 or the torchrun "
             "agent) exited first" for e in d.stores_lost[:2]]
    return {"evidence": lines}


# --- the rank that failed first -----------------------------------------------------------------


@predicate(log=True)
def first_failure_differs(ctx: Context) -> Result:
    """By the timestamps of the rank logs, one rank's error came first and is not the error the others reported
    after it (an OOM, a crash or an NCCL error on one rank, then timeouts on the rest)."""
    first = getattr(ctx.log, "first_failure", None)
    ff = first() if callable(first) else None
    if not ff or not set(ff["signals"]) - set(ff["later_signals"]):
        return None
    return {"evidence": [first_failure_line(ff)]}
