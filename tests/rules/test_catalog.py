"""The one registry: every machine rule, NCCL root cause and drift/fleet check is listed and explained."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest

from envdoctor.cli import main
from envdoctor.nccl import load_rules as load_nccl_rules
from envdoctor.rules.registry import load_rules


def _cli(*args: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(list(args)) == 0
    return out.getvalue()


@pytest.mark.slow
def test_every_rule_and_nccl_category_is_listed_and_explained():
    listing = _cli("rules", "list")
    rows = {line.split()[0]: line.split() for line in listing.splitlines()[1:]}
    machine = load_rules()
    nccl = load_nccl_rules()
    assert machine and len(nccl.categories) >= 38
    for rule in machine:
        assert rows[rule.id][1:3] == ["machine", rule.severity] and rows[rule.id][-1] == rule.name
        text = _cli("rules", "explain", rule.id)
        assert text.startswith(f"{rule.id} {rule.name}\n") and rule.fix in text and "What it detects" in text
    for cat in nccl.categories.values():
        assert rows[cat.finding_id][1:4] == ["nccl", cat.severity, cat.id]
        for wanted in (cat.finding_id, cat.id):  # by finding id and by category name
            text = _cli("rules", "explain", wanted)
            assert text.startswith(f"{cat.finding_id} {cat.id}\n") and cat.title in text and cat.fix in text
    for rid in ("ED901", "ED902"):
        assert rows[rid][1] == "drift"
    assert "NCCL_* settings: warning" in _cli("rules", "explain", "ED901")
    assert "torch: error; align:" in _cli("rules", "explain", "fleet-node-differs")


def test_an_nccl_category_lists_the_signatures_that_point_at_it():
    nccl = load_nccl_rules()
    text = _cli("rules", "explain", "shm_exhausted")
    for sig in nccl.signatures:
        if "shm_exhausted" in sig.weights:
            assert f"{sig.id} (" in text and sig.means in text
    assert "shm-small-in-snapshot (+4)" in text


def test_the_nccl_too_old_table_is_shown_on_both_sides():
    for wanted in ("ED405", "nccl_too_old_for_gpu"):
        text = _cli("rules", "explain", wanted)
        assert "Table nccl_min_for_gpu" in text and "Blackwell (compute capability >= 10.0): NCCL >= 2.26" in text
