"""The fleet checks' thresholds (rules/tables/fleet.json), validated on load."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from envdoctor.data_files import data_path, read_json
from envdoctor.errors import InputError

FILE = "tables/fleet.json"


@dataclass(frozen=True)
class FleetThresholds:
    clock_skew_s: float  # a node's clock further than this from rank 0's (beyond the measurement bound)
    slow_ratio: float  # a node or link below this fraction of the fleet's median bandwidth is slow


def load_thresholds(path: Optional[Path] = None) -> FleetThresholds:
    """InputError (exit 2) naming the file and the bad entry."""
    path = path or data_path("rules") / FILE
    doc, error = read_json(path)
    if error:
        raise InputError(error)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a JSON object")
    values = {}
    for key, low, high in (("clock_skew_s", 0.0, 3600.0), ("slow_ratio", 0.0, 1.0)):
        entry = doc.get(key)
        if not isinstance(entry, dict) or not isinstance(entry.get("source"), str) or not entry["source"].strip():
            raise InputError(f"{path}: {key} needs a value and a source")
        value = entry.get("value")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low < value < high:
            raise InputError(f"{path}: {key}.value must be a number between {low:g} and {high:g}, not {value!r}")
        values[key] = float(value)
    return FleetThresholds(**values)
