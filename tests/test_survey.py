"""The failure survey (tests/corpus/survey.jsonl): well formed, large and varied enough, every envdoctor id it
names exists, and docs/survey.md is generated from it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

from tests.conftest import ROOT
from tools import survey_table


def _catalog_ids() -> set:
    out = subprocess.run([sys.executable, "-m", "envdoctor", "rules", "list"], capture_output=True, text=True,
                         cwd=ROOT, timeout=120, check=True).stdout
    return {line.split()[0] for line in out.splitlines()[1:] if line.strip()}


def test_the_survey_is_a_sample_of_many_threads_across_the_ecosystem():
    rows, table = survey_table.load()
    repos = Counter(r["repo"] for r in rows)
    assert len(rows) >= 300 and len(repos) >= 20
    assert max(repos.values()) / len(rows) < 0.25
    assert len({r["url"] for r in rows}) == len(rows)
    assert {"build_isolation_hides_torch", "compile_unready_python_unsupported", "gloo_peer_unreachable"} <= set(table)


def test_every_id_the_survey_names_is_in_the_catalog():
    _rows, table = survey_table.load()
    named = {i for entry in table.values() for i in entry["envdoctor"]}
    assert named and named <= _catalog_ids()


def test_docs_survey_is_current():
    rows, table = survey_table.load()
    assert (ROOT / "docs" / "survey.md").read_text(encoding="utf-8") == survey_table.render(rows, table)


def test_a_bad_row_is_named_with_its_line(tmp_path):
    survey = tmp_path / "survey.jsonl"
    mechanisms = tmp_path / "mechanisms.json"
    mechanisms.write_text(json.dumps({"driver_too_old": {"definition": "d", "envdoctor": ["ED101"]}}))
    good = {"url": "https://github.com/a/b/issues/1", "repo": "a/b", "title": "t", "query": "q", "rank": 1,
            "kind": "machine", "mechanism": "driver_too_old", "settled": "maintainer", "settled_by": "s",
            "evidence": "e", "envdoctor": ["ED101"]}
    rows = [good, {**good, "url": "https://github.com/a/b/issues/2", "settled": "probably"},
            {**good, "url": "https://github.com/a/b/issues/3", "mechanism": "made_up"}, good]
    survey.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    try:
        survey_table.load(survey, mechanisms)
    except ValueError as exc:
        text = str(exc)
    else:
        raise AssertionError("a bad survey loaded")
    assert "survey.jsonl:2: settled 'probably'" in text and "survey.jsonl:3: mechanism 'made_up'" in text
    assert "survey.jsonl:4: https://github.com/a/b/issues/1 is surveyed twice" in text


def test_coverage_counts_settled_threads_that_envdoctor_names():
    table = {"m": {"definition": "d", "envdoctor": ["ED101"]}}
    base = {"mechanism": "m", "settled": "maintainer", "envdoctor": ["ED101"]}
    rows = [{**base, "url": f"https://github.com/a/b/issues/{n}"} for n in range(6)]
    rows[0]["envdoctor"] = []
    rows[1]["settled"] = "unsettled"
    cov = survey_table.coverage(rows, table)["all"]
    assert cov == {"settled": 5, "named": 4, "coverage": 0.8}
