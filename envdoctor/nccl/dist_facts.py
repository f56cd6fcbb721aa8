"""What torch.distributed's own messages say about a failed job: the collectives the ProcessGroupNCCL
watchdog caught (rank, process group, SeqNum, OpType, size, timeout), the ranks torchrun / the DeepSpeed
launcher / mp.spawn saw die and the signal that killed them, the ports that could not be bound, the
rendezvous endpoints that could not be reached and the host names that did not resolve.

These messages carry no NCCL WARN. Each pattern has needles (lower-case literals one of which every match
contains) so the scanner only tries it on lines that can match. Every collection is capped.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

MAX_ITEMS = 1024

# name -> pattern the prefilter gates on; the handlers below use more precise regexes on the lines it lets through.
DIST_PATTERNS: Dict[str, str] = {
    "dist_watchdog": r"Watchdog caught collective operation timeout",
    "dist_work": r"last completed (?:NCCL )?work:",
    "dist_exit": r"exitcode|exits with return code|terminated with signal|<Signals\.SIG|Killed process|oom[-_]kill"
                 r"|(?:exit code|exit status)\s*[=:]?\s*13[4-9]\b",
    "dist_rank_field": r"\(local[_ ]rank:",
    "dist_host_field": r"^\s*host\s{2,}:",
    "dist_root_cause": r"Root Cause \(first observed failure\)",
    "dist_port": r"server socket has failed to",
    "dist_endpoint": r"client socket has|TCP client failed to connect",
    "dist_unresolved": r"cannot be retrieved \(gai error",
    "dist_cuda_oom": r"CUDA out of memory",
    "dist_rdzv_joined": r"waiting for clients\. \d+/\d+ clients joined",
    "dist_store_lost": r"(?:recvValue|recvVector|sendBytes|recvValueWithTimeout) failed on SocketImpl",
}

DIST_NEEDLES: Dict[str, Tuple[str, ...]] = {
    "dist_watchdog": ("watchdog caught collective operation timeout",),
    "dist_work": ("last completed nccl work:", "last completed work:"),
    "dist_exit": ("exitcode", "exits with return code", "terminated with signal", "<signals.sig",
                  "killed process", "oom-kill", "oom_kill", "exit code", "exit status"),
    "dist_rank_field": ("(local_rank:", "(local rank:"),
    "dist_host_field": ("host      :",),
    "dist_root_cause": ("root cause (first observed failure)",),
    "dist_port": ("server socket has failed to",),
    "dist_endpoint": ("client socket has", "tcp client failed to connect"),
    "dist_unresolved": ("cannot be retrieved (gai error",),
    "dist_cuda_oom": ("cuda out of memory",),
    "dist_store_lost": (" failed on socketimpl",),
    "dist_rdzv_joined": ("clients joined",),
}

SIGNALS = {1: "SIGHUP", 2: "SIGINT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL",
           11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"}
SIGNAL_NUMBERS = {name: num for num, name in SIGNALS.items()}
PORT_IN_USE_ERRNOS = {"98", "48", "10048"}  # EADDRINUSE on Linux, macOS, Windows

_WATCHDOG = re.compile(r"(?:\[Rank (\d+)\] )?Watchdog caught collective operation timeout:?\s*"
                       r"(?:WorkNCCL\(((?:[^()]|\([^()]*\))*)\))?"
                       r"(?:\s*ran for (\d+) milliseconds)?")
_WORK_FIELD = re.compile(r"(SeqNum|OpType|NumelIn|NumelOut|Timeout\(ms\))=([\w.]+)")
_PG_RANK = re.compile(r"\[PG (?:ID )?(\d+)\b[^\]]*?Rank (\d+)\]")
_WORK = re.compile(r"(?:at work|Timeout at NCCL work|at work sequence id): (\d+),?\s*(?:PG status: )?last enqueued "
                   r"(?:NCCL )?work: (-?\d+), last completed (?:NCCL )?work: (-?\d+)")
_EXIT_FORMS: Tuple[Tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"failed \(exitcode: (?P<code>-?\d+)\) local_rank: (?P<local>\d+) \(pid: (?P<pid>\d+)\)"), "torchrun"),
    (re.compile(r"exitcode\s*:\s*(?P<code>-?\d+)\s*\(pid:\s*(?P<pid>\d+)\)"), "torchrun"),
    (re.compile(r"(?:--local_rank=(?P<local>\d+)\W.*)?exits with return code = (?P<code>-?\d+)"), "deepspeed"),
    (re.compile(r"process (?P<local>\d+) terminated with signal (?P<sig>SIG[A-Z]+)"), "mp.spawn"),
    (re.compile(r"(?:--local_rank=(?P<local>\d+)\W.*)?<Signals\.(?P<sig>SIG[A-Z]+): \d+>"), "launch"),
    (re.compile(r"(?:Out of memory|Memory cgroup out of memory): Killed process (?P<pid>\d+) \((?P<comm>[^)]*)\)"),
     "kernel"),
    (re.compile(r"oom-kill:.*?task=(?P<comm>[^,\s]+),pid=(?P<pid>\d+)"), "kernel"),
    (re.compile(r"(?:exit code|exit status)\s*[=:]?\s*(?P<shell>13[4-9])\b"), "shell"),
)
_RANK_FIELD = re.compile(r"\brank\s*:?\s*(\d+)\s*\(local[_ ]rank:\s*(\d+)\)")
_HOST_FIELD = re.compile(r"^\s*host\s{2,}:\s*(\S+)")
_PORT = re.compile(r"server socket has failed to (?:bind to|listen on) (\[[^\]]*\]|[^\s\[\]]+?):(\d+) "
                   r"\((?:errno|system error): (-?\d+)")
_ENDPOINT_FORMS = (
    re.compile(r"client socket has failed to connect to (?P<host>\[[^\]]*\]|[^\s\[\]]+?):(?P<port>\d+) "
               r"\(errno: (?P<errno>\d+) - (?P<why>[^)]*)\)"),
    re.compile(r"client socket has timed out after (?P<after>\S+?) while trying to connect to \((?P<host>[^,]+), "
               r"(?P<port>\d+)\)"),
    re.compile(r"client socket has failed to connect to any network address of \((?P<host>[^,]+), (?P<port>\d+)\)"),
    re.compile(r"TCP client failed to connect/validate to host (?P<host>\S+?):(?P<port>\d+)\b(?: - (?P<why>[^(]+?) \()?"),
)
_CUDA_OOM = re.compile(r"(?:\[rank(?P<rank>\d+)\]:.*)?CUDA out of memory\. Tried to allocate (?P<want>[\d.]+ [KMGT]?i?B)"
                       r"(?:.*?GPU (?P<gpu>\d+)(?: has a total capacity of|;) (?P<total>[\d.]+ [KMGT]?i?B)"
                       r"(?: of which|.*?already allocated;) (?P<free>[\d.]+ [KMGT]?i?B)(?: is)? free)?")
_STORE_LOST = re.compile(r"failed on SocketImpl\(fd=\d+, addr=[^,]*, remote=\[?(?P<host>[^\]\s]*?)\]?:(?P<port>\d+)\): "
                         r"(?P<why>Connection reset by peer|Broken pipe|Failed to recv, got 0 bytes)")
_JOINED = re.compile(r"Timed out after (\d+) seconds waiting for clients\. (\d+)/(\d+) clients joined")
_UNRESOLVED = re.compile(r"network addresses of \(([^,]+), (\d+)\) cannot be retrieved \(gai error: (-?\d+) - ([^)]*)\)")


@dataclass
class Timeout:
    """One collective the watchdog caught on one rank."""

    rank: Optional[int]
    seq: Optional[int]
    op: Optional[str]
    numel_in: Optional[int]
    numel_out: Optional[int]
    timeout_ms: Optional[int]
    ran_ms: Optional[int]
    file: str
    pg: Optional[str] = None
    last_enqueued: Optional[int] = None
    last_completed: Optional[int] = None


@dataclass
class RankExit:
    """A worker process the launcher (or the kernel) reported dead."""

    code: Optional[int]  # negative: killed by that signal
    signal: Optional[str]
    launcher: str
    file: str
    rank: Optional[int] = None
    local_rank: Optional[int] = None
    pid: Optional[int] = None
    host: Optional[str] = None
    root_cause: bool = False  # torchrun's "Root Cause (first observed failure)"
    process: Optional[str] = None  # the command name the kernel named

    def who(self) -> str:
        if self.launcher == "kernel":
            return f"process {self.pid} ({self.process})" if self.process else f"process {self.pid}"
        parts = []
        if self.rank is not None:
            parts.append(f"rank {self.rank}")
            if self.local_rank is not None and self.local_rank != self.rank:
                parts.append(f"(local_rank {self.local_rank})")
        elif self.local_rank is not None:
            parts.append(f"local rank {self.local_rank}")
        else:
            parts.append("a rank")
        if self.pid is not None:
            parts.append(f"pid {self.pid}")
        if self.host:
            parts.append(f"on {self.host}")
        return " ".join(parts)


@dataclass
class Endpoint:
    host: str
    port: int
    why: str  # "errno 110 - Connection timed out", "timed out after 900s"
    file: str


@dataclass
class _FileState:
    """Where a file's multi-line torchrun failure block has got to."""

    rank: Optional[Tuple[int, int]] = None
    host: Optional[str] = None
    root_next: bool = False


@dataclass
class DistFacts:
    timeouts: List[Timeout] = field(default_factory=list)
    exits: List[RankExit] = field(default_factory=list)
    ports_in_use: Dict[int, List[str]] = field(default_factory=dict)  # port -> addresses that failed to bind
    bind_errors: Dict[int, str] = field(default_factory=dict)  # port -> errno, for errnos other than in-use
    endpoints: List[Endpoint] = field(default_factory=list)
    unresolved: Dict[str, str] = field(default_factory=dict)  # host -> "gai error -2 - Name or service not known"
    gpu_ooms: List[Dict[str, Optional[str]]] = field(default_factory=list)  # rank, gpu, want, total, free
    stores_lost: List[Endpoint] = field(default_factory=list)  # TCPStore servers that went away under a rank
    joined: Optional[Tuple[int, int, int]] = None  # (seconds waited, clients joined, clients expected)
    _state: Dict[str, _FileState] = field(default_factory=dict, repr=False)

    def feed(self, kind: str, line: str, file: str) -> None:
        getattr(self, f"_on_{kind}")(line, file)

    # --- feeding ------------------------------------------------------------------------------

    def _on_dist_watchdog(self, line: str, file: str) -> None:
        m = _WATCHDOG.search(line)
        if m is None or len(self.timeouts) >= MAX_ITEMS:
            return
        fields = dict(_WORK_FIELD.findall(m.group(2) or ""))
        rank = m.group(1)
        if rank is None:
            pr = _PG_RANK.search(line)
            rank = pr.group(2) if pr else None
        self.timeouts.append(Timeout(
            rank=_int(rank), seq=_int(fields.get("SeqNum")), op=fields.get("OpType"),
            numel_in=_int(fields.get("NumelIn")), numel_out=_int(fields.get("NumelOut")),
            timeout_ms=_int(fields.get("Timeout(ms)")), ran_ms=_int(m.group(3)), file=file))

    def _on_dist_work(self, line: str, file: str) -> None:
        pr, w = _PG_RANK.search(line), _WORK.search(line)
        if pr is None or w is None:
            return
        pg, rank, seq = pr.group(1), int(pr.group(2)), int(w.group(1))
        for t in self.timeouts:
            if t.rank == rank and t.file == file and t.seq in (None, seq):
                t.pg, t.seq = pg, seq
                t.last_enqueued, t.last_completed = int(w.group(2)), int(w.group(3))
                return
        if len(self.timeouts) < MAX_ITEMS:  # the "Timeout at NCCL work" line alone (the watchdog line was cut)
            self.timeouts.append(Timeout(rank, seq, None, None, None, None, None, file, pg,
                                         int(w.group(2)), int(w.group(3))))

    def _on_dist_rank_field(self, line: str, file: str) -> None:
        m = _RANK_FIELD.search(line)
        if m and "exitcode" not in line:  # a mangled block puts both on one line: the exit reads it there
            self._file(file).rank = (int(m.group(1)), int(m.group(2)))

    def _on_dist_host_field(self, line: str, file: str) -> None:
        m = _HOST_FIELD.search(line)
        if m:
            self._file(file).host = m.group(1)

    def _on_dist_root_cause(self, line: str, file: str) -> None:
        state = self._file(file)
        state.root_next, state.rank, state.host = True, None, None

    def _on_dist_exit(self, line: str, file: str) -> None:
        if len(self.exits) >= MAX_ITEMS:
            return
        for regex, launcher in _EXIT_FORMS:
            m = regex.search(line)
            if m is None:
                continue
            g = m.groupdict()
            code = _int(g.get("code"))
            sig = g.get("sig")
            if g.get("shell"):  # 128 + signal, as shells and container runtimes report it
                code = 128 - int(g["shell"])
            if code is None and sig:
                code = -SIGNAL_NUMBERS[sig] if sig in SIGNAL_NUMBERS else None
            if launcher == "kernel":
                code, sig = -9, "SIGKILL"
            if sig is None and code is not None and code < 0:
                sig = SIGNALS.get(-code)
            e = RankExit(code=code, signal=sig, launcher=launcher, file=file, local_rank=_int(g.get("local")),
                         pid=_int(g.get("pid")), process=g.get("comm"))
            if regex is _EXIT_FORMS[1][0]:  # a field of torchrun's failure block: the rank and host came before it
                state = self._file(file)
                same_line = _RANK_FIELD.search(line)
                rank = (int(same_line.group(1)), int(same_line.group(2))) if same_line else state.rank
                if rank:
                    e.rank, e.local_rank = rank
                e.host, e.root_cause = state.host, state.root_next
                state.root_next, state.rank, state.host = False, None, None
            if not self._seen(e):
                self.exits.append(e)
            return

    def _on_dist_port(self, line: str, file: str) -> None:
        for m in _PORT.finditer(line):
            port, errno = int(m.group(2)), m.group(3).lstrip("-")
            if errno in PORT_IN_USE_ERRNOS:
                addrs = self.ports_in_use.setdefault(port, [])
                if m.group(1) not in addrs and len(addrs) < 8:
                    addrs.append(m.group(1))
            elif len(self.bind_errors) < MAX_ITEMS:
                self.bind_errors[port] = errno

    def _on_dist_endpoint(self, line: str, file: str) -> None:
        for regex in _ENDPOINT_FORMS:
            m = regex.search(line)
            if m is None:
                continue
            g = m.groupdict()
            if g.get("errno"):
                why = f"errno {g['errno']} - {g['why']}"
            elif g.get("after"):
                why = f"timed out after {g['after']}"
            else:
                why = (g.get("why") or "connection failed").strip()
            host = _host(g["host"])
            if not any(e.host == host and e.port == int(g["port"]) for e in self.endpoints) \
                    and len(self.endpoints) < MAX_ITEMS:
                self.endpoints.append(Endpoint(host, int(g["port"]), why, file))
            return

    def _on_dist_unresolved(self, line: str, file: str) -> None:
        m = _UNRESOLVED.search(line)
        if m and (m.group(1) in self.unresolved or len(self.unresolved) < MAX_ITEMS):
            self.unresolved[m.group(1).strip()] = f"gai error {m.group(3)} - {m.group(4)}"

    def _on_dist_cuda_oom(self, line: str, file: str) -> None:
        m = _CUDA_OOM.search(line)
        if m and len(self.gpu_ooms) < 64:
            self.gpu_ooms.append(m.groupdict())

    def _on_dist_rdzv_joined(self, line: str, file: str) -> None:
        m = _JOINED.search(line)
        if m:
            self.joined = (int(m.group(1)), int(m.group(2)), int(m.group(3)))

    def _on_dist_store_lost(self, line: str, file: str) -> None:
        m = _STORE_LOST.search(line)
        if m and not any(e.host == _host(m["host"]) and e.port == int(m["port"]) for e in self.stores_lost) \
                and len(self.stores_lost) < 64:
            self.stores_lost.append(Endpoint(_host(m["host"]), int(m["port"]), m["why"], file))

    # --- reading ------------------------------------------------------------------------------

    def first_failures(self) -> List[RankExit]:
        """The exits that started it: torchrun's root cause where it named one, else every non-SIGTERM exit
        (SIGTERM is what the launcher sends the survivors once one rank has failed)."""
        roots = [e for e in self.exits if e.root_cause]
        if roots:
            return roots
        return [e for e in self.exits if e.signal != "SIGTERM" and e.code not in (0, None) or e.launcher == "kernel"]

    def as_dict(self) -> Dict[str, Any]:
        return {
            "timeouts": [{"rank": t.rank, "pg": t.pg, "seq": t.seq, "op": t.op, "numel_in": t.numel_in,
                          "numel_out": t.numel_out, "timeout_ms": t.timeout_ms, "ran_ms": t.ran_ms,
                          "last_enqueued": t.last_enqueued, "last_completed": t.last_completed}
                         for t in self.timeouts[:256]],
            "exits": [{"rank": e.rank, "local_rank": e.local_rank, "pid": e.pid, "host": e.host, "exitcode": e.code,
                       "signal": e.signal, "launcher": e.launcher, "root_cause": e.root_cause}
                      for e in self.exits[:256]],
            "ports_in_use": sorted(self.ports_in_use),
            "unreachable_endpoints": [f"{e.host}:{e.port}" for e in self.endpoints[:64]],
            "unresolved_hosts": sorted(self.unresolved)[:64],
            "gpu_ooms": list(self.gpu_ooms),
            "stores_lost": [f"{e.host}:{e.port}" for e in self.stores_lost],
            "rendezvous_joined": list(self.joined) if self.joined else None,
        }

    def _file(self, file: str) -> _FileState:
        state = self._state.get(file)
        if state is None:
            state = self._state[file] = _FileState()
        return state

    def _seen(self, e: RankExit) -> bool:
        """The same death reported twice (a failure block and its summary line)."""
        for o in self.exits:
            if o.file == e.file and o.code == e.code and o.pid is not None and o.pid == e.pid:
                if e.rank is not None and o.rank is None:
                    o.rank, o.local_rank, o.host = e.rank, e.local_rank, e.host or o.host
                o.root_cause |= e.root_cause
                return True
        return False


def _int(value: Optional[str]) -> Optional[int]:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _host(text: str) -> str:
    host = text.strip().strip("[]")
    return host[7:] if host.startswith("::ffff:") else host


def odd_address(host: str) -> Optional[str]:
    """Why an address cannot be a rendezvous host (a netmask, the unspecified or a broadcast address), or None."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    if ip.is_unspecified:
        return "the unspecified address"
    if ip.version == 4 and (int(ip) >> 24) == 0:
        return "not a host address (0.x.x.x)"
    if ip.version == 4 and (int(ip) >> 24) == 255:
        return "a netmask or broadcast address, not a host"
    if ip.is_multicast:
        return "a multicast address"
    return None
