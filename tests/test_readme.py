"""The README tells a new user what is there (issue 31): its TUI paragraph names every tab with its key, and it
states the fast test loop beside the full suite."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def _tui_paragraph() -> str:
    text = _readme()
    start = text.index("Run `envdoctor` with no arguments in a terminal")
    return re.sub(r"\s+", " ", text[start:text.index("\n\n", start)])


def test_the_tui_paragraph_names_every_tab_and_its_key():
    from envdoctor.tui.app import TABS

    para = _tui_paragraph()
    missing = [f"{t.title} (`{t.key}`" for t in TABS if f"{t.title} (`{t.key}`" not in para]
    assert not missing, missing


def test_the_readme_states_the_fast_loop_beside_the_full_suite():
    text = _readme()
    fast = 'python -m pytest -q -n 2 -m "not slow and not heavy and not registry and not cold_build"'
    assert fast in text and 'python -m pytest -q -m "heavy or registry or cold_build"' in text
    assert text.index("the fast loop") < text.index("## Commands")  # in the quick start, where the suite is


def test_the_readme_warns_that_the_first_zero3_selftest_builds_ops():
    text = re.sub(r"\s+", " ", _readme())
    assert "The first `selftest zero3`" in text and "builds DeepSpeed's ops" in text and "473 s" in text
