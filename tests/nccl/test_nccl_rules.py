"""The signature database: bad files report every problem at once, naming file and entry."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envdoctor.errors import InputError
from envdoctor.nccl import load_rules
from envdoctor.nccl.diagnose import prefilter_for
from envdoctor.nccl.rules import default_rules_dir
from tests.nccl.helpers import FIXTURES, ROOT


def _copy_rules(tmp: Path) -> Path:
    d = tmp / "rules"
    shutil.copytree(default_rules_dir(), d)
    return d


def _edit(path: Path, fn) -> None:
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc))


def test_bundled_rules_load_and_every_signature_is_prefiltered() -> None:
    rules = load_rules()
    assert len(rules.categories) >= 38 and len(rules.signatures) > 50 and rules.rules
    assert prefilter_for(rules).always == [], "a signature without a literal would be tried on every line"
    raw = json.loads((default_rules_dir() / "signatures.json").read_text())["signatures"]
    assert all(isinstance(e.get("example"), str) for e in raw), "every signature carries an example it must match"


def test_every_error_is_reported_with_file_and_entry(tmp_path: Path) -> None:
    d = _copy_rules(tmp_path)

    def break_sigs(doc):
        doc["signatures"][0]["pattern"] = "posix_fallocate ("          # does not compile
        doc["signatures"][1]["weights"] = {"no_such_category": 3}      # unknown category
        doc["signatures"][2]["example"] = "nothing like it"            # example does not match
        doc["signatures"].append(dict(doc["signatures"][3]))           # duplicate id
        doc["signatures"].append({"id": "no-means", "pattern": "x+y", "needles": ["xxy"],
                                  "example": "xxy"})                   # missing 'means'

    def break_ctx(doc):
        doc["rules"][0]["when"] = {"signal": "no-such-signal"}
        doc["rules"][1]["when"] = {"predicate": "no_such_predicate"}
        doc["rules"][2]["when"] = {"bigger": ["log.ranks", 2]}

    _edit(d / "signatures.json", break_sigs)
    _edit(d / "context.json", break_ctx)
    with pytest.raises(InputError) as info:
        load_rules(d)
    msg = str(info.value)
    sig_file, ctx_file = str(d / "signatures.json"), str(d / "context.json")
    for needle in ("'shm-fallocate-enospc' (#1): pattern does not compile",
                   "(#2): 'weights': unknown category 'no_such_category'",
                   "(#3): pattern does not match its own 'example'",
                   "duplicate id",
                   "'no-means'",
                   "unknown signature 'no-such-signal'",
                   "unknown predicate 'no_such_predicate'",
                   "unknown operator 'bigger'"):
        assert needle in msg, needle
    assert sig_file in msg and ctx_file in msg
    assert msg.startswith("invalid NCCL signatures: 8 error(s)")
    assert "\n" not in msg


def test_a_needle_missing_from_its_examples_is_a_load_error(tmp_path: Path) -> None:
    d = _copy_rules(tmp_path)

    def break_needles(doc):
        doc["signatures"][0]["needles"] = ["posix_fallocate failed", "no such literal"]
        doc["signatures"][1]["needles"] = ["Failed To Extend"]
        doc["signatures"][2]["needles"] = []
        doc["signatures"][3]["more_examples"] = ["a line the pattern does not match"]
        doc["signatures"][4]["needles"] = ["10048"]
        doc["signatures"][4]["more_examples"] = ["errno 10048"]

    _edit(d / "signatures.json", break_needles)
    with pytest.raises(InputError) as info:
        load_rules(d)
    msg = str(info.value)
    assert "'shm-fallocate-enospc' (#1): needle 'no such literal' occurs in no example" in msg
    assert "needle 'posix_fallocate failed'" not in msg  # it is in the example
    assert "(#2): needle 'Failed To Extend' must be lower case" in msg
    assert "(#3): 'needles' must list the literals" in msg
    assert "(#4): 'more_examples': pattern does not match 'a line the pattern does not match'" in msg
    assert "(#5): needle '10048' is digits only" in msg  # it would gate every line with a number in it


def test_declared_needles_cover_every_matching_fixture_line() -> None:
    """Soundness on real logs: a line a pattern matches holds one of its needles (else the prefilter loses it)."""
    from envdoctor.nccl.facts import FACT_NEEDLES, FACT_PATTERNS

    assert set(FACT_NEEDLES) == set(FACT_PATTERNS)
    rules = load_rules()
    patterns = [(s.id, s.regex, s.needles) for s in rules.signatures]
    patterns += [(k, re.compile(p), FACT_NEEDLES[k]) for k, p in FACT_PATTERNS.items()]
    checked = 0
    for log in sorted(FIXTURES.glob("*")):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            for name, rx, needles in patterns:
                if rx.search(line):
                    checked += 1
                    assert any(n in line.lower() for n in needles), (name, line)
    assert checked > 100


def test_invalid_json_and_unknown_schema(tmp_path: Path) -> None:
    d = _copy_rules(tmp_path)
    (d / "signatures.json").write_text('{"schema": "envdoctor.nccl-signatures/1", "signatures": [')
    (d / "extra.json").write_text('{"schema": "something/9"}')
    with pytest.raises(InputError) as info:
        load_rules(d)
    assert "signatures.json: invalid JSON at line 1" in str(info.value)
    assert "extra.json: 'schema' must be one of" in str(info.value)


def test_malformed_signature_file_exits_2_naming_file_and_entry(tmp_path: Path) -> None:
    d = _copy_rules(tmp_path)
    _edit(d / "signatures.json", lambda doc: doc["signatures"][4].update(pattern="[unclosed"))
    cmd = [sys.executable, "-m", "envdoctor", "nccl", "diagnose", str(FIXTURES / "shm_exhausted.log"), "--rules", str(d)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stdout == ""
    assert str(d / "signatures.json") in out.stderr and "(#5): pattern does not compile" in out.stderr
    assert "Traceback" not in out.stderr


def test_rules_are_cached_until_a_file_changes(tmp_path: Path) -> None:
    d = _copy_rules(tmp_path)
    first = load_rules(d)
    assert load_rules(d) is first
    import os
    import time

    path = d / "context.json"
    _edit(path, lambda doc: doc["settings"].update(max_findings=2))
    os.utime(path, (time.time() + 5, time.time() + 5))
    again = load_rules(d)
    assert again is not first and again.settings["max_findings"] == 2
