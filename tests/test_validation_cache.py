"""The validation cache: a rules database or wheel index whose exact bytes already passed is built without being
checked again; anything else (changed bytes, a corrupt or foreign record, no writable cache folder) is checked in
full, with the same messages as without a cache."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import envdoctor
from envdoctor import validation_cache
from envdoctor.data_files import data_path
from envdoctor.errors import InputError
from envdoctor.rules import registry
from envdoctor.validation_cache import FILE, FORMAT, ValidationCache, fingerprint
from envdoctor.wheels import index as wheel_index

RULES = data_path("rules")


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "rules"
    shutil.copytree(RULES, target, ignore=shutil.ignore_patterns("nccl", "signatures", "checks"))
    return target


def _no_checking(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a, **_k):
        raise AssertionError("checked again")

    monkeypatch.setattr(registry, "validate_rule", refuse)


def _break_a_rule(rules_dir: Path) -> None:
    path = rules_dir / "shm.json" if (rules_dir / "shm.json").exists() else sorted(rules_dir.glob("*.json"))[0]
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["rules"][0]["severity"] = "catastrophic"
    path.write_text(json.dumps(doc), encoding="utf-8")


def _problems(rules_dir: Path, cache: ValidationCache) -> list:
    registry._CACHE.clear()
    with pytest.raises(registry.RulesError) as err:
        registry.load_rulebook(rules_dir, cache)
    return err.value.problems


def test_a_database_that_passed_is_built_without_checking_again(tmp_path, monkeypatch):
    rules_dir = _copy(tmp_path)
    cache = ValidationCache(tmp_path / "cache")
    first = registry._rules_and_tables(rules_dir, cache)[0]
    record = json.loads((tmp_path / "cache" / FILE).read_text())
    assert record["format"] == FORMAT and len(record["passed"]) == 1
    _no_checking(monkeypatch)
    again = registry._rules_and_tables(rules_dir, ValidationCache(tmp_path / "cache"))[0]
    assert again == first


def test_changed_bytes_are_checked_in_full_with_the_same_messages(tmp_path, monkeypatch):
    rules_dir = _copy(tmp_path)
    cache_dir = tmp_path / "cache"
    registry._rules_and_tables(rules_dir, ValidationCache(cache_dir))
    _break_a_rule(rules_dir)
    without = _problems(rules_dir, validation_cache.NO_CACHE)
    assert without == _problems(rules_dir, ValidationCache(cache_dir))
    assert any("severity must be one of" in p for p in without)
    assert len(json.loads((cache_dir / FILE).read_text())["passed"]) == 1  # a failure is never remembered


def test_a_changed_table_is_another_fingerprint(tmp_path):
    rules_dir = _copy(tmp_path)
    cache = ValidationCache(tmp_path / "cache")
    registry._rules_and_tables(rules_dir, cache)
    table = rules_dir / "tables" / "shm.json"
    table.write_text(table.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    registry._rules_and_tables(rules_dir, cache)
    assert len(json.loads((tmp_path / "cache" / FILE).read_text())["passed"]) == 2


@pytest.mark.parametrize("record", ["{not json", json.dumps({"format": "other/1", "passed": []}), "\x00\xff",
                                    json.dumps({"format": FORMAT, "passed": "x" * 64}), json.dumps([1, 2])])
def test_a_corrupt_or_foreign_record_is_ignored_and_rewritten(tmp_path, monkeypatch, record):
    rules_dir = _copy(tmp_path)
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    (cache_dir / FILE).write_text(record, encoding="utf-8", errors="surrogateescape")
    called = []
    real = registry.validate_rule
    monkeypatch.setattr(registry, "validate_rule", lambda raw, where: called.append(where) or real(raw, where))
    registry._rules_and_tables(rules_dir, ValidationCache(cache_dir))
    assert called  # checked in full
    doc = json.loads((cache_dir / FILE).read_text())
    assert doc["format"] == FORMAT and len(doc["passed"]) == 1


def test_a_record_of_other_inputs_is_no_pass(tmp_path):
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    (cache_dir / FILE).write_text(json.dumps({"format": FORMAT, "passed": ["0" * 64]}))
    rules_dir = _copy(tmp_path)
    _break_a_rule(rules_dir)
    assert any("severity must be one of" in p for p in _problems(rules_dir, ValidationCache(cache_dir)))


def test_an_unwritable_cache_folder_only_means_no_cache(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("in the way")
    cache = ValidationCache(blocker / "validated")
    rules = registry._rules_and_tables(_copy(tmp_path), cache)[0]
    assert rules and not (blocker / "validated").exists()


def test_the_fingerprint_follows_the_version_and_the_inputs(monkeypatch):
    files = [("a.json", b"{}")]
    before = fingerprint("rules", files)
    assert fingerprint("rules", [("a.json", b"{ }")]) != before
    assert fingerprint("wheel-index", files) != before
    monkeypatch.setattr(validation_cache, "_code_digest", None)
    monkeypatch.setattr(envdoctor, "__version__", envdoctor.__version__ + ".dev1")
    assert fingerprint("rules", files) != before


def test_the_fingerprint_follows_the_validating_code(tmp_path, monkeypatch):
    package = tmp_path / "envdoctor"
    shutil.copytree(Path(envdoctor.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__", "_bundled"))
    monkeypatch.setattr(validation_cache, "_PACKAGE", package)
    monkeypatch.setattr(validation_cache, "_code_digest", None)
    before = fingerprint("rules", [])
    conditions = package / "rules" / "conditions.py"
    conditions.write_text(conditions.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    monkeypatch.setattr(validation_cache, "_code_digest", None)
    assert fingerprint("rules", []) != before


def test_a_wheel_index_that_passed_is_built_without_checking_again(tmp_path, monkeypatch):
    path = tmp_path / "wheels_index.json"
    shutil.copy(wheel_index.bundled_path(), path)
    cache = ValidationCache(tmp_path / "cache")
    first = wheel_index.read_index(path, cache)
    monkeypatch.setattr(wheel_index, "validate", lambda *_a: pytest.fail("checked again"))
    assert wheel_index.read_index(path, ValidationCache(tmp_path / "cache")).releases == first.releases


def test_a_changed_wheel_index_is_checked_again(tmp_path):
    path = tmp_path / "wheels_index.json"
    shutil.copy(wheel_index.bundled_path(), path)
    cache = ValidationCache(tmp_path / "cache")
    wheel_index.read_index(path, cache)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["default_index_base"] = 7
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError) as with_cache:
        wheel_index.read_index(path, cache)
    with pytest.raises(InputError) as without:
        wheel_index.read_index(path)
    assert str(with_cache.value) == str(without.value)


def test_the_cli_remembers_the_bundled_database_in_the_user_cache(tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path))
    env.pop("ENVDOCTOR_RULES_DIR", None)
    env.pop("ENVDOCTOR_WHEELS_INDEX", None)
    snap = str(Path(__file__).parent / "fixtures" / "snapshots" / "h100_8x_nvswitch.json")
    runs = [subprocess.run([sys.executable, "-m", "envdoctor", "check", "--snapshot", snap, "--json"], env=env,
                           capture_output=True, text=True) for _ in range(2)]
    assert runs[0].returncode == runs[1].returncode in (0, 1)
    assert runs[0].stdout == runs[1].stdout
    record = json.loads((tmp_path / "xdg" / "envdoctor" / "validated" / FILE).read_text())
    assert len(record["passed"]) == 2  # the rules database and the wheel index


def test_a_file_moved_from_tables_to_the_rules_is_another_fingerprint_and_checked(tmp_path):
    """A table file moved beside the rule files (same names, same bytes) must not match what passed before."""
    rules_dir = _copy(tmp_path)
    extra = rules_dir / "tables" / "b.json"
    extra.write_text('{"note": 1}', encoding="utf-8")
    cache = ValidationCache(tmp_path / "cache")
    registry._CACHE.clear()
    try:
        registry._rules_and_tables(rules_dir, cache)
    except (registry.RulesError, InputError):
        pass  # a tables folder with an unknown table may be refused: what matters is the move below
    extra.rename(rules_dir / "b.json")
    problems = _problems(rules_dir, cache)
    assert any("b.json" in p and "'rules'" in p for p in problems), problems


def test_a_rules_file_that_is_no_regular_file_is_named_not_read_forever(tmp_path):
    import os

    rules_dir = _copy(tmp_path)
    os.mkfifo(rules_dir / "zz.json")
    problems = _problems(rules_dir, ValidationCache(tmp_path / "cache"))
    assert any("zz.json" in p and "not a regular file" in p for p in problems), problems
