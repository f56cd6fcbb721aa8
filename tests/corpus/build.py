"""Turns a corpus case into a complete envdoctor.snapshot/1 document.

A case (tests/corpus/cases/<id>.json) holds a PARTIAL snapshot: only what the public report stated.
`build_snapshot` fills every other field the schema names with a bare null, which the contract reads as
"unknown" (not probed, not in the report). A fact the report states as absent (no NVIDIA driver, torch
not installed) travels as a reason in the case's own `absent` map. Required fields that cannot be null
(gpus, probes, python.version, ...) must be stated by the case; lists left unstated become [] and the
probe that would have read them is recorded as "skipped", so an empty GPU list never reads as "no GPUs".
A report names some packages, some variables, some library copies, not all: each such list or map the case
states is marked partial (the snapshot's `partial` map), so a package the report leaves out is unknown, not
"not installed" -- unless the case's `full_lists` names it (the report is a whole `pip list` / `pip freeze`).

    python tests/corpus/build.py CASE_ID_OR_FILE   # print the built snapshot
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parent / "cases"
SCHEMA_FILE = ROOT / "envdoctor" / "data" / "snapshot.schema.json"

# The finding categories a case may name (issue 12 and CONTRACT.md), plus "healthy" for negative controls.
CATEGORIES = (
    "driver_too_old",
    "arch_unsupported",
    "cpu_build_on_gpu_machine",
    "cuda_unavailable",
    "torch_broken",
    "library_shadowing",
    "toolkit_mismatch",
    "deepspeed_ops_unbuildable",
    "numpy_incompatible",
    "companion_mismatch",
    "requirement_conflict",
    "torch_shadowed",
    "nvidia_wheel_mismatch",
    "extension_torch_mismatch",
    "extension_arch_unsupported",
    "python_unsupported",
    "container_no_gpu_access",
    "compile_unready",
    "libstdcxx_too_old",
    "glibc_too_old",
)
HEALTHY = "healthy"
# Other categories envdoctor's rules use today; a case may list them in also_ok.
OTHER_CATEGORIES = (
    "deepspeed_incompatible",
    "torch_missing",
    "probe_failed",
    "shm_too_small",
    "pcie_degraded",
    "p2p_unavailable",
    "numa_misplaced",
    "persistence_mode_off",
    "mig_enabled",
    "ecc_errors",
    "nccl_env_misconfig",
    "nccl_too_old_for_gpu",
    "fabric_manager",
    "gdr_disabled",
)
# The survey's mechanism slugs (mechanisms.json): a case rebuilt from a survey thread whose mechanism envdoctor has
# no category for is labelled with the slug, so it measures the gap instead of being dropped.
SURVEY_MECHANISMS = tuple(sorted(json.loads((Path(__file__).resolve().parent / "mechanisms.json").read_text(encoding="utf-8"))))
CASE_KEYS = ("id", "source", "settled_by", "category", "expect", "also_ok", "notes", "snapshot")
# Lists and maps a report states in part (a pip list filtered to torch's packages, the variables it quotes, the
# library copies its error names): a case's stated one is partial unless `full_lists` (optional) names it.
# Not `gpus`: nvidia-smi and collect_env list every GPU, and an unstated list is already unknown (nvml skipped).
PARTIAL_LISTS = (
    "python.packages", "env", "extensions", "requirement_conflicts", "libraries.cudnn", "libraries.nccl",
    "libraries.cudart", "libraries.cublas", "torch.nvidia_wheels", "torch.companions", "torch.loaded_libraries",
    "torch.mapped_cuda_libraries",
)
PARTIAL_WHY = "rebuilt from a public report, which names only part of it"
# Which probe reads which top-level section: a section the report does not state was "not probed".
PROBE_OF = {
    "nvml": ("driver", "gpus"),
    "torch": ("torch",),
    "python": ("python",),
    "system": ("host",),
    "cuda_libraries": ("libraries",),
    "cuda_toolkit": ("cuda_toolkit",),
    "network": ("network",),
    "env": ("env",),
}


class CaseError(ValueError):
    """A case file that cannot be used: the message names the case and the problem."""


def load_schema() -> Dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def case_files() -> List[Path]:
    return sorted(CASES.glob("*.json"))


def load_case(path: Path) -> Dict[str, Any]:
    try:
        case = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CaseError(f"{path.name}: invalid JSON: {exc}") from None
    missing = [k for k in CASE_KEYS if k not in case]
    if missing:
        raise CaseError(f"{path.name}: missing keys {missing}")
    if case["id"] != path.stem:
        raise CaseError(f"{path.name}: id {case['id']!r} differs from the file name")
    return case


def _resolve(node: Dict[str, Any], schema: Dict[str, Any]) -> Dict[str, Any]:
    while "$ref" in node:
        target: Any = schema
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def _nullable(node: Dict[str, Any]) -> bool:
    types = node.get("type")
    names = [types] if isinstance(types, str) else (types or [])
    return "null" in names or None in node.get("enum", ())


def _fill(value: Any, node: Dict[str, Any], schema: Dict[str, Any]) -> Any:
    """`value` with every nullable property the schema names and the value lacks set to None."""
    node = _resolve(node, schema)
    if isinstance(value, dict) and "properties" in node:
        out = dict(value)
        for name, sub in node["properties"].items():
            sub = _resolve(sub, schema)
            if name in out:
                out[name] = _fill(out[name], sub, schema)
            elif _nullable(sub):
                out[name] = None
        return out
    if isinstance(value, list) and isinstance(node.get("items"), dict):
        return [_fill(v, node["items"], schema) for v in value]
    return value


# --- keys the cases were written with before the probes named them -------------------------------
# The cases keep the facts exactly as their reports state them; this step copies each onto the field the
# probes settled on, beside the case's own key (README: "Snapshot keys the cases use"). Nothing is derived
# beyond what the key says.
#   torch.numpy_error                -> torch.numpy {works: false, error, version: python.packages.numpy}
#   python.import_errors[torchvision|torchaudio]   -> torch.companions[name] {importable: false, error}
#   python.import_errors[torchvision.<sub>]        -> torch.companions[torchvision].warnings (import went on)
#   torch.path                       -> torch.origin.file; a relative path -> torch.cwd_torch (the current
#                                       directory's torch/); a path under python.user_site -> origin.kind
#                                       user-site, outside_site_packages true
#   extensions[].error               -> extensions[].import_error, importable false
#   extensions[].requires_dist       -> extensions[].requires_torch (the specifier of its torch requirement)
COMPANIONS = ("torchvision", "torchaudio")


def _translate(body: Dict[str, Any]) -> None:
    py = body.get("python") or {}
    torch = body.get("torch")
    packages = {k.lower().replace("_", "-"): v for k, v in (py.get("packages") or {}).items()}
    if isinstance(torch, dict):
        if "numpy_error" in torch:
            torch["numpy"] = {"version": packages.get("numpy"), "works": False, "error": torch["numpy_error"]}
        errors = py.get("import_errors") or {}
        comps: Dict[str, Dict[str, Any]] = {}
        for module, error in errors.items():
            root = module.split(".")[0]
            if root not in COMPANIONS:
                continue
            comp = comps.setdefault(root, {"version": packages.get(root)})
            if module == root:
                comp.update(importable=False, error=error)
            else:
                comp.setdefault("warnings", []).append(error)
        if comps:
            torch["companions"] = comps
        path = torch.get("path")
        if isinstance(path, str) and path:
            origin: Dict[str, Any] = {"file": path}
            user_site = py.get("user_site")
            if not (path.startswith("/") or path.startswith("\\\\") or (len(path) > 1 and path[1] == ":")):
                torch["cwd_torch"] = path.split("__init__")[0]
            elif isinstance(user_site, str) and user_site and path.startswith(user_site.rstrip("/") + "/"):
                origin.update(kind="user-site", outside_site_packages=True)
            torch["origin"] = origin
    for ext in body.get("extensions") or []:
        if "error" in ext:
            ext["import_error"] = ext["error"]
            ext["importable"] = False
        for req in ext.get("requires_dist") or []:
            name, _, spec = req.replace(" ", "").partition("torch")
            if name == "" and spec[:1] in "=<>!~":
                ext["requires_torch"] = spec


def build_snapshot(case: Dict[str, Any], schema: Dict[str, Any] | None = None) -> Dict[str, Any]:
    """The complete snapshot for `case`: stated facts as given, everything else a bare null."""
    schema = schema or load_schema()
    partial = copy.deepcopy(case["snapshot"])
    stated = set(partial)
    body: Dict[str, Any] = {"schema": "envdoctor.snapshot/1"}
    body["created"] = partial.pop("created", f"{case.get('date') or '1970-01-01'}T00:00:00Z")
    body.update(partial)
    _translate(body)
    body.setdefault("gpus", [])
    body.setdefault("host", {})
    body.setdefault("python", {})
    if "probes" not in stated:
        body["probes"] = [
            {"name": name, "status": "ok" if stated & set(sections) else "skipped",
             "seconds": None, "error": None if stated & set(sections) else "not in the report"}
            for name, sections in PROBE_OF.items()
        ]
    absent = body.pop("absent", {})
    partial = dict(body.pop("partial", {}))
    whole = set(case.get("full_lists") or ())
    partial.update((path, PARTIAL_WHY) for path in PARTIAL_LISTS
                   if path not in whole and path not in partial and isinstance(_at(body, path), (dict, list)))
    full = _fill(body, schema, schema)
    if partial:
        full["partial"] = dict(sorted(partial.items()))
    full["absent"] = absent
    return full


def _at(body: Dict[str, Any], path: str) -> Any:
    value: Any = body
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def validate(snapshot: Dict[str, Any]) -> List[str]:
    """Schema errors in a built snapshot, by envdoctor's own validator."""
    sys.path.insert(0, str(ROOT))
    from envdoctor.jsonschema_lite import validate_snapshot

    return validate_snapshot(snapshot)


def main(argv: List[str]) -> int:
    if len(argv) != 1:
        print("usage: build.py CASE_ID_OR_FILE", file=sys.stderr)
        return 2
    path = Path(argv[0]) if argv[0].endswith(".json") else CASES / f"{argv[0]}.json"
    try:
        case = load_case(path)
    except (OSError, CaseError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(build_snapshot(case), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
