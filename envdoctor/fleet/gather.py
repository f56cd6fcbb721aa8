"""How `fleet collect` brings the snapshots to rank 0 (no torch, cheap to import for the command line)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

AUTO_GROUPS_FROM = 256  # nodes: below, every node posts to rank 0; from here on, by groups
DEFAULT_GROUP = 64
GATHER_MODES = ("auto", "flat", "hierarchical")


@dataclass(frozen=True)
class Gather:
    """`flat` (every node posts to rank 0), `hierarchical` (groups of `group` nodes in rank order, each
    gathered by its first rank), or `auto` (hierarchical from AUTO_GROUPS_FROM nodes). Rank 0's choice is
    every node's."""

    mode: str = "auto"
    group: int = DEFAULT_GROUP

    def group_size(self, nnodes: int) -> Optional[int]:
        """The group size for a fleet of `nnodes`; None: flat."""
        if self.mode == "flat" or (self.mode == "auto" and nnodes < AUTO_GROUPS_FROM):
            return None
        return self.group
