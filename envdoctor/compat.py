"""Compatibility predicates over plain values: GPU arch x wheel arch list, driver x CUDA version.

Shared by the rules, the planner and the install verifier. They take strings and tuples, never a
Snapshot or the wheel index (the index's `drivers` table is passed in), and say why either way.

Which kernel serves a GPU of compute capability X.Z (`serving_kernel`, the only place that decides it):
- SASS `sm_XY` runs when the major is X and Y <= Z (a cubin runs on "the same major revision and same
  or higher minor revision": CUDA Blackwell Compatibility Guide 1.2; facts/FACTS.md section 1).
- `sm_XYa` / `compute_XYa` (architecture-specific) run on exactly X.Y, as SASS or by JIT of that PTX.
- `sm_XYf` / `compute_XYf` (family-specific, CUDA 12.9+) run on the same major with minor >= Y and never
  on another major (CUDA Programming Guide 5.1.2 "Feature Availability"; NVIDIA, "Blackwell and CUDA 12.9
  Introduce Family-Specific Architecture Features": compute_100f runs on 10.0 and 10.3, not on 11.x or 12.x).
- Plain PTX `compute_XY` is JIT-compiled on any cc >= X.Y, but only by a driver that knows the PTX ISA
  of the toolkit that produced it (`ptx_jit_ok`): minor-version compatibility does not cover PTX JIT.

A CUDA X.y build runs on a driver >= the family minimum of X (11.x 450.80.02, 12.x 525.60.13, 13.x 580 on
Linux); the family rule never crosses majors. Before CUDA 11 there is no minor-version compatibility: a 9.x/10.x
build needs its own toolkit's driver (10.2: 440.33). On Linux a toolkit's own GA driver runs its builds (11.0's
450.51.05 is below the 11.x family minimum).

Which SASS a CUDA X.y nvcc can emit at all (`toolkit_serves`) bounds any arch list built with it: a GPU below
its oldest target gets no kernel (PTX only serves GPUs at or above its target), and a GPU of a major newer than
every target it knows is not served by a build of that toolkit (its PTX JIT does not reach the bundled CUDA
libraries, which predate the architecture).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, NamedTuple, Optional, Tuple

from envdoctor.versions import parse, require_major_minor

_ARCH = re.compile(r"^(sm|compute)_(\d+)([af]?)$")
_VARIANT = re.compile(r"^cu(\d+)(\d)$")
OSES = ("linux", "windows")


class Verdict(NamedTuple):
    ok: bool
    why: str

    def __bool__(self) -> bool:
        return self.ok


def parse_cc(compute_capability: str) -> Tuple[int, int]:
    """'8.6' -> (8, 6); raises ValueError on anything else."""
    m = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", str(compute_capability))
    if not m:
        raise ValueError(f"not a compute capability: {compute_capability!r}")
    return int(m.group(1)), int(m.group(2))


def cc_label(cc: Tuple[int, int]) -> str:
    return f"{cc[0]}.{cc[1]}"


def cc_number(cc: str) -> int:
    """'8.6' -> 86, '12.0' -> 120."""
    major, minor = parse_cc(cc)
    return major * 10 + minor


class ArchTarget(NamedTuple):
    """One entry of an arch list: `sm_90a` is ArchTarget('sm', 9, 0, 'a', 'sm_90a')."""

    kind: str  # "sm" (SASS) | "compute" (PTX)
    major: int
    minor: int
    suffix: str  # "" | "a" (architecture-specific) | "f" (family-specific)
    text: str

    def serves(self, cc: Tuple[int, int]) -> bool:
        """Whether this target alone gives a GPU of compute capability `cc` a kernel (module docstring)."""
        if self.suffix == "a":
            return (self.major, self.minor) == cc
        if self.kind == "sm" or self.suffix == "f":
            return self.major == cc[0] and self.minor <= cc[1]
        return (self.major, self.minor) <= cc

    def _rank(self) -> Tuple[int, int, int]:
        return self.major, self.minor, {"": 0, "f": 1, "a": 2}[self.suffix]  # the closest, then the most specific


def parse_arch(arch: str) -> Optional[ArchTarget]:
    """'sm_86', 'compute_120', 'sm_90a', 'sm_100f'; None for anything else (ROCm 'gfx90a', junk)."""
    text = str(arch).strip()
    m = _ARCH.match(text)
    if not m or len(m.group(2)) < 2:
        return None
    digits = m.group(2)
    return ArchTarget(m.group(1), int(digits[:-1]), int(digits[-1]), m.group(3), text)


class KernelMatch(NamedTuple):
    """What `serving_kernel` found: how the GPU gets a kernel, from which arch-list entry, and why."""

    via: str  # "sass" | "ptx" | "none"
    target: Optional[str]  # the arch-list entry that serves the GPU; None when via == "none"
    why: str

    @property
    def ok(self) -> bool:
        return self.via != "none"

    def __bool__(self) -> bool:
        return self.ok


def serving_kernel(arch_list: Iterable[str], compute_capability: str) -> KernelMatch:
    """The arch-list entry that serves a GPU of this compute capability: the closest SASS, else the newest
    PTX it can JIT; via "none" means CUDA's "no kernel image is available for execution on the device".

    via "ptx" also needs a driver that JIT-compiles that toolkit's PTX (`ptx_jit_ok`).
    Entries that are not CUDA targets are ignored; a malformed compute capability raises ValueError.
    """
    cc = parse_cc(compute_capability)
    targets = [t for t in (parse_arch(a) for a in arch_list) if t is not None]
    for kind, via in (("sm", "sass"), ("compute", "ptx")):
        fits = [t for t in targets if t.kind == kind and t.serves(cc)]
        if fits:
            best = max(fits, key=ArchTarget._rank)
            return KernelMatch(via, best.text, _why(best, cc))
    sass = sorted({t.text for t in targets if t.kind == "sm"}, key=_arch_sort)
    ptx = sorted({t.text for t in targets if t.kind == "compute"}, key=_arch_sort)
    have = ", ".join(sass) or "no SASS"
    ptx_note = f", PTX {', '.join(ptx)}" if ptx else ", no PTX"
    return KernelMatch("none", None, f"no kernels for compute capability {cc_label(cc)} (build has {have}{ptx_note})")


def _why(t: ArchTarget, cc: Tuple[int, int]) -> str:
    if t.kind == "compute":
        scope = {"a": "for exactly this architecture", "f": "for this family"}.get(t.suffix, "")
        return f"no SASS for {cc_label(cc)}; PTX {t.text} is JIT-compiled" + (f" ({scope})" if scope else "")
    if (t.major, t.minor) == cc:
        return f"{t.text} SASS matches {cc_label(cc)}"
    return f"{t.text} {'family ' if t.suffix == 'f' else ''}SASS runs on {cc_label(cc)}"


def _arch_sort(text: str) -> Tuple[int, int, str]:
    p = parse_arch(text)
    return (p.major, p.minor, p.suffix) if p else (0, 0, text)


def variant_cuda(variant: str) -> Optional[str]:
    """'cu118' -> '11.8', 'cu130' -> '13.0', 'cu92' -> '9.2'; 'cpu', 'rocm6.2', 'xpu' -> None."""
    m = _VARIANT.match(str(variant).strip())
    if not m:
        return None
    return f"{int(m.group(1))}.{m.group(2)}"


def cuda_variant(cuda_version: str) -> str:
    """'12.8' -> 'cu128'."""
    major, minor = require_major_minor(cuda_version, "CUDA version")
    return f"cu{major}{minor}"


def _norm_os(os_name: str) -> str:
    name = str(os_name).lower()
    if name.startswith("win"):
        return "windows"
    return "linux" if name.startswith("linux") else name


def min_driver(cuda_version: str, os_name: str = "linux", *,
               drivers: Mapping[str, Any]) -> Tuple[Optional[str], Optional[str]]:
    """(family minimum, toolkit GA driver) for a CUDA version on an OS; None where unknown.

    The family minimum is what minor-version compatibility needs (12.x: 525.60.13 on Linux); the
    toolkit GA driver (Table 3) is what full support, including PTX JIT, needs. `drivers` is the wheel
    index's `drivers` table.
    """
    osn = _norm_os(os_name)
    major, minor = require_major_minor(cuda_version, "CUDA version")
    fam = (drivers.get("families") or {}).get(str(major)) or {}
    tk = (drivers.get("toolkits") or {}).get(f"{major}.{minor}") or {}
    ga = (tk.get("toolkit_ga") or {}).get(osn)
    if tk.get("minor_version_compat") is False:
        return ga, ga
    family_min = fam.get(osn)
    if osn == "linux" and family_min and ga and parse(family_min) > parse(ga):  # type: ignore[operator]
        family_min = ga  # 11.0's own driver runs its builds (Windows 527.41-528.32 stays a grey zone: FACTS.md 2)
    return family_min, ga


def driver_supports(driver: str, cuda_version: str, os_name: str = "linux", *,
                    drivers: Mapping[str, Any]) -> Verdict:
    """Whether an NVIDIA driver runs a CUDA X.y build (minor-version compatibility within family X)."""
    d = parse(driver)
    if d is None:
        return Verdict(False, f"driver version {driver!r} cannot be read")
    family_min, ga = min_driver(cuda_version, os_name, drivers=drivers)
    need = parse(family_min)
    if need is None:
        return Verdict(False, f"no known minimum driver for CUDA {cuda_version} on {_norm_os(os_name)}")
    if d < need:
        return Verdict(False, f"driver {driver} < {family_min} needed by CUDA {cuda_version}")
    if (gv := parse(ga)) is not None and d < gv:
        return Verdict(True, f"driver {driver} runs CUDA {cuda_version} through minor-version compatibility "
                             f"(>= {family_min}; full support from {ga})")
    return Verdict(True, f"driver {driver} >= {ga or family_min} supports CUDA {cuda_version}")


def ptx_jit_ok(driver: str, cuda_version: str, os_name: str = "linux", *, drivers: Mapping[str, Any]) -> Verdict:
    """Whether the driver can JIT PTX made by CUDA X.y: it must be at least that toolkit's GA driver."""
    d = parse(driver)
    _family_min, ga = min_driver(cuda_version, os_name, drivers=drivers)
    if d is None:
        return Verdict(False, f"driver version {driver!r} cannot be read")
    need = parse(ga)
    if need is None:  # GA driver unknown (UNVERIFIED): not a fact to build on
        return Verdict(False, f"the driver that JIT-compiles CUDA {cuda_version} PTX is not known")
    if d < need:
        return Verdict(False, f"PTX JIT needs driver >= {ga} (CUDA {cuda_version} GA); driver {driver} "
                              "fails with CUDA_ERROR_UNSUPPORTED_PTX_VERSION")
    return Verdict(True, f"driver {driver} >= {ga} JIT-compiles CUDA {cuda_version} PTX")


def deepspeed_cuda_ok(nvcc_version: str, torch_cuda: str, mismatch_ok: Mapping[str, Iterable[str]]) -> Verdict:
    """DeepSpeed's op-builder check (op_builder/builder.py assert_no_cuda_mismatch).

    Equal major.minor passes; different minors pass only when both are listed under the major in
    DeepSpeed's `cuda_minor_mismatch_ok` (there is no 13 entry: any 13.x mismatch fails).
    """
    sys_mm = require_major_minor(nvcc_version, "CUDA version")
    t_mm = require_major_minor(torch_cuda, "CUDA version")
    sysv, tv, major = cc_label(sys_mm), cc_label(t_mm), str(sys_mm[0])
    if sysv == tv:
        return Verdict(True, f"nvcc {sysv} matches torch CUDA {tv}")
    ok_list = [str(x) for x in (mismatch_ok.get(major) or [])]
    if t_mm[0] == sys_mm[0] and sysv in ok_list and tv in ok_list:
        return Verdict(True, f"nvcc {sysv} differs from torch CUDA {tv}, but DeepSpeed accepts the pair "
                             f"(cuda_minor_mismatch_ok[{major}])")
    return Verdict(False, f"nvcc {sysv} does not match torch CUDA {tv}: DeepSpeed raises CUDAMismatchException "
                          "when it builds ops (DS_SKIP_CUDA_CHECK=1 overrides at your own risk)")


def toolkit_serves(cuda_version: str, compute_capability: str, nvcc_sass: Mapping[str, Iterable[str]]) -> Optional[Verdict]:
    """Whether any build made with CUDA X.y's nvcc can have a kernel for this GPU; None when that cannot be
    decided (the toolkit's targets are unknown, or the GPU lies inside their range: then the build's own arch
    list decides)."""
    mm = variant_cuda(cuda_variant(cuda_version)) or ""
    targets = [t for t in (parse_arch(a) for a in nvcc_sass.get(mm) or ()) if t is not None and t.kind == "sm"]
    if not targets:
        return None
    cc = parse_cc(compute_capability)
    low = min((t.major, t.minor) for t in targets)
    high = max(t.major for t in targets)
    if cc < low:
        return Verdict(False, f"CUDA {mm}'s nvcc targets sm_{low[0]}{low[1]} and newer: nothing it builds runs on "
                              f"compute capability {cc_label(cc)}")
    if cc[0] > high:
        return Verdict(False, f"CUDA {mm} predates compute capability {cc_label(cc)} (its nvcc knows up to "
                              f"sm_{high}x): builds made with it have no kernels for this GPU")
    return None


# --- used by the rules engine -----------------------------------------------------------------

def gpu_min_driver(compute_capability: str, os_name: str = "linux", *, drivers: Mapping[str, Any]) -> Optional[str]:
    """The oldest driver that can run a GPU of this compute capability at all, where one is known: the GA driver
    of the first CUDA toolkit that knew its architecture (the index's `drivers.gpu_major_floor`)."""
    major, _ = parse_cc(compute_capability)
    floor = (drivers.get("gpu_major_floor") or {}).get(str(major)) or {}
    return floor.get(_norm_os(os_name)) or None


def wheel_platform(os_name: str, arch: str) -> Optional[str]:
    """The wheel platform of an OS and machine as platform.system()/machine() print them ('linux', 'x86_64'
    -> 'linux_x86_64'); None when envdoctor does not name it."""
    osn, a = str(os_name).lower(), str(arch).lower()
    a = {"amd64": "x86_64", "x64": "x86_64", "aarch64": "arm64"}.get(a, a)
    kind = "win" if osn.startswith("win") else "macos" if osn in ("darwin", "macos", "mac", "osx") else \
        "linux" if osn.startswith("linux") else None
    if kind is None or a not in ("x86_64", "arm64"):
        return None
    if kind == "win":
        return "win_amd64" if a == "x86_64" else "win_arm64"
    if kind == "linux":
        return "linux_x86_64" if a == "x86_64" else "linux_aarch64"
    return f"macos_{a}"


def driver_os(os_name: str, wsl: object = False) -> str:
    """WSL reports the Windows driver's version, so Windows minimums apply there."""
    return "windows" if _norm_os(os_name) == "windows" or wsl is True else "linux"


# Kept for rules/predicates.py, which is outside this change: new code uses envdoctor.versions directly.
driver_version = parse


def cuda_major_minor(cuda: str) -> Tuple[int, int]:
    return require_major_minor(cuda, "CUDA version")
