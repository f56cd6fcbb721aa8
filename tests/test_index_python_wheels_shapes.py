"""A wheel index whose python_wheels section has the wrong types is invalid (exit 2, or ignored as the user's cache
copy), never an internal error (fuzz: index seeds 2045970, 2060705, 2063352)."""

from __future__ import annotations

import copy
import json

import pytest

from envdoctor.wheels.index import validate
from tests.conftest import ROOT

BUNDLED = json.loads((ROOT / "wheels_index.json").read_text(encoding="utf-8"))


def _set(doc, path, value):
    node = doc
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return doc


@pytest.mark.parametrize("path, value, said", [
    (("python_wheels", "platforms"), [{"x": 1}], "python_wheels.platforms"),
    (("python_wheels", "other_indexes"), 1.5, "python_wheels.other_indexes"),
    (("python_wheels", "releases", 0, "version"), 0, "is not a version"),
    (("python_wheels", "other_indexes", 0, "platform"), {"a": 1}, "needs a known platform"),
    (("python_wheels", "other_indexes", 0, "first_release"), 0, "first_release 0 is not a version"),
])
def test_wrong_types_in_python_wheels_are_problems_not_exceptions(path, value, said):
    doc = _set(copy.deepcopy(BUNDLED), path, value)
    problems = validate(doc, "idx.json")
    assert problems and any(said in p for p in problems), problems


def test_the_bundled_index_is_still_valid():
    assert validate(copy.deepcopy(BUNDLED), "wheels_index.json") == []
