"""Compatibility tables (`rules/tables/*.json`): each fact once, with its source, validated on load.

Machine rules read them through their predicates; NCCL signature files refer to them by name
(`{"table": "nccl_min_for_gpu.blackwell"}` as a condition value, `{table:nccl_min_for_gpu.blackwell}`
in text), resolved when the files are loaded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, List, Mapping, Tuple

from envdoctor.data_files import read_json
from envdoctor.errors import InputError

_MINOR = re.compile(r"^\d+\.\d+$")
_VERSION = re.compile(r"^\d+(\.\d+){1,2}$")
_KEY = re.compile(r"^[a-z][a-z0-9_]*$")
TEXT_REF = re.compile(r"\{table:([a-z_]+)\.([a-z0-9_]+)\}")


@dataclass(frozen=True)
class NcclFloor:
    """The oldest NCCL release that supports a GPU generation."""

    key: str  # "hopper", "blackwell": how signature files name the row
    generation: str
    min_cc: str  # the generation's lowest compute capability
    nccl: str
    source: str


@dataclass(frozen=True)
class NcclFeature:
    """The oldest NCCL release with a feature (WSL2 support, nvidia_peermem detection)."""

    key: str
    feature: str
    nccl: str
    source: str


@dataclass(frozen=True)
class Tables:
    triton_pins: Mapping[str, str]  # torch "X.Y" -> the triton "X.Y" its wheels pin
    nccl_min_for_gpu: Tuple[NcclFloor, ...]  # newest generation first
    nccl_min_for_feature: Mapping[str, NcclFeature]
    shm_min_mib: int  # /dev/shm any multi-GPU machine needs
    shm_per_gpu_mib: int  # and this much more per local GPU

    def lookup(self, ref: str) -> str:
        """'nccl_min_for_gpu.blackwell' -> '2.26'; 'triton_pins.2.5' -> '3.1'. KeyError names what is missing."""
        table, _, key = ref.partition(".")
        if table == "nccl_min_for_gpu":
            row = next((r for r in self.nccl_min_for_gpu if r.key == key), None)
            if row is not None:
                return row.nccl
        elif table == "nccl_min_for_feature" and key in self.nccl_min_for_feature:
            return self.nccl_min_for_feature[key].nccl
        elif table == "triton_pins" and key in self.triton_pins:
            return self.triton_pins[key]
        raise KeyError(f"no table entry {ref!r}")

    def fill(self, text: str) -> str:
        return TEXT_REF.sub(lambda m: self.lookup(f"{m.group(1)}.{m.group(2)}"), text)

    def resolve(self, value: Any, problems: List[str]) -> Any:
        """A rule file's entry with its table references replaced: `{"table": "t.key"}` as a value and
        `{table:t.key}` in text. An unknown reference is added to `problems`."""
        try:
            if isinstance(value, str):
                return self.fill(value)
            if isinstance(value, dict):
                if set(value) == {"table"} and isinstance(value["table"], str):
                    return self.lookup(value["table"])
                return {k: self.resolve(v, problems) for k, v in value.items()}
            if isinstance(value, list):
                return [self.resolve(v, problems) for v in value]
        except KeyError as exc:
            problems.append(str(exc.args[0]))
        return value


def _doc(path: Path, key: str, kind: type) -> Tuple[Any, List[str]]:
    doc, error = read_json(path)
    if error:
        return None, [error]
    value = doc.get(key) if isinstance(doc, dict) else None
    if not isinstance(value, kind):
        return None, [f"{path}: '{key}' must be {'an object' if kind is dict else 'a list'}"]
    return value, []


def _triton_pins(path: Path) -> Tuple[Mapping[str, str], List[str]]:
    pins, problems = _doc(path, "pins", dict)
    out = {}
    for torch_mm, row in (pins or {}).items():
        if not _MINOR.match(torch_mm) or not isinstance(row, dict) or not _MINOR.match(str(row.get("triton", ""))) \
                or not isinstance(row.get("source"), str):
            problems.append(f"{path}: pins.{torch_mm}: needs a torch 'X.Y' key, a triton 'X.Y' value and a source")
            continue
        out[torch_mm] = row["triton"]
    return MappingProxyType(out), problems


def _nccl_floors(path: Path) -> Tuple[Tuple[NcclFloor, ...], List[str]]:
    rows, problems = _doc(path, "rows", list)
    out = []
    for i, row in enumerate(rows or []):
        where = f"{path}: rows[{i}]"
        if not isinstance(row, dict):
            problems.append(f"{where}: must be an object")
            continue
        bad = [k for k, pat in (("key", _KEY), ("min_cc", _MINOR), ("nccl", _VERSION))
               if not isinstance(row.get(k), str) or not pat.match(row[k])]
        bad += [k for k in ("generation", "source") if not isinstance(row.get(k), str) or not row[k].strip()]
        bad += [f"unknown key {k!r}" for k in row if k not in ("key", "generation", "min_cc", "nccl", "source")]
        if bad:
            problems.append(f"{where}: bad or missing {', '.join(bad)}")
            continue
        out.append(NcclFloor(row["key"], row["generation"], row["min_cc"], row["nccl"], row["source"]))
    out.sort(key=lambda r: tuple(int(x) for x in r.min_cc.split(".")), reverse=True)
    return tuple(out), problems


def _nccl_features(path: Path) -> Tuple[Mapping[str, NcclFeature], List[str]]:
    rows, problems = _doc(path, "rows", list)
    out = {}
    for i, row in enumerate(rows or []):
        where = f"{path}: rows[{i}]"
        if not isinstance(row, dict):
            problems.append(f"{where}: must be an object")
            continue
        bad = [k for k, pat in (("key", _KEY), ("nccl", _VERSION)) if not isinstance(row.get(k), str) or not pat.match(row[k])]
        bad += [k for k in ("feature", "source") if not isinstance(row.get(k), str) or not row[k].strip()]
        bad += [f"unknown key {k!r}" for k in row if k not in ("key", "feature", "nccl", "source")]
        if bad:
            problems.append(f"{where}: bad or missing {', '.join(bad)}")
            continue
        out[row["key"]] = NcclFeature(row["key"], row["feature"], row["nccl"], row["source"])
    return MappingProxyType(out), problems


def _shm(path: Path) -> Tuple[Tuple[int, int], List[str]]:
    doc, error = read_json(path)
    if error:
        return (0, 0), [error]
    ok = isinstance(doc, dict) and all(isinstance(doc.get(k), int) and not isinstance(doc.get(k), bool)
                                       and doc[k] > 0 for k in ("min_mib", "per_gpu_mib")) \
        and isinstance(doc.get("source"), str)
    if not ok:
        return (0, 0), [f"{path}: needs positive integers 'min_mib' and 'per_gpu_mib' and a 'source'"]
    return (doc["min_mib"], doc["per_gpu_mib"]), []


def load_tables(directory: Path) -> Tables:
    """Read and check every table in `directory` (a rules database's `tables/`): InputError lists all problems."""
    pins, p1 = _triton_pins(directory / "triton_pins.json")
    floors, p2 = _nccl_floors(directory / "nccl_min_for_gpu.json")
    features, p3 = _nccl_features(directory / "nccl_min_for_feature.json")
    (shm_min, shm_per_gpu), p4 = _shm(directory / "shm.json")
    problems = p1 + p2 + p3 + p4
    if problems:
        raise InputError("invalid compatibility tables: " + "; ".join(problems))
    return Tables(triton_pins=pins, nccl_min_for_gpu=floors, nccl_min_for_feature=features,
                  shm_min_mib=shm_min, shm_per_gpu_mib=shm_per_gpu)
