"""Predicates that read what torch, CUDA, the NVIDIA driver stack, the dynamic loader and DeepSpeed said on
this machine: an error text is a fact, and rules/tables/runtime_errors.json says what each known text (or
class of texts) means. They register in the one predicate registry and return a false value when the text is
unknown or says nothing they recognise."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple, Union

from envdoctor.rules.conditions import Context, predicate
from envdoctor.rules.tables import Meaning
from envdoctor.snapshot import ProbeFailed, Snapshot, known_list, present

Result = Union[bool, None, Dict[str, Any]]

KINDS = ("build", "cuda_init", "cudnn", "deepspeed", "driver", "extension", "loader")
_ROW_KEYS = ("kind", "key", "pattern", "cause", "fix", "source")
_CUDA_DIR = re.compile(r"(?i)cuda|cudnn|nccl|nvidia|tensorrt")
# An undefined symbol, or a symbol version, that belongs to a CUDA library ("version libnvJitLink.so.12").
_CUDA_SYMBOL = re.compile(r"undefined symbol: (\w+)(?:, version (lib[\w.]+))?")
_CUDA_LIB = re.compile(r"(?i)lib(?:cuda|cudart|cudnn|cublas|cusparse|cusolver|cufft|curand|nccl|nvjitlink|nvrtc)")
_OWN_TORCH_LIB = re.compile(r"(lib(?:torch|c10|shm|caffe2)\w*\.so)")


def meaning(ctx: Context, kind: str, text: str, key: Optional[str] = None) -> Optional[Meaning]:
    """The first row of `kind` (and `key`) in the context's runtime error table whose pattern occurs in `text`."""
    return ctx.tables.meaning(kind, text, key)


def _short(text: str, limit: int = 240) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[:limit - 1] + "…"


def _torch(s: Snapshot) -> Any:
    return s.torch if present(s.torch) else None


@predicate("said", "cause", "remedy", reads=("runtime_errors",))
def cuda_init_failure(ctx: Context) -> Result:
    """torch is a CUDA build and CUDA's initialisation printed an error: what it said and what that means."""
    t = _torch(ctx.snapshot)
    if t is None or not isinstance(t.cuda_init_error, str) or not t.cuda_init_error.strip():
        return None
    text = t.cuda_init_error
    m = meaning(ctx, "cuda_init", text)
    if m is None:
        return {"said": _short(text), "cause": "CUDA failed to initialise in this process",
                "remedy": "Check `nvidia-smi`, `dmesg` for Xid errors, CUDA_VISIBLE_DEVICES and the permissions of "
                          "/dev/nvidia*, then rerun `envdoctor check`.", "evidence": [f"torch: {_short(text)}"]}
    return {"said": _short(text), "cause": m.cause, "remedy": m.fix,
            "evidence": [f"torch: {_short(text)}", f"meaning: {m.source}"]}


def _cudnn_failure(s: Snapshot) -> Optional[str]:
    t = _torch(s)
    if t is None:
        return None
    value = t.cudnn
    return value.error if isinstance(value, ProbeFailed) and value.error else None


def _ld_dirs(s: Snapshot, wanted: re.Pattern[str] = _CUDA_DIR) -> List[str]:
    env = s.env if present(s.env) else None
    value = (env or {}).get("LD_LIBRARY_PATH") or ""
    return [d for d in value.split(":") if d and wanted.search(d)]


@predicate("said", "cause", "remedy", "where", reads=("runtime_errors",))
def cudnn_mismatch_loaded(ctx: Context) -> Result:
    """torch's cuDNN check failed because another cuDNN was loaded."""
    text = _cudnn_failure(ctx.snapshot)
    if not text:
        return None
    m = meaning(ctx, "cudnn", text)
    if m is None:
        return None
    dirs = _ld_dirs(ctx.snapshot, re.compile(r"(?i)cudnn|cuda|nvidia"))
    where = f" LD_LIBRARY_PATH holds {', '.join(dirs)}." if dirs else ""
    return {"said": _short(text), "cause": m.cause, "remedy": m.fix, "where": where,
            "evidence": [f"torch.backends.cudnn: {_short(text)}"] + [f"LD_LIBRARY_PATH entry: {d}" for d in dirs]}


@predicate("symbol", "library", "dirs")
def ld_library_path_breaks_torch_import(ctx: Context) -> Result:
    """`import torch` fails on an undefined symbol of a CUDA library while LD_LIBRARY_PATH names CUDA
    directories: the loader took a system copy before the one torch's wheels ship."""
    s = ctx.snapshot
    t = _torch(s)
    if t is None or t.importable is not False or not t.error:
        return None
    m = _CUDA_SYMBOL.search(t.error)
    if not m:
        return None
    lib = m.group(2) or ""
    if not (_CUDA_LIB.search(lib) or _CUDA_LIB.search(m.group(1)) or _CUDA_LIB.search(t.error.split("undefined")[0])):
        return None
    dirs = _ld_dirs(s)
    if not dirs:
        return None
    return {"symbol": m.group(1), "library": lib or "a CUDA library", "dirs": ", ".join(dirs),
            "evidence": [f"import torch: {_short(t.error)}"] + [f"LD_LIBRARY_PATH entry: {d}" for d in dirs]}


@predicate("problem", "hint")
def torch_import_failure(ctx: Context) -> Result:
    """`import torch` failed on a missing library or an undefined symbol: which, in words, and the likeliest
    cause. Another failure is not read here (ED109 quotes it as it is)."""
    t = _torch(ctx.snapshot)
    if t is None or t.importable is not False or not t.error:
        return None
    text = t.error
    missing = re.search(r"(lib[\w.+-]+\.so[\w.]*): cannot open shared object file", text)
    if missing:
        lib = missing.group(1)
        own = bool(_OWN_TORCH_LIB.match(lib))
        return {"problem": f"{lib} is missing",
                "hint": ("It is one of torch's own libraries: the torch installation is damaged (files removed or an "
                         "interrupted install)." if own else
                         "Usually a CUDA library wheel (nvidia-cudnn-*, nvidia-cublas-*) was removed or replaced by "
                         "one for another CUDA major, or LD_LIBRARY_PATH hides it.")}
    undefined = _CUDA_SYMBOL.search(text)
    if undefined:
        symbol = undefined.group(1)
        owner = _OWN_TORCH_LIB.search(text)
        if owner and re.search(r"3c10|2at|5torch|c10::|at::|torch::", symbol):
            return {"problem": f"{owner.group(1)} needs {symbol[:80]}, which torch's other libraries do not export",
                    "hint": "Files of two torch builds are mixed (a pip install over a source build or over another "
                            "pip install): uninstall torch until `pip show torch` finds none, then reinstall one build."}
        return {"problem": f"undefined symbol {symbol[:80]}",
                "hint": "A library torch loads comes from another build than the one torch was built against."}
    return None


@predicate("said", "cause", "remedy", reads=("runtime_errors",))
def deepspeed_error_explained(ctx: Context) -> Result:
    """DeepSpeed's import (or op build) failed with an error whose meaning is known."""
    s = ctx.snapshot
    ds = s.deepspeed if present(s.deepspeed) else None
    if ds is None:
        return None
    texts = [x for x in (ds.error, ds.ops_error) if isinstance(x, str) and x.strip()]
    found = next(((x, m) for x in texts for m in [meaning(ctx, "deepspeed", x)] if m is not None), None)
    if found is None:
        return None
    text, m = found
    return {"said": _short(text), "cause": m.cause, "remedy": m.fix,
            "evidence": [f"deepspeed: {_short(text)}", f"meaning: {m.source}"]}


# --- the NVIDIA driver stack: what NVML / nvidia-smi said while the driver was read -----------------


def _driver_texts(s: Snapshot) -> List[Tuple[str, str]]:
    """(where, text) of every error the driver probes recorded: the driver's and the GPU list's failure, and
    each probe record's error or note (NVML's failure is the nvml probe's note even when nvidia-smi answered)."""
    out = []
    for where, value in (("driver", s.driver), ("gpus", s.gpus)):
        if isinstance(value, ProbeFailed) and value.error:
            out.append((where, value.error))
    for record in known_list(s.probes):
        if isinstance(record.error, str) and record.error.strip():
            out.append((f"{record.name} probe", record.error))
    return out


@predicate("said", "cause", "remedy", "module", reads=("runtime_errors",))
def driver_library_mismatch(ctx: Context) -> Result:
    """NVML or nvidia-smi refused to start because the user-space driver libraries and the loaded kernel module
    are from different driver releases (the class of texts is the 'driver' rows of runtime_errors.json). torch's
    own CUDA initialisation error is ED111's to read."""
    s = ctx.snapshot
    found = next(((where, text, m) for where, text in _driver_texts(s)
                  for m in [meaning(ctx, "driver", text)] if m is not None and m.key == "driver_library_mismatch"), None)
    if found is None:
        return None
    where, text, m = found
    module = ""
    if present(s.driver) and isinstance(s.driver.version, str) and s.driver.version:
        module = f" The driver version read ({s.driver.version}, from {s.driver.source}) is one side of the pair."
        if s.driver.source == "procfs":
            module = f" The loaded kernel module is {s.driver.version} (/proc/driver/nvidia/version)."
    return {"said": _short(text), "cause": m.cause, "remedy": m.fix, "module": module,
            "evidence": [f"{where}: {_short(text)}", f"meaning: {m.source}"]}


# --- the dynamic loader: symbol versions missing when a binary was imported --------------------------


def _import_errors(s: Snapshot) -> List[Tuple[str, str]]:
    """(what, error text) of every import the probes tried that failed: torch, its companions, the compiled
    extensions and DeepSpeed."""
    out = []
    t = s.torch if present(s.torch) else None
    if t is not None and t.importable is False and isinstance(t.error, str):
        out.append(("torch", t.error))
    companions = t.companions if t is not None and isinstance(t.companions, dict) else {}
    for name, comp in sorted(companions.items()):
        if present(comp) and isinstance(comp.error, str):
            out.append((name, comp.error))
    for ext in known_list(s.extensions):
        if isinstance(ext.import_error, str):
            out.append((ext.name, ext.import_error))
    ds = s.deepspeed if present(s.deepspeed) else None
    for text in ((ds.error, ds.ops_error) if ds is not None else ()):
        if isinstance(text, str):
            out.append(("deepspeed", text))
    return out


_NOT_FOUND = re.compile(r"version [`'\u2018\"]?([A-Z]+_[\d.]+?)[`'\u2019\"]? not found(?: \(required by ([^)]+)\))?")
_LOADED = re.compile(r"(\S*lib(?:stdc\+\+|c)\.so[.\d]*): version")


def _loader_problem(ctx: Context, key: str) -> Result:
    hits = []
    for what, text in _import_errors(ctx.snapshot):
        m = meaning(ctx, "loader", text, key)  # a text naming both a GLIBCXX_ and a GLIBC_ version is both
        if m is None:
            continue
        prefixes = ("GLIBC_",) if key == "glibc_too_old" else ("GLIBCXX_", "CXXABI_")
        version = next((v for v in _NOT_FOUND.finditer(text) if v.group(1).startswith(prefixes)), None)
        loaded = _LOADED.search(text)
        hits.append((what, text, m, version.group(1) if version else "a newer symbol version",
                     loaded.group(1).rstrip(":") if loaded else "the one on the loader path"))
    if not hits:
        return None
    what, text, m, needed, library = hits[0]
    names = ", ".join(dict.fromkeys(h[0] for h in hits))
    return {"binaries": names, "needed": needed, "library": library, "cause": m.cause, "remedy": m.fix,
            "evidence": [f"import {h[0]}: {_short(h[1])}" for h in hits] + [f"meaning: {m.source}"]}


@predicate("binaries", "needed", "library", "cause", "remedy", reads=("runtime_errors",))
def libstdcxx_too_old(ctx: Context) -> Result:
    """An import failed because the libstdc++ the loader found lacks a GLIBCXX_/CXXABI_ symbol version the
    binary needs (the class of texts is the 'loader' row libstdcxx_too_old of runtime_errors.json)."""
    return _loader_problem(ctx, "libstdcxx_too_old")


@predicate("binaries", "needed", "library", "cause", "remedy", reads=("runtime_errors",))
def glibc_too_old(ctx: Context) -> Result:
    """An import failed because this system's glibc lacks a GLIBC_2.x symbol version the binary needs."""
    return _loader_problem(ctx, "glibc_too_old")
