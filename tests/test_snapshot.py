"""The snapshot model: lossless JSON round trip, typed absence, and clear errors for bad files."""

from __future__ import annotations

import json

import pytest

from envdoctor.jsonschema_lite import load_schema, validate_snapshot
from envdoctor.snapshot import (
    SCHEMA,
    Gpu,
    ProbeFailed,
    Snapshot,
    SnapshotError,
    Unavailable,
    Unknown,
    is_unknown,
    load_snapshot,
    snapshot_from_json,
)
from tests.conftest import all_fixture_names, fixture_path, run_cli
from tests.json_schemas import assert_valid


def test_there_are_at_least_twelve_machine_fixtures():
    assert len(all_fixture_names()) >= 12


@pytest.mark.parametrize("name", all_fixture_names())
def test_fixture_is_schema_valid_and_round_trips(name):
    text = fixture_path(name).read_text()
    data = json.loads(text)
    assert validate_snapshot(data) == []
    assert load_snapshot(fixture_path(name)).dumps() == text


def test_fixtures_validate_against_the_schema_with_jsonschema_too():
    for name in all_fixture_names():
        assert_valid(json.loads(fixture_path(name).read_text()), SCHEMA)


def test_absent_reasons_survive_the_round_trip():
    snap = Snapshot(created="2026-01-01T00:00:00Z")
    snap.driver = Unavailable("no NVIDIA driver")
    snap.torch = ProbeFailed("torch probe timeout: no answer within 92s")
    snap.gpus = [Gpu(index=0, name="NVIDIA A100-SXM4-80GB", compute_capability="8.0", numa_node=ProbeFailed("EIO"))]
    data = snap.to_json()
    assert data["driver"] is None and data["torch"] is None and data["gpus"][0]["numa_node"] is None
    back = snapshot_from_json(json.loads(json.dumps(data)))
    assert back.driver == Unavailable("no NVIDIA driver")
    assert back.torch == ProbeFailed("torch probe timeout: no answer within 92s")
    assert back.gpus[0].numa_node == ProbeFailed("EIO")


def test_unknown_keys_are_kept():
    data = json.loads(fixture_path("h100_8x_nvswitch").read_text())
    data["site_note"] = {"rack": "B12"}
    data["gpus"][0]["vendor_field"] = 7
    back = snapshot_from_json(data).to_json()
    assert back["site_note"] == {"rack": "B12"}
    assert back["gpus"][0]["vendor_field"] == 7


def test_null_without_a_recorded_reason_reads_as_unknown_and_writes_back_bare():
    data = json.loads(fixture_path("h100_8x_nvswitch").read_text())
    data["absent"] = {}
    data["cuda_toolkit"] = None
    snap = snapshot_from_json(data)
    assert isinstance(snap.cuda_toolkit, Unknown) and is_unknown(snap.cuda_toolkit)
    assert not isinstance(snap.cuda_toolkit, Unavailable)
    back = snap.to_json()
    assert back["cuda_toolkit"] is None and "cuda_toolkit" not in (back.get("absent") or {})


@pytest.mark.parametrize("reason, kind", [("unavailable: no nvcc", Unavailable), ("failed: boom", ProbeFailed),
                                          ("unknown: not in the report", Unknown)])
def test_absent_reasons_round_trip_as_their_marker(reason, kind):
    data = json.loads(fixture_path("h100_8x_nvswitch").read_text())
    data["absent"] = {"cuda_toolkit": reason}
    data["cuda_toolkit"] = None
    snap = snapshot_from_json(data)
    assert isinstance(snap.cuda_toolkit, kind)
    assert is_unknown(snap.cuda_toolkit) == (kind is not Unavailable)
    assert snap.to_json()["absent"]["cuda_toolkit"] == reason


def test_not_probed_is_unknown_not_unavailable():
    snap = Snapshot()
    assert is_unknown(snap.torch) and not isinstance(snap.torch, Unavailable)
    assert snapshot_from_json(snap.to_json()).torch == snap.torch


@pytest.mark.parametrize(
    "content, expected",
    [
        ('{"schema": "envdoctor.snapshot/1", "created": "x", "host": {', "truncated JSON"),
        ("[1, 2, 3]", "expected a JSON object"),
        ('{"schema": "envdoctor.snapshot/9"}', "unknown snapshot schema 'envdoctor.snapshot/9'"),
        ('{"created": "x"}', "unknown snapshot schema None"),
        ("not json at all", "invalid JSON at line 1"),
    ],
)
def test_bad_files_raise_one_clear_error(tmp_path, content, expected):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(SnapshotError) as exc:
        load_snapshot(path)
    assert str(path) in str(exc.value) and expected in str(exc.value)


def test_wrong_shape_names_the_field(tmp_path):
    data = json.loads(fixture_path("rtx4090_pair").read_text())
    data["gpus"][1]["compute_capability"] = "eight"
    del data["python"]
    path = tmp_path / "shape.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SnapshotError) as exc:
        load_snapshot(path)
    message = str(exc.value)
    assert "python: required field is missing" in message or "gpus[1].compute_capability" in message
    assert "(and 1 more)" in message


@pytest.mark.parametrize("content", ['{"schema": "envdoctor.snapshot/1", "gpus": [', '{"schema": "v0"}', "[]"])
def test_cli_exit_2_and_one_line_for_bad_snapshot(tmp_path, content):
    path = tmp_path / "snap.json"
    path.write_text(content)
    for command in (["check", "--snapshot", str(path)], ["report", "--snapshot", str(path)]):
        res = run_cli(command)
        assert res.returncode == 2
        assert res.stdout == ""
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0] and "Traceback" not in res.stderr


def test_cli_missing_snapshot_file(tmp_path):
    res = run_cli(["check", "--snapshot", str(tmp_path / "nope.json")])
    assert res.returncode == 2 and "no such file" in res.stderr


def test_schema_constant_matches_the_bundled_schema():
    assert load_schema("snapshot.schema.json")["$id"] == SCHEMA
