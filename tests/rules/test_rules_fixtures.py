"""Every rule fires on its 'fires' fixtures and stays quiet on its 'quiet' ones; findings render fully."""

from __future__ import annotations

import json
import re

import pytest

from envdoctor.knowledge import bundled_catalog
from envdoctor.present.findings import render_findings
from envdoctor.present.rules_doc import rules_markdown
from envdoctor.present.style import Style
from envdoctor.rules import fixtures
from envdoctor.rules.engine import evaluate_rule
from envdoctor.rules.registry import load_rules
from envdoctor.snapshot import load_snapshot, snapshot_from_json
from tests.conftest import ROOT, all_fixture_names, bundled_knowledge, diagnose_bundled, fixture_path

RULES = load_rules()
CASES = [(r, spec, kind) for r in RULES for kind in ("fires", "quiet") for spec in r.fixtures[kind]]


def fixture_snapshot(spec):
    """A rule's fixture: a snapshot by name, or one derived from it in the rule file (envdoctor/rules/fixtures.py)."""
    doc = json.loads(fixture_path(fixtures.base_name(spec)).read_text(encoding="utf-8"))
    return snapshot_from_json(fixtures.derive(spec, doc))


def _without_quotes(text: str) -> str:
    """A finding's own words: what it quotes from a library ("CUDA unknown error") is not a placeholder."""
    return re.sub(r'"[^"]*"', '""', text)


@pytest.mark.parametrize("rule, name, kind", CASES, ids=[f"{r.id}-{k}-{fixtures.label(n)}" for r, n, k in CASES])
def test_rule_on_its_fixtures(rule, name, kind):
    assert fixture_path(fixtures.base_name(name)).exists(), f"{rule.id} names a fixture that does not exist: {name}"
    know = bundled_knowledge()
    findings = evaluate_rule(rule, fixture_snapshot(name), know.rules.tables, know.index)
    if kind == "fires":
        assert findings, f"{rule.id} should fire on {name}"
        for f in findings:
            text = render_findings([f], Style(False))
            assert not re.search(r"\{[A-Za-z_][\w.|]*\}", text), text  # every template name resolved
            assert "unknown" not in _without_quotes(f.title + f.detail + f.fix), (f.title, f.detail)
            assert f.category == rule.category and f.subjects
    else:
        assert not findings, f"{rule.id} should stay quiet on {name}: {[f.title for f in findings]}"


# What an expert expects on each machine (rule ids, as a set), written by hand from the facts.
EXPECTED = {
    "h200_8x_healthy": set(),
    "h100_8x_nvswitch": set(),
    "a100_pcie_8x": {"ED204", "ED206"},
    "rtx4090_pair": {"ED204"},
    "rtx5090_old_torch": {"ED102", "ED405"},
    "v100_cuda13_build": {"ED102", "ED401"},
    "b200_driver_575": {"ED101", "ED302"},
    "gh200_aarch64": {"ED310"},
    "l4_container_shm64": {"ED201"},
    "wsl2_rtx4090": set(),
    "broken_torch_a10g": {"ED104", "ED202"},
    "t4_cpu_torch": {"ED103"},
    "container_no_gpus": {"ED211"},
    "a100_sxm_shadowed_cudnn": {"ED207", "ED209", "ED212", "ED301", "ED302", "ED304", "ED307", "ED308", "ED402"},
    "python37_legacy": {"ED106"},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_expert_expectations(name):
    got = {f.id for f in diagnose_bundled(load_snapshot(fixture_path(name)))}
    assert got == EXPECTED[name]


def test_healthy_h200_has_no_warning_or_error():
    findings = diagnose_bundled(load_snapshot(fixture_path("h200_8x_healthy")))
    assert [f for f in findings if f.severity in ("error", "warning")] == []


def test_every_fixture_is_used_by_some_rule_or_expectation():
    used = {fixtures.base_name(n) for r in RULES for k in ("fires", "quiet") for n in r.fixtures[k]} | set(EXPECTED)
    assert set(all_fixture_names()) - used == set()


CONTRACT_CATEGORIES = {
    "driver_too_old", "arch_unsupported", "cpu_build_on_gpu_machine", "torch_broken", "cuda_unavailable",
    "library_shadowing", "toolkit_mismatch", "python_unsupported", "deepspeed_incompatible", "shm_too_small",
    "pcie_degraded", "p2p_unavailable", "numa_misplaced", "persistence_mode_off", "mig_enabled", "ecc_errors",
    "nccl_env_misconfig", "fabric_manager", "extension_arch_unsupported", "container_no_gpu_access",
}


def test_every_contract_category_has_a_rule():
    assert CONTRACT_CATEGORIES - {r.category for r in RULES} == set()


def test_contract_categories_match_the_contract_doc():
    contract = ROOT / "docs" / "contract.md"
    section = contract.read_text().split("## Finding categories", 1)[1]
    listed = set(re.findall(r"^\| `([a-z0-9_]+)` \|", section, re.M))
    # fleet_mismatch and drift come from `fleet` and `--baseline`, not from rules
    assert listed - {"fleet_mismatch", "drift"} == CONTRACT_CATEGORIES


def test_generated_rules_doc_is_current():
    assert (ROOT / "docs" / "rules.md").read_text() == rules_markdown(bundled_catalog()), \
        "run: python -m envdoctor.present.rules_doc"


def test_per_gpu_findings_are_grouped():
    findings = [f for f in diagnose_bundled(load_snapshot(fixture_path("a100_pcie_8x"))) if f.id == "ED206"]
    assert len(findings) == 1 and findings[0].subjects == [f"gpu:{i}" for i in range(8)]
    assert findings[0].title == "Persistence mode is off on 8 GPUs"
