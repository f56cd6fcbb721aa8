"""The target Python environment, and the CUDA extensions installed in it with their kernels."""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, List

from envdoctor.fix_journal import JOURNAL, LOCK, describe, finished, is_locked, load_journal, state_dir
from envdoctor.probes.base import ProbeContext, ProbeOutput
from envdoctor.probes.children_run import run_child
from envdoctor.probes.fatbin import _arch_key, archs_in_file
from envdoctor.snapshot import (
    NOT_PROBED,
    DeepSpeed,
    Extension,
    ProbeFailed,
    PythonEnv,
    Snapshot,
    Unavailable,
    as_partial,
)

LISTING_SHARE = 0.6  # of the probe's deadline, for reading the installed distributions


def probe(ctx: ProbeContext) -> ProbeOutput:
    # The listing stops short of the child's deadline, so a slow site-packages gives a partial list, not none.
    budget = {"ENVDOCTOR_LIST_SECONDS": f"{ctx.timeout * LISTING_SHARE:.1f}"}
    data = run_child(dataclasses.replace(ctx, env={**ctx.env, **budget}), "python_child.py", ctx.timeout)
    env = PythonEnv(version=str(data.get("version") or "unknown"))
    for name in ("implementation", "executable", "env_kind", "externally_managed", "packages", "python_headers"):
        value = data.get(name)
        setattr(env, name, value if value is not None else ProbeFailed("not reported"))
    if data.get("gil_disabled"):
        env.extra["gil_disabled"] = True
    env.free_threaded = bool(data["gil_disabled"]) if "gil_disabled" in data else ProbeFailed("not reported")
    bits = data.get("pointer_bits")
    env.pointer_bits = bits if isinstance(bits, int) else ProbeFailed("not reported")
    env.interrupted_fix = interrupted_fix(ctx, data.get("prefix"))
    found: Any = extensions(data.get("extensions") or [])
    cut = data.get("packages_partial")
    if isinstance(cut, str) and cut:  # what it could not read may be any package: its absence is unknown
        env.packages = as_partial(env.packages, cut)
        found = as_partial(found, cut)
    sections: Dict[str, Any] = {"python": env, "extensions": found}
    return ProbeOutput(sections)


def interrupted_fix(ctx: ProbeContext, prefix: Any) -> Any:
    """A fix or undo of envdoctor's that was killed in this environment (its journal, with its lock free)."""
    if ctx.state_root is None:
        return NOT_PROBED
    if not isinstance(prefix, str) or not prefix:
        return ProbeFailed("the environment's prefix was not reported")
    sdir = state_dir(prefix, ctx.state_root)
    try:
        journal = load_journal(sdir)
    except (OSError, ValueError) as exc:
        if not os.path.lexists(sdir / JOURNAL):  # the state directory is a file, or cannot be read: unknown
            return ProbeFailed(f"cannot read envdoctor's state directory {sdir}: {getattr(exc, 'strerror', None) or exc}")
        return f"unreadable journal {sdir / JOURNAL}: {exc}"  # a journal exists: something did not finish
    if journal is None or finished(sdir, journal):
        return Unavailable("no interrupted envdoctor fix")
    locked = is_locked(sdir)
    if locked is None:
        return ProbeFailed(f"cannot tell whether {sdir / LOCK} is held")
    if locked:
        return Unavailable(f"{describe(journal)} is running now")
    return f"{describe(journal)} was interrupted ({journal.phase or journal.op})"


def extensions(raw: List[Dict[str, Any]]) -> List[Extension]:
    out: List[Extension] = []
    for item in raw:
        archs: set = set()
        errors: List[str] = []
        for path in item.get("files") or []:
            try:
                archs.update(archs_in_file(path))
            except (OSError, ValueError, IndexError) as exc:  # struct.error is a ValueError
                errors.append(f"{path}: {exc}")
        ext = Extension(name=str(item.get("name")), version=item.get("version") or ProbeFailed("no version in its metadata"))
        if archs:
            ext.arch_list = sorted(archs, key=_arch_key)
        elif item.get("files"):
            ext.arch_list = Unavailable("no CUDA kernels in its binaries (JIT-built or CPU-only)")
        else:
            ext.arch_list = Unavailable("no compiled files")
        _build_facts(ext, item.get("build"))
        if errors:
            ext.extra["read_errors"] = errors[:5]
        out.append(ext)
    return out


def _build_facts(ext: Extension, build: Any) -> None:
    """torch_version / cuda_version / C++ ABI from the extension's own record; what it keeps none of is absent."""
    if isinstance(build, dict) and build.get("error"):
        why: Any = ProbeFailed(f"build record unreadable: {build['error']}")
        ext.torch_version = ext.cuda_version = ext.torch_version_source = ext.cxx11_abi = why
        ext.requires_torch = why
        return
    build = build if isinstance(build, dict) else {}
    none = Unavailable("not recorded by the package")
    ext.torch_version = build.get("torch_version") or none
    ext.cuda_version = build.get("cuda_version") or none
    ext.torch_version_source = build.get("source") or none
    abi = build.get("cxx11_abi")
    ext.cxx11_abi = abi if isinstance(abi, bool) else Unavailable("not recorded by the package")
    ext.requires_torch = build.get("requires_torch") or Unavailable("no torch requirement in its metadata")


def merge(snap: Snapshot, needed: Dict[str, Any]) -> None:
    """Each extension's import result (from the torch probe's child, `extension_imports`) onto its entry;
    DeepSpeed's from the `deepspeed` section, which that child imported too."""
    if not isinstance(snap.extensions, list):
        return
    imports: Dict[str, Dict[str, Any]] = needed.get("extension_imports") or {}
    ds = needed.get("deepspeed")
    if isinstance(ds, DeepSpeed):
        imports = {**imports, "deepspeed": {"importable": ds.importable, "import_error": ds.error}}
    for ext in snap.extensions:
        result = imports.get(ext.name)
        if result is not None:
            ext.importable = result["importable"]
            ext.import_error = result.get("import_error")  # type: ignore[assignment]
