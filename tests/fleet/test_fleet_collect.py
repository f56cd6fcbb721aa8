"""`envdoctor fleet collect`: N local processes on 127.0.0.1 as the nodes; rank 0 gathers and diagnoses."""

from __future__ import annotations

import json
import os

import pytest

from tests.fleet.conftest import ROOT, collect_argv, free_port, node_snapshot, run_nodes
from tests.json_schemas import assert_valid


def named(i):
    def edit(d):
        d["host"]["hostname"] = f"node-{i}"
        if i == 2:
            d["torch"]["version"] = "2.4.1+cu121"
    return edit


@pytest.mark.slow
def test_three_nodes_one_different_and_one_clock_off(tmp_path):
    port = free_port()
    snaps = [node_snapshot(tmp_path, f"n{i}", named(i)) for i in range(3)]
    out = tmp_path / "fleet.json"
    argvs = [collect_argv(3, i, port, snaps[i], "--json", *(["-o", str(out)] if i == 0 else [])) for i in range(3)]
    nodes = run_nodes(argvs, [{}, {"ENVDOCTOR_TEST_FLEET_CLOCK_OFFSET_S": "-30"}, {}])
    doc = json.loads(nodes[0].stdout)
    assert_valid(doc)
    assert json.loads(out.read_text()) == doc
    assert [n["host"] for n in doc["nodes"]] == ["node-0", "node-1", "node-2"]
    assert [n["rank"] for n in doc["nodes"]] == [0, 1, 2] and all(n["arrived"] for n in doc["nodes"])
    titles = {f["title"]: f for f in doc["findings"]}
    torch = titles["torch differs on node-2 (others: 2.5.1+cu124)"]
    assert torch["severity"] == "error" and torch["subjects"] == ["node-2"]
    clock = next(f for f in doc["findings"] if f["category"] == "clock_skew")
    assert clock["subjects"] == ["node-1"]
    assert doc["nodes"][1]["clock_offset_s"] < -29
    assert doc["collect"]["missing"] == [] and "bandwidth" not in doc
    assert [n.returncode for n in nodes] == [1, 1, 1]  # every node exits as `check` would on the verdict
    assert nodes[1].stdout == nodes[2].stdout == ""  # only rank 0 prints the report


@pytest.mark.slow
def test_bandwidth_names_the_slowed_node(tmp_path):
    port = free_port()
    snap = node_snapshot(tmp_path, "same")  # one snapshot for all: the host names collide
    argvs = [collect_argv(3, i, port, snap, "--json", "--bandwidth", "--bandwidth-size", "1M") for i in range(3)]
    # node 1 sleeps 0.25 s after every send and receive: ~100x a 1 MiB loopback transfer
    nodes = run_nodes(argvs, [{}, {"ENVDOCTOR_TEST_FLEET_P2P_DELAY_S": "0.25"}, {}])
    doc = json.loads(nodes[0].stdout)
    assert_valid(doc)
    assert [n["host"] for n in doc["nodes"]] == ["rank0", "rank1", "rank2"]
    bw = doc["bandwidth"]
    assert bw["backend"] == "gloo" and bw["nodes"] == ["rank0", "rank1", "rank2"] and bw["error"] is None
    matrix = bw["matrix_gbps"]
    assert [matrix[i][i] for i in range(3)] == [None, None, None]
    assert all(isinstance(matrix[i][j], float) and matrix[i][j] > 0 for i in range(3) for j in range(3) if i != j)
    caps = bw["capacity_gbps"]
    assert min(range(3), key=lambda i: caps[i]) == 1  # the ranking only: no absolute figures
    assert bw["slow_nodes"] == ["rank1"]
    slow = next(f for f in doc["findings"] if f["category"] == "fleet_slow_node")
    assert slow["subjects"] == ["rank1"]
    assert {n.returncode for n in nodes} == {0}  # warnings only


@pytest.mark.slow
def test_a_node_that_never_arrives_is_named_after_the_timeout(tmp_path):
    port = free_port()
    snap = node_snapshot(tmp_path, "same")
    argvs = [collect_argv(3, i, port, snap, "--json", "--bandwidth") for i in range(2)]
    for a in argvs:
        a[a.index("--timeout") + 1] = "4"
    nodes = run_nodes(argvs, limit=90)
    doc = json.loads(nodes[0].stdout)
    assert_valid(doc)
    assert doc["collect"]["missing"] == ["rank2"]
    assert [n["arrived"] for n in doc["nodes"]] == [True, True, False]
    missing = next(f for f in doc["findings"] if f["category"] == "fleet_node_missing")
    assert missing["severity"] == "error" and missing["subjects"] == ["rank2"] and "4 s" in missing["title"]
    assert doc["bandwidth"]["matrix_gbps"] is None and "never arrived" in doc["bandwidth"]["error"]
    assert [n.returncode for n in nodes] == [1, 1]


@pytest.mark.slow
def test_without_rank_0_a_node_gives_up_with_exit_2(tmp_path):
    port = free_port()
    argv = collect_argv(2, 1, port, node_snapshot(tmp_path, "s"))
    argv[argv.index("--timeout") + 1] = "3"
    [node] = run_nodes([argv], limit=60)
    assert node.returncode == 2 and node.stdout == ""
    assert f"could not reach rank 0 within 3 s at 127.0.0.1:{port}" in node.stderr


def test_bad_snapshot_or_flags_exit_2_before_waiting(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    port = free_port()
    nodes = run_nodes([collect_argv(2, 1, port, str(bad)),
                       ["fleet", "collect", "--nnodes", "2", "--node-rank", "5", "--rdzv-endpoint", "h:1"],
                       ["fleet", "a.json", "b.json", "--bandwidth"],
                       ["fleet", "collect", "extra.json", "--nnodes", "2"]], limit=60)
    assert [n.returncode for n in nodes] == [2, 2, 2, 2]
    assert "bad.json" in nodes[0].stderr
    assert "node rank 5 is outside 0..1" in nodes[1].stderr
    assert "--bandwidth: only with `fleet collect`" in nodes[2].stderr
    assert "takes no snapshot files" in nodes[3].stderr


def test_without_torch_collect_is_a_clear_exit_2_and_check_still_runs(tmp_path):
    fake = tmp_path / "site" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('libtorch_cpu.so: cannot open shared object file')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT)])}
    snap = node_snapshot(tmp_path, "s")
    collect, check = run_nodes([collect_argv(2, 0, free_port(), snap), ["check", "--json"]], [env, env])
    assert collect.returncode == 2
    assert "fleet collect needs torch (torch.distributed)" in collect.stderr and "libtorch_cpu.so" in collect.stderr
    doc = json.loads(check.stdout)  # check probes this machine, whose torch does not import
    assert_valid(doc)
    assert check.returncode == 1 and "torch_broken" in {f["category"] for f in doc["findings"]}


@pytest.mark.slow
def test_when_rank_0_dies_the_others_exit_2_and_nothing_is_left(tmp_path):
    import signal
    import subprocess
    import sys

    from tests.fleet.conftest import assert_nothing_left, env_for

    port = free_port()
    snap = node_snapshot(tmp_path, "s")
    start = [sys.executable, "-m", "envdoctor"]
    # rank 0 waits up to 60 s for a third node that never comes; it is killed while it waits
    lead = subprocess.Popen([*start, *collect_argv(3, 0, port, snap)], cwd=ROOT, env=env_for(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    follower = subprocess.Popen([*start, *collect_argv(3, 1, port, snap)], cwd=ROOT, env=env_for(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in follower.stderr:
            if "snapshot sent" in line:
                break
        lead.send_signal(signal.SIGKILL)
        lead.wait(timeout=30)
        _, err = follower.communicate(timeout=60)
    finally:
        for p in (lead, follower):
            if p.poll() is None:
                p.kill()
            p.wait()
            for stream in (p.stdout, p.stderr):
                stream.close()
    assert follower.returncode == 2 and "lost the rendezvous at 127.0.0.1" in err
    assert_nothing_left([lead.pid, follower.pid])
