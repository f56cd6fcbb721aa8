"""Every JSON document envdoctor prints validates against the schema it ships (envdoctor/data/*.schema.json).

The documents are real outputs: each command run through `main()` on the fixture snapshots and NCCL logs,
all in one child process (the CLI writes to the process's stdout). Self-tests take minutes, so their schema
is checked on a recorded CPU run and on documents built by the code that writes them (tests/selftest/ also
validates every self-test document the suite produces).
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any, List, Tuple

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envdoctor import jsonschema_lite
from envdoctor.commands.check import CHECK_SCHEMA
from envdoctor.commands.fleet import FLEET_SCHEMA
from envdoctor.findings import Finding
from envdoctor.fixes import manual
from envdoctor.nccl.diagnose import SCHEMA as NCCL_SCHEMA
from envdoctor.selftest.result import SCHEMA as SELFTEST_SCHEMA
from envdoctor.selftest.result import TestResult, document
from envdoctor.snapshot import SCHEMA as SNAPSHOT_SCHEMA
from envdoctor.usecases.diagnose_text import SCHEMA as DIAGNOSE_SCHEMA
from envdoctor.wheels.planner import PLAN_SCHEMA
from tests.conftest import ROOT, all_fixture_names, fixture_path, run_cli_in_process
from tests.json_schemas import REGISTRY, SCHEMAS, assert_valid, errors

NCCL_LOGS = sorted((ROOT / "tests" / "fixtures" / "nccl").glob("*.*"))
RECORDED_SELFTEST = ROOT / "tests" / "fixtures" / "selftest" / "cpu_gloo_all.json"


@functools.cache
def _output(args: Tuple[str, ...]) -> Tuple[int, str]:
    """What `envdoctor ARGS` exited with and printed on stdout (main() in this process: each document is made
    once, by the worker that checks it)."""
    res = run_cli_in_process(list(args))
    return res.returncode, res.stdout


def run_json(args: List[str]) -> Any:
    """The document `envdoctor ARGS` printed; it exited 0 or 1, as these commands do on valid input."""
    code, out = _output(tuple(args))
    assert code in (0, 1), out
    return json.loads(out)


def test_one_schema_per_document_named_as_the_code_names_it():
    assert set(SCHEMAS) == {SNAPSHOT_SCHEMA, CHECK_SCHEMA, PLAN_SCHEMA, SELFTEST_SCHEMA, NCCL_SCHEMA, FLEET_SCHEMA,
                            DIAGNOSE_SCHEMA, "envdoctor.finding/1"}
    for schema in SCHEMAS.values():
        jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("log", NCCL_LOGS[:4], ids=lambda p: p.name)
def test_diagnose_json(log):
    doc = run_json(["diagnose", "--json", str(log)])
    assert doc["schema"] == DIAGNOSE_SCHEMA
    assert_valid(doc)


@pytest.mark.parametrize("name", all_fixture_names())
def test_check_json(name):
    doc = run_json(["check", "--snapshot", str(fixture_path(name)), "--json"])
    assert doc["schema"] == CHECK_SCHEMA
    assert_valid(doc)


def test_check_json_with_drift_findings():
    doc = run_json(["check", "--snapshot", str(fixture_path("b200_driver_575")), "--baseline",
                            str(fixture_path("h100_8x_nvswitch")), "--json"])
    assert "drift" in {f["category"] for f in doc["findings"]}
    assert_valid(doc)


@pytest.mark.parametrize("name", all_fixture_names())
def test_plan_json(name):
    snap = str(fixture_path(name))
    for extra in ([], ["--deepspeed"]):
        doc = run_json(["fix", "--snapshot", snap, "--dry-run", "--json", *extra])
        assert doc["schema"] == PLAN_SCHEMA and ("deepspeed_ops" in doc) == bool(extra and doc["status"] != "impossible")
        assert_valid(doc)


@pytest.mark.parametrize("log", NCCL_LOGS, ids=lambda p: p.name)
def test_nccl_json(log):
    doc = run_json(["nccl", "diagnose", str(log), "--json"])
    assert doc["schema"] == NCCL_SCHEMA
    assert_valid(doc)


def test_nccl_json_of_many_logs():
    doc = run_json(["nccl", "diagnose", *map(str, NCCL_LOGS), "--json"])
    assert len(doc["inputs"]) == len(NCCL_LOGS) and doc["findings"]
    assert_valid(doc)


def test_fleet_json():
    every = [str(fixture_path(n)) for n in all_fixture_names()]
    doc = run_json(["fleet", *every, "--json"])
    assert doc["schema"] == FLEET_SCHEMA and len(doc["nodes"]) == len(every) and doc["findings"]
    assert_valid(doc)
    same = str(fixture_path("h100_8x_nvswitch"))
    doc = run_json(["fleet", same, same, "--json"])  # one host name twice: the nodes are named by file
    assert [n["host"] for n in doc["nodes"]] == [same, same]
    assert_valid(doc)


def test_recorded_selftest_run():
    doc = json.loads(RECORDED_SELFTEST.read_text())
    assert [t["status"] for t in doc["tests"]] == ["passed", "passed", "passed", "skipped"]
    assert_valid(doc)


def test_selftest_documents_as_the_code_writes_them():
    finding = Finding(id="SELFTEST-GPU-NO-PEER", severity="warning", category="p2p_unavailable", title="no peer access",
                      detail="d", remedy=manual("f"), subjects=["gpu:0", "gpu:1"])
    doc = document([
        TestResult("allreduce", "passed", 1.25, {"world_size": 2, "backend": "gloo", "busbw_gbps": {"1048576": 0.9}}),
        TestResult("backward", "failed", 3.0, {}, "the backward worker exited with code 1", log="/tmp/run/backward.log"),
        TestResult("compile", "skipped", error="torch 1.13.1 has no torch.compile (needs 2.0 or newer)"),
        TestResult("gpu", "passed", 0.5, {"devices": []}, findings=[finding]),
    ])
    assert_valid(json.loads(json.dumps(doc)))


@pytest.mark.parametrize("path, value, expected", [
    (("tests", 0, "status"), "ok", "is not one of"),
    (("tests", 0, "error"), "a passed test has no error", "None was expected"),
    (("tests", 0, "metrics", "busbw_gbps"), {"1 MiB": 0.9}, "does not match"),
    (("tests", 3, "error"), None, "is not of type 'string'"),
])
def test_selftest_schema_rejects_what_the_contract_forbids(path, value, expected):
    doc = json.loads(RECORDED_SELFTEST.read_text())
    *parents, key = path
    target = doc
    for p in parents:
        target = target[p]
    target[key] = value
    assert any(expected in e for e in errors(doc)), errors(doc)


def test_schemas_reject_a_broken_document():
    check = run_json(["check", "--snapshot", str(fixture_path("b200_driver_575")), "--json"])
    bad = copy.deepcopy(check)
    bad["findings"][0]["severity"] = "fatal"
    bad["snapshot"]["host"] = "node7"  # the snapshot is checked by its own schema
    del bad["summary"]["infos"]
    assert [e.split(":")[0] for e in errors(bad)] == ["findings/0/severity", "snapshot/host", "summary"]
    plan = run_json(["fix", "--snapshot", str(fixture_path("b200_driver_575")), "--dry-run", "--json"])
    plan["status"] = "done"
    plan["packages"][0]["variant"] = "cuda12"
    assert [e.split(":")[0] for e in errors(plan)] == ["packages/0/variant", "status"]
    nccl = run_json(["nccl", "diagnose", str(NCCL_LOGS[0]), "--json"])
    nccl["findings"][0]["confidence"] = "certain"
    assert [e.split(":")[0] for e in errors(nccl)] == ["findings/0/confidence"]


def test_contract_points_at_the_schemas():
    contract = (ROOT / "docs" / "contract.md").read_text()
    for sid in SCHEMAS:
        if sid != "envdoctor.finding/1":
            assert f"`{sid}`" in contract
    for path in Path(ROOT / "envdoctor" / "data").glob("*.schema.json"):
        assert f"envdoctor/data/{path.name}" in contract


# --- jsonschema_lite: no keyword ignored, and the same verdicts as jsonschema -------------------------------

def test_every_bundled_schema_uses_only_keywords_jsonschema_lite_implements():
    """jsonschema_lite would ignore any other keyword silently: implement it there first (and in KEYWORDS)."""
    for sid, schema in SCHEMAS.items():
        assert jsonschema_lite.unknown_keywords(schema) == [], sid


def test_the_keyword_guard_sees_keywords_deep_inside_a_schema():
    schema = {"$defs": {"a": {"allOf": [{"if": {"properties": {"x": {"format": "uri"}}}, "then": {"uniqueItems": True}}]}},
              "properties": {"enum": {"type": "string"}}, "items": {"oneOf": []}}
    assert jsonschema_lite.unknown_keywords(schema) == [
        "#/items: oneOf", "#/$defs/a/allOf/0/if/properties/x: format", "#/$defs/a/allOf/0/then: uniqueItems"]


# The one deliberate difference: jsonschema takes 2.0 as an integer (draft 2020-12), envdoctor's documents
# never hold one, and jsonschema_lite and the snapshot decoders refuse it (a count or a size is written as 2).
_STRICT = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, v: isinstance(v, int) and not isinstance(v, bool)))

_REPLACEMENTS = [None, 0, -1, 2, 2.0, 1.5, True, False, "", "x", "8.0", "linux", "ok", [], ["a"], [None], {},
                 {"a": "b"}, {"a": 1}]


def _paths(doc: Any, prefix: Tuple = ()) -> List[Tuple]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(doc: Any, path: Tuple, how: Any) -> Any:
    """`doc` with the value at `path` replaced by `how`, removed ("delete"), or given an unknown key ("add")."""
    doc = copy.deepcopy(doc)
    if not path:
        return how if how not in ("delete", "add") else doc
    *parents, key = path
    target = doc
    for p in parents:
        target = target[p]
    if how == "delete":
        del target[key]
    elif how == "add":
        if isinstance(target[key], dict):
            target[key]["zz_unknown"] = 1
    else:
        target[key] = how
    return doc


def _documents() -> List[Tuple[str, Any]]:
    docs = [(SNAPSHOT_SCHEMA, json.loads(fixture_path(n).read_text()))
            for n in ("h100_8x_nvswitch", "eco_torchvision_ok", "container_no_gpus", "install_interrupted_fix")]
    return docs + [(SELFTEST_SCHEMA, json.loads(RECORDED_SELFTEST.read_text()))]


_DOCUMENTS = _documents()


def _lite_and_jsonschema_agree(sid: str, doc: Any) -> None:
    lite = jsonschema_lite.validate_document(doc, sid)
    strict = _STRICT(SCHEMAS[sid], registry=REGISTRY)
    full = [e.message for e in strict.iter_errors(doc)]
    assert (lite == []) == (full == []), (lite, full)
    if sid == SNAPSHOT_SCHEMA and isinstance(doc, dict) and doc.get("schema") == SNAPSHOT_SCHEMA:
        from envdoctor.snapshot import SnapshotError, snapshot_from_json

        try:
            snapshot_from_json(copy.deepcopy(doc))
            decoded = True
        except SnapshotError as exc:
            decoded = "is not a version" in str(exc)  # a check beyond the schema
        assert decoded == (lite == []), lite


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_jsonschema_lite_and_jsonschema_agree_on_mutated_documents(data):
    sid, doc = data.draw(st.sampled_from(_DOCUMENTS))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(doc)))
        doc = _mutate(doc, path, data.draw(st.sampled_from([*_REPLACEMENTS, "delete", "add"])))
    _lite_and_jsonschema_agree(sid, doc)


@pytest.mark.parametrize("how", [None, ["a"], "delete", *(pytest.param(how, marks=pytest.mark.slow)
                                                         for how in (0, -1, 2.0, "", "x", {}, {"a": 1}))], ids=repr)
def test_jsonschema_lite_and_jsonschema_agree_on_every_field_replaced(how):
    """Each field of a snapshot and of a self-test document in turn replaced by `how` (or removed)."""
    for sid, doc in ((SNAPSHOT_SCHEMA, json.loads(fixture_path("rtx4090_pair").read_text())),
                     (SELFTEST_SCHEMA, json.loads(RECORDED_SELFTEST.read_text()))):
        for path in _paths(doc)[1:]:
            if len(path) > 2 and path[0] in ("gpus", "topology", "probes") and path[1] != 0:
                continue  # the other GPUs, rows and probes are the same shapes
            _lite_and_jsonschema_agree(sid, _mutate(doc, path, how))
