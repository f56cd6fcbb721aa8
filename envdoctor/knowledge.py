"""Everything diagnosis knows, loaded at the edge and passed in: the rules with their tables, and the wheel index.

`load_knowledge` takes explicit paths; `Settings.knowledge()` chooses them at the edge (ENVDOCTOR_RULES_DIR,
ENVDOCTOR_WHEELS_INDEX, the user copy of the index): the CLI and the TUI call that.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, List

from envdoctor.data_files import data_path
from envdoctor.rules.registry import Rulebook, load_rulebook
from envdoctor.wheels.index import WheelIndex, read_index

if TYPE_CHECKING:
    from envdoctor.rules.catalog import Entry


@dataclass(frozen=True)
class Knowledge:
    rules: Rulebook
    index: WheelIndex


def load_knowledge(rules_dir: Path, index_path: Path) -> Knowledge:
    """Rules (and tables) from `rules_dir`, the wheel index from `index_path`; InputError on bad data."""
    return Knowledge(load_rulebook(rules_dir), read_index(index_path))


def nccl_rules_for(rules_dir: Path) -> Any:
    """The NCCL signatures of a rules database (`nccl/` inside it, else the bundled ones), with its tables."""
    from envdoctor.nccl.rules import default_rules_dir, load_rules

    nccl_dir = rules_dir / "nccl" if (rules_dir / "nccl").is_dir() else default_rules_dir()
    return load_rules(nccl_dir, rules_dir / "tables")


def catalog_for(rules_dir: Path) -> List[Entry]:
    """The registry of a rules database: its machine rules, its NCCL root causes (`nccl/` inside it, else the
    bundled ones) and the drift and fleet checks."""
    from envdoctor.rules.catalog import catalog

    return catalog(load_rulebook(rules_dir), nccl_rules_for(rules_dir))


def bundled_catalog() -> List[Entry]:
    return catalog_for(data_path("rules"))
