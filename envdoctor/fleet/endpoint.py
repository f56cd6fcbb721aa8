"""Where the nodes meet: the rendezvous parameters from the flags or the launcher's environment (torchrun,
Kubeflow's PyTorchJob, srun, a Kubernetes Indexed Job), and a bounded check that the endpoint resolves and
answers, done before anything waits on it."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, List, Mapping, Optional, Tuple

from envdoctor.errors import InputError
from envdoctor.findings import Finding
from envdoctor.fixes import manual

DEFAULT_PORT = 29500  # torchrun's MASTER_PORT default


def parse_endpoint(text: str, what: str = "--rdzv-endpoint") -> Tuple[str, int]:
    """'HOST:PORT' or '[IPv6]:PORT' -> (host, port); InputError otherwise."""
    given = text.strip()
    bad = InputError(f"{what} {text!r}: expected HOST:PORT or [IPv6]:PORT")
    if given.startswith("["):
        host, close, rest = given[1:].partition("]")
        if not close or not rest.startswith(":") or ":" not in host:
            raise bad
        port = rest[1:]
    else:
        host, sep, port = given.rpartition(":")
        if not sep or "[" in host or "]" in host or ":" in host:  # an IPv6 address needs its brackets
            raise bad
    if not host or any(c.isspace() for c in host) or not (port.isascii() and port.isdigit()) \
            or not 0 < int(port) < 65536:
        raise bad
    return host, int(port)


@dataclass(frozen=True)
class Rendezvous:
    nnodes: int
    rank: int
    host: str
    port: int
    agent_store: bool = False  # under torchrun its agent hosts the store, so rank 0 is a client too
    source: str = "flags"  # where rank and size came from: flags, torchrun, slurm, kubernetes

    @property
    def endpoint(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def _int_env(env: Mapping[str, str], name: str) -> Optional[int]:
    value = env.get(name, "").strip()
    if not value:
        return None
    if not value.lstrip("-").isdigit():
        raise InputError(f"{name}={value!r} in the environment is not a number")
    return int(value)


def resolve_rendezvous(nnodes: Optional[int], node_rank: Optional[int], endpoint: Optional[str],
                       env: Mapping[str, str]) -> Rendezvous:
    """The flags win; else torchrun's (and PyTorchJob's) RANK/WORLD_SIZE, srun's SLURM_PROCID/SLURM_NTASKS,
    a Kubernetes Indexed Job's JOB_COMPLETION_INDEX; the endpoint else MASTER_ADDR:MASTER_PORT."""
    source = "flags"
    agent_store = env.get("TORCHELASTIC_USE_AGENT_STORE") == "True"
    if agent_store:
        local = _int_env(env, "LOCAL_WORLD_SIZE")
        if local is not None and local != 1:
            raise InputError(f"under torchrun, run one envdoctor per node (--nproc-per-node 1, not {local})")
    if env.get("RANK") is not None and env.get("WORLD_SIZE") is not None:
        env_size, env_rank, source_env = _int_env(env, "WORLD_SIZE"), _int_env(env, "RANK"), "torchrun"
        if not agent_store:
            source_env = "kubernetes" if env.get("KUBERNETES_SERVICE_HOST") else "torchrun"
    elif env.get("SLURM_PROCID") is not None:
        env_size = _int_env(env, "SLURM_NTASKS") or _int_env(env, "SLURM_NNODES")
        env_rank, source_env = _int_env(env, "SLURM_PROCID"), "slurm"
    elif env.get("JOB_COMPLETION_INDEX") is not None:
        env_size, env_rank, source_env = None, _int_env(env, "JOB_COMPLETION_INDEX"), "kubernetes"
    else:
        env_size = env_rank = None
        source_env = "flags"
    if nnodes is None:
        nnodes, source = env_size, source_env
    if node_rank is None:
        node_rank, source = env_rank, source_env
    if agent_store:  # torchrun's store is where its workers meet; a flag cannot move it
        endpoint = None
    if endpoint is None and env.get("MASTER_ADDR"):
        addr = env["MASTER_ADDR"].strip()
        addr = f"[{addr}]" if ":" in addr and not addr.startswith("[") else addr  # an IPv6 MASTER_ADDR, bare
        endpoint = f"{addr}:{env.get('MASTER_PORT') or DEFAULT_PORT}"
        what = "MASTER_ADDR/MASTER_PORT"
    else:
        what = "--rdzv-endpoint"
    if nnodes is None:
        raise InputError("fleet collect needs --nnodes N (or WORLD_SIZE / SLURM_NTASKS from torchrun or srun)")
    if node_rank is None:
        raise InputError("fleet collect needs --node-rank R (or RANK / SLURM_PROCID / JOB_COMPLETION_INDEX)")
    if endpoint is None:
        raise InputError("fleet collect needs --rdzv-endpoint HOST:PORT (or MASTER_ADDR and MASTER_PORT)")
    if nnodes < 2:
        raise InputError(f"fleet collect needs at least two nodes, not --nnodes {nnodes}")
    if not 0 <= node_rank < nnodes:
        raise InputError(f"node rank {node_rank} is outside 0..{nnodes - 1}")
    host, port = parse_endpoint(endpoint, what)
    return Rendezvous(nnodes, node_rank, host, port, agent_store, source)


@dataclass
class EndpointCheck:
    host: str
    port: int
    addresses: List[str] = field(default_factory=list)
    resolve_error: Optional[str] = None  # the name does not resolve (or not within the bound)
    reachable: Optional[bool] = None  # None: not tried
    connect_error: Optional[str] = None
    seconds: float = 0.0


def _resolve(host: str, port: int, timeout: float) -> Tuple[List[str], Optional[str]]:
    """getaddrinfo has no timeout of its own: it runs in a daemon thread that is abandoned at the bound."""
    box: List[object] = []

    def work() -> None:
        try:
            box.append(sorted({str(a[4][0]) for a in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)}))
        except (OSError, UnicodeError) as exc:
            box.append(exc)

    t = threading.Thread(target=work, name="resolve-endpoint", daemon=True)
    t.start()
    t.join(timeout)
    if not box:
        return [], f"no answer from the resolver within {timeout:g} s"
    if isinstance(box[0], BaseException):
        exc = box[0]
        return [], (getattr(exc, "strerror", None) or str(exc))
    return list(box[0]), None  # type: ignore[arg-type]


def check_endpoint(host: str, port: int, resolve_timeout: float = 5.0, connect_timeout: Optional[float] = 3.0) -> EndpointCheck:
    """Resolve the host and (unless connect_timeout is None) try to open the port, both bounded; never raises."""
    start = time.monotonic()
    check = EndpointCheck(host, port)
    check.addresses, check.resolve_error = _resolve(host, port, resolve_timeout)
    if check.resolve_error is None and connect_timeout is not None:
        deadline = time.monotonic() + connect_timeout
        while True:
            try:
                with socket.create_connection((check.addresses[0], port), timeout=max(0.1, deadline - time.monotonic())):
                    check.reachable = True
                    break
            except OSError as exc:
                check.reachable, check.connect_error = False, getattr(exc, "strerror", None) or str(exc)
                if time.monotonic() + 0.25 >= deadline:
                    break
                time.sleep(0.25)  # refused: the peer may not listen yet
    check.seconds = time.monotonic() - start
    return check


def endpoint_findings(check: EndpointCheck, what: str = "the rendezvous endpoint", rules: Optional[Any] = None) -> List[Finding]:
    """A name that does not resolve: the NCCL registry's hostname_unresolvable, high confidence. A port that does
    not answer is not called a firewall here: the peer may not have started yet."""
    if check.resolve_error is None:
        return []
    from envdoctor.nccl.rules import load_rules

    cat = (rules if rules is not None else load_rules()).categories["hostname_unresolvable"]  # the Knowledge's NCCL rules
    return [Finding(
        id=cat.finding_id, severity=cat.severity, category=cat.id, title=cat.title,
        detail=f"{what} {check.host}:{check.port}: {check.host!r} does not resolve on this node ({check.resolve_error}); "
               "nothing was launched.",
        remedy=manual(cat.fix), subjects=[check.host], confidence="high", score=1.0,
        evidence=[f"getaddrinfo({check.host!r}): {check.resolve_error}"],
    )]
