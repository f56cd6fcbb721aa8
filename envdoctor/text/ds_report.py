"""DeepSpeed's `ds_report`: its op table and its "general environment info".

    cpu_adam ............... [NO] ....... [OKAY]     deepspeed.installed_ops[cpu_adam] = false (prebuilt or not),
                                                     deepspeed.compatible_ops[cpu_adam] = true (JIT can build it)
    torch version .................... 2.1.0+cu121   torch.version, torch.importable (ds_report imported it)
    torch cuda version ............... 12.1          torch.cuda ("None": a CPU build, unless torch hip version names
                                                     a ROCm build)
    torch hip version ................ 5.7.x         torch.hip
    nvcc version ..................... 12.1          cuda_toolkit.nvcc_version
    deepspeed info ................... 0.12.3, ...   deepspeed.version, deepspeed.importable
    deepspeed wheel compiled w. ...... torch 2.1, cuda 12.1    deepspeed.torch_info {version, cuda_version}
    shared memory (/dev/shm) size .... 31.25 GB      host.shm_bytes (ds_report rounds it to 1/100 GiB)
    torch install path / deepspeed install path      torch.install_path / deepspeed.install_path (extra keys)
    No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'   torch.cuda_available false, cuda_toolkit.cuda_home
"""

from __future__ import annotations

import ast
import re
from typing import Optional

from envdoctor.text.facts import Section, Statements, major_minor_text, not_read
from envdoctor.text.lines import SectionReader

KIND = "ds_report"
GIB = 1024 ** 3
_OPENS = re.compile(r"^\s*-*\s*(DeepSpeed (C\+\+/CUDA|cpp/cuda) extension op report|DeepSpeed general environment info:)",
                    re.I)
_OP = re.compile(r"^\s*([A-Za-z_][\w]*)\s*\.*\s*\[(YES|NO)\]\s*\.*\s*\[(OKAY|NO|YES)\]")
_INFO = re.compile(r"^\s*([a-z][a-z_ ()/.]*?)\s*\.{2,}\s*(.*?)\s*$")
_NO_RUNTIME = re.compile(r"No CUDA runtime is found, using CUDA_HOME='([^']*)'")
_FILLER = re.compile(r"^\s*(-{5,}|NOTE:|runtime if needed|meet the required|JIT compiled ops requires ninja|op name|"
                     r"\[WARNING\]|DeepSpeed (C\+\+/CUDA|cpp/cuda) extension op report|DeepSpeed general environment)",
                     re.I)


def opens(line: str) -> bool:
    return bool(_OPENS.match(line))


class DsReport(SectionReader):
    kind = KIND

    def __init__(self, facts: Statements, start: int) -> None:
        super().__init__(facts, start)
        self.hip = False
        self.cuda_none: Optional[tuple] = None

    def feed(self, line: str, no: int) -> bool:
        if not line.strip():
            return False
        if _FILLER.match(line):
            self.end = no
            return True
        runtime = _NO_RUNTIME.search(line)
        if runtime:
            self.facts.state("torch.cuda_available", False, line, no)
            self.facts.state("cuda_toolkit.cuda_home", runtime.group(1), line, no)
            self.end = no
            return True
        op = _OP.match(line)
        if op:
            self.facts.state(f"deepspeed.installed_ops.{op.group(1)}", op.group(2) == "YES", line, no)
            self.facts.state(f"deepspeed.compatible_ops.{op.group(1)}", op.group(3) != "NO", line, no)
            self.end = no
            return True
        info = _INFO.match(line)
        if info:
            self._info(" ".join(info.group(1).split()), info.group(2), line, no)
            self.end = no
            return True
        return False

    def _info(self, key: str, value: str, line: str, no: int) -> None:
        f = self.facts
        if key == "ninja":
            return
        if key in ("torch install path", "deepspeed install path"):
            paths = _paths(value)
            if paths:
                f.state(f"{key.split()[0]}.install_path", paths[0], line, no)
            return
        if not value or not_read(value):
            return
        if key == "torch version":
            f.state("torch.version", value.split()[0], line, no)
            f.state("torch.importable", True, line, no)
        elif key == "torch cuda version":
            if value.lower() == "none":
                self.cuda_none = (line, no)
            elif major_minor_text(value):
                f.state("torch.cuda", major_minor_text(value), line, no)
        elif key == "torch hip version":
            if value.lower() != "none":
                self.hip = True
                f.state("torch.hip", value.split()[0], line, no)
        elif key == "nvcc version" and major_minor_text(value):
            f.state("cuda_toolkit.nvcc_version", major_minor_text(value), line, no)
        elif key == "deepspeed info":
            version = value.split(",")[0].strip()
            if version[:1].isdigit():
                f.state("deepspeed.version", version, line, no)
                f.state("deepspeed.importable", True, line, no)
        elif key == "deepspeed wheel compiled w.":
            built = dict(re.findall(r"(torch|cuda|hip)\s+([\d.]+)", value))
            info = {"version": built["torch"]} if "torch" in built else {}
            if "cuda" in built:
                info["cuda_version"] = built["cuda"]
            if "hip" in built:
                info["hip_version"] = built["hip"]
            if info:
                f.state("deepspeed.torch_info", info, line, no)
        elif key == "shared memory (/dev/shm) size":
            m = re.match(r"(\d{1,9}(?:\.\d{1,4})?)\s*GB", value)
            if m:
                f.state("host.shm_bytes", int(float(m.group(1)) * GIB), line, no)
                f.derived["host.shm_bytes"] = "ds_report's size in GiB, rounded to 1/100 GiB"

    def close(self) -> Optional[Section]:
        if self.cuda_none and not self.hip:
            line, no = self.cuda_none
            self.facts.absent("torch.cuda", "CPU build ('torch cuda version ... None')", line, no)
            self.facts.state("torch.cuda", None, line, no)
        return super().close()


def _paths(value: str) -> list:
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return [value] if value else []
    return [str(p) for p in parsed] if isinstance(parsed, (list, tuple)) else [str(parsed)]
