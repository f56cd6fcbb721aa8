"""Local processes on 127.0.0.1 as the nodes of a cluster: start them, wait for all (bounded), read what
each said, and check that none of them (or anything they started) is left."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import psutil
import pytest

from tests.conftest import fixture_path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_snapshot(tmp_path: Path, name: str, edit=None, fixture: str = "h100_8x_nvswitch") -> str:
    data = json.loads(fixture_path(fixture).read_text())
    if edit is not None:
        edit(data)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return str(path)


@dataclass
class Node:
    rank: int
    returncode: int
    stdout: str
    stderr: str


def env_for(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "MASTER_", "TORCHELASTIC_")) and k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra or {})
    return env


def run_nodes(argvs: Sequence[Sequence[str]], envs: Sequence[Optional[Dict[str, str]]] = (), limit: float = 180,
              prefix: Sequence[str] = (sys.executable, "-m", "envdoctor")) -> List[Node]:
    """Start one process per argv at once, wait for every one (killing all past `limit`), and check that
    nothing they started outlives them."""
    procs = [subprocess.Popen([*prefix, *argv], cwd=ROOT, env=env_for(envs[i] if i < len(envs) else None),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i, argv in enumerate(argvs)]
    pids = [p.pid for p in procs]
    out = []
    try:
        for i, p in enumerate(procs):
            stdout, stderr = p.communicate(timeout=limit)
            out.append(Node(i, p.returncode, stdout, stderr))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert_nothing_left(pids)
    return out


def assert_nothing_left(pids: Sequence[int]) -> None:
    """No process of ours remains: neither a node nor anything whose parent was a node."""
    me = psutil.Process()
    left = [c for c in me.children(recursive=True) if c.is_running() and c.status() != psutil.STATUS_ZOMBIE
            and (c.pid in pids or c.ppid() in pids)]
    assert not left, [(c.pid, c.cmdline()) for c in left]


def collect_argv(nnodes: int, rank: int, port: int, snapshot: Optional[str], *extra: str) -> List[str]:
    argv = ["fleet", "collect", "--nnodes", str(nnodes), "--node-rank", str(rank),
            "--rdzv-endpoint", f"127.0.0.1:{port}", "--timeout", "60"]
    if snapshot:
        argv += ["--snapshot", snapshot]
    return argv + list(extra)


@pytest.fixture(autouse=True)
def _patient_verdict(monkeypatch):
    """Rank 0 waits for every simulated node to say it read the verdict (it stops waiting as soon as they have),
    not for its 10 s: on a loaded machine the threads of a simulated fleet read it late. A test of a node that never
    says so shortens the wait itself."""
    from envdoctor.fleet import collect

    monkeypatch.setattr(collect, "DONE_TIMEOUT", 300.0)
