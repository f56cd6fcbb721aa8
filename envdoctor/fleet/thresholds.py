"""The fleet checks' thresholds (rules/tables/fleet.json), validated on load against tables.schema.json."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from envdoctor import data_schemas
from envdoctor.data_files import data_path, read_json
from envdoctor.errors import InputError

FILE = "tables/fleet.json"


@dataclass(frozen=True)
class FleetThresholds:
    clock_skew_s: float  # a node's clock further than this from rank 0's (beyond the measurement bound)
    slow_ratio: float  # a node or link below this fraction of the fleet's median bandwidth is slow


_RANGES = (("clock_skew_s", 0.0, 3600.0), ("slow_ratio", 0.0, 1.0))


def load_thresholds(path: Optional[Path] = None) -> FleetThresholds:
    """The thresholds in `path` (default: the bundled rules/tables/fleet.json), checked against the `fleet`
    definition of tables.schema.json, then their ranges; InputError (exit 2) naming the file and the bad entries."""
    path = path or data_path("rules") / FILE
    doc, error = read_json(path)
    if error:
        raise InputError(error)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a JSON object")
    known = [k for k, _, _ in _RANGES]
    problems = [f"{path}: {key} needs a value and a source" if key in known else f"{path}: {key}"
                for key in data_schemas.fields(doc, "tables.schema.json", "fleet")]
    values = {}
    for key, low, high in _RANGES if not problems else ():
        value = doc[key]["value"]
        if not low < value < high:
            problems.append(f"{path}: {key}.value must be a number between {low:g} and {high:g}, not {value!r}")
        values[key] = float(value)
    if problems:
        raise InputError("; ".join(problems))
    return FleetThresholds(**values)
