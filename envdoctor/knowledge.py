"""Everything envdoctor knows, as one value built at the edge and passed in: the machine rules with their tables,
the NCCL signatures (which read the same tables), the drift and fleet checks, the fleet thresholds and the
wheel index. Nothing below reads a data file on its own: the rules' predicates read the tables from their
context, `nccl diagnose` reads the signatures it is given, `fleet` the thresholds and checks it is given.

`load_knowledge` takes explicit paths; `Settings.knowledge()` chooses them at the edge (ENVDOCTOR_RULES_DIR,
ENVDOCTOR_WHEELS_INDEX, the user copy of the index): the CLI and the TUI call that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Optional

from envdoctor.data_files import data_path
from envdoctor.fleet.checks import NEEDED as FLEET_CHECKS
from envdoctor.fleet.thresholds import FILE as THRESHOLDS_FILE
from envdoctor.fleet.thresholds import FleetThresholds, load_thresholds
from envdoctor.rules.checks import Checks, checks_dir, load_checks
from envdoctor.rules.drift import NEEDED as DRIFT_CHECKS
from envdoctor.rules.drift import READERS
from envdoctor.rules.registry import Rulebook, load_rulebook
from envdoctor.rules.tables import Tables
from envdoctor.validation_cache import NO_CACHE, ValidationCache
from envdoctor.wheels.index import WheelIndex, read_index

if TYPE_CHECKING:
    from envdoctor.catalog import Entry
    from envdoctor.nccl.rules import RuleSet


@dataclass(frozen=True)
class Knowledge:
    """One rules database (rules, tables, NCCL signatures, drift and fleet checks, fleet thresholds) and the
    wheel index."""

    rules: Rulebook
    index: WheelIndex
    nccl_source: Callable[[], RuleSet] = field(repr=False, compare=False)  # loads `nccl` when first read
    signatures_source: Callable[[], RuleSet] = field(repr=False, compare=False)  # and `signatures`
    checks: Checks
    fleet: FleetThresholds
    _loaded: Dict[str, RuleSet] = field(default_factory=dict, repr=False, compare=False)

    @property
    def nccl(self) -> RuleSet:
        """The NCCL signatures (with the same tables): read and validated when first asked for, so that `check`,
        which never reads them, does not import and load them (InputError then, naming the bad file)."""
        if "nccl" not in self._loaded:
            self._loaded["nccl"] = self.nccl_source()
        return self._loaded["nccl"]

    @property
    def signatures(self) -> RuleSet:
        """Every signature of the rules database (its NCCL ones and the rest: tracebacks, build logs, CUDA errors),
        which `envdoctor diagnose` reads: loaded when first asked for, with the same tables."""
        if "signatures" not in self._loaded:
            self._loaded["signatures"] = self.signatures_source()
        return self._loaded["signatures"]

    @property
    def tables(self) -> Tables:
        """The compatibility tables every rule and signature reads (the rules' and the signatures' are one)."""
        return self.rules.tables


def knowledge_from(rules_dir: Path, index: WheelIndex, cache: ValidationCache = NO_CACHE) -> Knowledge:
    """Everything in `rules_dir` (its `nccl/` and `checks/`, else the bundled ones), with a wheel index already
    read; InputError (exit 2) naming the file and the entry of every problem. `cache`: the rules databases that
    already passed (envdoctor.validation_cache), whose rules need not be checked again."""
    book = load_rulebook(rules_dir, cache)
    return Knowledge(rules=book, index=index, nccl_source=lambda: nccl_rules_for(rules_dir, book.tables),
                     checks=checks_for(rules_dir), fleet=load_thresholds(rules_dir / THRESHOLDS_FILE),
                     signatures_source=lambda: signatures_for(rules_dir, book.tables))


def checks_for(rules_dir: Path) -> Checks:
    """The drift and fleet checks of a rules database (its `checks/`, else the bundled ones)."""
    return load_checks(checks_dir(rules_dir), tuple(READERS), DRIFT_CHECKS + FLEET_CHECKS)


def load_knowledge(rules_dir: Path, index_path: Path) -> Knowledge:
    """Everything in `rules_dir`, the wheel index from `index_path`; InputError on bad data."""
    return knowledge_from(rules_dir, read_index(index_path))


def nccl_rules_for(rules_dir: Path, tables: Optional[Tables] = None) -> RuleSet:
    """The NCCL signatures of a rules database (`nccl/` inside it, else the bundled ones), with its tables
    (`tables`: those already loaded from it)."""
    from envdoctor.nccl.rules import default_rules_dir, load_rules

    nccl_dir = rules_dir / "nccl" if (rules_dir / "nccl").is_dir() else default_rules_dir()
    return load_rules(nccl_dir, rules_dir / "tables", tables)


def signatures_for(rules_dir: Path, tables: Optional[Tables] = None) -> RuleSet:
    """Every signature of a rules database: its `nccl/` and `signatures/` (each else the bundled one)."""
    from envdoctor.evidence.signatures import load_rules, signatures_dirs_of

    return load_rules(signatures_dirs_of(rules_dir), rules_dir / "tables", tables)


def catalog_of(know: Knowledge) -> List[Entry]:
    """The registry of one Knowledge value: what `envdoctor rules list/explain` shows."""
    from envdoctor.catalog import catalog

    return catalog(know.rules, know.signatures, know.checks)


def catalog_for(rules_dir: Path) -> List[Entry]:
    """The registry of a rules database: its machine rules, its NCCL root causes (`nccl/` inside it, else the
    bundled ones) and its drift and fleet checks."""
    from envdoctor.catalog import catalog

    book = load_rulebook(rules_dir)
    return catalog(book, signatures_for(rules_dir, book.tables), checks_for(rules_dir))


def bundled_catalog() -> List[Entry]:
    return catalog_for(data_path("rules"))
