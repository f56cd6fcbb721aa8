"""Pure compatibility facts and predicates: GPU architecture x kernels, driver x CUDA.

Sources: ../shared/facts/FACTS.md sections 1-3 (NVIDIA CUDA release notes Tables 2 and 3, the
minor-version compatibility guide, PyTorch's build scripts). No I/O, no snapshot: plain values in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Iterable, Optional, Tuple

from envdoctor.versions import parse

# Minor-version compatibility: any X.y toolkit runs on a driver >= the family minimum (Table 2).
# 13.x: NVIDIA gives ">= 580"; 580.65.06 is the first R580 release (13.0 GA), which is what we ask for.
FAMILY_MIN_DRIVER: Dict[str, Dict[int, str]] = {
    "linux": {10: "410.48", 11: "450.80.02", 12: "525.60.13", 13: "580.65.06"},
    "windows": {10: "411.31", 11: "452.39", 12: "528.33", 13: "580"},
}
# The driver each toolkit shipped with (Table 3): everything in that toolkit works from here on.
TOOLKIT_DRIVER: Dict[str, Dict[str, str]] = {
    "linux": {
        "11.7": "515.43.04", "11.8": "520.61.05", "12.0": "525.60.13", "12.1": "530.30.02", "12.2": "535.54.03",
        "12.3": "545.23.06", "12.4": "550.54.14", "12.5": "555.42.02", "12.6": "560.28.03", "12.8": "570.26",
        "12.9": "575.51.03", "13.0": "580.65.06", "13.1": "590.44.01", "13.2": "595.45.04",
    },
    "windows": {
        "11.7": "516.01", "11.8": "520.06", "12.0": "527.41", "12.1": "531.14", "12.2": "536.25", "12.3": "545.84",
        "12.4": "551.61", "12.5": "555.85", "12.6": "560.76", "12.8": "570.65", "12.9": "576.02",
    },
}
# Blackwell consumer GPUs (sm_120) need the R570 driver whatever the CUDA build (FACTS.md section 4).
MIN_DRIVER_FOR_CC: Dict[str, str] = {"12.0": "570.26", "10.0": "570.26"}


def driver_os(os_name: str, wsl: object = False) -> str:
    """WSL reports the Windows driver's version, so Windows minimums apply there."""
    return "windows" if os_name == "windows" or wsl is True else "linux"


def cuda_major_minor(cuda: str) -> Tuple[int, int]:
    parts = [int(p) for p in re.findall(r"\d+", str(cuda))[:2]]
    return (parts[0], parts[1] if len(parts) > 1 else 0)


def variant_cuda(variant: str) -> Optional[str]:
    """'cu124' -> '12.4', 'cu118' -> '11.8', 'cu130' -> '13.0'; 'cpu', 'rocm6.2' -> None."""
    m = re.fullmatch(r"cu(\d+)(\d)", variant)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def min_driver(cuda: str, os_name: str = "linux") -> Tuple[Optional[str], Optional[str]]:
    """(family minimum that runs it under minor-version compatibility, the toolkit's own GA driver)."""
    major, minor = cuda_major_minor(cuda)
    family = FAMILY_MIN_DRIVER.get(os_name, FAMILY_MIN_DRIVER["linux"]).get(major)
    ga = TOOLKIT_DRIVER.get(os_name, {}).get(f"{major}.{minor}")
    return family, ga


@dataclass(frozen=True)
class DriverVerdict:
    ok: bool
    needed: Optional[str]  # the lowest driver that runs this CUDA build
    why: str


def driver_supports(driver: str, cuda: str, os_name: str = "linux") -> DriverVerdict:
    """Can a driver run a binary built with CUDA `cuda`? Minor-version compatibility never crosses majors."""
    family, ga = min_driver(cuda, os_name)
    have = parse(driver)
    if family is None:
        return DriverVerdict(False, None, f"no known driver minimum for CUDA {cuda}")
    need = parse(family)
    if have is None or need is None:
        return DriverVerdict(False, family, f"cannot read driver version {driver!r}")
    if have >= need:
        note = ""
        if ga and parse(ga) and have < parse(ga):
            note = f" (through minor-version compatibility; CUDA {cuda}'s own driver is {ga}: PTX JIT of newer code fails)"
        return DriverVerdict(True, family, f"driver {driver} >= {family} for CUDA {cuda}{note}")
    return DriverVerdict(False, family, f"driver {driver} < {family} needed by CUDA {cuda}")


def _arch_num(arch: str) -> Optional[Tuple[str, int, str]]:
    m = re.fullmatch(r"(sm|compute)_(\d+)([af]?)", arch.strip())
    if not m:
        return None
    return m.group(1), int(m.group(2)), m.group(3)


def cc_number(cc: str) -> int:
    """'8.6' -> 86, '12.0' -> 120, '10.3' -> 103."""
    major, minor = cc_parts(cc)
    return major * 10 + minor


def cc_parts(cc: str) -> Tuple[int, int]:
    major, _, minor = str(cc).partition(".")
    return int(major), int(minor or 0)


def kernel_for(arch_list: Iterable[str], cc: str) -> Optional[str]:
    """The entry of a torch/extension arch list that runs on compute capability `cc`, or None.

    SASS sm_XY runs on X.Z for Z >= Y (same major); sm_XYa only on exactly X.Y; PTX compute_XY is
    JIT-compiled on any GPU with cc >= X.Y. SASS is preferred over PTX.
    """
    major, minor = cc_parts(cc)
    target = major * 10 + minor
    best_sass: Optional[Tuple[int, str]] = None
    best_ptx: Optional[Tuple[int, str]] = None
    for arch in arch_list:
        parsed = _arch_num(arch)
        if parsed is None:
            continue
        kind, num, suffix = parsed
        a_major, a_minor = divmod(num, 10)
        if kind == "sm":
            fits = num == target if suffix == "a" else (a_major == major and a_minor <= minor)
            if fits and (best_sass is None or num > best_sass[0]):
                best_sass = (num, arch)
        elif num <= target and (best_ptx is None or num > best_ptx[0]):
            best_ptx = (num, arch)
    best = best_sass or best_ptx
    return best[1] if best else None


def nearest_arches(arch_list: Iterable[str]) -> str:
    items = [a for a in arch_list if _arch_num(a)]
    return ", ".join(items) if items else "none"


# Python versions each torch minor release ships wheels for (FACTS.md section 1 table).
TORCH_PYTHONS: Dict[str, Tuple[str, str]] = {
    "2.0": ("3.8", "3.11"), "2.1": ("3.8", "3.11"), "2.2": ("3.8", "3.12"), "2.3": ("3.8", "3.12"),
    "2.4": ("3.8", "3.12"), "2.5": ("3.9", "3.12"), "2.6": ("3.9", "3.13"), "2.7": ("3.9", "3.13"),
    "2.8": ("3.9", "3.13"), "2.9": ("3.10", "3.14"), "2.10": ("3.10", "3.14"), "2.11": ("3.10", "3.14"),
    "2.12": ("3.10", "3.14"), "2.13": ("3.10", "3.14"), "2.14": ("3.10", "3.14"),
}


def _py(v: str) -> Tuple[int, int]:
    a, b = v.split(".")[:2]
    return int(a), int(b)


def torch_releases_for_python(python: str) -> list:
    """Torch minor releases with wheels for this Python (major.minor)."""
    want = _py(python)
    return [t for t, (lo, hi) in TORCH_PYTHONS.items() if _py(lo) <= want <= _py(hi)]


def supported_python_range() -> Tuple[str, str]:
    """The Python range that some torch release supports, and the newest release's range."""
    newest = max(TORCH_PYTHONS, key=lambda t: tuple(int(x) for x in t.split(".")))
    return TORCH_PYTHONS[newest]
