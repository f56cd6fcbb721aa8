"""The data files' JSON Schemas (envdoctor/data/inputs/): every bundled file fits its schema (by envdoctor's validator and by
the jsonschema library), the schemas say what the Python constants say, and a file that breaks one is an
InputError naming the file and the entry, with every problem at once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import jsonschema
import pytest

from envdoctor import data_schemas
from envdoctor.data_schemas import schema as load_schema
from envdoctor.errors import InputError
from envdoctor.findings import SAFETIES, SEVERITIES
from envdoctor.jsonschema_lite import KEYWORDS, validate
from envdoctor.knowledge import load_knowledge
from envdoctor.nccl.rules import load_rules as load_nccl_rules
from envdoctor.rules import registry
from envdoctor.rules.tables import load_tables
from envdoctor.wheels.index import bundled_path
from tests.conftest import ROOT

NCCL_DEFS = {"envdoctor.nccl-categories/1": "categories_file", "envdoctor.nccl-signatures/1": "signatures_file",
             "envdoctor.nccl-context/1": "context_file", "envdoctor.signatures/1": "document"}
# Keywords envdoctor/jsonschema_lite.py checks (its own list), and the annotations it may skip.
CHECKED = set(KEYWORDS)
ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description"}


def _bundled() -> Iterator[Tuple[Path, str, Any]]:
    """(file, schema, definition) of every bundled data file."""
    for path in sorted((ROOT / "rules").glob("*.json")):
        yield path, "rules.schema.json", None
    for path in sorted((ROOT / "rules" / "tables").glob("*.json")):
        yield path, "tables.schema.json", path.stem
    for path in sorted([*(ROOT / "rules" / "nccl").glob("*.json"), *(ROOT / "rules" / "signatures").glob("*.json")]):
        yield path, "signatures.schema.json", NCCL_DEFS[json.loads(path.read_text())["schema"]]
    for path in sorted((ROOT / "rules" / "checks").glob("*.json")):
        yield path, "checks.schema.json", None
    yield bundled_path(), "wheels-index.schema.json", None


@pytest.mark.parametrize("path, schema, name", list(_bundled()), ids=lambda v: v.name if isinstance(v, Path) else str(v))
def test_every_bundled_data_file_fits_its_schema(path, schema, name):
    doc = json.loads(path.read_text(encoding="utf-8"))
    root = load_schema(schema)
    sub = root["$defs"][name] if name else root
    assert validate(doc, sub, root) == []
    jsonschema.validate(doc, {**sub, "$defs": root.get("$defs", {})})  # a real JSON Schema, not only envdoctor's


def _keywords(node: Any, out: set) -> set:
    if isinstance(node, dict):
        for key, value in node.items():
            out.add(key)
            if key in ("properties", "$defs"):
                for sub in value.values():
                    _keywords(sub, out)
            elif isinstance(value, (dict, list)) and key not in ("enum", "const", "required"):
                _keywords(value, out)
    elif isinstance(node, list):
        for item in node:
            _keywords(item, out)
    return out


@pytest.mark.parametrize("schema", ["rules.schema.json", "tables.schema.json", "signatures.schema.json",
                                    "checks.schema.json", "wheels-index.schema.json"])
def test_data_schemas_use_only_keywords_the_validator_checks(schema):
    assert _keywords(load_schema(schema), set()) - CHECKED - ANNOTATIONS == set()


def test_the_rule_schema_says_what_the_loader_says():
    rule = load_schema("rules.schema.json")["$defs"]["rule"]
    assert tuple(rule["required"]) == registry.REQUIRED
    assert tuple(rule["properties"]["severity"]["enum"]) == SEVERITIES
    assert tuple(rule["properties"]["fix_safety"]["enum"]) == SAFETIES
    assert tuple(rule["properties"]["status"]["enum"]) == registry.STATUSES
    assert set(registry.MESSAGES) <= set(rule["properties"])


def _copy(tmp_path: Path) -> Path:
    d = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", d)
    return d


def _edit(path: Path, change) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")


def test_bad_tables_name_every_file_and_row_at_once(tmp_path):
    d = _copy(tmp_path)
    _edit(d / "tables" / "runtime_errors.json", lambda doc: doc["rows"][2].update(kind="kernel", extra="x"))
    _edit(d / "tables" / "numpy_builds.json", lambda doc: doc["rows"][1].update(source="a blog"))
    _edit(d / "tables" / "extension_requirements.json", lambda doc: doc["rows"][0].update(versions="not a spec"))
    _edit(d / "tables" / "shm.json", lambda doc: doc.update(min_mib=0))
    with pytest.raises(InputError) as info:
        load_tables(d / "tables")
    msg = str(info.value)
    assert msg.startswith("invalid compatibility tables:")
    assert f"{d / 'tables' / 'runtime_errors.json'}: rows[2]: bad or missing kind, unknown key 'extra'" in msg
    assert f"{d / 'tables' / 'numpy_builds.json'}: rows[1]: bad or missing source" in msg
    assert f"{d / 'tables' / 'extension_requirements.json'}: rows[0]: versions 'not a spec' is not a specifier" in msg
    assert f"{d / 'tables' / 'shm.json'}: min_mib: 0 is below the minimum 1" in msg


def test_a_bad_rule_is_named_by_file_and_id_with_every_problem(tmp_path):
    rule: Dict[str, Any] = json.loads((ROOT / "rules" / "platform.json").read_text())["rules"][0]
    rule.update(severity="fatal", fixtures={"fires": ["x"], "quiet": []}, subjects="not a list", colour="red")
    rule["explanation"] = {"what": "w"}
    problems = registry.validate_rule(rule, "custom.json: ED201")[1]
    assert sorted(problems) == sorted([
        "custom.json: ED201: severity must be one of error, warning, info",
        "custom.json: ED201: explanation needs text sections what, why",
        "custom.json: ED201: subjects must be a list of text",
        "custom.json: ED201: unknown key 'colour'",
        "custom.json: ED201: fixtures needs non-empty 'fires' and 'quiet' lists (snapshot fixture names)",
    ])


def test_a_bad_nccl_category_is_named_by_file_and_entry(tmp_path):
    d = _copy(tmp_path)
    path = d / "nccl" / "categories.json"
    _edit(path, lambda doc: doc["categories"][0].update(severity="fatal", colour="red", title=" "))
    with pytest.raises(InputError) as info:
        load_nccl_rules(d / "nccl", d / "tables")
    msg = str(info.value)
    name = json.loads(path.read_text())["categories"][0]["id"]
    for part in ("'title' must be a non-empty string", "'severity' must be one of ['error', 'warning']",
                 "unknown key 'colour'"):
        assert f"{path}: entry {name!r} (#1): {part}" in msg


def test_a_bad_checks_file_names_the_file_and_the_fact(tmp_path):
    d = _copy(tmp_path)
    path = d / "checks" / "checks.json"
    _edit(path, lambda doc: doc["facts"][0].update(read="no_such_reader"))
    with pytest.raises(InputError, match=r"checks.json: facts\[0\] \(NVIDIA driver\): unknown reader 'no_such_reader'"):
        load_knowledge(d, bundled_path())
    _edit(path, lambda doc: doc["checks"][0].update(severity="fatal"))
    with pytest.raises(InputError, match=r"checks.json: checks\[0\]\.severity: 'fatal' is not one of"):
        load_knowledge(d, bundled_path())


def test_a_check_the_code_makes_must_be_declared(tmp_path):
    d = _copy(tmp_path)
    _edit(d / "checks" / "checks.json", lambda doc: doc.update(checks=[c for c in doc["checks"] if c["id"] != "ED906"]))
    with pytest.raises(InputError, match="check ED906 is not declared"):
        load_knowledge(d, bundled_path())


def test_a_changed_check_reaches_the_catalog_and_the_findings(tmp_path):
    """The drift and fleet checks are data: what a check says comes from the rules database it was loaded from."""
    from envdoctor.fleet.checks import ClockReading, clock_findings
    from envdoctor.knowledge import catalog_of

    d = _copy(tmp_path)
    _edit(d / "checks" / "checks.json",
          lambda doc: next(c for c in doc["checks"] if c["id"] == "ED906").update(fix="Run the planted fix"))
    know = load_knowledge(d, bundled_path())
    assert next(e for e in catalog_of(know) if e.id == "ED906").fix == "Run the planted fix"
    [f] = clock_findings({"a": ClockReading(5.0, 0.01)}, know.fleet, know.checks)
    assert f.fix == "Run the planted fix."


def test_schema_problems_are_worded_for_people():
    assert data_schemas.problems({"a": 1}, "checks.schema.json", "check", "f.json: entry") == [
        "f.json: entry: missing 'id'", "f.json: entry: missing 'name'", "f.json: entry: missing 'category'",
        "f.json: entry: missing 'severity'", "f.json: entry: missing 'what'", "f.json: entry: missing 'why'",
        "f.json: entry: missing 'fix'", "f.json: entry: unknown key 'a'"]
    assert data_schemas.fields({"what": 3, "x": 1}, "checks.schema.json", "fact") == [
        "read", "drift", "fleet", "align", "what", "unknown key 'x'"]


def test_a_derived_fixture_names_fields_that_exist():
    rule: Dict[str, Any] = json.loads((ROOT / "rules" / "platform.json").read_text())["rules"][0]
    rule["fixtures"] = {"fires": [{"from": "l4_container_shm64", "set": {"host.shm_byts": 1}}],
                        "quiet": [{"from": "l4_container_shm64", "sett": {}}]}
    problems = registry.validate_rule(rule, "custom.json: ED201")[1]
    assert "custom.json: ED201: fixtures needs non-empty 'fires' and 'quiet' lists (snapshot fixture names)" in problems
    rule["fixtures"]["quiet"] = ["h200_8x_healthy"]
    problems = registry.validate_rule(rule, "custom.json: ED201")[1]
    assert len(problems) == 1 and "fixtures: l4_container_shm64: unknown field path 'host.shm_byts'" in problems[0]


def test_a_derived_fixture_is_its_base_snapshot_with_the_fields_set():
    from envdoctor.rules.fixtures import derive, label

    base = {"host": {"shm_bytes": 1}, "gpus": [{"name": "a"}, {"name": "b"}]}
    spec = {"from": "x", "set": {"host.shm_bytes": 2, "gpus.1.name": "c"}}
    assert derive(spec, base) == {"host": {"shm_bytes": 2}, "gpus": [{"name": "a"}, {"name": "c"}]}
    assert base["host"]["shm_bytes"] == 1  # the base is not changed
    assert label(spec) == 'x with host.shm_bytes=2, gpus.1.name="c"' and label("x") == "x"
