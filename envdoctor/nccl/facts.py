"""What NCCL's own INFO lines say about a run: version, ranks, devices, transports, interfaces, NVLS,
environment overrides and net plugins.

Facts are kept per origin (a file and, where lines carry NCCL's `host:pid:tid [dev]` prefix, a host),
because a difference between ranks or nodes is itself a finding. Every collection is capped, so a
log of any size costs bounded memory.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Dict, List, Optional, Set, Tuple

from packaging.version import Version

from envdoctor.nccl.dist_facts import DIST_NEEDLES, DIST_PATTERNS, DistFacts
from envdoctor.redact import secret_spans
from envdoctor.versions import parse

MAX_ITEMS = 4096  # per collection: distinct hosts, devices, interfaces ...

# NCCL prefixes its lines with "host:pid:tid [cudaDev]"; torch with "[rankN]:", torchrun's --tee with "[defaultN]:".
HOST_PREFIX = re.compile(r"(?:^|[\s\]])([A-Za-z0-9][\w.-]*):(\d+):(\d+) \[(\d+)\]")
TORCH_RANK = re.compile(r"\[rank(\d+)\]:")
# What may stand before NCCL's prefix without making it part of the text: torchrun's "[default0]:", spaces.
_BEFORE_HOST = re.compile(r"(?:\s*\[[^\]\s]{1,32}\]:?)*\s*")


def host_prefix(line: str, endpos: Optional[int] = None) -> Optional[re.Match]:
    """NCCL's `host:pid:tid [dev]` prefix in `line`; None where there is none, or where its "host" is the value of a
    secret the text before it names (`Bearer TOKEN:1:2 [0]`: a line a token was glued into)."""
    m = HOST_PREFIX.search(line, 0, len(line) if endpos is None else endpos)
    if m is None or not m.start(1) or _BEFORE_HOST.fullmatch(line, 0, m.start(1)):
        return m
    start, end = m.span(1)
    return None if any(s < end and start < e for s, e in secret_spans(line[:end])) else m


RANK_PREFIX = re.compile(r"^\s*\[(?:rank|default)(\d+)\]:")

# Timestamps at the start of a line (within STAMP_WITHIN characters): ISO dates as Python's logging, torchrun
# and `[2024-..]` prefixes write them, and glog's `E0501 10:00:00.123456` (`E501` in c10d) as c10d (TORCH_DISTRIBUTED_DEBUG,
# TORCH_CPP_LOG_LEVEL) writes it. Two stamps are compared only when they are of the same kind.
STAMP_WITHIN = 64
TIMESTAMP = re.compile(
    r"(?P<Y>\d{4})-(?P<m>\d\d)-(?P<d>\d\d)[ T](?P<H>\d\d):(?P<M>\d\d):(?P<S>\d\d)(?:[.,](?P<f>\d{1,9}))?"
    r"|(?<![\w])[IWEF](?P<gm>\d{1,2})(?P<gd>\d\d) (?P<gH>\d\d):(?P<gM>\d\d):(?P<gS>\d\d)\.(?P<gf>\d{1,9})")
STAMP_BYTES = re.compile(rb":\d\d:\d\d")  # every timestamp above holds this (a literal first: a fast scan)

# name -> pattern. Each is tried only on lines whose literals it needs are there (see needles.Prefilter).
FACT_PATTERNS: Dict[str, str] = {
    "version": r"NCCL version:? ?(\d+\.\d+\.\d+)(?:\+cuda(\d+\.\d+))?",
    "comm": r"\brank (\d+) n[Rr]anks (\d+)(?: nNodes (\d+))?",
    "device": r"\bcudaDev (\d+)(?: nvmlDev \d+)? busId ([0-9a-fA-F]+)",
    "channel": r" via (P2P/[\w ]+|SHM|NET/[A-Za-z][\w ]*|COLLNET\w*|CollNet\w*)(\S*)",
    "socket_if": r"NET/Socket ?: ?Using ((?:\[\d+\]\S+ ?)+)",
    "bootstrap_if": r"Bootstrap ?: ?Using (?:\[\d+\])?([^:\s]+):",
    "ib_devices": r"NET/IB ?: ?Using ((?:\[\d+\]\S+ ?)+)(?:; OOB ([^:\s]+):)?",
    "ib_none": r"NET/IB ?: ?No device found",
    "network": r"Using network (\w[\w ]*\w)",
    "nvls": r"NVLS multicast support is (not )?available|NVLS comm 0x",
    "env": r"\b((?:NCCL|CUDA)_[A-Z0-9_]+) set by environment to ?(.*)$",
    "plugin_path": r"Plugin Path ?: ?(\S+)",
    "plugin_loaded": r"(?:Loaded (?:net|coll|tuner) plugin (.+?)(?: \(v\d+\))?\s*$|Successfully loaded external plugin (\S+))",
    "plugin_none": r"(?:NET/Plugin ?:.*(?:Could not find|No plugin found|Plugin load \(\S+\) returned"
                   r"|Failed to find ncclNetPlugin|Using internal net(?:work)? plugin)|Could not find: libnccl-net)",
    "cuda_driver": r"cudaDriverVersion (\d+)",
    "hpcx": r"hpcx-v[\w.-]*?MLNX_OFED_LINUX-(\d+)",
    "ofed": r"^\s*MLNX_OFED_LINUX-(\d+)[\d.-]*:?\s*$",
}

# name -> lower-case literals, one of which every match of the pattern contains (the prefilter's needles).
FACT_NEEDLES: Dict[str, Tuple[str, ...]] = {
    "version": ("nccl version",),
    "comm": ("rank ",),
    "device": ("cudadev ",),
    "channel": ("via ",),  # not " via ": a gate starting with a space would stop the scan at every word
    "socket_if": ("net/socket",),
    "bootstrap_if": ("bootstrap",),
    "ib_devices": ("net/ib",),
    "ib_none": ("no device found",),
    "network": ("using network ",),
    "nvls": ("multicast support is ", "nvls comm 0x"),
    "env": (" set by environment to",),
    "plugin_path": ("plugin path",),
    "plugin_loaded": (" plugin ", "successfully loaded external plugin "),
    "plugin_none": ("could not find", "failed to find ncclnetplugin", "no plugin found", "plugin load (",
                    "using internal net"),
    "cuda_driver": ("cudadriverversion ",),
    "hpcx": ("mlnx_ofed_linux-",),
    "ofed": ("mlnx_ofed_linux-",),
}

# The kinds whose line, read a second time, changes nothing: the scanner reads such a line once per shape.
REPEATABLE_FACTS = frozenset(("comm", "channel", "socket_if", "bootstrap_if", "ib_devices", "ib_none", "network",
                              "plugin_path", "plugin_loaded", "plugin_none", "hpcx", "ofed"))
# The kinds where the last line wins: a line read again changes nothing while no line of its kind has changed
# a value since (NcclFacts.changes counts those changes). Version lines are counted: every one is read.
LAST_WINS_FACTS = frozenset(("device", "env", "nvls", "cuda_driver"))

_FACT_RE = {name: re.compile(p) for name, p in FACT_PATTERNS.items()}
_DIST_RE = {name: re.compile(p) for name, p in DIST_PATTERNS.items()}
FACT_PATTERNS.update(DIST_PATTERNS)  # torch.distributed's own messages (dist_facts.py)
FACT_NEEDLES.update(DIST_NEEDLES)


@dataclass
class OriginFacts:
    """Facts from one file (and host, where the lines say which)."""

    file: str
    host: Optional[str] = None
    nccl_versions: Set[str] = field(default_factory=set)
    plugins: Set[str] = field(default_factory=set)  # "none" when NCCL says it found no net plugin
    net_transports: Set[str] = field(default_factory=set)
    gdrdma: bool = False


@dataclass(frozen=True)
class Stamp:
    """A line's time: `kind` "iso" (a full date) or "glog" (month and day, no year); `value` in seconds."""

    kind: str
    value: float
    text: str


def timestamp(line: str) -> Optional[Stamp]:
    """The timestamp a line starts with, if any."""
    m = TIMESTAMP.search(line, 0, STAMP_WITHIN)
    if m is None:
        return None
    g = m.groupdict()
    try:
        if g["Y"] is not None:
            day = date(int(g["Y"]), int(g["m"]), int(g["d"])).toordinal()
            h, mi, sec, frac, kind = g["H"], g["M"], g["S"], g["f"], "iso"
        else:
            day = date(2000, int(g["gm"]), int(g["gd"])).toordinal()  # a leap year: 29 Feb exists
            h, mi, sec, frac, kind = g["gH"], g["gM"], g["gS"], g["gf"], "glog"
    except ValueError:  # not a date after all (month 13 ...)
        return None
    value = day * 86400 + int(h) * 3600 + int(mi) * 60 + int(sec) + (float("0." + frac) if frac else 0.0)
    return Stamp(kind, value, m.group(0))


_RANK_IN_LINE = re.compile(r"\[(?:PG [^\]]*?)?Rank (\d+)\]")


def _rank_of(e: FirstError) -> Optional[int]:
    """The rank an error line names: its `[rankN]:` prefix, else torch's `[Rank N]`."""
    m = RANK_PREFIX.match(e.line) or _RANK_IN_LINE.search(e.line)
    return int(m.group(1)) if m else None


def line_origin(file: str, line: str) -> str:
    """Who printed a line, as far as it says: `file [rank N]`, `file host:pid`, else the file."""
    m = RANK_PREFIX.match(line)
    if m:
        return f"{file} [rank {m.group(1)}]"
    m = host_prefix(line, 128)
    if m:
        return f"{file} {m.group(1)}:{m.group(2)}"
    return file


@dataclass(frozen=True)
class FirstError:
    """The first error line of one origin, its time where the log gives one, and the signatures it matched."""

    origin: str
    stamp: Optional[Stamp]
    line: str
    location: str
    file: str = ""
    signals: List[str] = field(default_factory=list)


@dataclass
class NcclFacts:
    nccl_versions: Dict[str, int] = field(default_factory=dict)  # version -> lines that said it
    cuda_versions: Set[str] = field(default_factory=set)
    ranks: Optional[int] = None  # nranks of the largest communicator
    nodes: Optional[int] = None
    rank_ids: Set[int] = field(default_factory=set)
    devices: Dict[Tuple[str, int], str] = field(default_factory=dict)  # (host, cudaDev) -> busId
    transports: Set[str] = field(default_factory=set)
    interfaces: List[str] = field(default_factory=list)  # NET/Socket, in order of appearance
    bootstrap_interfaces: List[str] = field(default_factory=list)
    ib_devices: List[str] = field(default_factory=list)
    ib_absent: bool = False
    networks: Set[str] = field(default_factory=set)
    nvls_available: Optional[bool] = None
    nvls_used: bool = False
    env: Dict[str, str] = field(default_factory=dict)
    plugin_paths: List[str] = field(default_factory=list)
    hosts: Set[str] = field(default_factory=set)
    cuda_driver: Optional[int] = None
    hpcx_ofed: Set[str] = field(default_factory=set)
    installed_ofed: Set[str] = field(default_factory=set)
    origins: Dict[Tuple[str, Optional[str]], OriginFacts] = field(default_factory=dict)
    files: List[str] = field(default_factory=list)
    dist: DistFacts = field(default_factory=DistFacts)
    first_errors: Dict[str, FirstError] = field(default_factory=dict)  # origin (line_origin) -> its first error
    changes: Dict[str, int] = field(default_factory=dict)  # last-wins kind -> how often a line changed its values
    changed: int = 0  # the sum of `changes`: while it stays put, no last-wins value has changed
    _last_origin: Optional[Tuple[str, str, OriginFacts]] = field(default=None, repr=False, compare=False)

    def error_seen(self, origin: str, stamp: Optional[Stamp], line: str, location: str, file: str,
                   signal: str) -> None:
        """Note an error line of an origin and a signature it matched (only the origin's first line is kept)."""
        e = self.first_errors.get(origin)
        if e is None and len(self.first_errors) < MAX_ITEMS:
            self.first_errors[origin] = FirstError(origin, stamp, line.strip()[:300], location, file, [signal])
        elif e is not None and e.location == location and signal not in e.signals:
            e.signals.append(signal)

    def first_failure(self) -> Optional[Dict[str, Any]]:
        """The origin whose first error came strictly before every other origin's, by their timestamps: who
        (rank and host where the log says), when, its line and signatures, and how long before the next origin's.

        None unless at least two origins have a timed error of one kind (the commoner kind when both occur).
        """
        timed = [(e.stamp, e) for e in self.first_errors.values() if e.stamp is not None]
        kinds = Counter(stamp.kind for stamp, _ in timed)
        if not kinds:
            return None
        kind = max(kinds, key=lambda k: (kinds[k], k == "iso"))
        same = sorted(((stamp, e) for stamp, e in timed if stamp.kind == kind), key=lambda p: (p[0].value, p[1].origin))
        if len(same) < 2 or same[0][0].value >= same[1][0].value:
            return None
        (when, first), (then, second) = same[0], same[1]
        later = sorted({s for _, e in same[1:] for s in e.signals})
        rank, host = _rank_of(first), self._host_of(first)
        return {"origin": first.origin, "who": _who(rank, host, first.origin), "rank": rank, "host": host,
                "time": when.text,
                "line": first.line, "location": first.location, "signals": list(first.signals),
                "next_origin": second.origin, "next_rank": _rank_of(second), "lead_seconds": round(then.value - when.value, 3),
                "origins_compared": len(same), "later_signals": later}

    def _host_of(self, e: FirstError) -> Optional[str]:
        """The host an error came from: its line's NCCL prefix, else the one host its file's lines named."""
        m = host_prefix(e.line, 128)
        if m:
            return m.group(1)
        hosts = {o.host for (file, host), o in self.origins.items() if file == e.file and host}
        return hosts.pop() if len(hosts) == 1 else None

    # --- feeding --------------------------------------------------------------------------

    def origin(self, file: str, line: str) -> OriginFacts:
        last = self._last_origin
        if last is not None and last[1] is line and last[0] == file:  # a fact's reader and the scanner ask in turn
            return last[2]
        o = self._origin(file, line)
        self._last_origin = (file, line, o)
        return o

    def _origin(self, file: str, line: str) -> OriginFacts:
        m = host_prefix(line)
        host = m.group(1) if m else None
        if host is not None and len(self.hosts) < MAX_ITEMS:
            self.hosts.add(host)
        key = (file, host)
        o = self.origins.get(key)
        if o is None:
            if len(self.origins) >= MAX_ITEMS:
                key = (file, None)
                o = self.origins.setdefault(key, OriginFacts(file))
            else:
                o = self.origins[key] = OriginFacts(file, host)
        return o

    def feed(self, kind: str, line: str, file: str) -> bool:
        """Read one line for one kind of fact; False when the line does not say it."""
        if kind in DIST_PATTERNS:
            if _DIST_RE[kind].search(line) is None:
                return False
            self.dist.feed(kind, line, file)
            return True
        m = _FACT_RE[kind].search(line)
        if m is None:
            return False
        _ON[kind](self, m, line, file)
        return True

    def _on_version(self, m: re.Match, line: str, file: str) -> None:
        v = m.group(1)
        if v not in self.nccl_versions and len(self.nccl_versions) >= MAX_ITEMS:
            return
        self.nccl_versions[v] = self.nccl_versions.get(v, 0) + 1
        if m.group(2):
            self.cuda_versions.add(m.group(2))
        self.origin(file, line).nccl_versions.add(v)

    def _on_comm(self, m: re.Match, line: str, file: str) -> None:
        if max(len(g or "") for g in m.groups()) > 12:  # no rank count has thousands of digits
            return
        rank, nranks = int(m.group(1)), int(m.group(2))
        self.ranks = max(self.ranks or 0, nranks)
        if len(self.rank_ids) < MAX_ITEMS:
            self.rank_ids.add(rank)
        if m.group(3):
            self.nodes = max(self.nodes or 0, int(m.group(3)))
        self.origin(file, line)

    def _on_device(self, m: re.Match, line: str, file: str) -> None:
        if len(self.devices) < MAX_ITEMS:
            host = self.origin(file, line).host or file
            self._set(self.devices, (host, int(m.group(1))), m.group(2).lower(), "device")

    def _on_channel(self, m: re.Match, line: str, file: str) -> None:
        kind, rest = m.group(1).strip(), m.group(2)
        if kind.startswith("P2P/"):
            name = "P2P/" + kind[4:].split()[0].split("/")[0]
        elif kind.startswith("NET/"):
            name = kind
            o = self.origin(file, line)
            o.net_transports.add(name)
            if "GDRDMA" in rest:
                o.gdrdma = True
                self.transports.add("GDRDMA")
        else:
            name = kind
        if len(self.transports) < MAX_ITEMS:
            self.transports.add(name)

    def _on_socket_if(self, m: re.Match, line: str, file: str) -> None:
        for name in re.findall(r"\[\d+\]([^:\s]+)", m.group(1)):
            _append(self.interfaces, name)

    def _on_bootstrap_if(self, m: re.Match, line: str, file: str) -> None:
        _append(self.bootstrap_interfaces, m.group(1))

    def _on_ib_devices(self, m: re.Match, line: str, file: str) -> None:
        for dev in re.findall(r"\[\d+\]([^\s;]+)", m.group(1)):
            _append(self.ib_devices, dev)
        if m.group(2):
            _append(self.bootstrap_interfaces, m.group(2))

    def _on_ib_none(self, m: re.Match, line: str, file: str) -> None:
        self.ib_absent = True

    def _on_network(self, m: re.Match, line: str, file: str) -> None:
        if len(self.networks) < MAX_ITEMS:
            self.networks.add(m.group(1))

    def _on_nvls(self, m: re.Match, line: str, file: str) -> None:
        if m.group(0).startswith("NVLS comm"):
            self._set_attr("nvls_used", True, "nvls")
        else:
            self._set_attr("nvls_available", not m.group(1), "nvls")

    def _on_env(self, m: re.Match, line: str, file: str) -> None:
        value = m.group(2).strip()
        if value.endswith(".") and len(value) > 1:
            value = value[:-1]
        if m.group(1) in self.env or len(self.env) < 256:
            self._set(self.env, m.group(1), value[:256], "env")

    def _on_plugin_path(self, m: re.Match, line: str, file: str) -> None:
        _append(self.plugin_paths, m.group(1))
        self.origin(file, line).plugins.add(m.group(1))

    def _on_plugin_loaded(self, m: re.Match, line: str, file: str) -> None:
        name = (m.group(1) or m.group(2) or "").strip()
        o = self.origin(file, line)
        if name and len(o.plugins) < 64:
            o.plugins.add(name)
        if m.group(2):
            _append(self.plugin_paths, m.group(2))

    def _on_plugin_none(self, m: re.Match, line: str, file: str) -> None:
        self.origin(file, line).plugins.add("none")

    def _on_cuda_driver(self, m: re.Match, line: str, file: str) -> None:
        self._set_attr("cuda_driver", int(m.group(1)), "cuda_driver")

    def _set(self, where: Dict[Any, Any], key: Any, value: Any, kind: str) -> None:
        """A last-wins value; a change is counted in `changes`."""
        if key not in where or where[key] != value:
            where[key] = value
            self.changes[kind] = self.changes.get(kind, 0) + 1
            self.changed += 1

    def _set_attr(self, name: str, value: Any, kind: str) -> None:
        if getattr(self, name) != value:
            setattr(self, name, value)
            self.changes[kind] = self.changes.get(kind, 0) + 1
            self.changed += 1

    def _on_hpcx(self, m: re.Match, line: str, file: str) -> None:
        self.hpcx_ofed.add(m.group(1))

    def _on_ofed(self, m: re.Match, line: str, file: str) -> None:
        self.installed_ofed.add(m.group(1))

    # --- reading ----------------------------------------------------------------------------

    @property
    def nccl_version(self) -> Optional[str]:
        if not self.nccl_versions:
            return None
        return max(self.nccl_versions.items(), key=lambda kv: (kv[1], _vkey(kv[0])))[0]

    def versions_by_origin(self) -> Dict[str, Set[str]]:
        out: Dict[str, Set[str]] = {}
        for o in self.origins.values():
            if o.nccl_versions:
                out.setdefault(_label(o), set()).update(o.nccl_versions)
        return out

    def plugins_by_origin(self) -> Dict[str, Set[str]]:
        out: Dict[str, Set[str]] = {}
        for o in self.origins.values():
            if o.plugins:
                out.setdefault(_label(o), set()).update(o.plugins)
        return out

    def gdr_by_origin(self) -> Dict[str, bool]:
        """Origins whose NET channels were set up: did they use GPUDirect RDMA?"""
        return {_label(o): o.gdrdma for o in self.origins.values() if o.net_transports}

    def multi_node(self) -> bool:
        return (self.nodes or 0) > 1 or len(self.hosts) > 1

    def as_dict(self) -> Dict[str, Any]:
        """The `facts` object of the JSON document (plus a few keys the conditions read)."""
        return {
            "nccl_version": self.nccl_version,
            "nccl_versions": sorted(self.nccl_versions, key=_vkey),
            "cuda_versions": sorted(self.cuda_versions),
            "ranks": self.ranks,
            "nodes": self.nodes,
            "multi_node": self.multi_node(),
            "hosts": sorted(self.hosts),
            "devices": [{"host": h, "cuda_dev": d, "bus_id": b} for (h, d), b in sorted(self.devices.items())][:256],
            "transports": sorted(self.transports),
            "interfaces": list(self.interfaces),
            "bootstrap_interfaces": list(self.bootstrap_interfaces),
            "ib_devices": list(self.ib_devices),
            "ib_absent": self.ib_absent,
            "networks": sorted(self.networks),
            "nvls": {"available": self.nvls_available, "used": self.nvls_used},
            "env": dict(sorted(self.env.items())),
            "plugin_paths": list(self.plugin_paths),
            "cuda_driver": self.cuda_driver,
            "files": list(self.files),
            "distributed": self.dist.as_dict(),
            "first_failure": self.first_failure(),
        }


_ON = {kind: getattr(NcclFacts, f"_on_{kind}") for kind in _FACT_RE}  # kind -> its reader (NcclFacts.feed)


def _append(items: List[str], value: str) -> None:
    if value not in items and len(items) < MAX_ITEMS:
        items.append(value)


def _label(o: OriginFacts) -> str:
    return f"{o.file} ({o.host})" if o.host else o.file


def _vkey(v: str) -> Any:
    return parse(v) or Version("0")


def _who(rank: Optional[int], host: Optional[str], origin: str) -> str:
    if rank is None and host is None:
        return origin
    return " on ".join(x for x in (f"rank {rank}" if rank is not None else None, host) if x)


def first_failure_line(ff: Dict[str, Any]) -> str:
    """One line for a first failure (facts.first_failure): who, when, what, and the lead over the next."""
    nxt = _who(ff["next_rank"], None, ff["next_origin"])
    return (f"first failure: {ff['who']}, {ff['lead_seconds']:g} s before the next error ({nxt}); at {ff['time']} "
            f"in {ff['location']}: {ff['line'][:160]}")
