"""The fact base (facts/): every fact names a described source, and wheels_index.json is built from it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any, Set

from tests.conftest import ROOT

FACTS = ROOT / "facts"


def cited(doc: Any) -> Set[str]:
    """Every source key a document cites (`sources`, `pypi_sources` lists; `source` strings)."""
    keys: Set[str] = set()
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key in ("sources", "pypi_sources") and isinstance(value, list):
                keys.update(value)
            elif key == "source" and isinstance(value, str):
                keys.add(value)
            else:
                keys |= cited(value)
    elif isinstance(doc, list):
        for item in doc:
            keys |= cited(item)
    return keys


def test_build_index_regenerates_the_committed_wheel_index(tmp_path):
    out = tmp_path / "wheels_index.json"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "build_index.py"), "-o", str(out)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == (ROOT / "wheels_index.json").read_bytes(), "run: python tools/build_index.py"


def test_every_cited_source_is_described_in_facts_md():
    matrix = json.loads((FACTS / "matrix.json").read_text(encoding="utf-8"))
    section = (FACTS / "FACTS.md").read_text(encoding="utf-8").split("## 0. Sources", 1)[1].split("\n## ", 1)[0]
    described = set(re.findall(r"^\| ([A-Z][A-Z0-9_]+) \|", section, re.M))
    assert set(matrix["sources"]) == described
    assert cited(matrix) - described == set()


def test_the_wheel_index_cites_only_fact_sources():
    # The index is built from matrix.json and cuda_history.json; matrix.json's text wins where both define a key.
    index = json.loads((ROOT / "wheels_index.json").read_text(encoding="utf-8"))
    matrix = json.loads((FACTS / "matrix.json").read_text(encoding="utf-8"))
    history = json.loads((FACTS / "cuda_history.json").read_text(encoding="utf-8"))
    sources = {**history["sources"], **matrix["sources"]}
    assert index["sources"] == sources and index["facts_as_of"] == matrix["as_of"]
    assert cited(index) - set(sources) == set()
