"""How a fleet finding names its nodes at any size: the majority value with its node count, then the others
by value, at most a few names each and "and K more" (pure). The full listing, one line per value, goes to the
finding's evidence, so `--json` keeps every node."""

from __future__ import annotations

from collections import Counter
from typing import Dict, List, Mapping, Sequence, Tuple

NAMES = 8  # the most node names one listing spells out


def names_text(names: Sequence[str], limit: int = NAMES) -> str:
    """'a, b, c' or 'a, b, ... h and 12 more'."""
    names = list(names)
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])} and {len(names) - limit} more"


def nodes_word(n: int) -> str:
    return f"{n} node" if n == 1 else f"{n} nodes"


def by_value(values: Mapping[str, str]) -> List[Tuple[str, List[str]]]:
    """(value, its nodes sorted) most common first, ties by value."""
    groups: Dict[str, List[str]] = {}
    for name, v in values.items():
        groups.setdefault(v, []).append(name)
    return sorted(((v, sorted(ns)) for v, ns in groups.items()), key=lambda g: (-len(g[1]), g[0]))


def majority(values: Mapping[str, str]) -> Tuple[str, bool]:
    """(the most common value, whether another value is as common)."""
    counts = Counter(values.values()).most_common(2)
    return counts[0][0], len(counts) > 1 and counts[0][1] == counts[1][1]


def summary_line(values: Mapping[str, str], limit: int = NAMES) -> str:
    """'550 on 4095 nodes; 535 on node02340' (values with one node name it; at most `limit` groups)."""
    groups = by_value(values)
    parts = []
    for v, ns in groups[:limit]:
        parts.append(f"{v} on {nodes_word(len(ns)) if len(ns) > limit or ns is groups[0][1] else names_text(ns, limit)}")
    if len(groups) > limit:
        parts.append(f"and {len(groups) - limit} more values")
    return "; ".join(parts)


def evidence_lines(values: Mapping[str, str]) -> List[str]:
    """Every node by value: '535 (1 node): node02340'."""
    return [f"{v} ({nodes_word(len(ns))}): {', '.join(ns)}" for v, ns in by_value(values)]
