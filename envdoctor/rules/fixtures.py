"""A rule's fixtures: the snapshots it must fire on and stay quiet on (tests/fixtures/snapshots/NAME.json).

A fixture is a snapshot's name, or one derived in the rule file itself from a snapshot with a few fields
changed: `{"from": "h100_8x_nvswitch", "set": {"host.shm_bytes": 67108864}}`. A new rule then needs no new
snapshot file; the paths it sets are checked on load like a condition's.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Dict, Union

Fixture = Union[str, Dict[str, Any]]


def base_name(spec: Fixture) -> str:
    """The snapshot a fixture is, or is derived from."""
    return spec if isinstance(spec, str) else str(spec["from"])


def label(spec: Fixture) -> str:
    """How `rules explain` names it: 'h100_8x_nvswitch' or 'h100_8x_nvswitch with host.shm_bytes=67108864'."""
    if isinstance(spec, str):
        return spec
    changes = ", ".join(f"{path}={json.dumps(value)}" for path, value in spec["set"].items())
    return f"{spec['from']} with {changes}"


def derive(spec: Fixture, base: Dict[str, Any]) -> Dict[str, Any]:
    """The snapshot document of a fixture, from its base snapshot's document (unchanged for a plain name).
    A path's parts are keys, or list indexes (`gpus.0.name`); KeyError/IndexError when one does not exist."""
    if isinstance(spec, str):
        return base
    doc = copy.deepcopy(base)
    for path, value in spec["set"].items():
        *parents, last = path.split(".")
        node: Any = doc
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return doc
