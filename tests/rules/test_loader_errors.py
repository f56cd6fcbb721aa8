"""A bad rules database is exit 2 with every problem named by file and rule, never a traceback."""

from __future__ import annotations

import json
import shutil

import pytest

from envdoctor.rules.registry import RulesError, load_rules_from
from tests.conftest import ROOT, bundled_knowledge, fixture_path, run_cli


def good_rule(**over):
    rule = json.loads((ROOT / "rules" / "platform.json").read_text())["rules"][0]
    rule.update(over)
    return rule


def write_rules(tmp_path, rules, name="custom.json"):
    d = tmp_path / "rules"
    d.mkdir(exist_ok=True)
    (d / name).write_text(json.dumps({"rules": rules}))
    return d


def test_all_problems_reported_at_once(tmp_path):
    d = write_rules(tmp_path, [
        good_rule(id="ED501", name="a-rule", when={"gt": ["host.shm_byts", 5]}),
        good_rule(id="ED502", name="b-rule", when={"predicate": "no_such_predicate"}),
        good_rule(id="ED503", name="c-rule", when={"matches": ["gpus.0.name", "(unclosed"]}, severity="fatal"),
        good_rule(id="ED504", name="d-rule", title="GPU {gpu.index}"),
        {"id": "ED505"},
    ])
    (d / "broken.json").write_text('{"rules": [ {"id": ')
    with pytest.raises(RulesError) as exc:
        load_rules_from(d)
    problems = exc.value.problems
    text = "\n".join(problems)
    assert "custom.json: ED501: when: unknown field path 'host.shm_byts'" in text
    assert "custom.json: ED502: when: unknown predicate 'no_such_predicate'" in text
    assert "ED503: when: bad regular expression" in text and "ED503: severity must be one of" in text
    assert "ED504: title: template '{gpu.index}'" in text
    assert "ED505: missing 'name'" in text
    assert "broken.json: invalid JSON at line 1" in text
    assert len(problems) >= 7


def test_duplicate_ids_are_caught(tmp_path):
    d = write_rules(tmp_path, [good_rule(), good_rule(name="other-name")])
    with pytest.raises(RulesError, match="ED201: 'ED201' is also used"):
        load_rules_from(d)


@pytest.mark.parametrize("bad", [
    {"when": {"all": []}},
    {"when": {"eq": ["torch.version"]}},
    {"when": {"version": ["torch.version", ">=banana"]}},
    {"when": {"sometimes": "torch"}},
    {"for_each": {"in": "host", "as": "h"}},
    {"fix_safety": "yolo"},
    {"fixtures": {"fires": []}},
])
def test_each_malformation_is_named(tmp_path, bad):
    d = write_rules(tmp_path, [good_rule(**bad)])
    with pytest.raises(RulesError) as exc:
        load_rules_from(d)
    assert all("custom.json: ED201" in p for p in exc.value.problems)


def test_cli_exit_2_with_the_list(tmp_path):
    d = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", d, ignore=shutil.ignore_patterns("nccl"))
    data = json.loads((d / "torch.json").read_text())
    data["rules"][0]["when"] = {"present": "torch.cuda_versoin"}
    (d / "torch.json").write_text(json.dumps(data))
    res = run_cli(["check", "--snapshot", str(fixture_path("h100_8x_nvswitch"))], env={"ENVDOCTOR_RULES_DIR": str(d)})
    assert res.returncode == 2
    assert "torch.json: ED101: when: unknown field path 'torch.cuda_versoin'" in res.stderr
    assert "Traceback" not in res.stderr


def test_a_crashing_rule_becomes_a_finding(monkeypatch):
    from envdoctor.rules import conditions
    from envdoctor.rules.engine import evaluate_all
    from envdoctor.rules.registry import Rulebook, validate_rule
    from envdoctor.snapshot import load_snapshot

    def explodes(ctx):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setitem(conditions.PREDICATES, "explodes", explodes)
    plain = {"title": "t", "detail": "d", "fix": "f", "escalate": {"to": "error", "when": {"present": "torch"}}}
    rule, errors = validate_rule(good_rule(when={"predicate": "explodes"}, **plain), "t.json: ED201")
    assert errors == []
    know = bundled_knowledge()
    book = Rulebook((rule,), know.rules.tables, "test")
    findings = evaluate_all(book, know.index, load_snapshot(fixture_path("h100_8x_nvswitch")))
    assert findings[0].category == "rule_crashed" and "ZeroDivisionError" in findings[0].detail


def test_bad_triton_table_is_exit_2(tmp_path):
    d = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", d, ignore=shutil.ignore_patterns("nccl"))
    (d / "tables" / "triton_pins.json").write_text('{"pins": {"2.5": {"triton": "three"}}}')
    res = run_cli(["check", "--snapshot", str(fixture_path("h100_8x_nvswitch"))], env={"ENVDOCTOR_RULES_DIR": str(d)})
    assert res.returncode == 2 and "triton_pins.json: pins.2.5" in res.stderr and "Traceback" not in res.stderr
