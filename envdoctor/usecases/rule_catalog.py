"""The rule catalog: everything envdoctor can find (machine rules, NCCL root causes, drift and fleet checks) from
the one registry of a rules database, and one rule of it explained."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

from envdoctor.errors import InputError

if TYPE_CHECKING:
    from envdoctor.catalog import Entry


def rule_catalog(rules_dir: Path) -> List[Entry]:
    """Every entry of the registry of the rules database in `rules_dir`."""
    from envdoctor.knowledge import catalog_for

    return catalog_for(rules_dir)


def find_rule(rules_dir: Path, wanted: Optional[str]) -> Entry:
    """The entry with id or name `wanted` (ED101, NCCL-SHM-EXHAUSTED, driver-too-old-for-torch-cuda); InputError
    when none is given or none matches."""
    from envdoctor.catalog import find

    entries = rule_catalog(rules_dir)
    if not wanted:
        raise InputError("rules explain needs a rule id, e.g. `envdoctor rules explain ED101`")
    entry = find(entries, wanted)
    if entry is None:
        raise InputError(f"no rule {wanted!r}; `envdoctor rules list` shows them all")
    return entry
