"""Each node's own findings (what `check` finds on it), grouped across the fleet: one finding per rule and
title, naming its nodes ("ED201 /dev/shm is 64 MiB ... on 1 node: node02345"); pure."""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Sequence, Tuple

from envdoctor.findings import Finding
from envdoctor.rules.fleet_listing import names_text, nodes_word


def grouped(per_node: Sequence[Tuple[str, Sequence[Finding]]]) -> List[Finding]:
    """One finding per (id, severity, title) of the nodes' own findings: its title says on how many nodes and
    which (bounded), its subjects name every one; the first node's finding gives the rest."""
    groups: Dict[Tuple[str, str, str], Tuple[Finding, List[str]]] = {}
    for name, findings in per_node:
        for f in findings:
            key = (f.id, f.severity, f.title)
            if key not in groups:
                groups[key] = (f, [])
            names = groups[key][1]
            if not names or names[-1] != name:
                names.append(name)
    out = []
    for first, names in groups.values():
        names = sorted(names)
        out.append(dataclasses.replace(
            first, title=f"{first.title} on {nodes_word(len(names))}: {names_text(names)}", subjects=names,
            evidence=[*first.evidence, f"on each node: {', '.join(first.subjects)}"] if first.subjects else list(first.evidence)))
    return out
