"""Everything diagnosis knows, loaded at the edge and passed in: the rules with their tables, and the wheel index.

`load_knowledge` takes explicit paths; `knowledge_from_environment` is the one place that reads
ENVDOCTOR_RULES_DIR and the wheel index's environment variable and user copy (the CLI and the TUI call it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, List, Optional

from envdoctor.data_files import data_path
from envdoctor.rules.registry import Rulebook, load_rulebook
from envdoctor.wheels.index import WheelIndex, load_index, read_index

if TYPE_CHECKING:
    from envdoctor.rules.catalog import Entry


@dataclass(frozen=True)
class Knowledge:
    rules: Rulebook
    index: WheelIndex


def load_knowledge(rules_dir: Path, index_path: Path) -> Knowledge:
    """Rules (and tables) from `rules_dir`, the wheel index from `index_path`; InputError on bad data."""
    return Knowledge(load_rulebook(rules_dir), read_index(index_path))


def rules_dir_from_environment() -> Path:
    """The rules database to use: ENVDOCTOR_RULES_DIR (for rule authors and tests), else the bundled one."""
    chosen = os.environ.get("ENVDOCTOR_RULES_DIR")
    return Path(chosen) if chosen else data_path("rules")


def knowledge_from_environment(warn: Any = None) -> Knowledge:
    """What this process should diagnose with; `warn(msg)` hears about a skipped user copy of the index."""
    return Knowledge(load_rulebook(rules_dir_from_environment()), load_index(warn=warn))


def prepare(warn: Optional[Any] = None) -> None:
    """Load and validate the knowledge ahead of time (it is cached); errors are left for the caller's own
    load to raise. Run it in a thread while the probes wait on torch's import."""
    from envdoctor.errors import InputError

    try:
        knowledge_from_environment(warn)
    except InputError:
        pass


def catalog_for(rules_dir: Path) -> List[Entry]:
    """The registry of a rules database: its machine rules, its NCCL root causes (`nccl/` inside it, else the
    bundled ones) and the drift and fleet checks."""
    from envdoctor.nccl.rules import default_rules_dir, load_rules
    from envdoctor.rules.catalog import catalog

    nccl_dir = rules_dir / "nccl" if (rules_dir / "nccl").is_dir() else default_rules_dir()
    return catalog(load_rulebook(rules_dir), load_rules(nccl_dir, rules_dir / "tables"))


def bundled_catalog() -> List[Entry]:
    return catalog_for(data_path("rules"))
