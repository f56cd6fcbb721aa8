"""The planner: (machine, wheel index, wishes) -> the torch (and DeepSpeed) install that runs here.

A pure function: it reads plain values pulled from a snapshot (`MachineFacts`) and the index, and
returns a `Plan` whose JSON is `envdoctor.plan/1`. Nothing here runs a process or touches the network.

Choice, in order: a working install is kept unless `--torch SPEC` excludes it; a broken one is fixed
by the smallest change (the same minor release with another variant when one works); otherwise the
newest release with a build that has kernels for every GPU, whose CUDA the driver supports and that
has a wheel for this Python and platform. Within a release: a variant DeepSpeed can build ops for
with the local nvcc (when DeepSpeed is wanted), then one the driver fully supports (no reliance on
minor-version compatibility), then the PyPI default, then the newest CUDA.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from envdoctor import compat
from envdoctor.redact import scrub_secrets
from envdoctor.snapshot import Snapshot, as_partial, is_unknown, partial_reason, present
from envdoctor.versions import major_minor, require_major_minor, series
from envdoctor.versions import parse as parse_version
from envdoctor.wheels.index import DeepSpeedRelease, Release, Variant, WheelIndex
from envdoctor.wheels.wishes import Wishes

PLAN_SCHEMA = "envdoctor.plan/1"


@dataclass
class GpuFact:
    index: int
    name: str  # "" when unknown (a GPU named on the command line without --gpu-name)
    cc: str

    @property
    def label(self) -> str:
        """'GPU 0 NVIDIA H100' or, without a name, 'GPU 0'."""
        return f"GPU {self.index} {self.name}" if self.name else f"GPU {self.index}"


@dataclass
class MachineFacts:
    """What the planner needs from a snapshot, as plain values."""

    os: str = "linux"
    arch: str = "x86_64"
    python: str = ""  # "3.12" or "3.13t"
    driver: Optional[str] = None
    gpus: List[GpuFact] = field(default_factory=list)
    torch_version: Optional[str] = None  # "2.5.1+cu124"; None when torch is not importable/installed
    torch_cuda: Optional[str] = None
    torch_cuda_unknown: str = ""  # why torch.version.cuda is unknown (the probe failed); "" when it was read
    torch_arch_list: Optional[List[str]] = None
    torch_cuda_available: Optional[bool] = None
    torch_broken: Optional[str] = None  # import error
    packages: Dict[str, str] = field(default_factory=dict)  # a PartialMap when the snapshot's list is partial
    nvcc: Optional[str] = None
    ninja: Optional[bool] = None
    libaio: Optional[bool] = None
    deepspeed_healthy: Optional[bool] = None  # False: it does not import, or its prebuilt ops are for another torch
    torch_cxx11_abi: Optional[bool] = None  # torch._C._GLIBCXX_USE_CXX11_ABI; None when not read

    @property
    def platform(self) -> Optional[str]:
        osn, arch = self.os.lower(), self.arch.lower()
        if osn == "linux" and arch in ("x86_64", "amd64"):
            return "linux_x86_64"
        if osn == "linux" and arch in ("aarch64", "arm64"):
            return "linux_aarch64"
        if osn.startswith("win") and arch in ("x86_64", "amd64"):
            return "win_amd64"
        return None


@dataclass
class PlannedPackage:
    name: str
    version: str
    variant: str
    index_url: Optional[str]
    reason: str
    pin: str
    status: str = "verified"

    def to_json(self) -> Dict[str, Any]:
        index_url = scrub_secrets(self.index_url) if self.index_url else self.index_url  # credentials stay here
        return {"name": self.name, "version": self.version, "variant": self.variant, "index_url": index_url,
                "reason": self.reason, "pin": self.pin, "status": self.status}


@dataclass
class Rejected:
    name: str
    version: str
    variant: str
    why: str

    def to_json(self) -> Dict[str, Any]:
        return {"name": self.name, "version": self.version, "variant": self.variant, "why": self.why}


@dataclass
class Plan:
    status: str  # planned | nothing_to_do | impossible (installed | rolled_back are set by the installer)
    packages: List[PlannedPackage] = field(default_factory=list)
    rejected: List[Rejected] = field(default_factory=list)
    commands: List[List[str]] = field(default_factory=list)
    reason: str = ""
    upgrade: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    kept: List[str] = field(default_factory=list)
    env: Dict[str, str] = field(default_factory=dict)
    python: str = ""
    platform: Optional[str] = None
    deepspeed_ops: Optional[Dict[str, Any]] = None
    steps: List[Any] = field(default_factory=list)  # wheels.steps.FixStep: the findings each install answers
    requirements: List[str] = field(default_factory=list)  # specs pip's resolver installs with torch held
    rebuilds: List[str] = field(default_factory=list)  # name==version rebuilt without build isolation (unsafe)
    files: List[str] = field(default_factory=list)  # URLs of release wheels from outside the index (flash-attn's)

    @property
    def torch(self) -> Optional[PlannedPackage]:
        return next((p for p in self.packages if p.name == "torch"), None)

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "schema": PLAN_SCHEMA,
            "status": self.status,
            "reason": self.reason,
            "packages": [p.to_json() for p in self.packages],
            "rejected": [r.to_json() for r in self.rejected],
            "commands": [list(c) for c in self.commands],
            "python": self.python,
            "platform": self.platform,
            "kept": list(self.kept),
            "upgrade": list(self.upgrade),
            "notes": list(self.notes),
            "env": dict(self.env),
        }
        if self.deepspeed_ops is not None:
            out["deepspeed_ops"] = self.deepspeed_ops
        if self.steps:
            out["steps"] = [s.to_json() for s in self.steps]
        if self.requirements:
            out["requirements"] = list(self.requirements)
        if self.rebuilds:
            out["rebuilds"] = list(self.rebuilds)
        if self.files:
            out["files"] = list(self.files)
        return out


# --- reading a snapshot -------------------------------------------------------------------------


def facts_from_snapshot(snapshot: Snapshot, python: Optional[str] = None) -> MachineFacts:
    """Pull the plain values the planner needs out of an envdoctor Snapshot."""
    f = MachineFacts(os=str(snapshot.host.os), arch=str(snapshot.host.arch))
    pyv = python or str(snapshot.python.version or "")
    f.python = short_python(pyv) + ("t" if snapshot.python.extra.get("gil_disabled") and not python else "")
    if present(snapshot.driver) and parse_version(snapshot.driver.version) is not None:
        f.driver = str(snapshot.driver.version)  # an unreadable version counts as unknown, not as old
    # A GPU whose compute capability is unknown cannot choose a wheel; an unknown GPU list reads as none.
    gpus = snapshot.gpus if isinstance(snapshot.gpus, list) else []
    f.gpus = [GpuFact(g.index, str(g.name) if present(g.name) else "", str(g.compute_capability))
              for g in gpus if present(g.compute_capability)]
    t = snapshot.torch
    if present(t):
        if t.importable and present(t.version):
            f.torch_version = str(t.version)
            f.torch_cuda = str(t.cuda) if present(t.cuda) else None
            if is_unknown(t.cuda):
                f.torch_cuda_unknown = str(getattr(t.cuda, "error", None) or "not reported")
            f.torch_arch_list = list(t.arch_list) if present(t.arch_list) else None
            f.torch_cuda_available = bool(t.cuda_available) if present(t.cuda_available) else None
            f.torch_cxx11_abi = bool(t.cxx11_abi) if present(t.cxx11_abi) and t.cxx11_abi is not None else None
        elif not t.importable and t.error:
            f.torch_broken = str(t.error)
    if present(snapshot.python.packages):
        known = {str(k).lower(): str(v) for k, v in snapshot.python.packages.items()}
        why = partial_reason(snapshot.python.packages)
        f.packages = as_partial(known, why) if why is not None else known
    for ext in snapshot.extensions if isinstance(snapshot.extensions, list) else []:
        if present(ext.name) and present(ext.version) and isinstance(ext.version, str) and ext.version:
            f.packages.setdefault(str(ext.name).lower(), ext.version)  # the torch probe's list, where pip's is short
    if present(snapshot.cuda_toolkit) and present(snapshot.cuda_toolkit.nvcc_version) \
            and major_minor(snapshot.cuda_toolkit.nvcc_version) is not None:  # junk is no nvcc version: unknown
        f.nvcc = str(snapshot.cuda_toolkit.nvcc_version)
    if present(snapshot.build_tools):
        f.ninja = present(snapshot.build_tools.ninja) or None
        f.libaio = bool(snapshot.build_tools.libaio) if present(snapshot.build_tools.libaio) else None
    ds = snapshot.deepspeed
    if present(ds):
        if present(ds.version):
            f.packages["deepspeed"] = str(ds.version)
        built = ds.torch_info.get("version") if present(ds.torch_info) else None
        ops = ds.extra.get("installed_ops")  # kept as the snapshot gave it: a dict of op -> prebuilt, else unknown
        prebuilt = isinstance(ops, dict) and any(ops.values())
        stale = bool(built and prebuilt and f.torch_version and
                     series(built) != series(f.torch_version))
        f.deepspeed_healthy = not (ds.importable is False or stale)
    return f


def short_python(text: str) -> str:
    m = re.match(r"^\s*(\d+)\.(\d+)", text)
    return f"{m.group(1)}.{m.group(2)}" if m else text.strip()


def variant_of(version: Optional[str], cuda: Optional[str]) -> str:
    """The wheel-index tag of an installed torch: its local label, else its CUDA version, else cpu."""
    if version and "+" in version:
        return version.split("+", 1)[1]
    if cuda:
        return compat.cuda_variant(cuda)
    return "cpu"


def known_variant(machine: MachineFacts) -> Tuple[Optional[str], str]:
    """(the installed torch's build variant, '') when it is known, else (None, why not): a version without a local
    label is a CPU or a CUDA build (PyPI's Linux wheels carry none), so without torch.version.cuda it is unknown."""
    version = machine.torch_version
    if not version:
        return None, "torch does not import: its build is unknown"
    if "+" in version or machine.torch_cuda or not machine.torch_cuda_unknown:
        return variant_of(version, machine.torch_cuda), ""
    return None, (f"torch's build variant is unknown: torch {version} has no local version label (+cpu, +cu130) and "
                  f"torch.version.cuda could not be read ({machine.torch_cuda_unknown}); find out with "
                  "`python -c \"import torch; print(torch.version.cuda)\"` in that environment (None: the CPU build), "
                  "then install the companion from that build's index by hand, or reinstall torch from it")


def py_range(pythons: Sequence[str]) -> str:
    vals = sorted({p for p in pythons if not p.endswith("t")}, key=lambda p: require_major_minor(p, "Python version"))
    if not vals:
        return ""
    return vals[0] if len(vals) == 1 else f"{vals[0]}-{vals[-1]}"


# --- the planner ---------------------------------------------------------------------------------


@dataclass
class _Candidate:
    release: Release
    variant: Variant
    version: str
    notes: List[str]
    full_driver: bool
    ds_ok: bool
    platform_of: str = ""  # the platform planned for


def plan(machine: Union[Snapshot, MachineFacts], index: WheelIndex, wishes: Wishes) -> Plan:
    """The install for a snapshot (read with `facts_from_snapshot`, for `wishes.python` when set) or for
    machine facts. Pure: everything it knows comes in through the arguments."""
    if not isinstance(machine, MachineFacts):
        machine = facts_from_snapshot(machine, wishes.python)
    out = Plan(status="planned", python=machine.python, platform=machine.platform)
    platform = machine.platform
    if platform is None:
        out.status = "impossible"
        out.reason = f"no PyTorch wheels in the index for {machine.os} {machine.arch}"
        out.upgrade.append("a Linux x86_64/aarch64 or Windows x86_64 machine")
        return out
    gpu_machine = bool(machine.gpus)
    newest_ds = _newest_deepspeed(index, wishes)
    too_new = _gpus_newer_than_driver(machine, index)
    if too_new:
        out.status = "impossible"
        out.reason = too_new[0]
        out.upgrade.append(too_new[1])
        return out

    broken_why = _installed_problem(machine, index, platform)
    installed_rel = index.release(machine.torch_version) if machine.torch_version else None
    installed_ok = machine.torch_version is not None and broken_why is None
    spec_ok = installed_ok and (wishes.torch is None or _in_spec(wishes.torch, machine.torch_version))
    if installed_ok and spec_ok:
        out.kept.append(f"torch {machine.torch_version}")
        out.reason = f"torch {machine.torch_version} already works here" + _gpu_phrase(machine)
        if gpu_machine and machine.torch_cuda_available is False:
            out.reason = f"torch {machine.torch_version} is the right build for these GPUs and this driver"
            out.notes.append("CUDA is unavailable to it for another reason (CUDA_VISIBLE_DEVICES, device permissions, "
                             "a container without --gpus): `envdoctor check` names it; reinstalling would not help")
        unknown = known_variant(machine)[1]
        if unknown and gpu_machine:
            out.reason = f"torch {machine.torch_version} is kept: whether it is a CUDA build is unknown"
            out.notes.append(unknown)
        if wishes.deepspeed:
            _plan_deepspeed(out, machine, index, wishes, machine.torch_version or "", machine.torch_cuda)
        out.status = "planned" if out.packages else "nothing_to_do"
        return out

    candidates: List[_Candidate] = []
    for rel in index.releases:
        version = _version_in_spec(rel, wishes.torch)
        if version is None:
            continue
        if machine.python not in rel.python:
            exp = " (experimental builds not planned)" if machine.python in rel.python_experimental else ""
            out.rejected.append(Rejected("torch", rel.latest_patch, "*",
                                         f"no wheel for Python {machine.python}{exp}: torch {rel.version} has "
                                         f"{py_range(rel.python)}"))
            continue
        for var in _variants(rel, gpu_machine):
            why, notes, full = _check_variant(var, machine, platform, index)
            if why:
                out.rejected.append(Rejected("torch", version, var.name, why))
                continue
            ds_ok = True
            if wishes.deepspeed and machine.nvcc and var.cuda and newest_ds is not None:
                ds_ok = bool(compat.deepspeed_cuda_ok(machine.nvcc, var.cuda, newest_ds.cuda_minor_mismatch_ok))
            candidates.append(_Candidate(rel, var, version, notes, full, ds_ok, platform))

    if not candidates:
        out.status = "impossible"
        _explain_impossible(out, machine, index, wishes, platform)
        return out

    def rank(c: _Candidate) -> Tuple[Any, ...]:
        same = installed_rel is not None and c.release.version == installed_rel.version and wishes.torch is None
        # A build whose arch list was read beats a newer one assumed from the previous release; among assumed
        # ones, a build an index is known to carry beats one whose existence is assumed too.
        return (same, not c.variant.assumed(platform), c.release.key, c.ds_ok, c.variant.listed, c.full_driver,
                rel_default(c.release, platform) == c.variant.name, Version(c.variant.cuda or "0"))

    best = max(candidates, key=rank)
    rel, var = best.release, best.variant
    why = [f"newest torch in the index that runs here{_gpu_phrase(machine)}" if gpu_machine else
           "newest torch with a wheel for this Python and platform (no NVIDIA GPU: CPU build)"]
    if machine.torch_version and broken_why:
        why = [f"installed torch {machine.torch_version} is broken: {broken_why}"]
        if installed_rel is not None and rel.version == installed_rel.version and wishes.torch is None:
            why.append(f"smallest fix: same release {rel.version}, variant {var.name}")
    elif machine.torch_version and not spec_ok:
        why = [f"--torch {wishes.torch} excludes the installed {machine.torch_version}"]
    if rel_default(rel, platform) == var.name:
        why.append("the PyPI default variant")
    why.extend(best.notes)
    base = wishes.index_base.rstrip("/")
    out.packages.append(PlannedPackage("torch", best.version, var.name, f"{base}/{var.name}", "; ".join(why),
                                       f"torch=={best.version}+{var.name}", _status(var, platform, rel)))
    for comp in ("torchvision", "torchaudio"):
        if comp in machine.packages:
            info = rel.companions.get(comp) or {}
            ver = info.get("version") or f"{info.get('series')}.*"
            pin = f"{comp}=={ver}+{var.name}" if "*" not in ver else f"{comp}=={ver}"
            out.packages.append(PlannedPackage(comp, ver, var.name, f"{base}/{var.name}",
                                               f"installed {comp} {machine.packages[comp]} must match torch {rel.version}",
                                               pin, str(info.get("status", "UNVERIFIED"))))
        elif partial_reason(machine.packages) is not None:
            out.notes.append(f"whether {comp} is installed is unknown (the package list is partial): if it is, it "
                             f"must be replaced by the release built for torch {rel.version}")
    for c in candidates:
        if c is not best:
            out.rejected.append(Rejected("torch", c.version, c.variant.name, _lost_why(c, best, rank)))
    out.reason = why[0]
    if wishes.deepspeed:
        _plan_deepspeed(out, machine, index, wishes, best.version, var.cuda)
    return out


def rel_default(rel: Release, platform: str) -> Optional[str]:
    return rel.pypi_default.get(platform)


def _lost_why(c: _Candidate, best: _Candidate, rank: Any) -> str:
    if c.variant.assumed(best.platform_of) and not best.variant.assumed(best.platform_of):
        return (f"runs here if the build is as assumed from torch {c.variant.assumed_from} (not read from an index); "
                f"torch {best.release.version} {best.variant.name}'s facts were read")
    if c.release.key < best.release.key:
        return f"runs here, but torch {best.release.version} is newer"
    if not c.ds_ok and best.ds_ok:
        return f"runs here, but DeepSpeed cannot build ops with the local nvcc and CUDA {c.variant.cuda}"
    if not c.full_driver and best.full_driver:
        return "runs here only through minor-version compatibility; another variant is fully supported by the driver"
    return f"runs here; {best.variant.name} preferred (PyPI default or newer CUDA)"


def _gpu_phrase(machine: MachineFacts) -> str:
    if not machine.gpus:
        return ""
    ccs = sorted({g.cc for g in machine.gpus}, key=compat.parse_cc)
    return f" (GPUs cc {', '.join(ccs)}, driver {machine.driver or 'unknown'})"


def _status(var: Variant, platform: str, rel: Release) -> str:
    order = {"verified": 0, "secondary": 1, "UNVERIFIED": 2}
    # an assumed fact is not verified: the plan document keeps its three statuses, the reason says "assumed"
    st = [s if s in order else "UNVERIFIED" for s in (var.status, (var.platforms.get(platform) or {}).get("status"))]
    return max(st, key=lambda s: order.get(s, 2))


def _in_spec(spec: SpecifierSet, version: Optional[str]) -> bool:
    try:
        return Version(str(version).split("+")[0]) in spec
    except InvalidVersion:
        return False


def _version_in_spec(rel: Release, spec: Optional[SpecifierSet]) -> Optional[str]:
    if spec is None:
        return rel.latest_patch
    for v in (rel.latest_patch, f"{rel.version}.0"):
        if Version(v) in spec:
            return v
    return None


def _variants(rel: Release, gpu_machine: bool) -> List[Variant]:
    kinds = ("cuda", "cpu") if gpu_machine else ("cpu",)
    return [v for v in rel.variants.values() if v.kind in kinds]


def _check_variant(var: Variant, m: MachineFacts, platform: str, index: WheelIndex) -> Tuple[str, List[str], bool]:
    """('' if it runs else why, notes, fully supported by the driver)."""
    notes: List[str] = []
    if platform not in var.platforms:
        return f"no {platform} wheel", notes, False
    if var.kind == "cpu":
        if m.gpus:
            return "CPU-only build on a machine with NVIDIA GPUs", notes, False
        return "", notes, True
    sm, ptx = var.archs(platform)
    osn = "windows" if platform.startswith("win") else "linux"
    missing: Dict[Tuple[str, str], List[int]] = {}
    for g in m.gpus:
        v = compat.serving_kernel(sm + ptx, g.cc)
        if not v:
            missing.setdefault((g.name, g.cc), []).append(g.index)
            continue
        if v.via == "ptx":
            if m.driver is None:
                return "GPU needs PTX JIT and the driver version is unknown", notes, False
            jit = compat.ptx_jit_ok(m.driver, var.cuda or "", osn, drivers=index.drivers)
            if not jit:
                return f"{g.label} (cc {g.cc}) has no SASS; {jit.why}", notes, False
            notes.append(f"GPU {g.index} runs JIT-compiled PTX (slow first start)")
    if missing:
        unv = (var.platforms.get(platform) or {}).get("sm_unverified")
        extra = f"; {', '.join(unv)} may be present but is UNVERIFIED, so not counted" if unv else ""
        gpus = "; ".join(f"{'GPU' if len(ix) == 1 else 'GPUs'} {','.join(map(str, ix))}{' ' + name if name else ''} (cc {cc})"
                         for (name, cc), ix in missing.items())
        return f"no kernels for {gpus}: build has {', '.join(sm + ptx) or 'none'}{extra}", notes, False
    if m.driver is None:
        return "the NVIDIA driver version is unknown", notes, False
    d = compat.driver_supports(m.driver, var.cuda or "", osn, drivers=index.drivers)
    if not d:
        return d.why, notes, False
    _fam, ga = compat.min_driver(var.cuda or "", osn, drivers=index.drivers)
    full = ga is not None and parse_version(m.driver) >= parse_version(ga)  # type: ignore[operator]
    if not full:
        notes.append(d.why)
    if var.status == "UNVERIFIED":
        notes.append(f"{var.name} arch list is UNVERIFIED in the index; the install is verified before it is kept")
    if var.assumed(platform):
        frm = var.assumed_from or "the previous release"
        notes.append(f"torch {var.release} {var.name}: its arch list is assumed from torch {frm} (not read from an "
                     "index); the install is verified before it is kept")
    return "", notes, full


def _gpus_newer_than_driver(m: MachineFacts, index: WheelIndex) -> Optional[Tuple[str, str]]:
    """(why, upgrade) when a GPU needs a newer driver than any torch build can work around."""
    have = parse_version(m.driver) if m.driver else None
    if have is None:
        return None
    osn = "windows" if m.os.lower().startswith("win") else "linux"
    for g in m.gpus:
        need = compat.gpu_min_driver(g.cc, osn, drivers=index.drivers)
        if need and have < parse_version(need):  # type: ignore[operator]
            return (f"{g.label} (cc {g.cc}) needs driver >= {need}; driver {m.driver} cannot run it "
                    "with any torch build", f"driver >= {need}")
    return None


def _installed_problem(m: MachineFacts, index: WheelIndex, platform: str) -> Optional[str]:
    """Why the installed torch does not work here, or None when it does (or nothing is installed)."""
    if m.torch_version is None:
        return f"torch does not import: {m.torch_broken}" if m.torch_broken else None
    if not m.gpus:
        return None
    if known_variant(m)[0] is None:
        return None  # a CUDA or a CPU build: not known to be broken, and nothing to replace it with on a guess
    cuda = m.torch_cuda or compat.variant_cuda(variant_of(m.torch_version, None))
    if not cuda:
        return "CPU-only build on a machine with NVIDIA GPUs"
    osn = "windows" if platform.startswith("win") else "linux"
    if m.driver is None:
        return "the NVIDIA driver version is unknown"
    d = compat.driver_supports(m.driver, cuda, osn, drivers=index.drivers)
    if not d:
        return d.why
    archs = m.torch_arch_list or None  # [] is what get_arch_list() says when CUDA cannot start: unknown
    if archs is None:
        rel = index.release(m.torch_version)
        var = rel.variants.get(variant_of(m.torch_version, cuda)) if rel else None
        if var is not None and platform in var.platforms:
            sm, ptx = var.archs(platform)
            archs = sm + ptx
    for g in m.gpus:
        if archs is not None:
            v = compat.serving_kernel(archs, g.cc)
            if not v:
                return f"{g.label}: {v.why}"
            if v.via == "ptx" and not compat.ptx_jit_ok(m.driver, cuda, osn, drivers=index.drivers):
                return f"{g.label} needs PTX JIT, which driver {m.driver} cannot do for CUDA {cuda}"
    # cuda_available False with a fitting driver and kernels is not torch's fault (CUDA_VISIBLE_DEVICES,
    # permissions, a container without --gpus): reinstalling the same build would not help.
    return None


def _newest_deepspeed(index: WheelIndex, wishes: Wishes) -> Optional[DeepSpeedRelease]:
    for r in index.deepspeed:
        if wishes.deepspeed_spec is None or r.key in wishes.deepspeed_spec:
            return r
    return None


def _plan_deepspeed(out: Plan, m: MachineFacts, index: WheelIndex, wishes: Wishes, torch_version: str,
                    torch_cuda: Optional[str]) -> None:
    tv = Version(torch_version.split("+")[0]) if torch_version else None
    chosen: Optional[DeepSpeedRelease] = None
    for r in index.deepspeed:
        if wishes.deepspeed_spec is not None and r.key not in wishes.deepspeed_spec:
            continue
        if tv is not None and len(r.torch) and tv not in r.torch:
            out.rejected.append(Rejected("deepspeed", r.version, "", f"needs torch {r.torch}, plan has {tv}"))
            continue
        chosen = r
        break
    if chosen is None:
        out.notes.append("no DeepSpeed release in the index fits the wishes and the torch version")
        if out.status == "planned" and not out.packages:
            out.status = "impossible"
        return
    ops = deepspeed_ops(m, torch_cuda, chosen)
    out.deepspeed_ops = ops
    installed = m.packages.get("deepspeed") if m.deepspeed_healthy is not False else None
    if installed and (wishes.deepspeed_spec is None or _in_spec(wishes.deepspeed_spec, installed)) and \
            (tv is None or not len(chosen.torch) or tv in chosen.torch) and not any(p.name == "torch" for p in out.packages):
        out.kept.append(f"deepspeed {installed}")
        return
    reason = f"newest DeepSpeed for torch {torch_version}; ops JIT-built at first use (DS_BUILD_OPS=0)"
    if not ops["cuda_check"]["ok"]:
        reason += f"; WARNING: {ops['cuda_check']['why']}"
    out.packages.append(PlannedPackage("deepspeed", chosen.version, "", None, reason, f"deepspeed=={chosen.version}",
                                       chosen.status))
    out.env["DS_BUILD_OPS"] = "0"
    if m.gpus and m.nvcc and require_major_minor(m.nvcc, "CUDA version")[0] >= 13:
        # DeepSpeed's default arch list still names sm_60/sm_70, which CUDA 13's nvcc cannot target.
        old = sorted({g.cc for g in m.gpus if compat.parse_cc(g.cc) < (7, 5)}, key=compat.parse_cc)
        if old:
            out.notes.append(f"nvcc {m.nvcc} cannot compile for compute capability {', '.join(old)}: DeepSpeed's "
                             "CUDA ops need a CUDA 12.x toolkit here (set CUDA_HOME to it)")
        else:
            archs = ";".join(sorted({g.cc for g in m.gpus}, key=compat.parse_cc))
            out.notes.append(f"set TORCH_CUDA_ARCH_LIST={archs} when DeepSpeed builds ops (its default list names "
                             "archs that CUDA 13 dropped)")


def deepspeed_ops(m: MachineFacts, torch_cuda: Optional[str], ds: DeepSpeedRelease) -> Dict[str, Any]:
    """What `ds_report` would say about building ops here, from the snapshot only (DeepSpeed is not imported)."""
    ninja = bool(m.ninja) or "ninja" in m.packages
    missing = "ninja missing" if partial_reason(m.packages) is None else \
        "ninja not found (the package list is partial: it may be installed)"
    if not m.nvcc:
        check = {"ok": False, "why": "no nvcc (CUDA_HOME): DeepSpeed raises MissingCUDAException when it builds CUDA ops"}
    elif not torch_cuda:
        check = {"ok": False, "why": "torch is a CPU build: no CUDA ops"}
    else:
        v = compat.deepspeed_cuda_ok(m.nvcc, torch_cuda, ds.cuda_minor_mismatch_ok)
        check = {"ok": v.ok, "why": v.why}
    cuda_ops = check["ok"] and ninja
    ops = {
        "cpu_adam": {"buildable": ninja, "why": f"C++ op: needs ninja and a C++ compiler ({missing})" if not ninja
                     else "ninja present"},
        "fused_adam": {"buildable": cuda_ops,
                       "why": check["why"] if not check["ok"] else (missing if not ninja else "ok")},
        # buildable: known to build here; the why says what is missing or unknown (a partial package list)
        "async_io": {"buildable": bool(ninja and m.libaio),
                     "why": ("libaio found" if m.libaio else ("libaio not found (apt install libaio-dev)" if m.libaio is False
                                                              else "libaio not probed")) + ("" if ninja else f"; {missing}")},
    }
    return {"deepspeed": ds.version, "nvcc": m.nvcc, "torch_cuda": torch_cuda, "cuda_check": check, "ninja": ninja,
            "compute_capabilities": sorted({g.cc for g in m.gpus}, key=compat.parse_cc), "ops": ops,
            "build_env": {"DS_BUILD_OPS": "0"}}


def _explain_impossible(out: Plan, m: MachineFacts, index: WheelIndex, wishes: Wishes, platform: str) -> None:
    """Name what to upgrade: the driver, the Python version, or neither (no build has kernels for a GPU)."""
    if m.gpus and m.driver is None:
        out.reason = "the NVIDIA driver version is unknown, so no CUDA build can be chosen"
        out.upgrade.append("a driver whose version `nvidia-smi` reports (reload the driver or reboot after an upgrade)")
        return
    osn = "windows" if platform.startswith("win") else "linux"
    arch_ok_pythons: List[str] = []
    driver_needs: List[Tuple[Version, str, str]] = []
    for rel in index.releases:
        if _version_in_spec(rel, wishes.torch) is None:
            continue
        for var in _variants(rel, bool(m.gpus)):
            if platform not in var.platforms or (var.kind == "cpu" and m.gpus):
                continue
            if var.kind == "cuda":
                sm, ptx = var.archs(platform)
                if not all(compat.serving_kernel(sm + ptx, g.cc) for g in m.gpus):
                    continue
            py_fits = m.python in rel.python
            arch_ok_pythons.extend(rel.python)
            if var.kind == "cuda" and py_fits:
                fam, ga = compat.min_driver(var.cuda or "", osn, drivers=index.drivers)
                need = fam
                sm, ptx = var.archs(platform)
                if any(compat.serving_kernel(sm + ptx, g.cc).via == "ptx" for g in m.gpus):
                    need = ga or fam
                if need:
                    driver_needs.append((Version(need), need, f"torch {rel.version} {var.name}"))
    spec = f" within --torch {wishes.torch}" if wishes.torch is not None else ""
    if driver_needs:
        lowest = min(driver_needs)
        newest_need = next(d for d in driver_needs)  # releases are newest first
        out.upgrade.append(f"driver >= {lowest[1]}")
        if newest_need[1] != lowest[1]:
            out.upgrade.append(f"driver >= {newest_need[1]} for {newest_need[2]}")
        out.reason = (f"NVIDIA driver {m.driver or 'unknown'} is too old for every torch build{spec} "
                      "with kernels for the GPUs")
    elif arch_ok_pythons:
        out.upgrade.append(f"Python {py_range(arch_ok_pythons)}")
        out.reason = f"no torch{spec} for the GPUs has a wheel for Python {m.python}"
    else:
        ccs = ", ".join(sorted({g.cc for g in m.gpus}))
        out.reason = f"no torch build{spec} in the index has kernels for compute capability {ccs} on {platform}"
        out.upgrade.append("a newer wheel index (`envdoctor index update`) or a source build")
