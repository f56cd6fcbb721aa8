"""Predicates that read what torch, CUDA and DeepSpeed said on this machine: an error text is a fact, and
rules/tables/runtime_errors.json says what each known text means. They register in the one predicate
registry and return a false value when the text is unknown or says nothing they recognise."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Union

from envdoctor.rules.conditions import Context, predicate
from envdoctor.rules.tables import Meaning
from envdoctor.snapshot import ProbeFailed, Snapshot, present

Result = Union[bool, None, Dict[str, Any]]

KINDS = ("cuda_init", "cudnn", "deepspeed")
_ROW_KEYS = ("kind", "key", "pattern", "cause", "fix", "source")
_CUDA_DIR = re.compile(r"(?i)cuda|cudnn|nccl|nvidia|tensorrt")
# An undefined symbol, or a symbol version, that belongs to a CUDA library ("version libnvJitLink.so.12").
_CUDA_SYMBOL = re.compile(r"undefined symbol: (\w+)(?:, version (lib[\w.]+))?")
_CUDA_LIB = re.compile(r"(?i)lib(?:cuda|cudart|cudnn|cublas|cusparse|cusolver|cufft|curand|nccl|nvjitlink|nvrtc)")
_OWN_TORCH_LIB = re.compile(r"(lib(?:torch|c10|shm|caffe2)\w*\.so)")


def meaning(ctx: Context, kind: str, text: str) -> Optional[Meaning]:
    """The first row of `kind` in the context's runtime error table whose pattern occurs in `text`."""
    return ctx.tables.meaning(kind, text)


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
