"""Named predicates of the machine rules: what needs real computation. Each takes the evaluation context
and returns a falsy value (no match, or cannot tell) or a dict of names the rule's templates may use.
They register in the one predicate registry (`envdoctor.rules.conditions.PREDICATES`)."""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional, Union

from packaging.version import Version

from envdoctor import compat
from envdoctor.cpulist import parse_cpulist
from envdoctor.rules.conditions import Context, predicate
from envdoctor.rules.runtime_predicates import meaning
from envdoctor.snapshot import Gpu, Snapshot, Unknown, is_unavailable, known_list, present
from envdoctor.versions import cudnn_human, major_minor, parse, series

Result = Union[bool, None, Dict[str, Any]]


def _mm(pair: tuple) -> str:
    return f"{pair[0]}.{pair[1]}"


def _oses(s: Snapshot) -> List[str]:
    """The driver OS whose minimums apply; both when the OS is unknown (a claim must then hold for both)."""
    if not present(s.host.os):
        return ["linux", "windows"]
    return [compat.driver_os(s.host.os, s.host.wsl is True)]


def _gpu_name(g: Gpu) -> str:
    return str(g.name) if present(g.name) else f"GPU {g.index}"


def _torch_cuda(s: Snapshot) -> Optional[str]:
    t = s.torch
    return t.cuda if present(t) and t.importable and present(t.cuda) else None


@predicate("verdict")
def driver_fits_torch(ctx: Context) -> Result:
    """The driver is known to meet the minimum of torch's CUDA: the driver, torch's CUDA and that CUDA's
    minimum driver are all known. Anything less is unknown, never 'fits'."""
    s = ctx.snapshot
    t = s.torch
    if not present(t) or not present(t.importable) or not present(s.driver) or not present(s.driver.version):
        return Unknown("torch or the driver is unknown")
    cuda = _torch_cuda(s)
    if cuda is None or compat.driver_version(s.driver.version) is None:
        return Unknown("torch's CUDA or the driver version is unknown")
    why = []
    for osn in _oses(s):
        needed, _ga = compat.min_driver(cuda, osn, drivers=ctx.index.drivers)
        if needed is None:
            return Unknown(f"the minimum driver for CUDA {cuda} is not known")
        verdict = compat.driver_supports(s.driver.version, cuda, osn, drivers=ctx.index.drivers)
        if not verdict.ok:
            return False
        why.append(verdict.why)
    return {"verdict": "; ".join(why)}


@predicate("needed_driver", "cuda", "verdict", reads=("runtime_errors",))
def driver_too_old_for_torch(ctx: Context) -> Result:
    s = ctx.snapshot
    cuda = _torch_cuda(s)
    if cuda is None:
        return None
    if not present(s.driver) or compat.driver_version(s.driver.version) is None:
        return _driver_too_old_said_by_torch(ctx, cuda)  # an unreadable version is not an old one by itself
    out = None
    for osn in _oses(s):
        verdict = compat.driver_supports(s.driver.version, cuda, osn, drivers=ctx.index.drivers)
        needed, _ga = compat.min_driver(cuda, osn, drivers=ctx.index.drivers)
        if verdict.ok or needed is None:
            return None
        out = out or {"needed_driver": needed, "cuda": cuda, "verdict": verdict.why}
    return out


_FOUND_VERSION = re.compile(r"found version (\d{4,6})")


def _driver_too_old_said_by_torch(ctx: Context, cuda: str) -> Result:
    """The driver's version was not read, but torch's CUDA initialisation said the driver is too old, with the
    CUDA version the driver supports ('found version 11000' = 11.0). Quiet when that version would run torch's
    CUDA (contradictory facts are ED111's to report) or when the message is not torch's 'too old' one."""
    t = ctx.snapshot.torch
    text = t.cuda_init_error if present(t) and isinstance(t.cuda_init_error, str) else ""
    said = meaning(ctx, "cuda_init", text) if text else None
    if said is None or said.key != "driver_too_old":
        return None
    found = _FOUND_VERSION.search(text)
    if found is None:
        return None
    number = int(found.group(1))
    have = f"{number // 1000}.{(number % 1000) // 10}"
    drivers = ctx.index.drivers
    needed = None
    for osn in _oses(ctx.snapshot):
        # a driver whose newest CUDA is `have` is at least that toolkit's GA driver
        lowest = compat.min_driver(have, osn, drivers=drivers)[1]
        if lowest and compat.driver_supports(lowest, cuda, osn, drivers=drivers).ok:
            return None  # it runs torch's CUDA (minor-version compatibility): the message contradicts the number
        needed = needed or compat.min_driver(cuda, osn, drivers=drivers)[0]
    if needed is None:
        return None
    return {"needed_driver": needed, "cuda": cuda,
            "verdict": f"torch's CUDA initialisation found a driver for CUDA {have} only"}


def pypi_build_cuda(index: Any, version: str, platform: str) -> Optional[str]:
    """The CUDA version of the PyPI wheel of an unlabelled torch `version` (no '+cu…' local label, as `pip list`
    prints it, and as torch 1.0-1.8's pip wheels name themselves) on `platform`; None when that wheel is a CPU
    build or the facts do not say."""
    if "+" in version:
        return None
    if platform == "linux_x86_64" and version in index.pypi_unlabelled:
        return str(index.pypi_unlabelled[version])
    rel = index.release(version)
    named = rel.pypi_default.get(platform) if rel is not None else None
    variant = rel.variants.get(named) if rel is not None and named else None
    cuda = getattr(variant, "cuda", None)
    return str(cuda) if cuda else None


@predicate("needed_driver", "cuda", "state")
def driver_too_old_for_pypi_build(ctx: Context) -> Result:
    """torch.version.cuda is not known, CUDA is not known to work, and the PyPI wheel of this unlabelled torch
    version for this platform was built with a CUDA this driver does not run. conda builds of the same version
    may use another CUDA, so this is a likely cause, not a fact."""
    s = ctx.snapshot
    t = s.torch
    if not present(t) or t.importable is not True or present(t.cuda) or is_unavailable(t.cuda):
        return None
    if t.cuda_available is True or not present(t.version) or not present(s.driver):
        return None
    if compat.driver_version(s.driver.version) is None or not (present(s.host.os) and present(s.host.arch)):
        return None
    if _oses(s) != ["linux"]:
        return None
    cuda = pypi_build_cuda(ctx.index, str(t.version), compat.wheel_platform(s.host.os, s.host.arch))
    if cuda is None:
        return None
    verdict = compat.driver_supports(s.driver.version, cuda, "linux", drivers=ctx.index.drivers)
    needed, _ga = compat.min_driver(cuda, "linux", drivers=ctx.index.drivers)
    if verdict.ok or needed is None:
        return None
    state = ("torch reports CUDA unavailable" if t.cuda_available is False
             else "whether torch can use CUDA was not reported")
    return {"needed_driver": needed, "cuda": series(cuda) or cuda, "state": state}


@predicate("needed_driver")
def driver_too_old_for_gpu(ctx: Context) -> Result:
    s = ctx.snapshot
    gpu: Gpu = ctx.bound["gpu"]
    if not present(gpu.compute_capability):
        return None
    if not present(s.driver) or not present(s.driver.version):
        return None
    have, out = parse(s.driver.version), None
    for osn in _oses(s):
        need = compat.gpu_min_driver(gpu.compute_capability, osn, drivers=ctx.index.drivers)
        want = parse(need) if need else None
        if have is None or want is None or have >= want:
            return None
        out = out or {"needed_driver": need}
    return out


@predicate("arch_list", "sm", "why", "then")
def gpu_without_kernels(ctx: Context) -> Result:
    """`_gpu_without_kernels`, with `then`: what `envdoctor fix` does about it. When the driver predates the GPU
    no torch build runs on it, and `fix` plans nothing until the driver is upgraded."""
    found = _gpu_without_kernels(ctx)
    if not found:
        return found
    old = driver_too_old_for_gpu(ctx) if ctx.index is not None else None
    if old:
        found["then"] = (f"driver {ctx.snapshot.driver.version} predates this GPU (it needs >= {old['needed_driver']}), so "
                         "no torch build runs on it yet and `envdoctor fix` plans nothing: upgrade the NVIDIA driver "
                         "first, then it chooses a build that runs on every GPU")
    else:
        found["then"] = "it chooses one that runs on every GPU with this driver"
    return found


def _gpu_without_kernels(ctx: Context) -> Result:
    """torch has CUDA kernels, but none (SASS or PTX) that runs on this GPU. The arch list is torch's own, else
    the index's for the variant its version names (`get_arch_list()` is [] whenever CUDA cannot start), else
    only what its CUDA version's nvcc can emit at all decides; anything less certain stays quiet."""
    s = ctx.snapshot
    gpu: Gpu = ctx.bound["gpu"]
    cuda = _torch_cuda(s)
    if cuda is None and present(s.torch) and s.torch.importable is True and not is_unavailable(s.torch.cuda):
        cuda = _label_cuda(s.torch)
    if not present(gpu.compute_capability):
        return None
    sm = "sm_" + gpu.compute_capability.replace(".", "")
    if cuda is None:
        own = _own_cuda_arch_list(s.torch)
        if own is None:
            return None
        match = compat.serving_kernel(own, gpu.compute_capability)
        if match.via != "none":
            return None  # with torch's CUDA unknown, whether its PTX can be JIT-compiled here is unknown too
        return {"arch_list": f"[{' '.join(own)}]", "sm": sm, "why": match.why}
    archs, source = _torch_arch_list(ctx, cuda)
    toolkit = compat.toolkit_serves(cuda, gpu.compute_capability, ctx.index.nvcc_sass) if ctx.index else None
    if archs is not None:
        match = compat.serving_kernel(archs, gpu.compute_capability)
        if match.via == "sass" or (match.via == "ptx" and toolkit is None):
            return None
        why = match.why if not match.ok else f"only PTX {match.target} could serve it; {toolkit.why}"
        return {"arch_list": f"[{' '.join(archs)}]{source}", "sm": sm, "why": why}
    if toolkit is None or toolkit.ok:
        return None
    return {"arch_list": f"not reported, and it was built with CUDA {cuda}", "sm": sm, "why": toolkit.why}


def _own_cuda_arch_list(t: Any) -> Optional[List[str]]:
    """torch's own non-empty arch list when every entry is a CUDA target: only a CUDA build lists sm_/compute_
    targets, so the list alone says which GPUs it has kernels for, whatever its CUDA version."""
    if not present(t) or is_unavailable(t.cuda) or not present(t.arch_list) or not t.arch_list:
        return None
    archs = [str(a) for a in t.arch_list]
    return archs if all(compat.parse_arch(a) is not None for a in archs) else None


def _torch_arch_list(ctx: Context, cuda: str) -> tuple:
    """(arch list, where it came from) of the installed torch; (None, '') when unknown."""
    t = ctx.snapshot.torch
    if present(t.arch_list) and t.arch_list:
        return list(t.arch_list), ""
    version = str(t.version) if present(t.version) else ""
    label = version.split("+", 1)[1] if "+" in version else None
    rel = ctx.index.release(version) if label and ctx.index else None
    var = rel.variants.get(label) if rel is not None else None
    platform = compat.wheel_platform(ctx.snapshot.host.os, ctx.snapshot.host.arch) \
        if present(ctx.snapshot.host.os) and present(ctx.snapshot.host.arch) else None
    if var is None or var.cuda != ".".join(map(str, compat.cuda_major_minor(cuda))) or platform not in var.platforms:
        return None, ""
    row = var.platforms[platform]
    if row.get("status") == "UNVERIFIED":
        return None, ""  # a guessed list is no ground for "no kernel"
    archs = [*row.get("sm", []), *row.get("ptx", []), *row.get("sm_unverified", []), *row.get("ptx_unverified", [])]
    if not archs:
        return None, ""
    return archs, f" (the wheel index's list for torch {rel.version} {label} on {platform})"


@predicate("missing_kernels")
def extension_without_kernels(ctx: Context) -> Result:
    ext = ctx.bound["ext"]
    if not present(ext.arch_list) or not ext.arch_list:
        return None
    missing = [f"GPU {g.index} ({g.name}, sm_{g.compute_capability.replace('.', '')})" if present(g.name)
               else f"GPU {g.index} (sm_{g.compute_capability.replace('.', '')})"
               for g in known_list(ctx.snapshot.gpus)
               if present(g.compute_capability) and not compat.serving_kernel(ext.arch_list, g.compute_capability)]
    return {"missing_kernels": "; ".join(missing)} if missing else None


@predicate("built_with", "running")
def deepspeed_built_for_other_torch(ctx: Context) -> Result:
    s = ctx.snapshot
    ds, t = s.deepspeed, s.torch
    if not (present(ds) and present(ds.torch_info) and present(t) and t.importable):
        return None
    ops = ds.extra.get("installed_ops")  # op -> prebuilt; anything else is unknown
    if isinstance(ops, dict) and ops and not any(ops.values()):
        return None  # nothing prebuilt: JIT builds against the torch that is there
    built = major_minor(ds.torch_info.get("version"))
    running = major_minor(t.version)
    if built and running and built != running:
        return {"built_with": _mm(built), "running": _mm(running)}
    return None


@predicate("library", "loaded_path", "wheel_version", "loaded_version", "severity_hint")
def shadowed_library(ctx: Context) -> Result:
    """torch mapped a cuDNN/NCCL from outside its environment: a system copy shadows the wheel's."""
    t = ctx.snapshot.torch
    if not (present(t) and t.importable and present(t.loaded_libraries) and present(t.path)):
        return None
    site = os.path.dirname(os.path.dirname(str(t.path)))
    for lib in ("cudnn", "nccl"):
        path = t.loaded_libraries.get(lib)
        if not path or path.startswith(site + os.sep):
            continue
        loaded_version = _version_in_name(path)
        wheel = getattr(t, lib)
        wheel_version = (cudnn_human(wheel) if lib == "cudnn" else str(wheel)) if present(wheel) else "unknown"
        # A different major is only claimed when both versions are known.
        hint = ("major" if present(wheel) and loaded_version and wheel_version[:1] != loaded_version[:1]
                else "minor")
        return {"library": lib, "loaded_path": path, "wheel_version": wheel_version,
                "loaded_version": loaded_version or "unknown", "severity_hint": hint}
    return None


def _version_in_name(path: str) -> Optional[str]:
    m = re.search(r"\.so\.(\d+(?:\.\d+)*)$", path)
    return m.group(1) if m else None


@predicate("nvcc", "cuda", "nvcc_major", "how")
def toolkit_major_mismatch(ctx: Context) -> Result:
    s = ctx.snapshot
    tk = s.cuda_toolkit
    if not present(tk) or not present(tk.nvcc_version):
        return None
    major, cuda, how = _torch_cuda_major(s)
    nvcc_major = compat.cuda_major_minor(tk.nvcc_version)[0]
    if major is not None and nvcc_major != major:
        return {"nvcc": tk.nvcc_version, "cuda": cuda, "nvcc_major": str(nvcc_major), "how": how}
    return None


_CUDA_WHEEL = re.compile(r"^(?:nvidia-[a-z0-9-]+-cu|cuda-toolkit.*==)(\d+)", re.I)


def _label_cuda(t: Any) -> Optional[str]:
    """The CUDA version torch's local version label names ('2.5.1+cu124' -> '12.4'), else None."""
    version = str(t.version) if present(t.version) else ""
    return compat.variant_cuda(version.split("+", 1)[1]) if "+" in version else None


def _torch_cuda_major(s: Snapshot) -> tuple:
    """(CUDA major, its CUDA as text, where that came from) of the installed torch: torch.version.cuda, else
    the CUDA variant its version names (+cu121), else the CUDA wheels its Requires-Dist names (only PyPI's CUDA
    builds require nvidia-*-cuNN); (None, '', '') when none of them is known."""
    t = s.torch
    if not present(t) or t.importable is not True or is_unavailable(t.cuda):
        return None, "", ""  # not installed, or a CPU build
    cuda = _torch_cuda(s)
    if cuda is not None:
        return compat.cuda_major_minor(cuda)[0], cuda, "torch.version.cuda"
    label_cuda = _label_cuda(t)
    if label_cuda:
        return compat.cuda_major_minor(label_cuda)[0], label_cuda, f"its version {t.version}"
    wheels = t.nvidia_wheels if present(t.nvidia_wheels) and isinstance(t.nvidia_wheels, dict) else {}
    names = [name for name, row in wheels.items() if present(getattr(row, "required", None)) and row.required]
    names += [str(r) for r in t.extra.get("requires_dist") or []]
    majors = {int(m.group(1)) for m in (_CUDA_WHEEL.match(n.strip()) for n in names) if m}
    if len(majors) == 1:
        major = majors.pop()
        return major, f"{major}.x", f"its requirements name CUDA {major} wheels"
    return None, "", ""


@predicate("nvcc", "cuda")
def deepspeed_cuda_mismatch(ctx: Context) -> Result:
    """DeepSpeed's own check: nvcc and torch's CUDA agree in major.minor, or both sit in its
    `cuda_minor_mismatch_ok` list (from the wheel index; there is none for 13.x)."""
    s = ctx.snapshot
    cuda = _torch_cuda(s)
    tk = s.cuda_toolkit
    if cuda is None or not present(s.deepspeed) or not present(tk) or not present(tk.nvcc_version):
        return None
    index = ctx.index
    ds = next((r for r in index.deepspeed if str(r.key) == str(s.deepspeed.version)), None) or index.deepspeed[0]
    if compat.deepspeed_cuda_ok(tk.nvcc_version, cuda, ds.cuda_minor_mismatch_ok):
        return None
    return {"nvcc": _mm(compat.cuda_major_minor(tk.nvcc_version)), "cuda": _mm(compat.cuda_major_minor(cuda))}


@predicate("ifname", "interfaces")
def socket_ifname_matches_nothing(ctx: Context) -> Result:
    """NCCL_SOCKET_IFNAME semantics: comma list of prefixes; '^' excludes; '=' means exact names."""
    s = ctx.snapshot
    value = s.env.get("NCCL_SOCKET_IFNAME") if present(s.env) else None
    if not value or not present(s.network) or not present(s.network.interfaces):
        return None
    names = [i.name for i in s.network.interfaces]
    if not all(present(n) for n in names):
        return Unknown("an interface's name is unknown")
    spec = value.strip()
    exclude = spec.startswith("^")
    spec = spec.lstrip("^")
    exact = spec.startswith("=")
    spec = spec.lstrip("=")
    parts = [p.strip() for p in spec.split(",") if p.strip()]

    def hit(name: str) -> bool:
        return any(name == p if exact else name.startswith(p) for p in parts)

    usable = [n for n in names if (not hit(n)) == exclude and n != "lo"] if exclude else [n for n in names if hit(n)]
    if usable:
        return None
    return {"ifname": value, "interfaces": ", ".join(n for n in names if n != "lo") or "none"}


@predicate("python_mm", "where", "releases", "newest", "supported", "last")
def python_unsupported(ctx: Context) -> Result:
    """No torch release of the snapshot's time has a wheel for this CPython on this platform.

    The releases judged are those the planner installs (torch 2.0 on), published by the snapshot's date;
    a snapshot older than all of them is judged by the releases of its time, and one without a date by every
    release there was. An installed torch (even one that does not import) is the proof that one existed,
    and a release whose wheels for this platform are not known keeps the claim from being made."""
    s = ctx.snapshot
    if present(s.torch) or not present(s.python.version) or s.python.free_threaded is True:
        return None
    if present(s.python.implementation) and str(s.python.implementation).lower() not in ("cpython", "cp"):
        return None  # PyPy and others: their own rule
    py = major_minor(s.python.version)
    if py is None:
        return None
    index = ctx.index
    platform = compat.wheel_platform(s.host.os, s.host.arch) if present(s.host.os) and present(s.host.arch) else None
    dated = re.match(r"^\d{4}-\d{2}-\d{2}", str(s.created or ""))
    published = [w for w in index.wheels if not dated or w.uploaded <= str(s.created)[:10]]
    planned = min((r.key for r in index.releases), default=None)
    # Without a date, only what no release ever had is claimed.
    judged = published if not dated else [w for w in published if planned is not None and w.version >= planned] \
        or published
    if not judged:
        return None
    platforms = [platform] if platform else sorted({p for w in index.wheels for p in w.pythons})
    for w in judged:
        for plat in platforms:
            has = _wheel_for(index, w, plat, py)
            if has is not False:
                return None  # a wheel, or cannot tell
    mm = f"{py[0]}.{py[1]}"
    newest = judged[-1]
    shown = [p for p in newest.pythons.get(platform, []) if not p.endswith("t")] if platform else []
    last = next((w for w in reversed(published) if w.version < judged[0].version
                 and any(_wheel_for(index, w, plat, py) for plat in platforms)), None)
    return {"python_mm": mm, "where": f" on {platform}" if platform else "",
            "releases": f"torch {judged[0].version}-{newest.version}", "newest": str(newest.version),
            "supported": f"Python {shown[0]}-{shown[-1]}" if shown else "no wheel at all",
            "last": f" The last torch with wheels for Python {mm} was {last.version}." if last else ""}


@predicate("needed_driver", "python_mm", "platform", "releases")
def driver_too_old_for_any_torch(ctx: Context) -> Result:
    """torch is not installed, and every CUDA build of every torch with a wheel for this Python and platform
    (published by the snapshot's date) needs a newer driver. A release whose builds or wheels the index does not
    know keeps the claim from being made, except one newer than every release it knows: no torch release has
    dropped to an older CUDA than its predecessor's oldest."""
    s = ctx.snapshot
    if not is_unavailable(s.torch) or not present(s.driver) or compat.driver_version(s.driver.version) is None:
        return None
    if not present(s.python.version) or not present(s.host.os) or not present(s.host.arch):
        return None
    py = major_minor(s.python.version)
    platform = compat.wheel_platform(s.host.os, s.host.arch)
    if py is None or platform is None or s.python.free_threaded is True:
        return None
    day = str(s.created)[:10] if re.match(r"^\d{4}-\d{2}-\d{2}", str(s.created or "")) else "9999-12-31"
    minors = set()
    for w in ctx.index.wheels:
        if w.uploaded > day:
            continue
        has = _wheel_for(ctx.index, w, platform, py)
        if has is None:
            return None
        if has:
            minors.add(f"{w.version.major}.{w.version.minor}")
    if not minors:
        return None  # no torch at all for this Python: ED106's finding
    needs = []
    newest = ctx.index.releases[0].key if ctx.index.releases else None
    for minor in minors:
        rel = ctx.index.release(minor)
        if rel is None and newest is not None and Version(minor) > newest:
            continue  # newer than the index: its oldest CUDA is no older than the newest known release's
        cuda = [v for v in rel.variants.values() if v.kind == "cuda" and platform in v.platforms] if rel else []
        if not cuda:
            return None  # its CUDA builds for this platform are not known
        for var in cuda:
            for osn in _oses(s):
                need, _ga = compat.min_driver(var.cuda or "", osn, drivers=ctx.index.drivers)
                if need is None:
                    return None
                needs.append((parse(need), need))
    lowest = min(needs)
    if parse(s.driver.version) >= lowest[0]:
        return None
    ordered = sorted(minors, key=parse)
    return {"needed_driver": lowest[1], "python_mm": f"{py[0]}.{py[1]}", "platform": platform,
            "releases": f"torch {ordered[0]}" if len(ordered) == 1 else f"torch {ordered[0]}-{ordered[-1]}"}


def _wheel_for(index: Any, w: Any, platform: str, py: tuple) -> Optional[bool]:
    """Whether a torch release has a wheel for CPython `py` on `platform`: PyPI's list, else what other indexes
    are known to hold; None when that cannot be told."""
    mm = f"{py[0]}.{py[1]}"
    if platform in w.pythons:
        return mm in w.pythons[platform]
    for other in index.other_indexes:
        if other.platform != platform or not other.releases.contains(w.version, prereleases=True):
            continue
        if other.first_release is not None and w.version < other.first_release:
            return False  # none anywhere before then
        newest = max((major_minor(p.rstrip("t")) for ps in w.pythons.values() for p in ps if major_minor(p.rstrip("t"))),
                     default=None)
        return False if newest is not None and py > newest else None  # no release shipped a Python newer than it knew
    return False


@predicate("nccl", "needed_nccl", "gpu_name", reads=("nccl_min_for_gpu",))
def nccl_too_old_for_gpu(ctx: Context) -> Result:
    """torch's NCCL predates the newest GPU's generation (rules/tables/nccl_min_for_gpu.json)."""
    t = ctx.snapshot.torch
    gpus = known_list(ctx.snapshot.gpus)
    if not (present(t) and t.importable and present(t.nccl)) or not gpus:
        return None
    if not all(present(g.compute_capability) for g in gpus):
        return Unknown("a GPU's compute capability is unknown")
    have = parse(t.nccl)
    newest = max(gpus, key=lambda g: compat.cc_number(g.compute_capability))
    for floor in ctx.tables.nccl_min_for_gpu:  # newest generation first
        if compat.cc_number(newest.compute_capability) >= compat.cc_number(floor.min_cc):
            want = parse(floor.nccl)
            if have is not None and want is not None and have < want:
                return {"nccl": t.nccl, "needed_nccl": floor.nccl, "gpu_name": _gpu_name(newest)}
            return None
    return None


@predicate("gpu_cpus", "process_cpus")
def gpu_cpus_outside_affinity(ctx: Context) -> Result:
    s = ctx.snapshot
    gpu: Gpu = ctx.bound["gpu"]
    if not present(gpu.cpu_affinity) or not present(s.host.process_cpus):
        return None
    near = set(parse_cpulist(gpu.cpu_affinity))
    allowed = set(parse_cpulist(s.host.process_cpus))
    if near and allowed and not (near & allowed):
        return {"gpu_cpus": gpu.cpu_affinity, "process_cpus": s.host.process_cpus}
    return None


@predicate("causes")
def p2p_blocked(ctx: Context) -> Result:
    s = ctx.snapshot
    topo = s.topology
    if not present(topo) or not present(topo.p2p) or len(known_list(s.gpus)) < 2:
        return None
    blocked = [(i, j) for i, row in enumerate(topo.p2p) for j, v in enumerate(row) if i < j and v is False]
    if not blocked:
        return None
    causes: List[str] = []
    names = [str(g.name) for g in s.gpus if present(g.name)]
    if any("GeForce" in n or "RTX" in n and "RTX A" not in n for n in names):
        causes.append("GeForce/RTX consumer GPUs have peer-to-peer disabled by the driver")
    if present(s.host.acs_enabled_bridges) and s.host.acs_enabled_bridges:
        causes.append(f"{s.host.acs_enabled_bridges} PCIe bridge(s) have ACS redirect on, "
                      "which routes P2P through the root complex")
    if s.host.iommu == "translated":
        causes.append("the IOMMU translates DMA addresses (not passthrough)")
    if not causes:
        causes.append("the GPUs sit under different root complexes or the platform blocks P2P")
    pairs = ", ".join(f"{i}-{j}" for i, j in blocked[:8]) + (" ..." if len(blocked) > 8 else "")
    return {"causes": "; ".join(causes) + f" (pairs {pairs})"}


@predicate("links")
def nvlink_present(ctx: Context) -> Result:
    links = [g.nvlink.links_active for g in known_list(ctx.snapshot.gpus)
             if present(g.nvlink) and present(g.nvlink.links_active) and g.nvlink.links_active]
    return {"links": max(links)} if links else None


@predicate("shm_mib", "needed_mib", reads=("shm",))
def shm_too_small(ctx: Context) -> Result:
    s = ctx.snapshot
    if not present(s.host.shm_bytes) or not known_list(s.gpus):
        return None
    need = max(ctx.tables.shm_min_mib, ctx.tables.shm_per_gpu_mib * len(s.gpus))  # rules/tables/shm.json
    have = s.host.shm_bytes // (1 << 20)
    return {"shm_mib": have, "needed_mib": need} if have < need else None


@predicate("name")
def probe_went_wrong(ctx: Context) -> Result:
    p = ctx.bound["probe"]
    return {"name": p.name} if p.status in ("failed", "timeout") else None


@predicate()
def shadowed_library_major(ctx: Context) -> Result:
    found = shadowed_library(ctx)
    return isinstance(found, dict) and found["severity_hint"] == "major"


@predicate()
def p2p_all_available(ctx: Context) -> Result:
    topo = ctx.snapshot.topology
    if not present(topo) or not present(topo.p2p) or len(topo.p2p) < 2:
        return None
    return all(v is True for i, row in enumerate(topo.p2p) for j, v in enumerate(row) if i != j)


@predicate("ratio")
def pcie_width_below_max(ctx: Context) -> Result:
    p = ctx.bound["gpu"].pcie
    if not (present(p) and present(p.width) and present(p.max_width)) or p.width >= p.max_width:
        return None
    return {"ratio": f"{p.width}/{p.max_width}"}


@predicate()
def pcie_gen_below_max(ctx: Context) -> Result:
    p = ctx.bound["gpu"].pcie
    return present(p) and present(p.gen) and present(p.max_gen) and p.gen < p.max_gen


@predicate()
def driver_version_unreadable(ctx: Context) -> Result:
    d = ctx.snapshot.driver
    return present(d) and present(d.version) and compat.driver_version(d.version) is None


@predicate()
def fabric_manager_mismatch(ctx: Context) -> Result:
    s = ctx.snapshot
    fm = s.fabric_manager
    return (present(s.driver) and compat.driver_version(s.driver.version) is not None and present(fm)
            and present(fm.version) and fm.version != s.driver.version)


@predicate("triton_requirement", "triton_windows_requirement", reads=("triton_pins",))
def triton_pin_of_torch(ctx: Context) -> Result:
    """The Triton requirement torch's release pins ('triton==3.4.*', triton_pins.json), and its Windows build's
    (triton-windows, released per Triton X.Y), for the fix of a missing Triton; '' when the table does not know the
    release (the fix then cannot be planned, the finding stands)."""
    t = ctx.snapshot.torch
    mm = major_minor(t.version) if present(t) and present(t.version) else None
    want = ctx.tables.triton_pins.get(_mm(mm)) if mm else None
    return {"triton_requirement": f"triton=={want}.*" if want else "",
            "triton_windows_requirement": f"triton-windows=={want}.*" if want else ""}


@predicate("triton", "expected_triton", reads=("triton_pins",))
def triton_mismatch(ctx: Context) -> Result:
    s = ctx.snapshot
    t = s.torch
    have = next((v for v in (s.package("triton"), s.package("pytorch-triton")) if present(v) and v), None)
    if not (present(t) and t.importable and present(t.cuda) and have):
        return None
    mm = major_minor(t.version)
    want = ctx.tables.triton_pins.get(_mm(mm)) if mm else None
    got = major_minor(have)
    if want is None or got is None or _mm(got) == want:
        return None
    return {"triton": have, "expected_triton": want}


@predicate("torch_needed")
def deepspeed_needs_other_torch(ctx: Context) -> Result:
    s = ctx.snapshot
    ds, t = s.deepspeed, s.torch
    if not (present(ds) and present(ds.version) and present(t) and present(t.version)):
        return None
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    have = parse(ds.version)
    releases = [r for r in ctx.index.deepspeed if have is None or r.key <= have]
    spec = str(releases[0].torch) if releases else ""
    if not spec:
        return None
    try:
        ok = SpecifierSet(spec).contains(parse(t.version).base_version, prereleases=True)
    except (InvalidSpecifier, AttributeError):
        return None
    return None if ok else {"torch_needed": spec}

