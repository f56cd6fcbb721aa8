"""System copies of CUDA libraries the loader can find (ldconfig cache, LD_LIBRARY_PATH), and libaio."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, List, Optional

from envdoctor.probes.base import ProbeContext, ProbeOutput
from envdoctor.processes import run_command
from envdoctor.snapshot import LibCopy, Libraries, Unavailable

_LIBS = {"cudnn": "libcudnn.so", "nccl": "libnccl.so", "cudart": "libcudart.so", "cublas": "libcublas.so"}
_LDCONFIG = ("/sbin/ldconfig", "/usr/sbin/ldconfig")


def probe(ctx: ProbeContext) -> ProbeOutput:
    paths: List[str] = []
    notes: List[str] = []
    ldconfig = next((p for p in _LDCONFIG if ctx.path(p).exists()), None) or ctx.which("ldconfig")
    if ldconfig:
        res = run_command([ldconfig, "-p"], ctx.timeout / 2)
        if res.ok:
            paths.extend(parse_ldconfig(res.stdout))
        else:
            notes.append(res.describe())
    else:
        notes.append("no ldconfig")
    for directory in (ctx.env.get("LD_LIBRARY_PATH") or "").split(os.pathsep):
        if directory:
            paths.extend(_scan_dir(ctx.path(directory) if ctx.root != Path("/") else Path(directory)))
    libs = Libraries()
    grouped = group_copies(paths)
    for key in _LIBS:
        setattr(libs, key, grouped.get(key, []))
    libaio = any(Path(p).name.startswith("libaio.so") for p in paths)
    out = ProbeOutput({"libraries": libs}, note="; ".join(notes) or None, shared={"libaio": libaio})
    if not ldconfig and not ctx.env.get("LD_LIBRARY_PATH"):
        out.sections["libraries"] = Unavailable("no ldconfig and no LD_LIBRARY_PATH")
    return out


def parse_ldconfig(text: str) -> List[str]:
    out = []
    for line in text.splitlines():
        m = re.match(r"\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)", line)
        if m:
            out.append(m.group(3))
    return out


def _scan_dir(directory: Path) -> List[str]:
    try:
        return [str(p) for p in directory.iterdir() if p.name.startswith(("lib", "libaio")) and ".so" in p.name]
    except OSError:
        return []


def group_copies(paths: List[str]) -> Dict[str, List[LibCopy]]:
    grouped: Dict[str, List[LibCopy]] = {}
    seen = set()
    for path in paths:
        name = Path(path).name
        for key, prefix in _LIBS.items():
            if not (name == prefix or name.startswith(prefix + ".")):
                continue
            real = _realpath(path)
            if real in seen:
                continue
            seen.add(real)
            grouped.setdefault(key, []).append(
                LibCopy(version=version_from_name(Path(real).name) or Unavailable("no version in file name"), path=path)
            )
    return grouped


def _realpath(path: str) -> str:
    try:
        return os.path.realpath(path)
    except OSError:
        return path


def version_from_name(name: str) -> Optional[str]:
    """'libcudnn.so.9.1.0' -> '9.1.0'; 'libnccl.so.2' -> '2'."""
    m = re.search(r"\.so\.(\d+(?:\.\d+)*)$", name)
    return m.group(1) if m else None
