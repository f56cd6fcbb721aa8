"""The fleet checks, the bandwidth matrix reading and the rendezvous parameters: pure functions over snapshots."""

from __future__ import annotations

import json
import socket
import time
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envdoctor.errors import InputError
from envdoctor.fleet import checks
from envdoctor.fleet.diagnose import Measured, fleet_diagnosis
from envdoctor.fleet.endpoint import check_endpoint, endpoint_findings, resolve_rendezvous
from envdoctor.fleet.matrix import analyse
from envdoctor.fleet.measure import rounds
from envdoctor.fleet.report import node_names
from envdoctor.fleet.thresholds import load_thresholds
from envdoctor.snapshot import snapshot_from_json
from tests.conftest import fixture_path

TH = load_thresholds()


def nodes(edit, n=3, fixture="h100_8x_nvswitch"):
    out = []
    for i in range(n):
        data = json.loads(fixture_path(fixture).read_text())
        data["host"]["hostname"] = f"node-{i}"
        edit(i, data)
        out.append((f"node-{i}", snapshot_from_json(data)))
    return out


def test_each_nccl_variable_that_differs_is_named_with_its_node():
    def edit(i, d):
        d["env"]["NCCL_ALGO"] = "Ring"
        if i == 1:
            d["env"]["NCCL_IB_HCA"] = "mlx5_7"
        if i == 2:
            del d["env"]["NCCL_ALGO"]

    found = {f.title: f for f in checks.nccl_setting_findings(nodes(edit))}
    assert set(found) == {"NCCL_IB_HCA differs on node-1 (others: NCCL_IB_HCA=mlx5)",
                          "NCCL_ALGO differs on node-2 (others: NCCL_ALGO=Ring)"}
    assert found["NCCL_ALGO differs on node-2 (others: NCCL_ALGO=Ring)"].subjects == ["node-2"]
    # the whole-string comparison of drift.py no longer says it a second time
    all_titles = [f.title for f in fleet_diagnosis(nodes(edit), TH)]
    assert not any(t.startswith("NCCL_* settings") for t in all_titles)


def test_a_node_whose_environment_is_unknown_is_not_called_different():
    def edit(i, d):
        if i == 2:
            d["env"] = None
            d["absent"]["env"] = "failed: probe timed out"

    assert checks.nccl_setting_findings(nodes(edit)) == []


def test_fabric_manager_version_differs_on_one_nvswitch_node():
    def edit(i, d):
        d["fabric_manager"].update(nvswitch_present=True, running=True, version="550.54.15")
        if i == 0:
            d["fabric_manager"]["version"] = "550.90.07"

    [f] = checks.fabric_manager_findings(nodes(edit))
    assert f.id == "ED903" and f.subjects == ["node-0"] and "Fabric Manager version" in f.title


def test_driver_branch_difference_is_reported_by_the_fleet_diagnosis():
    def edit(i, d):
        if i == 1:
            d["driver"]["version"] = "560.35.03"

    titles = [f.title for f in fleet_diagnosis(nodes(edit), TH)]
    assert "driver branch differs on node-1 (others: 550)" in titles


def test_fewer_gpus_and_slower_nic_are_named():
    def edit(i, d):
        if i == 2:
            d["gpus"] = d["gpus"][:6]
        if i == 1:
            for iface in d["network"]["interfaces"]:
                if iface.get("speed_mbps"):
                    iface["speed_mbps"] = min(iface["speed_mbps"], 10000)

    found = checks.capacity_findings(nodes(edit))
    by_title = {f.title: f.subjects for f in found}
    assert by_title == {"fewer GPUs on node-2 (others: 8 GPU(s))": ["node-2"],
                        "slower network interfaces on node-1 (others: fastest 400 Gb/s)": ["node-1"]}
    assert all(f.category == "fleet_hardware" for f in found)


def test_identical_nodes_give_no_capacity_or_setting_finding():
    same = nodes(lambda i, d: None)
    assert fleet_diagnosis(same, TH) == []


def test_clock_skew_beyond_the_bound_only():
    r = checks.ClockReading
    found = checks.clock_findings({"a": r(0.01, 0.001), "b": r(2.5, 0.2), "c": r(1.3, 0.5)}, TH)
    assert [f.subjects for f in found] == [["b"]]  # c's 1.3 s may be 0.8 s: within the 1 s threshold
    assert found[0].category == "clock_skew"


def test_missing_nodes_are_an_error():
    m = Measured(missing=["rank3"], timeout=5, endpoint="h:1")
    [f] = fleet_diagnosis(nodes(lambda i, d: None, 2), TH, m)
    assert f.severity == "error" and f.subjects == ["rank3"] and "never arrived" in f.title


def fast_matrix(n, value=10.0):
    return [[None if i == j else value for j in range(n)] for i in range(n)]


def test_slow_node_is_named_against_the_median():
    m = fast_matrix(4)
    for j in range(4):
        if j != 2:
            m[2][j] = m[j][2] = 1.0
    v = analyse(m, TH.slow_ratio)
    assert v.slow_nodes == [2] and v.slow_links == [] and v.median_gbps == 10.0


def test_slow_link_between_healthy_nodes():
    m = fast_matrix(4)
    m[0][3] = 2.0
    v = analyse(m, TH.slow_ratio)
    assert v.slow_nodes == [] and v.slow_links == [(0, 3)]
    [f] = checks.bandwidth_findings(["a", "b", "c", "d"], m, v, TH)
    assert f.title == "link a -> d is slow: 2.00 GB/s" and f.subjects == ["a", "d"]


def test_two_nodes_cannot_tell_which_end_is_slow():
    m = [[None, 1.0], [0.5, None]]
    assert analyse(m, TH.slow_ratio).slow_nodes == []


@given(st.integers(min_value=2, max_value=16))
def test_rounds_meet_every_pair_once_and_no_node_twice_per_round(n):
    plan = rounds(n)
    met = [tuple(sorted(p)) for r in plan for p in r]
    assert sorted(met) == list(combinations(range(n), 2))
    for r in plan:
        busy = [x for p in r for x in p]
        assert len(busy) == len(set(busy))
    assert len(plan) == (n - 1 if n % 2 == 0 else n)


def test_nodes_named_by_host_and_by_rank_when_names_collide():
    assert node_names({0: "a", 1: "b", 2: "a", 3: None}) == {0: "rank0", 1: "b", 2: "rank2", 3: "rank3"}


def test_thresholds_file_is_validated(tmp_path):
    bad = tmp_path / "fleet.json"
    bad.write_text(json.dumps({"clock_skew_s": {"value": 1}, "slow_ratio": {"value": 0.5, "source": "x"}}))
    with pytest.raises(InputError, match="clock_skew_s needs a value and a source"):
        load_thresholds(bad)
    bad.write_text(json.dumps({"clock_skew_s": {"value": 1, "source": "s"}, "slow_ratio": {"value": 2, "source": "x"}}))
    with pytest.raises(InputError, match="slow_ratio.value must be a number between 0 and 1"):
        load_thresholds(bad)


@pytest.mark.parametrize("flags, env, want", [
    ((3, 1, "h:5"), {}, (3, 1, "h", 5, False, "flags")),
    ((None, None, None), {"RANK": "2", "WORLD_SIZE": "4", "MASTER_ADDR": "m", "MASTER_PORT": "7",
                          "TORCHELASTIC_USE_AGENT_STORE": "True", "LOCAL_WORLD_SIZE": "1"}, (4, 2, "m", 7, True, "torchrun")),
    # under torchrun its agent's store is the meeting point, whatever --rdzv-endpoint says
    ((None, None, "x:9"), {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "m", "MASTER_PORT": "7",
                           "TORCHELASTIC_USE_AGENT_STORE": "True"}, (2, 0, "m", 7, True, "torchrun")),
    ((None, None, "head:29500"), {"SLURM_PROCID": "3", "SLURM_NTASKS": "8", "SLURM_NNODES": "8"},
     (8, 3, "head", 29500, False, "slurm")),
    ((None, None, None), {"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "job-master-0", "MASTER_PORT": "23456",
                          "KUBERNETES_SERVICE_HOST": "10.0.0.1"}, (2, 1, "job-master-0", 23456, False, "kubernetes")),
    ((4, None, "svc:1"), {"JOB_COMPLETION_INDEX": "3"}, (4, 3, "svc", 1, False, "kubernetes")),
    ((2, 0, "[::1]:29400"), {}, (2, 0, "::1", 29400, False, "flags")),
])
def test_rendezvous_from_flags_or_the_launchers_environment(flags, env, want):
    r = resolve_rendezvous(*flags, env)
    assert (r.nnodes, r.rank, r.host, r.port, r.agent_store, r.source) == want


@pytest.mark.parametrize("flags, env, message", [
    ((None, 0, "h:1"), {}, "needs --nnodes"),
    ((2, None, "h:1"), {}, "needs --node-rank"),
    ((2, 0, None), {}, "needs --rdzv-endpoint"),
    ((1, 0, "h:1"), {}, "at least two nodes"),
    ((2, 2, "h:1"), {}, "outside 0..1"),
    ((2, 0, "h"), {}, "expected HOST:PORT"),
    ((None, None, None), {"SLURM_PROCID": "x", "SLURM_NTASKS": "2"}, "SLURM_PROCID='x'"),
    ((None, None, None), {"RANK": "0", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4", "MASTER_ADDR": "m",
                          "TORCHELASTIC_USE_AGENT_STORE": "True"}, "--nproc-per-node 1"),
])
def test_rendezvous_errors_name_the_missing_or_bad_value(flags, env, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace("[", r"\[")):
        resolve_rendezvous(*flags, env)


def test_unresolvable_host_is_the_dns_finding(monkeypatch):
    def fail(*a, **k):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", fail)
    check = check_endpoint("head-node", 29500)
    [f] = endpoint_findings(check)
    assert f.category == "hostname_unresolvable" and f.id == "NCCL-HOSTNAME-UNRESOLVABLE"
    assert f.confidence == "high" and "head-node" in f.detail and check.reachable is None


def test_a_resolver_that_never_answers_is_bounded(monkeypatch):
    def never(*args, **kwargs):
        time.sleep(60)  # the abandoned thread then ends as a resolver would, not with a TypeError in a later test
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", never)
    check = check_endpoint("head-node", 29500, resolve_timeout=0.3)
    assert check.resolve_error == "no answer from the resolver within 0.3 s"


def test_port_check_on_loopback():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert check_endpoint("127.0.0.1", port).reachable is True
    closed = check_endpoint("127.0.0.1", port, connect_timeout=0.3)
    assert closed.reachable is False and closed.connect_error


def test_a_noisy_but_healthy_matrix_names_nothing():
    # recorded: 4 processes on a loaded 2-core machine, loopback gloo, 32 MiB (bench/fleet_bench.py)
    m = [[None, 0.31, 0.26, 0.42], [0.35, None, 0.29, 0.29], [0.55, 0.47, None, 0.38], [0.42, 0.67, 0.56, None]]
    v = analyse(m, TH.slow_ratio)
    assert v.slow_nodes == [] and v.slow_links == []
    m[0][2] = 0.03  # ten times slower than that link's ends make it elsewhere
    assert analyse(m, TH.slow_ratio).slow_links == [(0, 2)]
