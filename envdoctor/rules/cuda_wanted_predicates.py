"""Predicates that weigh what the software asked of CUDA against what the machine has: a CUDA runtime that says
the driver is too old, a CPU-only torch asked for CUDA, CUDA software on a machine with no NVIDIA GPU, a CUDA
runtime library newer than the driver, and a source build that could not see an installed module. Each reads
facts the snapshot states (the error texts torch, CUDA and the builds printed, the torch build, the extensions'
build records, the GPU list) and stays quiet when a decisive fact is unknown. bitsandbytes' own CUDA setup, which
pairs a native library with the CUDA runtime it finds, is read here too."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple, Union

from packaging.version import InvalidVersion, Version

from envdoctor import compat
from envdoctor.rules.conditions import Context, predicate
from envdoctor.rules.runtime_predicates import _import_errors, _short, meaning
from envdoctor.snapshot import Snapshot, is_unavailable, known_list, partial_reason, present

Result = Union[bool, None, Dict[str, Any]]

_CUDA_LOCAL = re.compile(r"\+cu(\d{2,3})\b")  # a wheel's local version naming its CUDA variant: '0.15.1+cu118'
_DRIVER_OLD = ("driver_too_old", "driver_insufficient")
_NOT_REACHED = ("no_driver", "no_device")  # CUDA found no driver, or no device: nothing reached this process
_HIDES_EVERY_GPU = re.compile(r"(?i)^\s*$|^-1$|^none$|^NoDevFiles$")  # as ED406 reads CUDA_VISIBLE_DEVICES


def said_texts(s: Snapshot) -> List[Tuple[str, str]]:
    """(who, text) of every error the snapshot records torch, CUDA, a companion, an extension or DeepSpeed
    printing: CUDA's initialisation error first, then the failed imports."""
    out: List[Tuple[str, str]] = []
    t = s.torch if present(s.torch) else None
    if t is not None and isinstance(t.cuda_init_error, str) and t.cuda_init_error.strip():
        out.append(("torch (CUDA initialisation)", t.cuda_init_error))
    return out + _import_errors(s)


def _said(ctx: Context, keys: Tuple[str, ...]) -> Optional[Tuple[str, str, Any]]:
    return next(((who, text, m) for who, text in said_texts(ctx.snapshot)
                 for m in [meaning(ctx, "cuda_init", text)] if m is not None and m.key in keys), None)


def gpus_known_empty(s: Snapshot) -> bool:
    """The snapshot knows this machine has no NVIDIA GPU: the GPU list is empty, and NVML answered with none, or
    the host is macOS, or no driver is there on a host known not to be a container."""
    if not isinstance(s.gpus, list) or s.gpus or partial_reason(s.gpus) is not None:
        return False
    host = s.host if present(s.host) else None
    nodes = host.gpu_device_nodes if host is not None else None
    if isinstance(nodes, list) and any(re.fullmatch(r"/dev/nvidia\d+", str(n)) for n in nodes):
        return False  # a GPU's device node is there, whatever NVML (perhaps not mounted) said
    t = s.torch if present(s.torch) else None
    if t is not None and t.cuda_available is True:
        return False  # CUDA runs on one
    if host is not None and host.os == "darwin":
        return True  # macOS has had no NVIDIA driver or CUDA since 10.13
    if any(r.name == "nvml" and r.status == "ok" for r in known_list(s.probes)):
        return True  # NVML answered, and listed no GPU
    # no driver: proof of no GPU only outside a container, which may just be kept from the host's GPUs (ED211)
    return is_unavailable(s.driver) and host is not None and host.container == "none"


def gpus_unknown(s: Snapshot) -> bool:
    """Whether this machine has an NVIDIA GPU is not known (an empty list the GPU probe never filled)."""
    if isinstance(s.gpus, list) and s.gpus:
        return False
    return not gpus_known_empty(s)


def cuda_built_software(s: Snapshot) -> List[str]:
    """What installed software is built for CUDA: extensions with a CUDA build record, packages whose version
    names a CUDA variant ('torchvision 0.15.1+cu118'). torch itself is not in the list."""
    out: List[str] = []
    for ext in known_list(s.extensions):
        cuda = ext.cuda_version if present(ext.cuda_version) and ext.cuda_version else None
        built = ext.torch_version if present(ext.torch_version) and isinstance(ext.torch_version, str) else ""
        if cuda or _CUDA_LOCAL.search(built):
            out.append(f"{ext.name} (built for CUDA {cuda})" if cuda else f"{ext.name} (built for torch {built})")
    py = s.python if present(s.python) else None
    packages = py.packages if py is not None and isinstance(py.packages, dict) else {}
    for name, version in sorted(packages.items()):
        if name != "torch" and isinstance(version, str) and _CUDA_LOCAL.search(version):
            out.append(f"{name} {version}")
    return list(dict.fromkeys(out))


def _torch_is_cpu_build(s: Snapshot) -> bool:
    """torch imports (or is not known not to) and is a CPU build: no CUDA known, or a '+cpu' wheel version."""
    t = s.torch if present(s.torch) else None
    if t is None or t.importable is False:
        return False
    version = t.version if present(t.version) and isinstance(t.version, str) else ""
    return is_unavailable(t.cuda) or version.endswith("+cpu")


@predicate("said", "who", reads=("runtime_errors",))
def cuda_said_driver_too_old(ctx: Context) -> Result:
    """CUDA's own error says the NVIDIA driver is older than the CUDA runtime needs (cudaErrorInsufficientDriver,
    35, or torch's 'driver on your system is too old'). That is the runtime's comparison of the two versions, so it
    decides without the driver's number, and is read only when that number is not known; quiet when the machine is
    known to have no NVIDIA GPU or no driver (the same error then means there is nothing to run on)."""
    s = ctx.snapshot
    if gpus_known_empty(s) or is_unavailable(s.driver):
        return None
    if present(s.driver) and isinstance(s.driver.version, str) and s.driver.version:
        return None  # the driver's number is known: ED101 compares it, ED111 reports a contradiction
    found = _said(ctx, _DRIVER_OLD)
    if found is None:
        return None
    who, text, m = found
    return {"said": _short(text), "who": who, "evidence": [f"{who}: {_short(text)}", f"meaning: {m.source}"]}


@predicate("what", reads=("runtime_errors",))
def cpu_torch_asked_for_cuda(ctx: Context) -> Result:
    """torch is a CPU-only build while the software around it wants CUDA (the program's own 'Torch not compiled
    with CUDA enabled', or extensions and companions built for CUDA), and whether the machine has an NVIDIA GPU
    is not known. With a known GPU ED103 decides; with none known, ED113."""
    s = ctx.snapshot
    if not gpus_unknown(s):
        return None
    said = _said(ctx, ("not_compiled_with_cuda",))
    t = s.torch if present(s.torch) else None
    if said is None and not _torch_is_cpu_build(s):
        return None
    if t is None or t.importable is False or present(t.cuda) and t.cuda:
        return None
    wanted = ([f"the program ({said[0]}: {_short(said[1], 80)})"] if said else []) + cuda_built_software(s)
    if not wanted:
        return None
    return {"what": "; ".join(wanted),
            "evidence": [f"torch: {t.version if present(t.version) else 'version not stated'}, no CUDA "
                         f"({t.cuda.reason if is_unavailable(t.cuda) else 'CPU build'})"]
            + [f"wants CUDA: {w}" for w in wanted]}


@predicate("what", reads=("runtime_errors",))
def cuda_wanted_without_nvidia_gpu(ctx: Context) -> Result:
    """The machine is known to have no NVIDIA GPU while software here is built for CUDA or asked for it: a CUDA
    build of torch, CUDA-built extensions, or CUDA errors that only a GPU could answer."""
    s = ctx.snapshot
    if not gpus_known_empty(s):
        return None
    t = s.torch if present(s.torch) else None
    wanted: List[str] = []
    if t is not None and present(t.cuda) and isinstance(t.cuda, str) and t.cuda:
        wanted.append(f"torch {t.version if present(t.version) else ''} (a CUDA {t.cuda} build)".replace("  ", " "))
    wanted += cuda_built_software(s)
    said = _said(ctx, _DRIVER_OLD + ("no_driver", "not_compiled_with_cuda", "no_device"))
    if said is not None:
        wanted.append(f"{said[0]}, which said: {_short(said[1], 100)}")
    if not wanted:
        return None
    return {"what": "; ".join(wanted), "evidence": ["GPUs: none (known)"] + [f"wants CUDA: {w}" for w in wanted]}


def _in_container(s: Snapshot) -> Optional[str]:
    host = s.host if present(s.host) else None
    kind = host.container if host is not None else None
    return kind if isinstance(kind, str) and kind and kind != "none" else None


@predicate("why", reads=("runtime_errors",))
def container_gpus_not_passed(ctx: Context) -> Result:
    """Inside a container, CUDA-built software has no GPU to reach because none was passed in. A container sees the
    host's GPUs only when it is started with them (the NVIDIA Container Toolkit then mounts the /dev/nvidia* nodes
    and the host driver's libraries), so any of these says so: no GPU device nodes, no NVIDIA driver inside, or
    CUDA saying it found no driver or no device. Quiet when the container is known to have GPU access, or the
    host is not known to be a container."""
    s = ctx.snapshot
    kind = _in_container(s)
    if kind is None or s.host.container_gpu_access is True:
        return None
    t = s.torch if present(s.torch) else None
    if not (t is not None and present(t.cuda) and t.cuda) and not cuda_built_software(s):
        return None
    nodes = s.host.gpu_device_nodes
    if (isinstance(nodes, list) and nodes) or (isinstance(s.gpus, list) and s.gpus) or present(s.driver) \
            or (t is not None and t.cuda_available is True):
        return None  # a GPU, its device nodes or its driver reached the container: another cause (ED111, ED406)
    seen: List[str] = []
    if s.host.container_gpu_access is False or (isinstance(nodes, list) and partial_reason(nodes) is None):
        seen.append("no /dev/nvidia* device nodes inside the container")
    if is_unavailable(s.driver):
        seen.append("no NVIDIA driver inside the container")
    said = _said(ctx, _NOT_REACHED)
    if said is not None:
        seen.append(f"{said[0]} said: {_short(said[1], 120)}")
    if not seen:
        return None
    return {"why": "; ".join(seen), "evidence": [f"container: {kind}"] + seen}


def _cuda_facts_unknown(s: Snapshot) -> List[str]:
    out = []
    if not present(s.driver) and not is_unavailable(s.driver):
        out.append("the driver")
    if gpus_unknown(s):
        out.append("the GPUs")
    out.append("CUDA's own error")
    return out


@predicate("why", "check", reads=())
def cuda_unavailable_cause(ctx: Context) -> Result:
    """A CUDA build of torch reports CUDA unavailable and printed no reason: with no NVIDIA driver found on a host
    not known to be a container, the driver is not installed or not loaded; otherwise the facts that would tell
    which cause it is are named. The rule around it stays quiet where another rule explains the failure."""
    s = ctx.snapshot
    t = s.torch if present(s.torch) else None
    if t is None or not (present(t.cuda) and t.cuda) or t.cuda_available is not False:
        return None
    if isinstance(s.gpus, list) and s.gpus and present(s.driver):
        return None  # GPUs and driver known: ED101 or ED105 compares them
    env = s.env if present(s.env) and isinstance(s.env, dict) else {}
    hidden = env.get("CUDA_VISIBLE_DEVICES")
    if isinstance(hidden, str) and _HIDES_EVERY_GPU.match(hidden):
        if isinstance(s.gpus, list) and s.gpus:
            return None  # ED406 names it, with the GPUs it hides
        return {"why": f"CUDA_VISIBLE_DEVICES is {hidden!r}, which hides every GPU from CUDA",
                "check": "Unset CUDA_VISIBLE_DEVICES, or set it to the GPUs to use (`CUDA_VISIBLE_DEVICES=0,1`), "
                         "then rerun",
                "evidence": [f"torch: CUDA {t.cuda} build, cuda_available = False",
                             f"CUDA_VISIBLE_DEVICES={hidden!r}"]}
    if is_unavailable(s.driver) and _in_container(s) is None:
        why = getattr(s.driver, "reason", "not found")
        return {"why": f"no NVIDIA driver was found ({_short(str(why), 120)})",
                "check": "`nvidia-smi` must list the GPUs: if the command is missing or fails, install the NVIDIA "
                         "driver (or load its kernel module: `sudo modprobe nvidia`, and check `dmesg`); on a machine "
                         "without an NVIDIA GPU, install a CPU build of torch instead; in a container, start it "
                         "with the GPUs (`docker run --gpus all`)",
                "evidence": [f"torch: CUDA {t.cuda} build, cuda_available = False", "NVIDIA driver: not found"]}
    unknown = _cuda_facts_unknown(s)
    return {"why": f"the reason is not in what is known ({', '.join(unknown)} not reported)",
            "check": "`nvidia-smi` (driver and GPUs) and `python -c \"import torch; torch.cuda.init()\"` (CUDA's own "
                     "error) tell which cause it is; `envdoctor check` on the machine reads both",
            "evidence": [f"torch: CUDA {t.cuda} build, cuda_available = False"]}


@predicate("library", "needed", reads=())
def cuda_runtime_newer_than_driver(ctx: Context) -> Result:
    """A CUDA runtime library (libcudart) found on this machine needs a newer driver than the installed one
    (minor-version compatibility counted): a program that loads it gets 'CUDA driver version is insufficient'."""
    s = ctx.snapshot
    if not present(s.driver) or not isinstance(s.driver.version, str) or not present(s.libraries):
        return None
    osn = compat.driver_os(s.host.os, s.host.wsl is True) if present(s.host.os) else None
    if osn is None:
        return None
    for copy in known_list(s.libraries.cudart):
        version = copy.version if present(copy.version) and isinstance(copy.version, str) else None
        if not version:
            continue
        if version.isdigit():
            version += ".0"  # a library named by its major only (libcudart.so.13): the family's first release
        try:
            needed, _ga = compat.min_driver(version, osn, drivers=ctx.index.drivers)
        except ValueError:
            continue
        if needed is None:
            continue
        verdict = compat.driver_supports(s.driver.version, version, osn, drivers=ctx.index.drivers)
        if not verdict.ok:
            where = copy.path if present(copy.path) else "a library path"
            return {"library": f"libcudart {version} ({where})", "needed": needed,
                    "evidence": [f"libraries.cudart: {version} at {where}", f"driver: {s.driver.version}",
                                 verdict.why]}
    return None


@predicate("package", "module", "said", "cause", "remedy", reads=("runtime_errors",))
def build_could_not_import(ctx: Context) -> Result:
    """A package's source build failed on `No module named X`: its build script imports a module its isolated
    build environment lacks (the 'build' rows of runtime_errors.json)."""
    s = ctx.snapshot
    py = s.python if present(s.python) else None
    errors = py.build_errors if py is not None and isinstance(py.build_errors, dict) else {}
    for package, text in sorted(errors.items()):
        if not isinstance(text, str):
            continue
        m = meaning(ctx, "build", text)
        if m is None:
            continue
        found = m.pattern.search(text)
        module = found.group("module") if found is not None and "module" in m.pattern.groupindex else "a module"
        return {"package": package, "module": module.split(".")[0], "said": _short(text),
                "cause": m.cause, "remedy": m.fix.replace("{package}", package),
                "evidence": [f"build of {package}: {_short(text)}", f"meaning: {m.source}"]}
    return None


_BNB_WINDOWS_SINCE = "0.43.0"  # the first bitsandbytes release with Windows CUDA binaries (runtime_errors.json's source)


def _bnb_failure(ctx: Context) -> Optional[Tuple[Any, str, Any]]:
    for ext in known_list(ctx.snapshot.extensions):
        if str(ext.name).lower().replace("_", "-") != "bitsandbytes" or not isinstance(ext.import_error, str):
            continue
        m = meaning(ctx, "extension", ext.import_error, "bnb_cuda_setup_failed")
        if m is not None:
            return ext, ext.import_error, m
    return None


def _bnb_before_windows_support(ext: Any, text: str) -> Optional[bool]:
    version = ext.version if present(ext.version) and isinstance(ext.version, str) else None
    if version:
        try:
            return Version(version) < Version(_BNB_WINDOWS_SINCE)
        except InvalidVersion:
            return None
    # the pre-0.43 CUDA setup printed this; 0.43's loader has other words
    return True if "CUDA Setup failed despite GPU being available" in text else None


@predicate("said", "cause", "remedy", reads=("runtime_errors",))
def bitsandbytes_cuda_setup_failed(ctx: Context) -> Result:
    """bitsandbytes' loader could not load a native CUDA library for the CUDA runtime it detected (the 'extension'
    row bnb_cuda_setup_failed of runtime_errors.json). On Windows before 0.43 the cause is the platform (ED517)."""
    found = _bnb_failure(ctx)
    if found is None:
        return None
    ext, text, m = found
    host = ctx.snapshot.host if present(ctx.snapshot.host) else None
    if host is not None and str(host.os).lower().startswith("win") and _bnb_before_windows_support(ext, text) is not False:
        return None
    return {"said": _short(text), "cause": m.cause, "remedy": m.fix,
            "evidence": [f"import bitsandbytes: {_short(text)}", f"meaning: {m.source}"]}


@predicate("release", "said", "bnb_requirement", reads=("runtime_errors",))
def bitsandbytes_without_windows_binaries(ctx: Context) -> Result:
    """bitsandbytes older than 0.43 on Windows: its wheels carry no Windows CUDA library, so its CUDA setup fails
    and it loads the CPU library."""
    host = ctx.snapshot.host if present(ctx.snapshot.host) else None
    if host is None or not str(host.os).lower().startswith("win"):
        return None
    found = _bnb_failure(ctx)
    if found is None:
        return None
    ext, text, m = found
    if not _bnb_before_windows_support(ext, text):
        return None
    release = ext.version if present(ext.version) and ext.version else f"before {_BNB_WINDOWS_SINCE}"
    return {"release": str(release), "said": _short(text), "bnb_requirement": f"bitsandbytes>={_BNB_WINDOWS_SINCE}",
            "evidence": [f"host: {host.os}", f"import bitsandbytes: {_short(text)}", f"meaning: {m.source}"]}
