"""The rule catalog use case: every entry of a rules database's registry, one found by id or name."""

from __future__ import annotations

import pytest

from envdoctor.errors import InputError
from envdoctor.usecases.rule_catalog import find_rule, rule_catalog
from tests.conftest import ROOT

RULES = ROOT / "rules"


def test_the_catalog_holds_machine_rules_and_nccl_causes():
    ids = {e.id for e in rule_catalog(RULES)}
    assert "ED101" in ids and any(i.startswith("NCCL-") for i in ids)


def test_a_rule_is_found_by_id_and_a_missing_one_is_bad_input():
    assert find_rule(RULES, "ED101").id == "ED101"
    with pytest.raises(InputError, match="needs a rule id"):
        find_rule(RULES, None)
    with pytest.raises(InputError, match="no rule 'NOPE'"):
        find_rule(RULES, "NOPE")
