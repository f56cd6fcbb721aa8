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

import json
import sys
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parent / "cases"
SCHEMA_FILE = ROOT / "envdoctor" / "data" / "snapshot.schema.json"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from envdoctor.text import complete  # noqa: E402

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
MECHANISMS = json.loads((Path(__file__).resolve().parent / "mechanisms.json").read_text(encoding="utf-8"))
SURVEY_MECHANISMS = tuple(sorted(MECHANISMS))


def rule_mechanisms() -> Dict[str, List[str]]:
    """rule id -> the mechanism slugs mechanisms.json says it names: the benches score a finding as naming them."""
    out: Dict[str, List[str]] = {}
    for slug, entry in MECHANISMS.items():
        for rule in entry.get("envdoctor", ()):
            out.setdefault(rule, []).append(slug)
    return out
CASE_KEYS = ("id", "source", "settled_by", "category", "expect", "also_ok", "notes", "snapshot")
# How a partial snapshot is completed lives in envdoctor/text/complete.py (reports pasted into `envdoctor diagnose`
# are completed the same way); these names stay here for the tests and benches that read them.
PARTIAL_LISTS = complete.PARTIAL_LISTS
PARTIAL_WHY = complete.PARTIAL_WHY
PROBE_OF = complete.PROBE_OF


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


def build_snapshot(case: Dict[str, Any], schema: Dict[str, Any] | None = None) -> Dict[str, Any]:
    """The complete snapshot for `case`: stated facts as given, everything else a bare null."""
    return complete.complete_document(case["snapshot"], f"{case.get('date') or '1970-01-01'}T00:00:00Z",
                                      full_lists=case.get("full_lists") or (), schema=schema or load_schema())


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
