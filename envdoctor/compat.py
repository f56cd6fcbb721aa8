"""Compatibility predicates over plain values: GPU arch x wheel arch list, driver x CUDA version.

Shared by the planner and the rules engine. They take strings and tuples, never a Snapshot, and
return a `Verdict` (truthy when compatible, with the reason either way).

Facts (see facts/FACTS.md sections 1-2):
- SASS `sm_XY` runs on a GPU of compute capability X.Z when Z >= Y (same major only);
  `sm_XYa` runs on exactly X.Y; `sm_XYf` like plain SASS (same family).
- PTX `compute_NN` is JIT-compiled on any GPU with cc >= NN, but only by a driver that knows the PTX
  ISA of the toolkit that produced it: minor-version compatibility does not cover PTX JIT.
- A CUDA X.y build runs on a driver >= the family minimum of X (11.x 450.80.02, 12.x 525.60.13,
  13.x 580 on Linux); the family rule never crosses majors.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, Mapping, NamedTuple, Optional, Tuple

from packaging.version import InvalidVersion, Version

_ARCH = re.compile(r"^(sm|compute)_(\d+)([af]?)$")
_VARIANT = re.compile(r"^cu(\d+)(\d)$")
OSES = ("linux", "windows")


class Verdict(NamedTuple):
    ok: bool
    why: str
    via: str = ""  # "sass" | "ptx" for runs_on; "" otherwise

    def __bool__(self) -> bool:
        return self.ok


def parse_cc(compute_capability: str) -> Tuple[int, int]:
    """'8.6' -> (8, 6); raises ValueError on anything else."""
    m = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", str(compute_capability))
    if not m:
        raise ValueError(f"not a compute capability: {compute_capability!r}")
    return int(m.group(1)), int(m.group(2))


def parse_arch(arch: str) -> Optional[Tuple[str, int, int, str]]:
    """'sm_86' -> ('sm', 8, 6, ''), 'compute_120' -> ('compute', 12, 0, ''), 'sm_90a' -> ('sm', 9, 0, 'a')."""
    m = _ARCH.match(str(arch).strip())
    if not m:
        return None
    digits = m.group(2)
    if len(digits) < 2:
        return None
    return m.group(1), int(digits[:-1]), int(digits[-1]), m.group(3)


def cc_label(cc: Tuple[int, int]) -> str:
    return f"{cc[0]}.{cc[1]}"


def runs_on(arch_list: Iterable[str], compute_capability: str) -> Verdict:
    """Whether a build with these arch targets has kernels for a GPU of this compute capability.

    `via` is "sass" when native code exists, "ptx" when the GPU depends on JIT of embedded PTX
    (which then also needs `ptx_jit_ok`).
    """
    cc = parse_cc(compute_capability)
    archs = [a for a in (parse_arch(x) for x in arch_list) if a is not None]
    for kind, major, minor, suffix in archs:
        if kind != "sm":
            continue
        if suffix == "a" and (major, minor) == cc:
            return Verdict(True, f"sm_{major}{minor}a SASS matches {cc_label(cc)}", "sass")
        if suffix != "a" and major == cc[0] and minor <= cc[1]:
            return Verdict(True, f"sm_{major}{minor}{suffix} SASS runs on {cc_label(cc)}", "sass")
    ptx = sorted(((ma, mi) for kind, ma, mi, suffix in archs if kind == "compute" and suffix == ""), reverse=True)
    for ma, mi in ptx:
        if (ma, mi) <= cc:
            return Verdict(True, f"no SASS for {cc_label(cc)}; PTX compute_{ma}{mi} is JIT-compiled", "ptx")
    sass = sorted({f"sm_{ma}{mi}{s}" for k, ma, mi, s in archs if k == "sm"}, key=_arch_sort)
    have = ", ".join(sass) or "no SASS"
    ptx_note = f", PTX {', '.join(f'compute_{a}{b}' for a, b in sorted(ptx))}" if ptx else ", no PTX"
    return Verdict(False, f"no kernels for compute capability {cc_label(cc)} (build has {have}{ptx_note})")


def _arch_sort(text: str) -> Tuple[int, int, str]:
    p = parse_arch(text)
    return (p[1], p[2], p[3]) if p else (0, 0, text)


def variant_cuda(variant: str) -> Optional[str]:
    """'cu118' -> '11.8', 'cu130' -> '13.0', 'cu92' -> '9.2'; 'cpu', 'rocm6.2', 'xpu' -> None."""
    m = _VARIANT.match(str(variant).strip())
    if not m:
        return None
    return f"{int(m.group(1))}.{m.group(2)}"


def cuda_variant(cuda_version: str) -> str:
    """'12.8' -> 'cu128'."""
    major, minor = _major_minor(cuda_version)
    return f"cu{major}{minor}"


def _major_minor(version: Any) -> Tuple[int, int]:
    parts = str(version).strip().split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 and parts[1] else 0
    except ValueError:
        raise ValueError(f"not a CUDA version: {version!r}") from None


def driver_version(text: Any) -> Optional[Version]:
    """'570.86.10' -> Version; junk -> None. Driver versions compare numerically per field."""
    try:
        return Version(str(text).strip())
    except (InvalidVersion, TypeError):
        return None


def _norm_os(os_name: str) -> str:
    name = str(os_name).lower()
    if name.startswith("win"):
        return "windows"
    return "linux" if name.startswith("linux") else name


def _driver_table(table: Optional[Mapping[str, Any]]) -> Mapping[str, Any]:
    if table is not None:
        return table
    from envdoctor.wheels.index import load_index

    return load_index().drivers


def min_driver(cuda_version: str, os_name: str = "linux",
               table: Optional[Mapping[str, Any]] = None) -> Tuple[Optional[str], Optional[str]]:
    """(family minimum, toolkit GA driver) for a CUDA version on an OS; None where unknown.

    The family minimum is what minor-version compatibility needs (12.x: 525.60.13 on Linux); the
    toolkit GA driver (Table 3) is what full support, including PTX JIT, needs. `table` is the index's
    `drivers` mapping (default: the loaded wheel index).
    """
    drivers = _driver_table(table)
    osn = _norm_os(os_name)
    major, minor = _major_minor(cuda_version)
    fam = (drivers.get("families") or {}).get(str(major)) or {}
    tk = (drivers.get("toolkits") or {}).get(f"{major}.{minor}") or {}
    family_min = fam.get(osn)
    ga = (tk.get("toolkit_ga") or {}).get(osn)
    return family_min, ga


def driver_supports(driver: str, cuda_version: str, os_name: str = "linux",
                    table: Optional[Mapping[str, Any]] = None) -> Verdict:
    """Whether an NVIDIA driver runs a CUDA X.y build (minor-version compatibility within family X)."""
    d = driver_version(driver)
    if d is None:
        return Verdict(False, f"driver version {driver!r} cannot be read")
    family_min, ga = min_driver(cuda_version, os_name, table)
    if family_min is None:
        return Verdict(False, f"no known minimum driver for CUDA {cuda_version} on {_norm_os(os_name)}")
    need = driver_version(family_min)
    assert need is not None
    if d < need:
        return Verdict(False, f"driver {driver} < {family_min} needed by CUDA {cuda_version}")
    if ga is not None and (gv := driver_version(ga)) is not None and d < gv:
        return Verdict(True, f"driver {driver} runs CUDA {cuda_version} through minor-version compatibility "
                             f"(>= {family_min}; full support from {ga})")
    return Verdict(True, f"driver {driver} >= {ga or family_min} supports CUDA {cuda_version}")


def ptx_jit_ok(driver: str, cuda_version: str, os_name: str = "linux",
               table: Optional[Mapping[str, Any]] = None) -> Verdict:
    """Whether the driver can JIT PTX made by CUDA X.y: it must be at least that toolkit's GA driver."""
    d = driver_version(driver)
    family_min, ga = min_driver(cuda_version, os_name, table)
    need = ga or None
    if d is None:
        return Verdict(False, f"driver version {driver!r} cannot be read")
    if need is None or driver_version(need) is None:
        # GA driver unknown (UNVERIFIED): be conservative and require the next family's minimum.
        return Verdict(False, f"the driver that JIT-compiles CUDA {cuda_version} PTX is not known")
    if d < driver_version(need):  # type: ignore[operator]
        return Verdict(False, f"PTX JIT needs driver >= {need} (CUDA {cuda_version} GA); driver {driver} "
                              "fails with CUDA_ERROR_UNSUPPORTED_PTX_VERSION")
    return Verdict(True, f"driver {driver} >= {need} JIT-compiles CUDA {cuda_version} PTX")


def deepspeed_cuda_ok(nvcc_version: str, torch_cuda: str, mismatch_ok: Mapping[str, Iterable[str]]) -> Verdict:
    """DeepSpeed's op-builder check (op_builder/builder.py assert_no_cuda_mismatch).

    Equal major.minor passes; different minors pass only when both are listed under the major in
    DeepSpeed's `cuda_minor_mismatch_ok` (there is no 13 entry: any 13.x mismatch fails).
    """
    sysv = "{}.{}".format(*_major_minor(nvcc_version))
    tv = "{}.{}".format(*_major_minor(torch_cuda))
    if sysv == tv:
        return Verdict(True, f"nvcc {sysv} matches torch CUDA {tv}")
    major = sysv.split(".")[0]
    ok_list = [str(x) for x in (mismatch_ok.get(major) or [])]
    if tv.split(".")[0] == major and sysv in ok_list and tv in ok_list:
        return Verdict(True, f"nvcc {sysv} differs from torch CUDA {tv}, but DeepSpeed accepts the pair "
                             f"(cuda_minor_mismatch_ok[{major}])")
    return Verdict(False, f"nvcc {sysv} does not match torch CUDA {tv}: DeepSpeed raises CUDAMismatchException "
                          "when it builds ops (DS_SKIP_CUDA_CHECK=1 overrides at your own risk)")


# --- used by the rules engine -----------------------------------------------------------------

# Blackwell GPUs (10.x data centre, 12.x RTX 50xx / RTX PRO / GB10) need the R570 driver whatever the
# CUDA build (FACTS.md section 4); the values are CUDA 12.8's own drivers (Table 3).
MIN_DRIVER_FOR_GPU_MAJOR: Dict[int, Dict[str, str]] = {
    10: {"linux": "570.26", "windows": "570.65"},
    12: {"linux": "570.26", "windows": "570.65"},
}


def gpu_min_driver(compute_capability: str, os_name: str = "linux") -> Optional[str]:
    """The oldest driver that can run a GPU of this compute capability at all, where one is known."""
    major, _ = parse_cc(compute_capability)
    return MIN_DRIVER_FOR_GPU_MAJOR.get(major, {}).get(_norm_os(os_name))


def driver_os(os_name: str, wsl: object = False) -> str:
    """WSL reports the Windows driver's version, so Windows minimums apply there."""
    return "windows" if _norm_os(os_name) == "windows" or wsl is True else "linux"


def cuda_major_minor(cuda: str) -> Tuple[int, int]:
    return _major_minor(cuda)


def cc_number(cc: str) -> int:
    """'8.6' -> 86, '12.0' -> 120."""
    major, minor = parse_cc(cc)
    return major * 10 + minor


def kernel_for(arch_list: Iterable[str], cc: str) -> Optional[str]:
    """The entry of an arch list that serves compute capability `cc`: the closest SASS, else the newest
    PTX at or below it; None means "no kernel image is available"."""
    target = parse_cc(cc)
    best_sass: Optional[Tuple[Tuple[int, int], str]] = None
    best_ptx: Optional[Tuple[Tuple[int, int], str]] = None
    for arch in arch_list:
        parsed = parse_arch(arch)
        if parsed is None:
            continue
        kind, major, minor, suffix = parsed
        if kind == "sm":
            fits = (major, minor) == target if suffix == "a" else (major == target[0] and minor <= target[1])
            if fits and (best_sass is None or (major, minor) > best_sass[0]):
                best_sass = ((major, minor), arch)
        elif (major, minor) <= target and (best_ptx is None or (major, minor) > best_ptx[0]):
            best_ptx = ((major, minor), arch)
    best = best_sass or best_ptx
    return best[1] if best else None
