"""The one condition language: an unknown fact never satisfies a comparison, nor its negation."""

from __future__ import annotations

import pytest

from envdoctor.rules.conditions import PREDICATES, Context, Found, check_condition, evaluate, holds
from envdoctor.snapshot import Host, ProbeFailed, Snapshot, Torch, Unavailable

KNOWN = Snapshot(host=Host(os="linux", shm_bytes=64 << 20, wsl=False, hostname="node1"),
                 torch=Torch(importable=True, version="2.7.1", nccl="2.26.2"),
                 env={"NCCL_DEBUG": "INFO"})
UNKNOWN = Snapshot(host=Host(os="linux", shm_bytes=Unavailable("no /dev/shm"), wsl=ProbeFailed("boom")),
                   env=Unavailable("not probed"))

COMPARISONS = [
    {"eq": ["host.shm_bytes", 67108864]}, {"ne": ["host.shm_bytes", 1]}, {"lt": ["host.shm_bytes", 1 << 40]},
    {"le": ["host.shm_bytes", 1 << 40]}, {"gt": ["host.shm_bytes", 0]}, {"ge": ["host.shm_bytes", 0]},
    {"in": ["host.shm_bytes", [67108864]]}, {"matches": ["host.shm_bytes", "^67"]},
    {"eq": ["host.wsl", False]}, {"ne": ["host.wsl", True]}, {"matches": ["env.NCCL_DEBUG", "INFO"]},
    {"version": ["torch.nccl", ">=2.26"]}, {"contains": ["torch.version", "2.7"]},
    {"len": ["env", "ge", 1]}, {"eq": ["env.NCCL_DEBUG", "INFO"]},
]


def _eval(cond, snap):
    return evaluate(cond, Context(snap), PREDICATES, Found())


@pytest.mark.parametrize("cond", COMPARISONS, ids=lambda c: next(iter(c)))
def test_an_unknown_fact_satisfies_neither_a_comparison_nor_its_negation(cond):
    assert check_condition(cond, {}, PREDICATES) == []
    assert _eval(cond, KNOWN) is True and _eval({"not": cond}, KNOWN) is False
    assert _eval(cond, UNKNOWN) is None and _eval({"not": cond}, UNKNOWN) is None
    assert not holds(cond, Context(UNKNOWN), PREDICATES) and not holds({"not": cond}, Context(UNKNOWN), PREDICATES)


def test_a_missing_path_or_no_snapshot_is_unknown_too():
    assert _eval({"eq": ["env.NO_SUCH_VARIABLE", "1"]}, KNOWN) is None
    assert _eval({"ne": ["env.NO_SUCH_VARIABLE", "1"]}, KNOWN) is None
    assert evaluate({"ne": ["host.os", "windows"]}, Context(None), PREDICATES, Found()) is None
    assert _eval({"ne": ["torch.nccl", "2.0"]}, Snapshot()) is None  # torch not probed


def test_a_yes_no_value_is_not_a_number():
    assert _eval({"lt": ["host.wsl", 1]}, KNOWN) is None
    assert check_condition({"lt": ["host.shm_bytes", True]}, {}, PREDICATES) == \
        ["'lt' compares with a number, got True"]


def test_all_any_not_follow_three_valued_logic():
    true, false, unknown = {"eq": ["host.os", "linux"]}, {"eq": ["host.os", "windows"]}, {"eq": ["env.X", "1"]}
    assert _eval({"all": [true, unknown]}, KNOWN) is None
    assert _eval({"all": [false, unknown]}, KNOWN) is False
    assert _eval({"any": [true, unknown]}, KNOWN) is True
    assert _eval({"any": [false, unknown]}, KNOWN) is None
    assert _eval({"not": {"all": [false, unknown]}}, KNOWN) is True
    assert _eval({"not": {"any": [false, unknown]}}, KNOWN) is None


def test_presence_is_always_known():
    for snap, there in ((KNOWN, True), (UNKNOWN, False)):
        assert _eval({"present": "host.shm_bytes"}, snap) is there
        assert _eval({"absent": "host.shm_bytes"}, snap) is not there
        assert _eval({"not": {"present": "host.shm_bytes"}}, snap) is not there
    assert _eval({"failed": "host.wsl"}, UNKNOWN) is True and _eval({"failed": "host.shm_bytes"}, UNKNOWN) is False


def test_matches_is_case_sensitive_unless_the_pattern_says_otherwise():
    assert _eval({"matches": ["env.NCCL_DEBUG", "info"]}, KNOWN) is False
    assert _eval({"matches": ["env.NCCL_DEBUG", "(?i)info"]}, KNOWN) is True


def test_some_over_an_unknown_list_is_unknown():
    cond = {"some": {"in": "gpus", "as": "g", "where": {"eq": ["g.name", "x"]}}}
    assert check_condition(cond, {}, PREDICATES) == []
    assert _eval(cond, KNOWN) is False  # an empty list: known, and no GPU matches


def test_evidence_comes_only_from_the_parts_that_hold():
    found = Found()
    cond = {"any": [{"all": [{"eq": ["host.os", "linux"]}, {"eq": ["env.X", "1"]}]},
                    {"eq": ["torch.nccl", "2.26.2"]}]}
    assert evaluate(cond, Context(KNOWN), PREDICATES, found) is True
    assert found.evidence == ["snapshot: torch.nccl = 2.26.2"]
    log = Context(None, {"log": {"nccl_version": "2.18.3"}})
    found = Found()
    assert evaluate({"version": ["log.nccl_version", "<2.26"]}, log, PREDICATES, found) is True
    assert found.evidence == ["log: nccl_version = 2.18.3"]


def test_signals_belong_to_nccl_context_rules():
    assert check_condition({"signal": "x"}, {}, PREDICATES) == [
        "'signal' is for NCCL context rules (a signature matched the log)"]
    assert check_condition({"signal": ["x", "y"]}, {}, PREDICATES, {"x"}) == ["unknown signature 'y'"]
    ctx = Context(None, signals={"x": object()})
    assert _eval_ctx({"signal": ["y", "x"]}, ctx) is True and _eval_ctx({"not": {"signal": "y"}}, ctx) is True


def _eval_ctx(cond, ctx):
    return evaluate(cond, ctx, PREDICATES, Found())


def test_diagnose_reads_no_environment(monkeypatch):
    """Knowledge comes in as arguments: pointing the environment at nothing changes no finding."""
    from envdoctor.snapshot import load_snapshot
    from tests.conftest import diagnose_bundled, fixture_path

    snaps = [load_snapshot(fixture_path(n)) for n in ("python37_legacy", "triton_mismatch", "deepspeed_old_torch")]
    before = [[f.to_json() for f in diagnose_bundled(s)] for s in snaps]
    monkeypatch.setenv("ENVDOCTOR_RULES_DIR", "/nonexistent/rules")
    monkeypatch.setenv("ENVDOCTOR_WHEELS_INDEX", "/nonexistent/index.json")
    monkeypatch.setenv("XDG_CACHE_HOME", "/nonexistent/cache")
    assert [[f.to_json() for f in diagnose_bundled(s)] for s in snaps] == before
    assert all(before)
