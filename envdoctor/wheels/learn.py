"""New releases and new variants in wheel-index documents, from what an index lists and the previous release.

An index page says which releases and variants exist and for which Pythons; it does not say a variant's arch
list, cuDNN or NCCL. Those are taken from the previous release's same variant (or, for a CUDA variant new to
the index, its newest variant of the same CUDA major), and marked `assumed` with `assumed_from` naming where they
came from, so the planner can say so. `verified` stays for what was read from a primary source: the release's
existence and patch, seen on the index, are verified. Used by `envdoctor index update` (wheels/remote.py) and
by tools/build_index.py (releases read from the registry's metadata before the fact base has them).
"""

from __future__ import annotations

import copy
import re
from typing import Any, Dict, Iterable, List, Optional

from packaging.version import Version

from envdoctor.versions import series


def _cuda_of(variant: str) -> Optional[str]:
    m = re.match(r"^cu(\d+)(\d)$", variant)
    return f"{int(m.group(1))}.{m.group(2)}" if m else None


def kind_of(variant: str) -> Optional[str]:
    """cuda / cpu / rocm / xpu for a variant name; None for one envdoctor does not know."""
    if _cuda_of(variant):
        return "cuda"
    if variant in ("cpu", "xpu"):
        return variant
    if re.match(r"^rocm\d+(\.\d+)*$", variant):
        return "rocm"
    return None


def _template(previous: Dict[str, Any], variant: str) -> Optional[Dict[str, Any]]:
    """The previous release's variant a new one is assumed like: the same name, else for CUDA the newest
    variant of the same CUDA major, else for ROCm the newest ROCm variant."""
    have = previous.get("variants") or {}
    if variant in have:
        return have[variant]
    cuda = _cuda_of(variant)
    if cuda:
        same_major = [n for n, v in have.items() if v.get("kind") == "cuda" and str(v.get("cuda", "")).split(".")[0]
                      == cuda.split(".")[0]]
        if same_major:
            return have[max(same_major, key=lambda n: Version(have[n]["cuda"]))]
    if kind_of(variant) == "rocm":
        rocms = [n for n, v in have.items() if v.get("kind") == "rocm"]
        if rocms:
            return have[rocms[-1]]
    return None


def assumed_variant(previous: Dict[str, Any], variant: str, listed_on: str = "") -> Optional[Dict[str, Any]]:
    """A new release's `variant`, copied from the previous release (its `version`) and marked assumed; None
    when nothing of its kind is known to copy (the variant is then left out, never invented). `listed_on`: where
    the variant was seen listed (its existence is then read, only its facts assumed)."""
    tpl = _template(previous, variant)
    kind = kind_of(variant)
    if tpl is None or kind is None:
        return None
    out = copy.deepcopy(tpl)
    frm = f"{previous['version']} {[n for n, v in previous['variants'].items() if v is tpl][0]}"
    out["status"] = "assumed"
    out["assumed_from"] = frm
    if kind == "cuda":
        out["cuda"] = _cuda_of(variant)
    if kind == "rocm":
        out["rocm"] = variant[4:]
    what = "arch list, cuDNN and NCCL" if kind == "cuda" else "platforms"
    out["note"] = f"{what} assumed from torch {frm} (not read from an index)"
    for row in (out.get("platforms") or {}).values():
        row["status"] = "assumed"
        row.pop("note", None)
    for key in ("read_from", "pins_read_from", "listed_on", "cuda_toolkit", "nvshmem", "cusparselt"):
        out.pop(key, None)
    if listed_on:
        out["listed_on"] = listed_on
    return out


def python_lists(tags: Iterable[str]) -> Dict[str, List[str]]:
    """python (regular CPython) and python_experimental (free-threaded) from wheel Python tags ('3.14t')."""
    vals = sorted(set(tags), key=lambda p: (Version(p.rstrip("t")), p.endswith("t")))
    return {"python": [p for p in vals if not p.endswith("t")], "python_experimental": [p for p in vals if p.endswith("t")]}


def new_release(previous: Dict[str, Any], version: str, variants: Iterable[str], pythons: Iterable[str] = (),
                evidence: str = "", listed: bool = True) -> Dict[str, Any]:
    """A release entry for a minor the document does not have, from the newest older one: `version` is a patch
    release ('2.16.0') seen on an index (verified), `variants` the variants it was seen with, `pythons` the
    Python tags of its wheels (none: the previous release's, assumed); `listed`: whether `variants` were seen on an
    index (`evidence` says where) or are the previous release's, assumed to exist."""
    minor = series(version)
    entry: Dict[str, Any] = {"version": minor, "latest_patch": version, "patch_status": "verified"}
    if evidence:
        entry["patch_read_from"] = evidence
    py = python_lists(pythons)
    if py["python"]:
        entry.update(py)
    else:
        entry["python"] = list(previous["python"])
        entry["python_experimental"] = list(previous.get("python_experimental") or [])
        entry["python_assumed_from"] = previous["version"]
    out_variants: Dict[str, Any] = {}
    for name in variants:
        var = assumed_variant(previous, name, evidence if listed else "")
        if var is not None:
            out_variants[name] = var
    entry["variants"] = out_variants
    pypi = {}
    for plat, row in (previous.get("pypi_default") or {}).items():
        if row.get("variant") in out_variants:
            pypi[plat] = {"variant": row["variant"], "status": "assumed", "sources": [],
                          "assumed_from": previous["version"],
                          "note": f"the PyPI default assumed as torch {previous['version']}'s (the index does not say)"}
    entry["pypi_default"] = pypi
    major, mnr = (int(x) for x in minor.split("."))
    entry["companions"] = {
        "torchvision": {"series": f"0.{15 + mnr}" if major == 2 else "", "version": None, "status": "UNVERIFIED"},
        "torchaudio": {"series": minor, "version": None, "status": "UNVERIFIED"},
    }
    if major != 2:
        entry["companions"].pop("torchvision")
    return entry


def add_variant(release: Dict[str, Any], previous: Optional[Dict[str, Any]], variant: str, listed_on: str = "") -> bool:
    """Add a variant an index lists for a known release and the document lacks, assumed like the previous
    release's same variant, else like the release's own newest of its kind; False when nothing can be assumed."""
    if variant in release["variants"]:
        return False
    order = [previous] if previous is not None and variant in previous.get("variants", {}) else []
    order += [release] + ([previous] if previous is not None else [])
    for src in order:
        var = assumed_variant(src, variant, listed_on)
        if var is not None:
            release["variants"][variant] = var
            return True
    return False
