"""docs/cluster.md's Slurm script and Kubernetes manifests, and torchrun, exercised as far as this machine
allows: local processes stand in for the nodes, a fake `srun` and `scontrol` for Slurm's."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys

import pytest

from envdoctor.cli import build_parser
from envdoctor.commands import fleet
from envdoctor.fleet.endpoint import resolve_rendezvous
from tests.fleet.conftest import ROOT, assert_nothing_left, env_for, free_port, node_snapshot, run_nodes
from tests.json_schemas import assert_valid

DOC = (ROOT / "docs" / "cluster.md").read_text()
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", DOC, re.S)

FAKE_SRUN = """#!/bin/bash
# Slurm's srun on one machine: the command once per node of the allocation, with the task's variables.
while [[ "$1" == --* ]]; do shift; done
pids=()
for ((i = 0; i < SLURM_NNODES; i++)); do
  SLURM_PROCID=$i SLURM_NODEID=$i SLURM_NTASKS=$SLURM_NNODES "$@" &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
exit $rc
"""


def executable(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def commands_in(yaml_text):
    """Each container's `command: [...]` (the manifests write it as a JSON-compatible flow list)."""
    return [json.loads(m) for m in re.findall(r"^\s*command: (\[.*\])\s*$", yaml_text, re.M)]


@pytest.mark.slow
def test_the_slurm_script_runs_under_a_fake_srun(tmp_path):
    [script] = [text for lang, text in BLOCKS if lang == "bash" and "#SBATCH" in text]
    assert "srun --ntasks-per-node=1 envdoctor fleet collect" in script
    port = free_port()
    (tmp_path / "fleet.sbatch").write_text(script.replace(":29500", f":{port}"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    executable(bin_dir / "srun", FAKE_SRUN)
    executable(bin_dir / "scontrol", "#!/bin/sh\n[ \"$1 $2\" = 'show hostnames' ] && printf '127.0.0.1\\n127.0.0.2\\n'\n")
    executable(bin_dir / "envdoctor", f"#!/bin/sh\nexec {sys.executable} -m envdoctor \"$@\"\n")
    env = env_for({"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "SLURM_JOB_NODELIST": "gpu-[01-03]",
                   "SLURM_NNODES": "3", "SLURM_JOB_ID": "42"})
    proc = subprocess.Popen(["bash", "fleet.sbatch"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=300)
    assert_nothing_left([proc.pid])
    doc = json.loads((tmp_path / "fleet-42.json").read_text())
    assert_valid(doc)
    assert doc["collect"]["source"] == "slurm" and doc["collect"]["nnodes"] == 3 and not doc["collect"]["missing"]
    assert [n["host"] for n in doc["nodes"]] == ["rank0", "rank1", "rank2"]  # one machine: the names collide
    assert all(n["file"] == "" for n in doc["nodes"])  # each node probed itself
    assert len(doc["bandwidth"]["matrix_gbps"]) == 3
    assert "3/3 nodes at 127.0.0.1" in out, err
    assert proc.returncode == (1 if doc["summary"]["errors"] else 0)


def test_every_manifest_command_is_a_valid_fleet_collect_command_line():
    manifests = [text for lang, text in BLOCKS if lang == "yaml"]
    commands = [c for m in manifests for c in commands_in(m)]
    assert len(commands) == 3
    for argv in commands:
        assert argv[:3] == ["envdoctor", "fleet", "collect"]
        args = build_parser().parse_args(argv[1:])
        assert args.func is fleet.run and args.snapshots == ["collect"]


def test_the_indexed_job_agrees_with_its_own_size_and_service():
    [job] = [text for lang, text in BLOCKS if lang == "yaml" and "completionMode: Indexed" in text]
    [argv] = commands_in(job)
    args = build_parser().parse_args(argv[1:])
    size = int(re.search(r"^\s*completions: (\d+)", job, re.M).group(1))
    assert int(re.search(r"^\s*parallelism: (\d+)", job, re.M).group(1)) == size == args.nnodes
    rdzv = resolve_rendezvous(args.nnodes, args.node_rank, args.rdzv_endpoint, {"JOB_COMPLETION_INDEX": "2"})
    service = re.search(r"kind: Service\nmetadata:\n  name: (\S+)", job).group(1)
    job_name = re.search(r"kind: Job\nmetadata:\n  name: (\S+)", job).group(1)
    assert (rdzv.rank, rdzv.host) == (2, f"{job_name}-0.{service}") and rdzv.source == "kubernetes"
    assert f"containerPort: {rdzv.port}" in job


@pytest.mark.slow
def test_the_pytorchjob_command_with_the_operators_environment(tmp_path):
    [manifest] = [text for lang, text in BLOCKS if lang == "yaml" and "PyTorchJob" in text]
    argv = commands_in(manifest)[0][1:]
    port = free_port()
    snap = node_snapshot(tmp_path, "s")
    envs = [{"RANK": str(r), "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
             "KUBERNETES_SERVICE_HOST": "10.96.0.1"} for r in range(2)]
    # the pods would probe themselves; here both contribute one snapshot to keep the test short
    nodes = run_nodes([[*argv, "--snapshot", snap, "--bandwidth-size", "1M"]] * 2, envs)
    assert "2/2 nodes at 127.0.0.1" in nodes[0].stdout and "bandwidth GB/s" in nodes[0].stdout
    assert nodes[1].stdout == "" and nodes[0].returncode == nodes[1].returncode == 0


@pytest.mark.slow
@pytest.mark.parametrize("nnodes", [2])
def test_under_torchrun_the_agents_store_is_used(tmp_path, nnodes):
    port = free_port()
    snap = node_snapshot(tmp_path, "s")
    argv = ["-m", "torch.distributed.run", "--nnodes", str(nnodes), "--nproc-per-node", "1", "--rdzv-backend",
            "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--max-restarts", "0", "-m", "envdoctor",
            "fleet", "collect", "--snapshot", snap, "--json", "--timeout", "60"]
    nodes = run_nodes([argv] * nnodes, prefix=(sys.executable,), limit=240)
    [doc] = [json.loads(n.stdout) for n in nodes if n.stdout.strip().startswith("{")]
    assert_valid(doc)
    assert doc["collect"]["source"] == "torchrun" and doc["collect"]["nnodes"] == nnodes
    assert [n["rank"] for n in doc["nodes"]] == list(range(nnodes))
    assert [n.returncode for n in nodes] == [0] * nnodes
