"""Knowledge is passed in: a table changed in a rules database named by ENVDOCTOR_RULES_DIR changes what every
predicate that reads it says. Each table below is read by a predicate that used to read the bundled copy from
disk (numpy_outside_torch_build, companion_mismatched twice, extension_gpu_too_old, inductor_gpu_too_old and
the runtime error meanings); a change here that a predicate ignores fails its assertion."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

from envdoctor.diagnose import diagnose
from envdoctor.settings import Settings
from envdoctor.snapshot import Companion, load_snapshot
from tests.conftest import ROOT, diagnose_bundled, fixture_path


def _edit(directory: Path, table: str, change: Callable[[Dict[str, Any]], None]) -> None:
    path = directory / "tables" / table
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")


def _row(doc: Dict[str, Any], **match: str) -> Dict[str, Any]:
    return next(r for r in doc["rows"] if all(r.get(k) == v for k, v in match.items()))


def _planted(directory: Path) -> None:
    """One changed fact in each table a predicate reads."""
    _edit(directory, "numpy_builds.json", lambda d: _row(d, torch="<2.3").update(numpy="<2.0.5"))
    _edit(directory, "companions.json", lambda d: d["torchvision"].update({"2.5": "0.21"}))
    _edit(directory, "extension_requirements.json",
          lambda d: _row(d, extension="flash-attn", versions=">=2,<3").update(min_cc="7.5"))
    _edit(directory, "extension_requirements.json", lambda d: _row(d, extension="triton").update(min_cc="6.1"))
    _edit(directory, "runtime_errors.json",
          lambda d: _row(d, key="cuda_unknown_error").update(fix="PLANTED: reload the planted module."))


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("planted") / "rules"
    shutil.copytree(ROOT / "rules", d)
    _planted(d)
    return d


def _knowledge(rules_dir: Path) -> Any:
    """What the CLI and the TUI are given: Settings.knowledge() with ENVDOCTOR_RULES_DIR set."""
    return Settings.from_env({"ENVDOCTOR_RULES_DIR": str(rules_dir), "HOME": str(rules_dir.parent)}).knowledge()


def _finding(findings: List[Any], rule_id: str) -> Any:
    return next((f for f in findings if f.id == rule_id), None)


def _paired_torchvision():
    """torch 2.5.1 with torchvision 0.20.1 that declares no torch pin: only the companion table can tell."""
    snap = load_snapshot(fixture_path("eco_torchvision_mismatch"))
    tv = Companion(version="0.20.1+cu124", requires_torch=None, importable=True, error=None, nms_op=True, warnings=[])
    return dataclasses.replace(snap, torch=dataclasses.replace(snap.torch, companions={"torchvision": tv}))


CASES = [
    # (what the table says, snapshot, rule, what the bundled table makes it say, what the planted one does)
    ("numpy_builds.json", lambda: load_snapshot(fixture_path("eco_numpy2_unexercised")), "ED513",
     lambda f: f is not None and "needs numpy<2" in f.title and "<2.0.5" not in f.title,
     lambda f: f is not None and "needs numpy<2.0.5" in f.title),
    ("companions.json (is the pair built for each other)", _paired_torchvision, "ED502",
     lambda f: f is None,
     lambda f: f is not None and "pairs with torchvision 0.21.x" in f.detail),
    ("companions.json (which pair to install)", lambda: load_snapshot(fixture_path("eco_torchvision_mismatch")), "ED502",
     lambda f: f is not None and "torchvision 0.20.x" in f.fix,
     lambda f: f is not None and "torchvision 0.21.x" in f.fix),
    ("extension_requirements.json (flash-attn)", lambda: load_snapshot(fixture_path("eco_flash_attn_v100")), "ED509",
     lambda f: f is not None and "compute capability >= 8.0" in f.detail,
     lambda f: f is not None and "compute capability >= 7.5" in f.detail),
    ("extension_requirements.json (triton)", lambda: load_snapshot(fixture_path("eco_p100_compile")), "ED510",
     lambda f: f is not None and "compute capability >= 7.0" in f.detail,
     lambda f: f is not None and "compute capability >= 6.1" in f.detail),
    ("runtime_errors.json", lambda: load_snapshot(fixture_path("h100_cuda_unknown_error")), "ED111",
     lambda f: f is not None and "PLANTED" not in f.fix,
     lambda f: f is not None and "PLANTED: reload the planted module" in f.fix),
]


@pytest.mark.parametrize("table, snapshot, rule_id, bundled, changed", CASES, ids=[c[0] for c in CASES])
def test_every_predicate_follows_a_table_planted_through_envdoctor_rules_dir(planted, table, snapshot, rule_id,
                                                                            bundled, changed):
    snap = snapshot()
    assert bundled(_finding(diagnose_bundled(snap), rule_id)), f"{rule_id} with the bundled {table}"
    know = _knowledge(planted)
    assert changed(_finding(diagnose(snap, know.rules, know.index), rule_id)), f"{rule_id} ignores the planted {table}"


def test_the_knowledge_carries_the_planted_tables(planted):
    know = _knowledge(planted)
    assert know.tables is know.rules.tables
    assert know.tables.ecosystem.torchvision["2.5"] == "0.21"
    assert know.nccl.tables == know.tables  # the NCCL signatures read the same tables
