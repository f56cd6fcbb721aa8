"""No data file of the rules database names a key twice in one object: JSON keeps the last one silently, so the
first (a fix_action, a source) would be dead text that reads as knowledge."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT

FILES = sorted([*(ROOT / "rules").rglob("*.json"), ROOT / "wheels_index.json"])


def _refuse_twice(pairs):
    keys = [k for k, _v in pairs]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(f"keys named twice: {', '.join(twice)}")
    return dict(pairs)


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_no_key_is_named_twice(path):
    json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_refuse_twice)


def test_the_check_sees_a_key_named_twice():
    with pytest.raises(ValueError, match="fix_action"):
        json.loads('{"fix_action": 1, "id": 2, "fix_action": 3}', object_pairs_hook=_refuse_twice)
