"""`fleet` at cluster size (issue 29 items 1 and 2): a bounded report (majority with its count, outliers by
name, each node's own findings grouped by finding), /dev/shm compared, exit 1 on any node's error, every node
in the JSON; nodes equal but for their identities share one decoded snapshot and one check."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys

import pytest

from envdoctor.errors import SnapshotError
from envdoctor.fleet.nodes import load_nodes
from envdoctor.present.fleet import render_comparison
from envdoctor.present.style import Style
from envdoctor.rules.fleet_listing import names_text, summary_line
from envdoctor.settings import Settings
from envdoctor.snapshot import load_snapshot
from envdoctor.usecases.check import check
from envdoctor.usecases.fleet import compare_snapshot_files
from tests.conftest import ROOT, run_cli
from tests.json_schemas import assert_valid

KNOW = Settings.from_env({}).knowledge()


def _nodes_module():
    spec = importlib.util.spec_from_file_location("fleet_nodes", ROOT / "bench" / "fleet_nodes.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["fleet_nodes"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory):
    mod = _nodes_module()
    where = tmp_path_factory.mktemp("fleet")
    paths = [str(p) for p in mod.write_nodes(120, where)]
    return mod, paths


def test_names_are_bounded_and_the_majority_is_counted():
    assert names_text([f"n{i}" for i in range(20)]) == "n0, n1, n2, n3, n4, n5, n6, n7 and 12 more"
    values = {f"n{i:03d}": "550" for i in range(100)}
    values["n042"] = "535"
    assert summary_line(values) == "550 on 99 nodes; 535 on n042"


def test_the_odd_node_s_own_errors_are_reported_by_finding_and_exit_1(fleet_dir):
    mod, paths = fleet_dir
    odd = mod.host_name(mod.odd_index(len(paths)))
    result = compare_snapshot_files(paths, KNOW)
    own = {f.id: f for f in result.node_findings}
    assert own["ED201"].subjects == [odd] and own["ED201"].title.endswith(f"on 1 node: {odd}")
    assert own["ED210"].subjects == [odd]  # its Fabric Manager no longer matches its driver
    assert result.exit_code() == 1
    titles = [f.title for f in result.findings]
    assert f"driver branch differs on {odd} (others: 550)" in titles
    assert f"/dev/shm size differs on {odd} (others: 1024 GiB)" in titles
    shm = next(f for f in result.findings if f.title.startswith("/dev/shm"))
    assert "1024 GiB on 119 nodes; 64 MiB on " + odd in shm.detail
    assert any(line.startswith("1024 GiB (119 nodes): node00000, node00001") for line in shm.evidence)
    doc = result.to_json()
    assert_valid(doc)
    assert len(doc["nodes"]) == 120 and doc["summary"]["errors"] == 2


def test_text_is_at_most_60_lines_with_many_outliers(fleet_dir, tmp_path):
    mod, paths = fleet_dir
    edited = []
    for i, p in enumerate(paths):  # 30 nodes on another torch, 25 with another NCCL_IB_HCA: many outliers
        d = json.loads(open(p).read())
        if i % 4 == 1:
            d["torch"]["version"] = "2.4.1+cu121"
        if i % 5 == 2:
            d["env"]["NCCL_IB_HCA"] = f"mlx5_{i}"
        q = tmp_path / f"{i}.json"
        q.write_text(json.dumps(d))
        edited.append(str(q))
    result = compare_snapshot_files(edited, KNOW)
    text = render_comparison(result, Style(False))
    assert len(text.splitlines()) <= 60
    torch = next(f for f in result.findings if f.title.startswith("torch differs"))
    assert "and 22 more" in torch.title and len(torch.subjects) == 30


def test_fleet_cli_at_120_nodes_prints_the_odd_node_s_error(fleet_dir):
    mod, paths = fleet_dir
    odd = mod.host_name(mod.odd_index(len(paths)))
    res = run_cli(["fleet", *paths])
    assert res.returncode == 1, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) <= 60
    assert any(line.startswith("ERROR ED201") and line.endswith(f"on 1 node: {odd}") for line in lines)


def test_nodes_that_differ_only_in_identities_share_one_snapshot(fleet_dir):
    _, paths = fleet_dir
    nodes = load_nodes(paths[:20])
    assert len({id(n.snapshot) for n in nodes}) < 20
    assert [n.hostname for n in nodes] == [f"node{i:05d}" for i in range(20)]


def test_a_twin_with_an_invalid_identity_is_still_refused(fleet_dir, tmp_path):
    _, paths = fleet_dir
    d = json.loads(open(paths[1]).read())
    d["gpus"][0]["uuid"] = 5
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    with pytest.raises(SnapshotError, match="bad.json"):
        load_nodes([paths[0], str(bad)])


def test_no_rule_reads_the_identities_set_aside(fleet_dir):
    """The guard behind sharing one check per twin: changing only identities changes no finding."""
    _, paths = fleet_dir
    d = json.loads(open(paths[0]).read())
    e = copy.deepcopy(d)
    e["host"]["hostname"] = "elsewhere"
    e["created"] = d["created"][:10] + "T23:59:59Z"
    for g in e["gpus"]:
        g["uuid"] = "GPU-ffffffff-ffff-ffff-ffff-ffffffffffff"
    for i in e["network"]["interfaces"]:
        i["addresses"] = ["192.0.2.1"]
    for p in e["probes"]:
        p["seconds"] = 99.0
    from envdoctor.snapshot import snapshot_from_json

    a = [f.to_json() for f in check(snapshot_from_json(d), KNOW).findings]
    b = [f.to_json() for f in check(snapshot_from_json(e), KNOW).findings]
    assert a == b
    assert load_snapshot(paths[0]).host.hostname == "node00000"
