"""Predicates of the ecosystem rules (rules/ecosystem.json): the packages around torch -- NumPy, torchvision /
torchaudio, torch's own dependencies, the nvidia-* wheels, where torch was imported from, compiled extensions
and the interpreter. They register in the one predicate registry; each returns a false value when a decisive
fact is unknown."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple, Union

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from envdoctor.compat import cuda_variant, parse_cc
from envdoctor.rules.conditions import Context, predicate
from envdoctor.rules.tables import EcosystemTables
from envdoctor.snapshot import Companion, Snapshot, is_absent, is_unavailable, present, value_or
from envdoctor.snapshot import distribution_key as canonicalize_name  # PEP 503, without importing packaging.tags
from envdoctor.versions import major_minor, parse

Result = Union[bool, None, Dict[str, Any]]

NUMPY_ABI = re.compile(r"compiled using NumPy 1\.x|_ARRAY_API not found|numpy\.core\.multiarray failed to import"
                       r"|module compiled against API version")
# A torch C++ symbol the loader could not resolve, as Linux (`undefined symbol: _ZN3c10...`) and macOS
# (`Symbol not found: __ZN3c10...`, `symbol not found in flat namespace '__ZN...'`) print it: a mangled name with a
# c10 / at / torch / caffe2 name in it (a method, const method, typeinfo, vtable or an argument type), or the
# demangled form. Only a binary built against another torch (release, build or C++ ABI) asks torch for a symbol
# it does not export.
MISSING_SYMBOL = r"(?:undefined symbol|[Ss]ymbol not found(?: in flat namespace)?)"
UNDEFINED_TORCH_SYMBOL = re.compile(MISSING_SYMBOL + r"[:\s'\"]*(_{1,2}Z\w*?(?<![0-9])(?:3c10|2at|5torch|6caffe2)(?=[0-9A-Z_])\w*"
                                    r"|(?:c10|at|torch|caffe2)::\S+)")
COMPANION_BROKEN = re.compile(r"operator torchvision::nms does not exist|compiled with different CUDA versions"
                              r"|undefined symbol|[Ss]ymbol not found|Couldn't load custom C\+\+ ops"
                              r"|partially initialized module")
TORCH_DEPS = {"sympy", "typing-extensions", "triton", "pytorch-triton", "networkx", "jinja2", "filelock", "fsspec",
              "setuptools", "mpmath"}
CUDA_RUNTIME_MISSING = re.compile(r"lib(cudart|cublas\w*|cusparse|nvrtc)\.so[.\d]*: cannot open shared object file")
CUDA_PRELOAD = re.compile(r"lib(cuda|cudart|nccl|cudnn|cublas\w*|cusparse|nvJitLink|nvrtc)\b[^:\s]*", re.I)


# --- tables (rules/tables/companions.json, extension_requirements.json, numpy_builds.json: in ctx.tables) ---


def companion_series(tables: EcosystemTables, name: str, torch_version: str) -> Optional[str]:
    """The torchvision / torchaudio X.Y built for torch `torch_version` (None when we hold no fact)."""
    mm = major_minor(torch_version)
    if mm is None:
        return None
    key = f"{mm[0]}.{mm[1]}"
    table = tables.torchvision if name == "torchvision" else tables.torchaudio
    if key in table:
        return table[key]
    if mm[0] == 2:  # past the table: the rule the table states
        return f"0.{mm[1] + tables.torchvision_offset_2x}" if name == "torchvision" else key
    return None


# --- helpers ---------------------------------------------------------------------------------


def _cc(text: Any) -> Optional[Tuple[int, int]]:
    try:
        return parse_cc(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _version(text: Any) -> Optional[Version]:
    return parse(text) if present(text) and text else None


def _local_kind(text: Any) -> Optional[str]:
    """'cpu', 'cuda' or 'rocm' from a local version label (+cpu, +cu121, +rocm6.1); None when it has none."""
    v = _version(text)
    if v is None or not v.local:
        return None
    local = v.local.lower()
    if local == "cpu":
        return "cpu"
    if re.match(r"^cu\d+$", local):
        return "cuda"
    if local.startswith("rocm"):
        return "rocm"
    return None


def _torch(s: Snapshot) -> Any:
    t = s.torch
    return t if present(t) else None


def _torch_version(s: Snapshot) -> Optional[str]:
    t = _torch(s)
    if t is not None and present(t.version) and t.version:
        return str(t.version)
    return value_or(s.package("torch"))


def _mm_text(version: Any) -> Optional[str]:
    mm = major_minor(version)
    return f"{mm[0]}.{mm[1]}" if mm else None


# --- NumPy -----------------------------------------------------------------------------------


@predicate("numpy_version", "numpy_error")
def numpy_abi_broken(ctx: Context) -> Result:
    t = _torch(ctx.snapshot)
    if t is None or not present(t.numpy):
        return None
    nb = t.numpy
    if nb.works is not False or not nb.error or not NUMPY_ABI.search(nb.error):
        return None
    version = nb.version if present(nb.version) and nb.version else value_or(ctx.snapshot.package("numpy"), "2.x")
    return {"numpy_version": version, "numpy_error": nb.error.strip().splitlines()[0][:200]}


@predicate("numpy_version", "needed", "build", "source", reads=("numpy_builds",))
def numpy_outside_torch_build(ctx: Context) -> Result:
    """The installed NumPy is outside the range this torch's wheels were built for, while the bridge itself
    was not exercised (when it was, ED501 speaks from the real failure or the real success)."""
    s = ctx.snapshot
    t = _torch(s)
    if t is None or (present(t.numpy) and present(t.numpy.works)):
        return None
    running = _version(_torch_version(s))
    numpy_text = t.numpy.version if present(t.numpy) and present(t.numpy.version) else value_or(s.package("numpy"))
    numpy = _version(numpy_text)
    if running is None or numpy is None:
        return None
    os_name = s.host.os if present(s.host.os) else None
    py = major_minor(s.python.version) if s.python.version else None
    for row in ctx.tables.numpy_builds:
        if not row.torch.contains(Version(running.public), prereleases=True):
            continue
        if row.os is not None and row.os != os_name:
            continue
        if row.python is not None and (py is None or f"{py[0]}.{py[1]}" != row.python):
            continue
        if not row.numpy.contains(numpy, prereleases=True):
            where = " ".join(x for x in (row.os and f"on {row.os.capitalize()}", row.python and f"for Python {row.python}") if x)
            return {"numpy_version": str(numpy), "needed": str(row.numpy), "source": row.source,
                    "build": f"torch {running}{' ' + where if where else ''}"}
    return None


# --- torchvision / torchaudio ------------------------------------------------------------------


def _build_label(comp: Any) -> Optional[str]:
    """The companion's version with its build: its own version file's (torchvision/version.py: 0.28.0+cu130) when
    that names one, else the dist-info version (PyPI's wheels leave the build out there)."""
    own = comp.build_version if present(getattr(comp, "build_version", None)) and comp.build_version else None
    if own and _local_kind(own):
        return str(own)
    return str(comp.version) if present(comp.version) and comp.version else own


def _variant_problem(name: str, comp: Any, torch_version: Optional[str]) -> Optional[str]:
    """The release may pair while the build does not: a CUDA torchvision beside a CPU torch."""
    label = _build_label(comp)
    a, b = _local_kind(torch_version), _local_kind(label)
    if not (a and b and a != b):
        return None
    where = f" ({name}/version.py)" if label != (comp.version if present(comp.version) else None) else ""
    ops = "; its C++ operators did not load (operator torchvision::nms does not exist)" if comp.nms_op is False else ""
    return (f"the build, not the release, is wrong: torch is a {a.upper()} build ({torch_version}) and {name} a "
            f"{b.upper()} build ({label}{where}){ops}")


def _companion_problem(ctx: Context, name: str, comp: Any, torch_version: Optional[str]) -> Optional[str]:
    error = comp.error if comp.error else None
    warnings = comp.warnings if present(comp.warnings) and comp.warnings else []
    variant = _variant_problem(name, comp, torch_version)
    version = comp.version if present(comp.version) and comp.version else None
    want = companion_series(ctx.tables.ecosystem, name, torch_version) if torch_version else None
    if variant and not (version and want and _mm_text(version) and _mm_text(version) != want):
        return variant
    if comp.importable is False and error and COMPANION_BROKEN.search(error):
        return f"importing it fails: {error.strip().splitlines()[-1][:240]}"
    if comp.nms_op is False:
        return "its C++ operators did not load (operator torchvision::nms does not exist)"
    for w in warnings:
        if UNDEFINED_TORCH_SYMBOL.search(w):
            return f"its C++ extension does not load: {w.strip()[:200]}"
    tv = _version(torch_version)
    if tv is not None and present(comp.requires_torch) and comp.requires_torch:
        try:
            spec = SpecifierSet(str(comp.requires_torch).split(";")[0].strip())
        except InvalidSpecifier:
            spec = None
        if spec is not None and not spec.contains(Version(tv.public), prereleases=True):
            return f"it requires torch{comp.requires_torch}"
    if version and want and _mm_text(version) and _mm_text(version) != want:
        return f"{name} {version} is built for another torch (torch {_mm_text(torch_version)} pairs with {name} {want}.x)"
    return variant


@predicate("companion", "companion_version", "problem", "wanted", "torch_release", reads=("companions",))
def companion_mismatched(ctx: Context) -> Result:
    s = ctx.snapshot
    t = _torch(s)
    if t is None or not t.importable:
        return None  # torch itself is broken: its own rules speak
    torch_version = _torch_version(s)
    comps = dict(t.companions) if present(t.companions) and t.companions else {}
    if not comps:  # not imported: the package list still tells a pair apart by version
        pk = {n: s.package(n) for n in ("torchvision", "torchaudio")}
        comps = {n: Companion(version=v, requires_torch=None, importable=None, nms_op=None, warnings=None)
                 for n, v in pk.items() if present(v) and isinstance(v, str)}
    tables = ctx.tables.ecosystem
    for name in sorted(comps):
        comp = comps[name]
        problem = _companion_problem(ctx, canonicalize_name(name), comp, torch_version)
        if problem:
            want = companion_series(tables, canonicalize_name(name), torch_version) if torch_version else None
            wanted = (f"torch {_mm_text(torch_version)}.x pairs with {name} {want}.x" if want
                      else f"install the {name} release built for this torch")
            kind = _local_kind(torch_version)
            if kind and _variant_problem(canonicalize_name(name), comp, torch_version):
                wanted += f", and a {kind.upper()} torch with {name}'s {kind.upper()} build (+{_version(torch_version).local})"
            version = comp.version if present(comp.version) and comp.version else "(version unknown)"
            return {"companion": name, "companion_version": version, "problem": problem.rstrip(". "),
                    "wanted": wanted, "torch_release": f"torch {torch_version}" if torch_version else "the installed torch"}
    return None


# --- requirement conflicts -----------------------------------------------------------------------


def _is_torch_dep(package: str) -> bool:
    name = canonicalize_name(package)
    return name in TORCH_DEPS or name.startswith("nvidia-")


AROUND_TORCH = TORCH_DEPS | {"torch", "numpy", "torchvision", "torchaudio", "xformers", "vllm", "flash-attn",
                             "deepspeed", "bitsandbytes", "accelerate", "transformers", "triton"}


def _conflicts(s: Snapshot) -> List[Any]:
    rc = s.requirement_conflicts if present(s.requirement_conflicts) else None
    if not rc:
        return []
    from packaging.requirements import InvalidRequirement, Requirement  # (markers, tags) only when needed

    out = []
    for c in rc or []:
        if not present(c.package) or not present(c.requirement):
            continue  # which package, or what it requires, is unknown
        try:
            req = Requirement(c.requirement)
        except InvalidRequirement:
            continue
        wanted = canonicalize_name(req.name)
        if wanted in AROUND_TORCH or wanted.startswith("nvidia-") or canonicalize_name(c.package) in AROUND_TORCH:
            out.append((c, wanted))
    return out


def _pinned_nvidia_wheels(s: Snapshot) -> set:
    t = _torch(s)
    wheels = t.nvidia_wheels if t is not None and present(t.nvidia_wheels) else None
    return {canonicalize_name(d) for d, w in (wheels or {}).items() if present(w.required) and w.required}


def _describe(conflicts: List[Any]) -> str:
    return "; ".join(f"{c.package} requires {c.requirement}, installed: "
                     f"{c.installed if present(c.installed) and c.installed else 'none'}" for c, _ in conflicts)


@predicate("conflicts", "pins", "names")
def torch_dependency_conflict(ctx: Context) -> Result:
    """A requirement of torch itself (sympy, typing_extensions, triton, nvidia-*) that is not met -- or torch's
    import failing on a name its dependency lacks (an old typing_extensions without ParamSpec)."""
    s = ctx.snapshot
    judged = _pinned_nvidia_wheels(s)  # ED507 speaks for those, with what was loaded
    hits = [(c, w) for c, w in _conflicts(s)
            if canonicalize_name(c.package) == "torch" and _is_torch_dep(w) and w not in judged]
    if hits:
        return {"conflicts": _describe(hits), "pins": " ".join(f'"{c.requirement}"' for c, _ in hits),
                "names": " ".join(dict.fromkeys(w for _, w in hits))}
    t = _torch(s)
    if t is not None and t.importable is False and t.error:
        m = re.search(r"cannot import name '(\w+)' from '(\w+)'", t.error)
        if m and _is_torch_dep(m.group(2).replace("_", "-")):
            dep = m.group(2).replace("_", "-")
            have = value_or(s.package(dep))
            return {"conflicts": f"torch imports {m.group(1)} from {m.group(2)}"
                                 f"{f' {have}' if have else ''}, which lacks it (too old for this torch)",
                    "pins": f'"{dep}>{have}"' if have else f'"{dep}"', "names": canonicalize_name(dep)}
    return None


@predicate("conflicts")
def ecosystem_requirement_conflict(ctx: Context) -> Result:
    hits = [(c, w) for c, w in _conflicts(ctx.snapshot)
            if not (canonicalize_name(c.package) == "torch" and _is_torch_dep(w))]
    return {"conflicts": _describe(hits)} if hits else None


# --- where torch comes from --------------------------------------------------------------------


def _preload_cuda(s: Snapshot) -> Optional[str]:
    env = s.env if present(s.env) else None
    value = (env or {}).get("LD_PRELOAD")
    if value and CUDA_PRELOAD.search(value):
        return value
    return None


_KIND_WORDS = {"pythonpath": "a PYTHONPATH entry", "user-site": "the user site-packages (~/.local)",
               "cwd": "the current directory", "editable": "an editable (source) install",
               "other": "a directory outside the environment"}


@predicate("origin", "preload")
def torch_imported_from_elsewhere(ctx: Context) -> Result:
    s = ctx.snapshot
    t = _torch(s)
    if t is None:
        return None
    preload = _preload_cuda(s)
    extra = f" LD_PRELOAD also injects {preload} into every process." if preload else ""
    if present(t.cwd_torch) and t.cwd_torch:
        return {"origin": f"{t.cwd_torch} in the current directory shadows the installed torch", "preload": extra}
    origin = t.origin if present(t.origin) else None
    if origin is not None and origin.outside_site_packages is True:
        kind = origin.kind if present(origin.kind) and origin.kind else None
        if kind is None or kind == "editable":
            return None  # a developer's own checkout is deliberate; an unknown kind may be one
        where = _KIND_WORDS.get(kind, "a directory outside the environment")
        env = s.env if present(s.env) else {}
        if kind == "pythonpath" and (env or {}).get("PYTHONPATH"):
            where += f" (PYTHONPATH={env['PYTHONPATH']})"
        file = origin.file if present(origin.file) and origin.file else "(file unknown)"
        return {"origin": f"torch is imported from {file}, in {where}, not the environment's site-packages",
                "preload": extra}
    if t.importable is False and t.error:
        m = re.search(r"cannot import name '\w+' from '(\w+)' \(([^)]*[/\\]torch[/\\]\1\.py)\)", t.error)
        if m:  # a stdlib module resolved inside torch/: the script runs from within the torch package
            return {"origin": f"Python resolved the standard module '{m.group(1)}' to {m.group(2)}: the current "
                              "directory is inside the torch package", "preload": extra}
    return None


@predicate("preload")
def cuda_library_preloaded(ctx: Context) -> Result:
    preload = _preload_cuda(ctx.snapshot)
    return {"preload": preload} if preload else None


# --- nvidia-* wheels -------------------------------------------------------------------------


# a CUDA library's file name -> the nvidia-* wheel that ships it (without its -cuXX suffix)
WHEEL_OF_LIBRARY = {"libnccl": "nvidia-nccl", "libcudnn": "nvidia-cudnn", "libcublas": "nvidia-cublas",
                    "libcublasLt": "nvidia-cublas", "libcudart": "nvidia-cuda-runtime", "libnvrtc": "nvidia-cuda-nvrtc",
                    "libnvJitLink": "nvidia-nvjitlink", "libcufft": "nvidia-cufft", "libcurand": "nvidia-curand",
                    "libcusolver": "nvidia-cusolver", "libcusparse": "nvidia-cusparse", "libcupti": "nvidia-cuda-cupti",
                    "libnvToolsExt": "nvidia-nvtx", "libnvshmem_host": "nvidia-nvshmem", "libcufile": "nvidia-cufile"}


def _lib_stem(path: str) -> str:
    return re.split(r"\.so", path.replace("\\", "/").rsplit("/", 1)[-1], maxsplit=1)[0]


def _wheel_key(dist: str) -> str:
    return re.sub(r"-cu\d+$", "", canonicalize_name(dist))


def _same_release(file_version: str, wheel_version: str) -> bool:
    """'2.18.3' vs '2.21.5' differ; a file named with its major only ('12') matches any 12.x wheel."""
    a, b = parse(file_version), parse(wheel_version)
    if a is None or b is None:
        return file_version == wheel_version
    return a.release == b.release[:len(a.release)]


def _is_torch_own(path: str) -> bool:
    return bool(re.search(r"(^|/)lib(torch|c10|shm|caffe2)[\w_]*\.so", path))


@predicate("wheels", "torch_release", "pins", "names", "by_hand")
def nvidia_wheels_mismatched(ctx: Context) -> Result:
    """An nvidia-* wheel torch's own Requires-Dist pins that is missing or at another version, or a CUDA library
    loaded from outside the wheels instead of one; `pins`/`names`: the wheels to install (only when every problem
    is one of those: pip cannot change what the loader finds first)."""
    s = ctx.snapshot
    t = _torch(s)
    if t is None:
        return None
    found: List[str] = []
    pins: Dict[str, str] = {}  # name -> the requirement torch pins it at
    wheels = t.nvidia_wheels if present(t.nvidia_wheels) else None
    if wheels:
        from packaging.requirements import InvalidRequirement, Requirement  # (markers, tags) only when needed
    for dist, w in sorted((wheels or {}).items()):
        if not (present(w.required) and w.required):
            continue
        if not (present(w.installed) and w.installed) and not is_unavailable(w.installed):
            continue  # whether it is installed is unknown
        try:
            req = Requirement(w.required)
            have = Version(w.installed) if present(w.installed) and w.installed else None
        except (InvalidRequirement, InvalidVersion):
            continue
        if have is None:
            found.append(f"{dist} is not installed, torch requires {req.specifier or 'it'}")
        elif req.specifier and not req.specifier.contains(have, prereleases=True):
            found.append(f"{dist} {w.installed} installed, torch requires {req.specifier}")
        else:
            continue
        pins[canonicalize_name(req.name)] = f"{req.name}{req.specifier}"
    by_wheels = len(found)
    mapped = t.mapped_cuda_libraries if present(t.mapped_cuda_libraries) else None
    installed = {_wheel_key(d): (d, w.installed) for d, w in (wheels or {}).items()
                 if present(w.installed) and w.installed}
    for lib in mapped or []:
        if not present(lib.path) or _is_torch_own(lib.path) or present(lib.dist):
            continue  # torch's own library, or one a wheel installed (the pins above judge it)
        if not is_absent(lib.dist) or not present(lib.file_version) or not lib.file_version:
            continue  # where it came from, or its version, is unknown
        wheel = WHEEL_OF_LIBRARY.get(_lib_stem(lib.path))
        dist, have = installed.get(wheel, (None, None)) if wheel else (None, None)
        if dist and not _same_release(str(lib.file_version), str(have)):
            found.append(f"{lib.path} ({lib.file_version}) is loaded instead of {dist} {have}")
    env = s.env if present(s.env) else None
    on_loader_path = bool((env or {}).get("LD_LIBRARY_PATH"))  # a system copy may be the one loaded: ED2xx speaks
    if not found and t.importable is False and t.error and not on_loader_path:
        m = re.search(r"(\S*nvidia/\w+/lib/lib\w+\.so[.\d]*): undefined symbol: (__nvJitLink\w+?_(\d+)_(\d+))", t.error)
        if m:
            found.append(f"{m.group(1)} needs {m.group(2)} from libnvJitLink {m.group(3)}.{m.group(4)}+, "
                         "and an older libnvJitLink was loaded")
    version = _torch_version(s)
    release = f"torch=={version}" if version else "torch"
    if not found:
        return None
    fixable = pins if len(found) == by_wheels else {}
    return {"wheels": "; ".join(found), "torch_release": release, "pins": " ".join(f'"{p}"' for p in fixable.values()),
            "names": " ".join(fixable),
            "by_hand": " ".join(f'"{p}"' for p in pins.values()) if pins else f"--force-reinstall {release}"}


# --- compiled extensions -----------------------------------------------------------------------


def _ext_pin(ext: Any) -> Optional[Tuple[str, bool]]:
    """(version, exact) an extension was built for / pins."""
    if present(ext.torch_version) and ext.torch_version:
        return str(ext.torch_version), False
    req = ext.requires_torch if present(ext.requires_torch) and ext.requires_torch else None
    if req:
        try:
            spec = SpecifierSet(str(req).split(";")[0].strip())
        except InvalidSpecifier:
            return None
        exact = [sp.version for sp in spec if sp.operator in ("==", "===") and "*" not in sp.version]
        if exact:
            return exact[0], True
    return None


@predicate("built_for", "reason")
def extension_built_for_other_torch(ctx: Context) -> Result:
    ext = ctx.bound["ext"]
    s = ctx.snapshot
    t = _torch(s)
    running = _torch_version(s)
    error = ext.import_error if present(ext.import_error) and ext.import_error else None
    if error and UNDEFINED_TORCH_SYMBOL.search(error):
        sym = UNDEFINED_TORCH_SYMBOL.search(error).group(1)
        if "__cxx11" in sym:  # it expects the new-ABI symbol this torch (old ABI) does not export
            return {"built_for": "the new C++ ABI (cxx11abiTRUE)", "reason": f"loading it fails on {sym[:90]}, a "
                    "new-ABI (std::__cxx11) symbol: this torch was built with _GLIBCXX_USE_CXX11_ABI=0"}
        return {"built_for": "another torch build", "reason": f"loading it fails on a torch C++ symbol ({sym[:90]})"}
    if error and _local_kind(running) == "cpu" and CUDA_RUNTIME_MISSING.search(error):
        return {"built_for": "a CUDA torch", "reason": f"it needs the CUDA runtime ({error.strip()[:160]}) and "
                                                      f"torch {running} is a CPU build"}
    pin = _ext_pin(ext)
    if pin and running:
        built, exact = pin
        if exact:
            a, b = _version(built), _version(running)
            if a is not None and b is not None and a.public != b.public:
                return {"built_for": f"torch=={built}", "reason": f"it pins torch=={built}; torch {running} is installed"}
        elif _mm_text(built) and _mm_text(running) and _mm_text(built) != _mm_text(running):
            return {"built_for": f"torch {built}", "reason": f"it was built for torch {built}; torch {running} is installed"}
        a_kind, b_kind = _local_kind(built), _local_kind(running)
        if a_kind and b_kind and a_kind != b_kind:
            return {"built_for": f"torch {built}", "reason": f"it was built for a {a_kind.upper()} torch ({built}); "
                                                              f"torch {running} is a {b_kind.upper()} build"}
    if t is not None and present(t.cxx11_abi) and present(ext.cxx11_abi) and t.cxx11_abi is not None \
            and ext.cxx11_abi is not None and t.cxx11_abi != ext.cxx11_abi:
        return {"built_for": f"the {'new' if ext.cxx11_abi else 'old'} C++ ABI (cxx11abi{str(ext.cxx11_abi).upper()})",
                "reason": f"torch uses _GLIBCXX_USE_CXX11_ABI={int(bool(t.cxx11_abi))}, the extension "
                          f"{int(bool(ext.cxx11_abi))}"}
    return None


def _torch_variant(t: Any, running: Optional[str]) -> Optional[str]:
    """'cu126', 'cpu' from torch's local version, else from its CUDA version; None when neither says."""
    v = _version(running)
    if v is not None and v.local and re.match(r"^(cpu|cu\d+)$", v.local.lower()):
        return v.local.lower()
    cuda = t.cuda if t is not None and present(t.cuda) and isinstance(t.cuda, str) else None
    try:
        return cuda_variant(cuda) if cuda else None
    except ValueError:  # a CUDA version that is no version: the variant is unknown
        return None


@predicate("ext_abi", "torch_abi", "row", reads=("torch_cxx11_abi",))
def extension_abi_differs_from_pytorch_binaries(ctx: Context) -> Result:
    """The extension records its C++ ABI (a flash-attn wheel's cxx11abiTRUE/FALSE), torch's own ABI is not known,
    and PyTorch's binaries of this torch release (torch_cxx11_abi.json: Linux x86_64 wheels and conda channel) use
    the other one. A conda-forge or source build of torch may differ, so this is a likelihood, not ED508's fact."""
    ext = ctx.bound["ext"]
    s = ctx.snapshot
    t = _torch(s)
    if t is None or present(t.cxx11_abi) and t.cxx11_abi is not None:
        return None  # torch's ABI is known: ED508 compares the two
    if not present(ext.cxx11_abi) or ext.cxx11_abi is None:
        return None
    host = s.host if present(s.host) else None
    if host is None or str(host.os).lower() != "linux" or str(host.arch).lower() not in ("x86_64", "amd64"):
        return None
    running = _torch_version(s)
    version = _version(running)
    if version is None:
        return None
    row = ctx.tables.torch_abi(version.public, _torch_variant(t, running))
    if row is None or row.cxx11_abi == bool(ext.cxx11_abi):
        return None
    name = lambda abi: f"the {'new' if abi else 'old'} C++ ABI (_GLIBCXX_USE_CXX11_ABI={int(abi)})"  # noqa: E731
    return {"ext_abi": name(bool(ext.cxx11_abi)), "torch_abi": name(row.cxx11_abi), "row": str(row.torch),
            "evidence": [f"{ext.name}: built with {name(bool(ext.cxx11_abi))}",
                         f"torch {running}: ABI not recorded; PyTorch's binaries for {row.torch} use {name(row.cxx11_abi)}",
                         f"source: {row.source}"]}


@predicate("gpus_below", "requirement", "source", reads=("extension_requirements",))
def extension_gpu_too_old(ctx: Context) -> Result:
    ext = ctx.bound["ext"]
    s = ctx.snapshot
    if not present(ext.name):
        return None
    name = canonicalize_name(ext.name)
    version = _version(ext.version) if present(ext.version) else None
    floors = [f for f in ctx.tables.ecosystem.arch_floors if f.extension == name]
    if not floors:
        return None
    if version is not None:  # 3.0.0b1 is a 3.x release here
        base = Version(version.base_version)
        floors = [f for f in floors if not f.versions or f.versions.contains(base)]
    elif len({f.min_cc for f in floors}) > 1:
        floors = [min(floors, key=lambda f: f.min_cc)]  # release unknown: only the lowest floor is certain
    if not floors:
        return None
    floor = max(floors, key=lambda f: f.min_cc)
    below = []
    for g in s.gpus or []:
        cc = _cc(g.compute_capability) if present(g.compute_capability) else None
        if cc is not None and cc < floor.min_cc:
            below.append(f"GPU {g.index} ({g.name if present(g.name) else 'unnamed'}, {cc[0]}.{cc[1]})")
    if not below:
        return None
    return {"gpus_below": "; ".join(below), "requirement": f"{floor.what} (compute capability >= "
            f"{floor.min_cc[0]}.{floor.min_cc[1]})", "source": floor.source}


@predicate("gpus_below", "requirement", "source", reads=("extension_requirements",))
def inductor_gpu_too_old(ctx: Context) -> Result:
    """torch.compile's GPU backend generates Triton kernels; Triton needs compute capability 7.0+."""
    s = ctx.snapshot
    t = _torch(s)
    mm = major_minor(_torch_version(s))
    if t is None or not t.importable or mm is None or mm < (2, 0) or not present(t.cuda) or not t.cuda:
        return None
    if s.host.os != "linux":
        return None  # PyPI torch ships Triton on Linux only
    floor = next((f for f in ctx.tables.ecosystem.arch_floors if f.extension == "triton"), None)
    if floor is None:
        return None
    below = [f"GPU {g.index} ({g.name if present(g.name) else 'unnamed'}, {g.compute_capability})"
             for g in s.gpus or [] if present(g.compute_capability) and _cc(g.compute_capability)
             and _cc(g.compute_capability) < floor.min_cc]
    if not below:
        return None
    return {"gpus_below": "; ".join(below), "requirement": f"{floor.what} (compute capability >= "
            f"{floor.min_cc[0]}.{floor.min_cc[1]})", "source": floor.source}


# --- the interpreter -------------------------------------------------------------------------


def _torch_works(s: Snapshot) -> bool:
    t = _torch(s)
    return t is not None and t.importable is True


@predicate("interpreter")
def interpreter_without_wheels(ctx: Context) -> Result:
    py = ctx.snapshot.python
    if _torch_works(ctx.snapshot):
        return None  # a torch built here that imports is not a problem
    impl = py.implementation if present(py.implementation) and py.implementation else None
    if impl and impl.lower() == "pypy":
        return {"interpreter": f"PyPy {py.version}"}
    if present(py.pointer_bits) and py.pointer_bits == 32:
        return {"interpreter": f"a 32-bit Python {py.version}"}
    return None


@predicate("interpreter", "support")
def free_threaded_without_wheels(ctx: Context) -> Result:
    s = ctx.snapshot
    py = s.python
    if not (present(py.free_threaded) and py.free_threaded is True) or ctx.index is None or _torch_works(s):
        return None
    mm = major_minor(py.version)
    torch_version = _torch_version(s)
    if mm is None or torch_version is None:
        return None
    release = ctx.index.release(torch_version)
    if release is None:
        return None  # a torch the index does not know: cannot tell
    tag = f"{mm[0]}.{mm[1]}t"
    if tag in release.python:
        return None
    support = "experimental builds on some platforms only" if tag in release.python_experimental else "no wheels"
    return {"interpreter": f"free-threaded Python {mm[0]}.{mm[1]} ({tag})", "support": support}


@predicate()
def free_threaded_no_wheels_at_all(ctx: Context) -> Result:
    found = free_threaded_without_wheels(ctx)
    return bool(found) and found["support"] == "no wheels"
