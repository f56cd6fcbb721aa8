"""Every fixture names its thread, and every thread is on the dev side of the split (validation is held out)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.text.helpers import FIXTURES, SOURCES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "corpus"))

import split


def test_every_fixture_has_a_dev_source() -> None:
    names = sorted(p.name for p in FIXTURES.glob("*.txt"))
    assert names and set(names) == set(SOURCES) - {"about"}
    for name in names:
        url = SOURCES[name]
        assert url.startswith("https://github.com/"), name
        assert split.split_of_url(url) == split.DEV, (name, url)
