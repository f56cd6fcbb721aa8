"""The fleet use cases: snapshot files compared, what `fleet collect` gathered, a saved report opened; each
result's document is envdoctor.fleet/1."""

from __future__ import annotations

import copy
import json

import pytest

from envdoctor.errors import InputError
from envdoctor.fleet.collect import Collected
from envdoctor.fleet.endpoint import Rendezvous
from envdoctor.settings import Settings
from envdoctor.usecases.fleet import FLEET_SCHEMA, compare_snapshots, diagnose_collected, open_report
from tests.conftest import fixture_path
from tests.json_schemas import assert_valid

KNOW = Settings.from_env({}).knowledge()  # the bundled fleet checks and thresholds


def nodes(snapshot_of, hosts):
    out = []
    for i, host in enumerate(hosts):
        snap = copy.deepcopy(snapshot_of("h100_8x_nvswitch"))
        snap.host.hostname = host
        if i == len(hosts) - 1:
            snap.torch.version = "2.4.1+cu121"
        out.append((f"n{i}.json", snap))
    return out


def test_snapshots_compared_are_named_by_host_and_the_odd_one_found(snapshot_of):
    result = compare_snapshots(nodes(snapshot_of, ["a", "b", "c"]), KNOW)
    assert result.nodes == [("a", "n0.json"), ("b", "n1.json"), ("c", "n2.json")]
    assert any("c" in f.subjects for f in result.findings if f.severity == "error")
    assert result.exit_code() == 1
    doc = result.to_json()
    assert doc["schema"] == FLEET_SCHEMA and doc["nodes"][0] == {"host": "a", "file": "n0.json"}
    assert_valid(doc)


def test_two_snapshots_of_one_host_name_are_told_apart_by_file(snapshot_of):
    result = compare_snapshots(nodes(snapshot_of, ["same", "same"]), KNOW)
    assert result.nodes == [("n0.json", "n0.json"), ("n1.json", "n1.json")]


def test_what_fleet_collect_gathered_is_diagnosed_with_a_bad_snapshot_as_a_finding():
    good = json.loads(fixture_path("h100_8x_nvswitch").read_text())
    payloads = {r: {"hostname": f"node-{r}", "file": "", "snapshot": dict(good, host=dict(good["host"], hostname=f"node-{r}"))}
                for r in range(2)}
    payloads[2] = {"hostname": "node-2", "file": "", "snapshot": {"schema": "nonsense"}}
    got = Collected(Rendezvous(3, 0, "127.0.0.1", 29500), 60.0, payloads, [])
    result = diagnose_collected(got, KNOW)
    assert "ED905" in [f.id for f in result.findings] and result.exit_code() == 1
    doc = result.to_json()
    assert [n["host"] for n in doc["nodes"]] == ["node-0", "node-1", "node-2"]
    assert_valid(doc)


def test_a_saved_report_opens_and_anything_else_is_said_plainly(tmp_path, snapshot_of):
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(compare_snapshots(nodes(snapshot_of, ["a", "b"]), KNOW).to_json()))
    assert open_report(str(path)).to_json()["nodes"][1]["host"] == "b"
    (tmp_path / "check.json").write_text(json.dumps({"schema": "envdoctor.check/1"}))
    (tmp_path / "junk.json").write_text("{")
    with pytest.raises(InputError, match="not an envdoctor.fleet/1 report"):
        open_report(str(tmp_path / "check.json"))
    with pytest.raises(InputError, match="invalid JSON"):
        open_report(str(tmp_path / "junk.json"))
    with pytest.raises(InputError, match="cannot read"):
        open_report(str(tmp_path / "missing.json"))
