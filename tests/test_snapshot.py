"""The snapshot model: lossless JSON round trip, typed absence, and clear errors for bad files."""

from __future__ import annotations

import copy
import json
from typing import Any, List, Tuple

import pytest

from envdoctor import snapshot as snapshot_module
from envdoctor import snapshot_codec
from envdoctor.jsonschema_lite import load_schema, validate, validate_snapshot
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
from tests.conftest import ROOT, all_fixture_names, fixture_path, run_cli
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


@pytest.mark.parametrize(
    "content, expected",
    [
        ("", "the file is empty: not a snapshot"),
        ("\n  \n", "the file is empty (only whitespace): not a snapshot"),
        ('{"schema": "envdoctor.snapshot/2"}', "comes from a newer envdoctor; upgrade envdoctor"),
        ('{"created": "x"}', 'no "schema" field, so it is not an envdoctor snapshot'),
    ],
)
def test_an_empty_file_or_a_newer_schema_says_what_it_is(tmp_path, content, expected):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(SnapshotError) as exc:
        load_snapshot(path)
    assert str(path) in str(exc.value) and expected in str(exc.value)
    assert "truncated JSON" not in str(exc.value)


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


# --- one source of truth: the schema and the decoders are generated from the types --------------------------

HANDWRITTEN_SCHEMA = ROOT / "tests" / "data" / "snapshot.schema.handwritten.json"  # the schema before it was generated
EXTRA_SNAPSHOTS = sorted((ROOT / "tests" / "data").glob("h100_*.json")) + sorted(
    (ROOT / "tests" / "data" / "real_envs").glob("*.json"))


def every_snapshot_document() -> List[Tuple[str, Any]]:
    docs = [(name, json.loads(fixture_path(name).read_text())) for name in all_fixture_names()]
    return docs + [(p.name, json.loads(p.read_text())) for p in EXTRA_SNAPSHOTS]


def test_the_generated_schema_and_decoders_are_current():
    """Edit the dataclasses in envdoctor/snapshot.py, then run `python -m envdoctor.snapshot_codec --write`."""
    assert (ROOT / "envdoctor" / "data" / "snapshot.schema.json").read_text() == snapshot_codec.schema_text()
    assert (ROOT / "envdoctor" / "snapshot_decoders.py").read_text() == snapshot_codec.decoders_text()


def test_the_schema_names_every_field_of_the_model():
    schema = load_schema("snapshot.schema.json")

    def walk(cls, node):
        props = node["properties"]
        for f, kind in snapshot_codec.fields_of(cls):
            assert f.name in props, f"{cls.__name__}.{f.name}"
            sub = props[f.name]
            while kind.tag in ("list", "dict") and kind.item is not None and kind.item.tag != "any":
                sub = sub["items"] if kind.tag == "list" else sub["additionalProperties"]
                kind = kind.item
            if kind.tag == "model":
                walk(kind.model, sub)

    walk(Snapshot, schema)


def _reference_load(tp, value, absent, path):
    """The reflective loader the generated decoders replaced (typing per value), kept to compare values with."""
    import dataclasses
    import typing

    markers = (Unavailable, ProbeFailed, Unknown, type(None))
    if value is None:
        if path in absent:
            return snapshot_module._marker(absent[path])
        if typing.get_origin(tp) is typing.Union and type(None) in typing.get_args(tp):
            return None
        return snapshot_module.NOT_REPORTED
    if typing.get_origin(tp) is typing.Union:
        args = [a for a in typing.get_args(tp) if a not in markers]
        tp = args[0] if len(args) == 1 else typing.Union[tuple(args)]
    join = snapshot_module._join
    if isinstance(tp, type) and issubclass(tp, snapshot_module.Model):
        hints, kwargs = typing.get_type_hints(tp), {}
        names = {f.name for f in dataclasses.fields(tp)} - {"extra"}
        for name in names:
            if name in value:
                kwargs[name] = _reference_load(hints[name], value[name], absent, join(path, name))
            elif join(path, name) in absent:
                kwargs[name] = snapshot_module._marker(absent[join(path, name)])
        obj = tp(**kwargs)
        obj.extra = {k: v for k, v in value.items() if k not in names}
        return obj
    origin = typing.get_origin(tp)
    if origin is list:
        return [_reference_load(typing.get_args(tp)[0], v, absent, join(path, i)) for i, v in enumerate(value)]
    if origin is dict:
        return {k: _reference_load(typing.get_args(tp)[1], v, absent, join(path, k)) for k, v in value.items()}
    return value


def _values(obj):
    """Everything a model holds, `extra` and marker types included (== on models skips `extra`)."""
    if isinstance(obj, snapshot_module.Model):
        import dataclasses

        return (type(obj).__name__, {f.name: _values(getattr(obj, f.name)) for f in dataclasses.fields(obj)})
    if isinstance(obj, list):
        return [_values(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _values(v) for k, v in obj.items()}
    return (type(obj).__name__, obj)


@pytest.mark.parametrize("name, doc", every_snapshot_document(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_snapshot_loads_to_the_values_the_reflective_loader_gave(name, doc):
    absent = doc.get("absent") or {}
    body = {k: v for k, v in doc.items() if k not in ("schema", "absent")}
    expected = _reference_load(Snapshot, body, absent, "")
    got = snapshot_from_json(copy.deepcopy(doc))
    assert _values(got) == _values(expected)
    assert json.dumps(got.to_json()) == json.dumps(expected.to_json())


def _rejected_cases() -> List[Tuple[str, Any]]:
    """Documents the existing tests refuse (and a few more of the same kinds)."""
    rtx = json.loads(fixture_path("rtx4090_pair").read_text())
    cases = []

    def case(why, edit):
        doc = copy.deepcopy(rtx)
        edit(doc)
        cases.append((why, doc))

    case("compute capability 'eight'", lambda d: d["gpus"][1].update(compute_capability="eight"))
    case("no python", lambda d: d.pop("python"))
    case("host is a string", lambda d: d.update(host="node7"))
    case("an unknown os", lambda d: d["host"].update(os="plan9"))
    case("a GPU without an index", lambda d: d["gpus"][0].pop("index"))
    case("memory as a string", lambda d: d["gpus"][0].update(memory_bytes="80GB"))
    case("a bool for an integer", lambda d: d["host"].update(memory_bytes=True))
    case("packages of numbers", lambda d: d["python"].update(packages={"torch": 2}))
    case("a probe status 'maybe'", lambda d: d["probes"][0].update(status="maybe"))
    case("absent reasons that are not strings", lambda d: d.update(absent={"driver": 1}))
    case("torch without importable", lambda d: d["torch"].pop("importable"))
    case("a null python version", lambda d: d["python"].update(version=None))
    case("gpus an object", lambda d: d.update(gpus={}))
    case("a null GPU", lambda d: d["gpus"].append(None))
    case("topology links of numbers", lambda d: d.update(topology={"links": [[1]]}))
    return cases


def _verdict_of_the_decoders(doc) -> bool:
    try:
        snapshot_from_json(copy.deepcopy(doc))
    except SnapshotError as exc:
        assert "is not a version" not in str(exc)  # these documents' versions are the fixtures'
        return False
    return True


@pytest.mark.parametrize("why, doc", _rejected_cases(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_refused_document_is_refused_by_both_schemas_and_the_decoders(why, doc):
    generated = load_schema("snapshot.schema.json")
    handwritten = json.loads(HANDWRITTEN_SCHEMA.read_text())
    assert validate(doc, generated, generated) != []
    assert validate(doc, handwritten, handwritten) != []
    assert not _verdict_of_the_decoders(doc)


@pytest.mark.parametrize("name, doc", every_snapshot_document(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_snapshot_is_accepted_by_both_schemas(name, doc):
    handwritten = json.loads(HANDWRITTEN_SCHEMA.read_text())
    assert validate(doc, handwritten, handwritten) == []
    assert validate_snapshot(doc) == []


def test_a_refused_snapshot_names_the_file_and_the_entry(tmp_path):
    data = json.loads(fixture_path("h100_8x_nvswitch").read_text())
    data["gpus"][3]["pcie"]["width"] = "x16"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SnapshotError) as exc:
        load_snapshot(path)
    assert str(exc.value) == f"{path}: invalid snapshot: gpus[3].pcie.width: expected integer or null, got str \"x16\""


def test_reasons_of_nulls_inside_lists_and_maps_load_as_the_reflective_loader_reads_them():
    doc = json.loads(fixture_path("a100_gen3_idle").read_text())
    doc["absent"]["topology.p2p.0.0"] = "unavailable: a GPU and itself"
    doc["torch"]["loaded_libraries"] = {"cudnn": None, "nccl": "/usr/lib/libnccl.so.2"}
    doc["absent"]["torch.loaded_libraries.cudnn"] = "failed: /proc/self/maps unreadable"
    doc["deepspeed"] = {"version": "0.16.0", "importable": True, "torch_info": {"cuda": None, "hip": None}}
    doc["absent"]["deepspeed.torch_info.hip"] = "unavailable: CUDA build"
    snap = snapshot_from_json(copy.deepcopy(doc))
    assert snap.topology.p2p[0][0] == Unavailable("a GPU and itself") and snap.topology.p2p[0][1] is False
    assert snap.torch.loaded_libraries["cudnn"] == ProbeFailed("/proc/self/maps unreadable")
    assert snap.deepspeed.torch_info == {"cuda": snapshot_module.NOT_REPORTED, "hip": Unavailable("CUDA build")}
    body = {k: v for k, v in doc.items() if k not in ("schema", "absent")}
    reference = _reference_load(Snapshot, body, doc["absent"], "")
    assert _values(snap) == _values(reference)
    assert json.dumps(snap.to_json()) == json.dumps(reference.to_json())
    assert snapshot_from_json(json.loads(snap.dumps())).dumps() == snap.dumps()


# --- partial lists and maps (issue 25, point 5) --------------------------------------------------


def test_a_partial_list_or_map_round_trips_through_json():
    from envdoctor.snapshot import PartialList, PartialMap, partial_reason

    snap = load_snapshot(fixture_path("h100_8x_nvswitch"))
    snap.python.packages = PartialMap(snap.python.packages, "rebuilt from a report")
    snap.env = PartialMap({"CUDA_HOME": "/usr/local/cuda"}, "the variables the report quotes")
    snap.libraries.cudnn = PartialList(snap.libraries.cudnn, "the copies the error names")
    data = snap.to_json()
    assert data["partial"] == {"env": "the variables the report quotes", "libraries.cudnn": "the copies the error names",
                               "python.packages": "rebuilt from a report"}
    assert list(data)[-2:] == ["partial", "absent"]
    assert validate_snapshot(data) == []
    assert_valid(data, SCHEMA)
    back = snapshot_from_json(json.loads(json.dumps(data)))
    assert partial_reason(back.python.packages) == "rebuilt from a report"
    assert partial_reason(back.env) == "the variables the report quotes"
    assert partial_reason(back.libraries.cudnn) == "the copies the error names"
    assert back.python.packages == snap.python.packages
    assert back.dumps() == snap.dumps()
    assert partial_reason(copy.deepcopy(back).python.packages) == "rebuilt from a report"


def test_a_snapshot_without_the_partial_map_reads_as_whole_and_writes_none():
    from envdoctor.snapshot import partial_reason

    text = fixture_path("h100_8x_nvswitch").read_text()
    assert '"partial"' not in text
    snap = load_snapshot(fixture_path("h100_8x_nvswitch"))
    assert partial_reason(snap.python.packages) is None
    assert isinstance(snap.package("surely-not-installed"), Unavailable)  # a whole list: known not installed
    assert "partial" not in snap.to_json()


def test_a_partial_entry_on_no_list_is_kept_and_a_bad_one_refused():
    data = json.loads(fixture_path("h100_8x_nvswitch").read_text())
    data["partial"] = {"gpus.9": "nothing there", "python.packages": "rebuilt from a report"}
    back = snapshot_from_json(data)
    assert back.to_json()["partial"] == data["partial"]
    with pytest.raises(SnapshotError, match="partial"):
        snapshot_from_json({**data, "partial": {"python.packages": 3}})
