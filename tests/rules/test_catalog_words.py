"""`envdoctor rules list/explain` read as words (issue 31): an NCCL cause says where it sits in plain words, not
"Layer A of the NCCL failure taxonomy"; every category fits its column."""

from __future__ import annotations

from envdoctor.knowledge import bundled_catalog
from envdoctor.present.rules_doc import explain, rules_table


def test_an_nccl_cause_says_where_it_sits_in_plain_words():
    entries = {e.id: e for e in bundled_catalog()}
    text = explain(entries["NCCL-SHM-EXHAUSTED"])
    assert "Layer" not in text and "taxonomy" not in text
    assert "the host's or the container's resources" in text
    assert all("Layer " not in e.why for e in entries.values() if e.kind == "nccl")


def test_every_category_fits_its_column_in_rules_list():
    lines = rules_table(bundled_catalog()).splitlines()
    start = lines[0].index("name")
    for line in lines[1:]:
        assert line[start - 1] == " " and line[start] != " ", line
