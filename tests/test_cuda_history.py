"""Shape and consistency checks for facts/cuda_history.json (schema envdoctor-cuda-history/1).

`problems()` returns every inconsistency it finds; the real file must have none, and each kind of
corruption below must be caught.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Set

import pytest
from packaging.version import InvalidVersion, Version

HISTORY = Path(__file__).resolve().parents[1] / "facts" / "cuda_history.json"
SCHEMA = "envdoctor-cuda-history/1"
STATUSES = {"verified", "secondary", "UNVERIFIED"}
SASS = re.compile(r"^sm_(\d+)([af]?)$")
VARIANT = re.compile(r"^(cpu|cu(\d+)(\d))$")


def _version(text: Any, where: str, out: List[str]) -> Optional[Version]:
    try:
        return Version(str(text))
    except InvalidVersion:
        out.append(f"{where}: {text!r} is not a version")
        return None


def _sm_number(target: str) -> int:
    match = SASS.match(target)
    assert match, target
    return int(match.group(1))


def _check_cited(entry: Dict[str, Any], where: str, sources: Set[str], out: List[str]) -> None:
    if entry.get("status") not in STATUSES:
        out.append(f"{where}: status {entry.get('status')!r} not in {sorted(STATUSES)}")
    cited = entry.get("sources")
    if not cited:
        out.append(f"{where}: no sources")
    for key in cited or []:
        if key not in sources:
            out.append(f"{where}: source {key!r} is not defined in 'sources'")
    if entry.get("status") == "UNVERIFIED" and not entry.get("note"):
        out.append(f"{where}: UNVERIFIED without a note saying what was tried")


def _check_toolkits(doc: Dict[str, Any], sources: Set[str], out: List[str]) -> Dict[str, Version]:
    families = {f["family"]: f for f in doc["minor_version_compat"]}
    for fam in families.values():
        _check_cited(fam, f"minor_version_compat {fam['family']}", sources, out)
        for os_name in ("linux", "windows"):
            _version(fam["min"][os_name], f"minor_version_compat {fam['family']} {os_name}", out)
    seen: Dict[str, Version] = {}
    last_ga: Dict[tuple, Version] = {}
    previous: Optional[Version] = None
    for tk in doc["toolkits"]:
        where = f"toolkit {tk['version']}"
        _check_cited(tk, where, sources, out)
        version = _version(tk["version"], where, out)
        if version is None:
            continue
        if previous is not None and version <= previous:
            out.append(f"{where}: toolkits are not in ascending order")
        previous = version
        seen[tk["version"]] = version
        ga = tk.get("driver_ga")
        if ga is None:
            if tk["status"] != "UNVERIFIED":
                out.append(f"{where}: no GA driver but status {tk['status']}")
            continue
        family = tk.get("minor_version_compat_family")
        if family is not None:
            if family not in families:
                out.append(f"{where}: unknown minor-version-compat family {family!r}")
            elif not family.startswith(f"{version.major}."):
                out.append(f"{where}: family {family} is not this toolkit's major")
        for os_name in ("linux", "windows"):
            value = ga.get(os_name)
            if value is None:
                continue
            driver = _version(value, f"{where} GA {os_name}", out)
            if driver is None:
                continue
            key = (version.major, os_name)
            if key in last_ga and driver < last_ga[key]:
                out.append(f"{where}: GA {os_name} driver {value} is lower than an earlier {version.major}.x toolkit's")
            last_ga[key] = driver
            for update in tk.get("driver_updates", []):
                if update.get(os_name) is not None:
                    newer = _version(update[os_name], f"{where} {update['label']} {os_name}", out)
                    if newer is not None and newer < driver:
                        out.append(f"{where}: {update['label']} {os_name} driver is below its GA driver")
    return seen


def sass_sets(doc: Dict[str, Any]) -> Dict[str, Set[str]]:
    """Rebuild the full SASS target set of each toolkit from the per-toolkit deltas."""
    current: Set[str] = set()
    sets: Dict[str, Set[str]] = {}
    for entry in doc["nvcc_sass"]:
        if "sass_all" in entry:
            current = set(entry["sass_all"])
        else:
            current = (current | set(entry["added"])) - set(entry["removed"])
        if entry.get("removed_below_min"):
            floor = _sm_number(entry["sass_min"])
            current = {t for t in current if _sm_number(t) >= floor}
        sets[entry["toolkit"]] = set(current)
    return sets


def _check_sass(doc: Dict[str, Any], sources: Set[str], toolkits: Dict[str, Version], out: List[str]) -> None:
    entries = doc["nvcc_sass"]
    if not entries or "sass_all" not in entries[0]:
        out.append("nvcc_sass: the first entry must carry sass_all")
        return
    current: Set[str] = set()
    previous: Optional[Version] = None
    for entry in entries:
        where = f"nvcc_sass {entry['toolkit']}"
        _check_cited(entry, where, sources, out)
        if entry["toolkit"] not in toolkits:
            out.append(f"{where}: not a toolkit in 'toolkits'")
        version = _version(entry["toolkit"], where, out)
        if previous is not None and version is not None and version <= previous:
            out.append(f"{where}: not in ascending order")
        previous = version
        targets = [*entry.get("sass_all", []), *entry["added"], *entry["removed"], entry["sass_min"], entry["sass_max"]]
        bad = [t for t in targets if not SASS.match(t)]
        if bad:
            out.append(f"{where}: malformed targets {bad}")
            return
        if "sass_all" in entry:
            # A full list; its added/removed are against a toolkit before the file starts.
            current = set(entry["sass_all"])
            if not set(entry["added"]) <= current or set(entry["removed"]) & current:
                out.append(f"{where}: added/removed contradict sass_all")
        else:
            if set(entry["added"]) & current:
                out.append(f"{where}: added {sorted(set(entry['added']) & current)} already present")
            missing = set(entry["removed"]) - current
            if missing:
                out.append(f"{where}: removes {sorted(missing)} which the previous toolkit did not have")
            current = (current | set(entry["added"])) - set(entry["removed"])
        if entry.get("removed_below_min"):
            floor = _sm_number(entry["sass_min"])
            current = {t for t in current if _sm_number(t) >= floor}
        numbers = sorted(_sm_number(t) for t in current)
        if not numbers:
            out.append(f"{where}: no targets left")
            continue
        if f"sm_{numbers[0]}" != entry["sass_min"] or f"sm_{numbers[-1]}" != entry["sass_max"]:
            out.append(f"{where}: min/max {entry['sass_min']}/{entry['sass_max']} disagree with the targets "
                       f"(sm_{numbers[0]}..sm_{numbers[-1]})")


def _arch_list_targets(arch_list: str) -> tuple:
    sm, ptx = [], []
    for item in arch_list.split(";"):
        base = item.replace("+PTX", "")
        number = base.replace(".", "")
        sm.append(f"sm_{number}")
        if item.endswith("+PTX"):
            ptx.append(f"compute_{number}")
    return sm, ptx


def _check_torch(doc: Dict[str, Any], sources: Set[str], sass: Dict[str, Set[str]],
                 toolkits: Dict[str, Version], out: List[str]) -> None:
    previous: Optional[Version] = None
    for release in doc["torch_releases"]:
        where = f"torch {release['version']}"
        version = _version(release["version"], where, out)
        if previous is not None and version is not None and version <= previous:
            out.append(f"{where}: releases not in ascending order")
        previous = version
        for patch in release["patches"]:
            parsed = _version(patch, f"{where} patch", out)
            if parsed is not None and version is not None and parsed.release[:2] != version.release[:2]:
                out.append(f"{where}: patch {patch} belongs to another minor release")
        pythons = [_version(p, f"{where} python", out) for p in release["python"]]
        if pythons != sorted(pythons, key=lambda v: v or Version("0")):
            out.append(f"{where}: python versions are not sorted")
        for key in ("python_sources", "pypi_sources"):
            for src in release[key]:
                if src not in sources:
                    out.append(f"{where}: {key} names undefined source {src!r}")
        if release["pypi_default_linux_x86_64"] not in release["variants"]:
            out.append(f"{where}: PyPI default {release['pypi_default_linux_x86_64']} is not one of its variants")
        for name, variant in release["variants"].items():
            vwhere = f"{where} {name}"
            _check_cited(variant, vwhere, sources, out)
            match = VARIANT.match(name)
            if not match:
                out.append(f"{vwhere}: variant name is not cpu or cuXYZ")
                continue
            if name == "cpu":
                continue
            cuda = f"{match.group(2)}.{match.group(3)}"
            if cuda not in toolkits:
                out.append(f"{vwhere}: CUDA {cuda} is not in 'toolkits'")
            arch_list = variant.get("torch_cuda_arch_list")
            if arch_list is None:
                if variant["status"] != "UNVERIFIED":
                    out.append(f"{vwhere}: no arch list but status {variant['status']}")
                continue
            sm, ptx = _arch_list_targets(arch_list)
            if sorted(sm) != sorted(variant["sm"]) or sorted(ptx) != sorted(variant["ptx"]):
                out.append(f"{vwhere}: sm/ptx do not match torch_cuda_arch_list {arch_list!r}")
            if cuda in sass:
                beyond = sorted(set(variant["sm"]) - sass[cuda])
                if beyond:
                    out.append(f"{vwhere}: CUDA {cuda} nvcc cannot emit {beyond}")


PY = re.compile(r"^[23]\.\d{1,2}t?$")


def _check_wheels(doc: Dict[str, Any], sources: Set[str], out: List[str]) -> None:
    wheels = doc["torch_wheels"]
    _check_cited(wheels, "torch_wheels", sources, out)
    platforms = set(wheels["platforms"])
    previous: Optional[Version] = None
    for rel in wheels["releases"]:
        where = f"torch_wheels {rel['version']}"
        version = _version(rel["version"], where, out)
        if previous is not None and version is not None and version <= previous:
            out.append(f"{where}: releases not in ascending order")
        previous = version
        if not re.match(r"^\d{4}-\d{2}-\d{2}$", str(rel.get("uploaded"))):
            out.append(f"{where}: uploaded {rel.get('uploaded')!r} is not a date")
        for plat, pythons in rel["pythons"].items():
            if plat not in platforms:
                out.append(f"{where}: unknown platform {plat!r}")
            if not pythons or not all(PY.match(p) for p in pythons):
                out.append(f"{where}: {plat} lists {pythons!r}, not Python versions")
    for row in wheels["other_indexes"]:
        _check_cited(row, f"torch_wheels other index {row.get('platform')}", sources, out)
        if row.get("platform") not in platforms:
            out.append(f"torch_wheels other index: unknown platform {row.get('platform')!r}")


def problems(doc: Dict[str, Any]) -> List[str]:
    """Every inconsistency in a cuda_history document; empty when it is well formed."""
    out: List[str] = []
    if doc.get("schema") != SCHEMA:
        return [f"schema is {doc.get('schema')!r}, expected {SCHEMA!r}"]
    if set(doc.get("statuses", [])) != STATUSES:
        out.append("'statuses' must list exactly verified, secondary, UNVERIFIED")
    sources = set(doc["sources"])
    toolkits = _check_toolkits(doc, sources, out)
    _check_sass(doc, sources, toolkits, out)
    _check_torch(doc, sources, sass_sets(doc), toolkits, out)
    _check_wheels(doc, sources, out)
    for row in doc["pypi_unlabelled_linux_x86_64"]["releases"]:
        _check_cited(row, f"pypi_unlabelled {row['version']}", sources, out)
        _version(row["cuda"], f"pypi_unlabelled {row['version']} cuda", out)
    used = set(re.findall(r'"([A-Z][A-Z0-9_]+)"', json.dumps({k: v for k, v in doc.items() if k != "sources"})))
    for key in sorted(sources - used):
        out.append(f"source {key!r} is defined but never cited")
    return out


@pytest.fixture(scope="module")
def doc() -> Dict[str, Any]:
    return json.loads(HISTORY.read_text(encoding="utf-8"))


def test_file_is_consistent(doc):
    assert problems(doc) == []


def test_covers_every_toolkit_from_9_0_to_13_x(doc):
    versions = [t["version"] for t in doc["toolkits"]]
    expected = ["9.0", "9.1", "9.2", "10.0", "10.1", "10.2", *(f"11.{i}" for i in range(9)),
                *(f"12.{i}" for i in (0, 1, 2, 3, 4, 5, 6, 8, 9)), "13.0", "13.1"]
    assert versions[: len(expected)] == expected
    assert {e["toolkit"] for e in doc["nvcc_sass"]} == set(versions)


def test_known_facts(doc):
    by_version = {t["version"]: t for t in doc["toolkits"]}
    assert by_version["10.2"]["driver_ga"] == {"label": "CUDA 10.2.89", "linux": "440.33", "windows": "441.22"}
    assert by_version["12.8"]["driver_ga"]["linux"] == "570.26"
    sass = sass_sets(doc)
    assert "sm_120" in sass["12.8"] and "sm_120" not in sass["12.6"]
    assert "sm_70" in sass["12.9"] and "sm_70" not in sass["13.0"]
    assert "sm_110" in sass["13.0"] and "sm_101" not in sass["13.0"]


def _first(doc, section, key, value):
    return next(e for e in doc[section] if e[key] == value)


@pytest.mark.parametrize("corrupt, message", [
    (lambda d: _first(d, "toolkits", "version", "11.2")["sources"].append("NOPE"), "source 'NOPE' is not defined"),
    (lambda d: _first(d, "toolkits", "version", "11.2").update(status="maybe"), "status 'maybe'"),
    (lambda d: _first(d, "toolkits", "version", "11.5")["driver_ga"].update(linux="440.1"), "lower than an earlier 11.x"),
    (lambda d: _first(d, "toolkits", "version", "12.1")["driver_ga"].update(windows="not-a-driver"), "is not a version"),
    (lambda d: _first(d, "nvcc_sass", "toolkit", "11.8").update(sass_max="sm_89"), "disagree with the targets"),
    (lambda d: _first(d, "nvcc_sass", "toolkit", "12.0")["removed"].append("sm_30"), "did not have"),
    (lambda d: _first(d, "nvcc_sass", "toolkit", "12.8")["added"].append("sm_90"), "already present"),
    (lambda d: d["torch_releases"][0]["variants"]["cu102"].update(sm=["sm_37"]), "do not match"),
    (lambda d: d["torch_releases"][0]["variants"]["cu102"].update(
        torch_cuda_arch_list="3.7;8.0", sm=["sm_37", "sm_80"]), "cannot emit"),
    (lambda d: d["torch_releases"][0].update(pypi_default_linux_x86_64="cu999"), "is not one of its variants"),
    (lambda d: d["sources"].update(UNUSED_KEY="x"), "never cited"),
    (lambda d: d["torch_wheels"]["releases"][3].update(uploaded="2019-8-8"), "is not a date"),
    (lambda d: d["torch_wheels"]["releases"][3]["pythons"].update(solaris=["3.7"]), "unknown platform 'solaris'"),
    (lambda d: d["torch_wheels"]["releases"].reverse(), "not in ascending order"),
])
def test_corruption_is_caught(doc, corrupt, message):
    broken = copy.deepcopy(doc)
    corrupt(broken)
    found = problems(broken)
    assert any(message in p for p in found), found


def test_torch_wheels_known_facts(doc):
    wheels = {r["version"]: r for r in doc["torch_wheels"]["releases"]}
    assert "3.10" not in wheels["1.10.1"]["pythons"]["linux_x86_64"] and "3.10" in wheels["1.11.0"]["pythons"]["linux_x86_64"]
    assert "3.13" in wheels["2.5.1"]["pythons"]["linux_x86_64"]
    assert "3.13" not in wheels["2.5.1"]["pythons"]["win_amd64"] and "3.13" not in wheels["2.5.1"]["pythons"]["macos_arm64"]
    assert "3.11" not in wheels["1.13.1"]["pythons"]["win_amd64"] and "win_amd64" not in wheels["1.6.0"]["pythons"]
    assert wheels["2.5.1"]["uploaded"] == "2024-10-29"


def test_it_agrees_with_matrix_json_where_both_state_a_toolkit_driver():
    """Two fact files hold toolkit GA drivers (matrix.json for the wheel index, cuda_history.json back to 9.0):
    where both state one, they must say the same (Windows 'N/A' in matrix.json is null here)."""
    matrix = json.loads((HISTORY.parent / "matrix.json").read_text(encoding="utf-8"))
    history = {t["version"]: t["driver_ga"] for t in json.loads(HISTORY.read_text(encoding="utf-8"))["toolkits"]
               if t.get("driver_ga")}
    compared = 0
    for tk in matrix["cuda_toolkits"]:
        ga = tk["toolkit_driver_ga"]
        if not isinstance(ga, dict) or tk["toolkit"] not in history:
            continue
        for os_name in ("linux", "windows"):
            want = None if ga[os_name] == "N/A" else ga[os_name]
            assert history[tk["toolkit"]][os_name] == want, (tk["toolkit"], os_name)
        compared += 1
    assert compared >= 10
