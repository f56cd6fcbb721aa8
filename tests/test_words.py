"""People read words, not identifiers, in text output and the TUI; the JSON keeps the identifiers."""

from __future__ import annotations

import json

import pytest

from envdoctor.findings import SAFETIES, Finding
from envdoctor.fixes import Fix, manual, read_prose
from envdoctor.present.findings import render_findings
from envdoctor.present.style import Style
from envdoctor.present.words import WORDS, word
from envdoctor.wheels.index import STATUSES
from tests.conftest import fixture_path, run_cli

PLAN_STATUSES = ("planned", "nothing_to_do", "impossible")
OUTCOME_STATUSES = ("installed", "rolled_back", "undone")


@pytest.mark.parametrize("identifier", [*PLAN_STATUSES, *OUTCOME_STATUSES, *SAFETIES, *STATUSES])
def test_every_identifier_people_see_has_words(identifier):
    assert identifier in WORDS and "_" not in word(identifier)


def test_an_identifier_without_an_entry_reads_with_spaces():
    assert word("some_new_status") == "some new status"


def test_fix_text_says_words_and_the_json_keeps_the_identifier():
    snap = str(fixture_path("rtx5090_old_torch"))
    text = run_cli(["fix", "--snapshot", snap, "--dry-run"])
    assert text.stdout.startswith("plan: ready to install - ")
    assert "planned" not in text.stdout
    doc = json.loads(run_cli(["fix", "--snapshot", snap, "--dry-run", "--json"]).stdout)
    assert doc["status"] == "planned"


def test_fix_text_for_a_machine_with_nothing_to_do():
    res = run_cli(["fix", "--snapshot", str(fixture_path("cpu_only_this_machine")), "--dry-run"])
    first = res.stdout.splitlines()[0]
    assert "_" not in first.split(" - ")[0], first


def test_findings_text_words_the_fix_safety():
    f = Finding(id="X1", severity="error", category="c", title="t", detail="d",
                remedy=Fix("envdoctor_fix", applicability="unsafe", prose=read_prose("do it")))
    text = render_findings([f], Style(False))
    assert "(unsafe to apply unattended with `envdoctor fix`)" in text
    shown = render_findings([Finding(id="X2", severity="info", category="c", title="t", detail="d", remedy=manual("f"))],
                           Style(False))
    assert "display_only" not in shown
