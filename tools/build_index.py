"""Build wheels_index.json from the fact base plus the few choices made here.

Inputs: facts/matrix.json (torch 2.x, sources in facts/FACTS.md), facts/cuda_history.json (toolkit drivers
9.0-13.x, nvcc SASS targets, torch 1.8-1.13 builds, and the Pythons of every torch release's PyPI wheels per
platform with its upload day; facts/CUDA_HISTORY.md) and facts/registry.json (what tools/refresh_facts.py read
from the registry's wheel metadata: it wins over the RELEASE.md-derived facts for the newest patch, the PyPI
default per platform, the default variant's pins and Triton, and adds a release the fact base lacks, its other
variants assumed from the previous release; envdoctor.wheels.learn).

Usage: python tools/build_index.py [MATRIX_JSON] [-o wheels_index.json]

Everything the facts mark UNVERIFIED keeps that status here; values added from memory (patch
versions, torchvision/torchaudio pairings) are marked UNVERIFIED too, and the
installer re-resolves exact versions from the live index before installing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from packaging.version import Version  # noqa: E402

from envdoctor.wheels.learn import add_variant, new_release  # noqa: E402

DEFAULT_MATRIX = ROOT / "facts" / "matrix.json"
HISTORY = ROOT / "facts" / "cuda_history.json"
REGISTRY = ROOT / "facts" / "registry.json"
PLATFORMS = ("linux_x86_64", "linux_aarch64", "win_amd64")

# Latest patch of each minor release. From the facts: 2.14.1 (LOCAL_2141), 2.13.0 (LOCAL_2130CPU).
# Others: ≤2.9 from memory; 2.10-2.12: the .0 release, which exists for every minor (conservative).
PATCHES = {
    "2.0": ("2.0.1", "UNVERIFIED"), "2.1": ("2.1.2", "UNVERIFIED"), "2.2": ("2.2.2", "UNVERIFIED"),
    "2.3": ("2.3.1", "UNVERIFIED"), "2.4": ("2.4.1", "UNVERIFIED"), "2.5": ("2.5.1", "UNVERIFIED"),
    "2.6": ("2.6.0", "UNVERIFIED"), "2.7": ("2.7.1", "UNVERIFIED"), "2.8": ("2.8.0", "UNVERIFIED"),
    "2.9": ("2.9.1", "UNVERIFIED"), "2.10": ("2.10.0", "UNVERIFIED"), "2.11": ("2.11.0", "UNVERIFIED"),
    "2.12": ("2.12.0", "UNVERIFIED"), "2.13": ("2.13.0", "verified"), "2.14": ("2.14.1", "verified"),
}
# torchvision 0.(15+N) pairs with torch 2.N; torchaudio 2.N pairs with torch 2.N (from memory).
TV_PATCH = {"2.0": "0.15.2", "2.1": "0.16.2", "2.2": "0.17.2", "2.3": "0.18.1", "2.4": "0.19.1", "2.5": "0.20.1",
            "2.6": "0.21.0", "2.7": "0.22.1", "2.8": "0.23.0", "2.9": "0.24.1"}
TA_PATCH = {"2.0": "2.0.2", "2.1": "2.1.2", "2.2": "2.2.2", "2.3": "2.3.1", "2.4": "2.4.1", "2.5": "2.5.1",
            "2.6": "2.6.0", "2.7": "2.7.1", "2.8": "2.8.0", "2.9": "2.9.1"}



def _sm(arch: str) -> str:
    major, minor = arch.split(".")
    return f"sm_{major}{minor}"


def _aarch64(version: str, variant: str) -> dict | None:
    """aarch64 CUDA builds the facts describe (FACTS.md 1a); None = no aarch64 wheel recorded."""
    minor = int(version.split(".")[1])
    full = ["sm_80", "sm_90", "sm_100", "sm_110", "sm_120"]
    if variant == "cu124" and minor in (4, 5):
        return {"sm": ["sm_90"], "ptx": [], "status": "verified", "sources": ["BUILDER"]}
    if variant == "cu130" and minor in (9, 10):
        return {"sm": full, "ptx": ["compute_120"], "status": "verified" if minor == 9 else "secondary",
                "sources": ["PT_BC_29"]}
    if variant == "cu130" and minor == 11:
        return {"sm": full, "ptx": [], "ptx_unverified": ["compute_120"], "status": "UNVERIFIED", "sources": ["TI_PYPI"],
                "note": "aarch64 PyPI wheel became cu130 in 2.11; arch list assumed as 2.9/2.10, PTX not counted"}
    if variant in ("cu130", "cu132") and minor >= 12:
        return {"sm": full, "ptx": [], "ptx_unverified": ["compute_120"], "status": "UNVERIFIED",
                "sources": ["PT_RELEASE_MD"],
                "note": "RELEASE.md says 12.0+PTX; the x86_64 2.14.1 wheel has none, so PTX is not counted"}
    if variant == "cu126" and minor >= 12:
        return {"sm": ["sm_80", "sm_90"], "ptx": [], "status": "secondary", "sources": ["PT_RELEASE_MD"]}
    return None


def history_toolkits(history: dict) -> dict:
    """Toolkits cuda_history.json states and matrix.json does not (9.0-11.7): their GA drivers. Before CUDA 11
    there is no minor-version compatibility, so each of them needs its own toolkit driver."""
    out = {}
    for tk in history["toolkits"]:
        ga = tk.get("driver_ga")
        if ga is None:
            continue
        entry = {"toolkit_ga": {"linux": ga["linux"], "windows": ga["windows"]}, "status": tk["status"],
                 "sources": tk["sources"]}
        if tk.get("minor_version_compat_family") is None:
            entry["minor_version_compat"] = False
            entry["note"] = "no minor-version compatibility before CUDA 11 (NV_MVC): a build needs this driver"
        out[tk["version"]] = entry
    return out


def nvcc_sass(history: dict) -> dict:
    """CUDA version -> every SASS target its nvcc can emit, rebuilt from cuda_history.json's per-toolkit deltas."""
    current: set = set()
    out = {}
    for entry in history["nvcc_sass"]:
        current = set(entry["sass_all"]) if "sass_all" in entry else (current | set(entry["added"])) - set(entry["removed"])
        if entry.get("removed_below_min"):
            floor = int(entry["sass_min"][3:])
            current = {t for t in current if int(t[3:].rstrip("af")) >= floor}
        out[entry["toolkit"]] = {"sass": sorted(current, key=lambda t: (int(t[3:].rstrip("af")), t)),
                                 "status": entry["status"], "sources": entry["sources"]}
    return out


def history_releases(history: dict) -> list:
    """torch 1.8-1.13 (Linux x86_64 builds): for diagnosing an installed torch, never planned."""
    releases = []
    for rel in history["torch_releases"]:
        variants = {}
        for name, var in rel["variants"].items():
            if name == "cpu":
                variants["cpu"] = {"kind": "cpu", "status": var["status"], "sources": var["sources"],
                                   "platforms": {"linux_x86_64": {"status": var["status"]}}}
                continue
            entry = {"kind": "cuda", "cuda": f"{int(name[2:-1])}.{name[-1]}",
                     "torch_cuda_arch_list": var["torch_cuda_arch_list"], "status": var["status"],
                     "sources": var["sources"],
                     "platforms": {"linux_x86_64": {"sm": list(var["sm"]), "ptx": list(var["ptx"]),
                                                    "status": var["status"], "sources": var["sources"]}}}
            if var.get("note"):
                entry["note"] = var["note"]
            variants[name] = entry
        for rocm in rel.get("rocm", []):
            variants[rocm] = {"kind": "rocm", "rocm": rocm[4:], "status": "verified", "sources": ["PT_PREV"],
                              "platforms": {"linux_x86_64": {"status": "verified"}}}
        releases.append({"version": rel["version"], "latest_patch": rel["patches"][-1], "patch_status": "verified",
                         "python": rel["python"], "python_experimental": [],
                         "pypi_default": {"linux_x86_64": {"variant": rel["pypi_default_linux_x86_64"],
                                                           "status": rel["pypi_status"], "sources": rel["pypi_sources"]}},
                         "variants": variants, "companions": {}})
    releases.sort(key=lambda r: tuple(int(x) for x in r["version"].split(".")), reverse=True)
    return releases


def build(matrix: dict, history: dict) -> dict:
    toolkits = {}
    for tk in matrix["cuda_toolkits"]:
        ga = tk["toolkit_driver_ga"]
        entry = {
            "toolkit_ga": {
                "linux": ga["linux"] if isinstance(ga, dict) else None,
                "windows": ga["windows"] if isinstance(ga, dict) and ga["windows"] != "N/A" else None,
            },
            "status": "verified" if isinstance(ga, dict) else "UNVERIFIED",
            "sources": tk["sources"],
        }
        if isinstance(ga, dict) and ga["windows"] == "N/A":
            entry["note"] = "Windows: the toolkit no longer bundles a driver (NV_RN); the 13.x family minimum applies"
        if not isinstance(ga, dict):
            entry["note"] = ga
        toolkits[tk["toolkit"]] = entry
    toolkits.update({k: v for k, v in history_toolkits(history).items() if k not in toolkits})
    toolkits = dict(sorted(toolkits.items(), key=lambda kv: tuple(int(x) for x in kv[0].split("."))))
    drivers = {
        "families": {
            "11": {"linux": "450.80.02", "windows": "452.39", "status": "verified", "sources": ["NV_RN", "LTT", "UV"]},
            "12": {"linux": "525.60.13", "windows": "528.33", "status": "verified", "sources": ["NV_RN", "LTT", "UV"],
                   "note": "older Table 2 exact values; Windows 527.41-528.32 is a grey zone (12.0 GA is 527.41)"},
            "13": {"linux": "580.65.06", "windows": "580", "status": "secondary", "sources": ["NV_RN", "NV_MVC", "LTT", "UV"],
                   "note": "NV_MVC says >= 580; 580.65.06 is the 13.0 GA driver (ltt's value), used here to be conservative"},
        },
        "toolkits": toolkits,
        "rule": matrix["cuda_minor_version_compat"]["rule"],
        "ptx_jit_needs": ("the toolkit GA driver of the CUDA version that produced the PTX "
                          "(minor-version compatibility does not cover PTX JIT)"),
        "gpu_major_floor": gpu_major_floor(matrix),
    }

    releases = []
    for rel in matrix["torch_releases"]:
        v = rel["version"]
        patch, patch_status = PATCHES[v]
        variants = {}
        for name, var in rel["variants"].items():
            if name == "cpu":
                variants["cpu"] = {"kind": "cpu", "status": var["status"], "sources": var["sources"], "platforms": {
                    "linux_x86_64": {"status": "verified"},
                    "linux_aarch64": {"status": "secondary"},
                    "win_amd64": {"status": "secondary"},
                }}
                continue
            if name == "xpu":
                variants["xpu"] = {"kind": "xpu", "status": var["status"], "sources": var["sources"], "platforms": {
                    "linux_x86_64": {"status": "verified"}, "win_amd64": {"status": "UNVERIFIED"}}}
                continue
            cuda = f"{int(name[2:-1])}.{name[-1]}"
            sm = list(var["sm"])
            sm_unverified = []
            note = var.get("note")
            if v == "2.10" and name == "cu128":
                sm.remove("sm_70")
                sm_unverified = ["sm_70"]
            ptx = list(var.get("ptx") or [])
            ptx_unverified = []
            if v in ("2.12", "2.13") and name in ("cu130", "cu132") or v == "2.14" and name == "cu132":
                ptx_unverified = ["compute_120"]
            linux = {"sm": sm, "ptx": ptx, "status": var["status"], "sources": var["sources"]}
            if sm_unverified:
                linux["sm_unverified"] = sm_unverified
            if ptx_unverified:
                linux["ptx_unverified"] = ptx_unverified
            platforms = {"linux_x86_64": linux}
            aarch = _aarch64(v, name)
            if aarch:
                platforms["linux_aarch64"] = aarch
            win = {"sm": sm, "ptx": [], "status": "UNVERIFIED", "sources": var["sources"],
                   "note": "Windows arch list assumed equal to Linux; PTX not counted (+PTX is Linux-only where stated)"}
            if ptx:
                win["ptx_unverified"] = ptx
            platforms["win_amd64"] = win
            entry = {"kind": "cuda", "cuda": cuda, "torch_cuda_arch_list": var["torch_cuda_arch_list"],
                     "cudnn": var.get("cudnn"), "nccl": var.get("nccl"), "status": var["status"],
                     "sources": var["sources"], "platforms": platforms}
            if note:
                entry["note"] = note
            variants[name] = entry
        for rocm in rel["rocm"]:
            variants[rocm] = {"kind": "rocm", "rocm": rocm[4:], "status": "verified", "sources": ["TI"],
                              "platforms": {"linux_x86_64": {"status": "verified"}}}
        minor = int(v.split(".")[1])
        pypi = {"linux_x86_64": {"variant": rel["pypi_default_linux_x86_64"], "status": "verified",
                                 "sources": rel["pypi_sources"]}}
        if minor >= 11:
            pypi["linux_aarch64"] = {"variant": "cu130", "status": "verified", "sources": ["TI_PYPI"]}
        pypi["win_amd64"] = {"variant": "cpu", "status": "UNVERIFIED", "sources": [],
                             "note": "the PyPI Windows wheel is the CPU build (from memory)"}
        companions = {
            "torchvision": {"series": f"0.{15 + minor}", "version": TV_PATCH.get(v), "status": "UNVERIFIED"},
            "torchaudio": {"series": v, "version": TA_PATCH.get(v), "status": "UNVERIFIED"},
        }
        entry = {"version": v, "latest_patch": patch, "patch_status": patch_status,
                 "python": rel["python"], "python_experimental": rel.get("python_experimental", []),
                 "pypi_default": pypi, "variants": variants, "companions": companions}
        if rel.get("nccl_pypi_default_UNVERIFIED_from_memory"):
            entry["nccl_pypi_default_UNVERIFIED"] = rel["nccl_pypi_default_UNVERIFIED_from_memory"]
        releases.append(entry)
    releases.sort(key=lambda r: tuple(int(x) for x in r["version"].split(".")), reverse=True)

    ds = matrix["deepspeed"]
    mm = {k: v for k, v in ds["cuda_check"]["minor_mismatch_ok"].items() if isinstance(v, list)}
    mm_old = dict(mm)
    mm_old["12"] = [x for x in mm["12"] if x not in ("12.8", "12.9")]
    ds_rel = []
    for ver, date in (("0.19.8", "2026-10"), ("0.19.5", "2026-08-09"), ("0.19.1", None), ("0.19.0", "2026-05-06"),
                      ("0.18.3", "2025-12-09"), ("0.18.0", "2025-10-07"), ("0.17.2", None), ("0.17.0", "2025-06-02"),
                      ("0.16.0", "2024-11-25")):
        parts = tuple(int(x) for x in ver.split("."))
        ds_rel.append({
            "version": ver, "date": date,
            "torch": ">=2.0.0" if parts >= (0, 19, 1) else "",
            "cuda_minor_mismatch_ok": mm if parts >= (0, 17, 2) else mm_old,
            "status": "verified" if parts >= (0, 17, 2) else "secondary",
            "sources": ["DS"],
        })
    deepspeed = {
        "releases": ds_rel,
        "build_ops_default": {"linux": 0, "windows": 1},
        "skip_cuda_check_env": "DS_SKIP_CUDA_CHECK",
        "default_compute_capabilities": "6.0;6.1;7.0",
        "notes": [ds["default_compute_caps_without_gpu"], "no cuda_minor_mismatch_ok entry for CUDA 13 in any release"],
        "sources": ["DS"],
    }
    return {
        "schema": "envdoctor.wheels_index/1",
        "generated": matrix["as_of"],
        "facts_as_of": matrix["as_of"],
        "doc": "Built by tools/build_index.py from the fact base. status: verified | secondary | UNVERIFIED. "
               "sm = SASS targets; ptx = embedded PTX; *_unverified = targets that may exist but are not counted. "
               "Drivers: a CUDA X.y build needs families[X] (minor-version compatibility); "
               "PTX JIT needs toolkits[X.y].toolkit_ga; a toolkit with minor_version_compat false (before CUDA 11) "
               "needs its toolkit_ga. nvcc_sass: the SASS targets each CUDA version's nvcc can emit. torch_history: "
               "older releases, for diagnosis only (never planned). python_wheels: the Pythons of each release's "
               "PyPI wheels per platform. pypi_unlabelled_linux_x86_64: the CUDA of the PyPI Linux wheels whose "
               "torch.__version__ has no local label (1.0.0-1.8.0).",
        "default_index_base": "https://download.pytorch.org/whl",
        "platforms": list(PLATFORMS),
        "sources": {**history["sources"], **matrix["sources"]},
        "drivers": drivers,
        "nvcc_sass": nvcc_sass(history),
        "torch": releases,
        "torch_history": history_releases(history),
        "python_wheels": history["torch_wheels"],
        "pypi_unlabelled_linux_x86_64": history["pypi_unlabelled_linux_x86_64"],
        "deepspeed": deepspeed,
    }


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def overlay_registry(index: dict, registry: dict) -> None:
    """The registry's wheel metadata over the RELEASE.md-derived facts of each planned release (2.x): the newest
    patch, the PyPI default per platform, the default variant's cuda-toolkit/cuDNN/NCCL/nvshmem pins and Triton;
    a minor the fact base lacks is added from the previous release (its variants assumed, envdoctor.wheels.learn)
    with what its own metadata states."""
    by_minor: dict = {}
    for ver, rel in registry.get("releases", {}).items():
        if Version(ver).major >= 2 and rel.get("platforms"):
            by_minor.setdefault(_minor(ver), []).append((Version(ver), ver, rel))
    releases = index["torch"]
    toolkits = index["drivers"]["toolkits"]
    for minor, patches in sorted(by_minor.items(), key=lambda kv: Version(kv[0])):
        _v, newest, facts = max(patches)
        x86 = facts["platforms"].get("linux_x86_64") or {}
        read_from = x86.get("read_from") or next(iter(facts["platforms"].values()))["read_from"]
        entry = next((r for r in releases if r["version"] == minor), None)
        if entry is None:
            older = [r for r in releases if Version(r["version"]) < Version(minor)]
            if not older:
                continue
            previous = max(older, key=lambda r: Version(r["version"]))
            entry = new_release(previous, newest, list(previous["variants"]), x86.get("pythons") or (), read_from,
                                listed=False)
            for name in [n for n, v in entry["variants"].items() if v.get("cuda") and v["cuda"] not in toolkits]:
                del entry["variants"][name]
            releases.append(entry)
            releases.sort(key=lambda r: Version(r["version"]), reverse=True)
        if Version(newest) >= Version(entry["latest_patch"]):
            entry["latest_patch"], entry["patch_status"], entry["patch_read_from"] = newest, "verified", read_from
        for plat, pf in facts["platforms"].items():
            name = pf.get("variant")
            if plat not in PLATFORMS or not name:
                continue
            if name not in entry["variants"]:
                previous = next((r for r in releases if Version(r["version"]) < Version(minor)), None)
                if not add_variant(entry, previous, name):
                    continue
            var = entry["variants"][name]
            if plat not in var["platforms"]:
                if var["kind"] == "cuda":  # an arch list is not in the metadata: not invented here
                    continue
                var["platforms"][plat] = {"status": "verified"}
            entry["pypi_default"][plat] = {"variant": name, "status": "verified", "sources": ["PYPI_META"],
                                           "read_from": pf["read_from"]}
            if var["kind"] == "cuda":
                _pins(var, pf)
                if pf.get("sm") and plat in var["platforms"]:  # a variant wheel's PEP 825 nvidia :: sm_arch
                    var["platforms"][plat].update(sm=list(pf["sm"]), ptx=list(pf.get("ptx") or []), status="verified",
                                                  read_from=pf["read_from"])
                    var["variant_properties"] = pf["variant_properties"]
        triton = x86.get("triton")
        if triton:
            spec = triton.lstrip("=~<>! ")
            entry.setdefault("companions", {})["triton"] = {
                "series": _minor(spec), "requirement": triton, "status": "verified", "read_from": read_from}
        if x86.get("requires_python"):
            entry["requires_python"] = x86["requires_python"]


def _pins(var: dict, facts: dict) -> None:
    """The default variant's pins as its METADATA states them (the x86_64 wheel's when both Linux wheels are read);
    a RELEASE.md value that differs is kept in the note, and the pins name where they were read."""
    if var.get("pins_read_from"):
        return
    changed = []
    for field in ("cudnn", "nccl"):
        if facts.get(field) and var.get(field) and var[field] != facts[field] and var["status"] != "assumed":
            changed.append(f"{field} {var[field]} (RELEASE.md) is {facts[field]} in the wheel METADATA")
        if facts.get(field):
            var[field] = facts[field]
    for field in ("cuda_toolkit", "nvshmem", "cusparselt"):
        if facts.get(field):
            var[field] = facts[field]
    var["pins_read_from"] = facts["read_from"]
    if var["status"] == "assumed":
        var["note"] = (f"arch list assumed from torch {var['assumed_from']} (not read from an index); cuDNN, NCCL "
                       "and the CUDA pins read from the wheel METADATA (pins_read_from)")
    elif changed:
        var["note"] = "; ".join([*changed, *([var["note"]] if var.get("note") else [])])


def gpu_major_floor(matrix: dict) -> dict:
    """GPU major -> the oldest driver that runs it at all (matrix.json's gpu_driver_floors, whose driver numbers
    are the named toolkit's GA drivers, stated once in cuda_toolkits)."""
    toolkits = {tk["toolkit"]: tk for tk in matrix["cuda_toolkits"]}
    out = {}
    for floor in matrix.get("gpu_driver_floors", []):
        ga = toolkits[floor["toolkit"]]["toolkit_driver_ga"]
        for major in floor["gpu_majors"]:
            out[str(major)] = {"linux": ga["linux"], "windows": ga["windows"], "toolkit": floor["toolkit"],
                               "status": floor["status"], "sources": floor["sources"]}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("matrix", nargs="?", default=str(DEFAULT_MATRIX))
    ap.add_argument("-o", "--output", default=str(ROOT / "wheels_index.json"))
    args = ap.parse_args(argv)
    index = build(*(json.loads(Path(p).read_text(encoding="utf-8")) for p in (args.matrix, HISTORY)))
    if REGISTRY.exists():
        overlay_registry(index, json.loads(REGISTRY.read_text(encoding="utf-8")))
    Path(args.output).write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.output}: {len(index['torch'])} torch releases", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
