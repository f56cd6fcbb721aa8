"""The CUDA toolkit on the machine (nvcc, CUDA_HOME) and the build tools extensions need."""

from __future__ import annotations

import re
from typing import Dict, Optional

from envdoctor.probes.base import ProbeContext, ProbeOutput
from envdoctor.processes import run_command
from envdoctor.snapshot import BuildTools, CudaToolkit, ProbeFailed, Snapshot, Unavailable


def probe(ctx: ProbeContext) -> ProbeOutput:
    home = ctx.env.get("CUDA_HOME") or ctx.env.get("CUDA_PATH")
    nvcc: Optional[str] = None  # as the machine names it
    run_path: Optional[str] = None  # where this process can execute it (differs under a test root)
    # The order torch.utils.cpp_extension (and so DeepSpeed) uses: CUDA_HOME, nvcc on PATH, /usr/local/cuda.
    if home and ctx.path(f"{home}/bin/nvcc").exists():
        nvcc, run_path = f"{home}/bin/nvcc", str(ctx.path(f"{home}/bin/nvcc"))
    if nvcc is None:
        nvcc = run_path = ctx.which("nvcc")
    if nvcc is None and ctx.path("/usr/local/cuda/bin/nvcc").exists():
        nvcc, run_path = "/usr/local/cuda/bin/nvcc", str(ctx.path("/usr/local/cuda/bin/nvcc"))
    toolkit = CudaToolkit()
    if nvcc is None or run_path is None:
        why = Unavailable("no nvcc in CUDA_HOME, /usr/local/cuda or on PATH")
        toolkit.nvcc_version = why
        toolkit.nvcc_path = why
        toolkit.cuda_home = home or Unavailable("CUDA_HOME not set and no toolkit found")
    else:
        toolkit.nvcc_path = nvcc
        toolkit.cuda_home = home or nvcc.rsplit("/bin/", 1)[0]
        res = run_command([run_path, "-V"], ctx.timeout / 2)
        version = parse_nvcc(res.stdout) if res.ok else None
        toolkit.nvcc_version = version or ProbeFailed(res.describe() if not res.ok else "no 'release X.Y' in nvcc -V")
    tools = BuildTools(
        ninja=ctx.which("ninja") or Unavailable("ninja not on PATH"),
        cc=ctx.env.get("CC") or ctx.which("cc") or ctx.which("gcc") or Unavailable("no C compiler on PATH"),
        cxx=ctx.env.get("CXX") or ctx.which("c++") or ctx.which("g++") or Unavailable("no C++ compiler on PATH"),
    )
    return ProbeOutput({"cuda_toolkit": toolkit, "build_tools": tools})


def parse_nvcc(text: str) -> Optional[str]:
    """'Cuda compilation tools, release 12.4, V12.4.131' -> '12.4'."""
    m = re.search(r"release (\d+\.\d+)", text)
    return m.group(1) if m else None


def merge(snap: Snapshot, needed: Dict[str, object]) -> None:
    """libaio (DeepSpeed's async I/O op needs it) from what the cuda_libraries probe found in the loader cache."""
    if isinstance(snap.build_tools, BuildTools):
        libaio = needed.get("libaio")
        snap.build_tools.libaio = libaio if isinstance(libaio, bool) else Unavailable("loader cache not read")
