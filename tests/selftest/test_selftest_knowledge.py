"""The self-tests explain a failure with the Knowledge the edge passed in (ENVDOCTOR_RULES_DIR), not with the
bundled rules read from disk."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pytest

from envdoctor.fleet.endpoint import EndpointCheck, endpoint_findings
from envdoctor.selftest import common, registry, runner
from envdoctor.selftest.kind import SelftestKind
from envdoctor.selftest.result import TestResult
from envdoctor.selftest.runner import SelftestOptions
from envdoctor.selftest.zero3_causes import cause_finding
from envdoctor.settings import Settings
from envdoctor.usecases.selftest import run_selftests
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """A rules database whose ED307 fix and whose hostname_unresolvable fix say something the bundled ones do not."""
    d = tmp_path_factory.mktemp("rules") / "rules"
    shutil.copytree(ROOT / "rules", d)
    path = d / "toolchain.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    rules = doc["rules"] if isinstance(doc, dict) else doc
    next(r for r in rules if r["id"] == "ED307")["fix"] = "PLANTED: install ninja from the planted rules."
    path.write_text(json.dumps(doc), encoding="utf-8")
    for cats in sorted((d / "nccl").glob("*categories*.json")):
        doc = json.loads(cats.read_text(encoding="utf-8"))
        for c in doc["categories"]:
            if c["id"] == "hostname_unresolvable":
                c["fix"] = "PLANTED: fix the name in the planted rules."
        cats.write_text(json.dumps(doc), encoding="utf-8")
    return Settings.from_env({"ENVDOCTOR_RULES_DIR": str(d)}).knowledge()


def test_a_zero3_cause_quotes_the_fix_of_the_passed_rulebook(planted):
    assert "PLANTED" in cause_finding("no_ninja", {}, "ninja missing", rules=planted.rules).fix
    assert "PLANTED" not in cause_finding("no_ninja", {}, "ninja missing").fix  # the bundled one, unchanged


def test_the_rendezvous_precheck_reads_the_passed_nccl_rules(planted):
    check = EndpointCheck(host="nosuch.invalid", port=29400, resolve_error="Name or service not known", seconds=0.0)
    assert "PLANTED" in endpoint_findings(check, rules=planted.nccl)[0].fix
    assert "PLANTED" not in endpoint_findings(check)[0].fix


def test_the_use_case_hands_its_knowledge_to_every_test(monkeypatch, planted):
    seen = []

    def run(inputs):
        seen.append(inputs.knowledge)
        return TestResult("probe-knowledge", "passed", 0.0, {})

    kind = SelftestKind(name="probe-knowledge", title="knowledge probe", timeout=5.0, run=run)
    monkeypatch.setattr(registry, "KINDS", (kind,))
    target = common.Target("python3")
    monkeypatch.setattr(common, "probe_target", lambda python, *a, **k: replace(target, python=python))
    done = run_selftests("python3", ["probe-knowledge"], SelftestOptions(), probe_links=False, knowledge=planted)
    assert [r.status for r in done.results] == ["passed"] and seen == [planted]
    assert runner.run_test("probe-knowledge", SelftestOptions(), target, lambda: None, lambda _t: None,
                           planted).status == "passed" and seen[-1] is planted
