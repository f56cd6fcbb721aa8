"""Startup logs that state facts: ComfyUI's (its console log and its "## System Information" block) and
stable-diffusion-webui's. Their fact lines stand among other log lines, often behind a timestamp, so each is
matched on its own; one section runs from the first fact line to the last, as long as no more than GAP lines
separate two of them.

    ComfyUI   Total VRAM 24564 MB, total RAM 32694 MB            gpus[i].memory_bytes (of the device below)
              pytorch version: 2.3.1+cu121                       torch.version, torch.importable
              Device: cuda:0 NVIDIA GeForce RTX 4090 : native   gpus[0].name, torch.cuda_available true
              ** Python version: 3.12.9 (...) [MSC v.1942 ...]   python.version (+ Windows, AMD64, 64-bit)
              - **PyTorch Version:** 2.6.0+cu126                 torch.version
              - **Name:** cuda:0 NVIDIA GeForce RTX 5070 Ti ...  gpus[0].name, torch.cuda_available true
              - **VRAM Total:** 17094475776                      gpus[0].memory_bytes
    webui     Python 3.10.6 (tags/v3.10.6:9c7b4bd, ...) [MSC v.1932 64 bit (AMD64)]   python.version, Windows
              Version: v1.10.1                                   extra: webui.version
              torch: 2.1.2+cu121  •  xformers: 0.0.23.post1     torch.version, python.packages.xformers,
                                                                 extensions[xformers].version
    both      xFormers was built for: PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.2.0+cu121)
                                                                 extensions[xformers].torch_version/cuda_version,
                                                                 torch.version

A device that is not an NVIDIA GPU (a ROCm "AMD Radeon" device, "cpu", "mps") adds no GPU.
"""

from __future__ import annotations

import re
from typing import Callable, List, Optional, Tuple

from envdoctor.text.facts import MAX_SECTIONS, Section, Statements
from envdoctor.text.lines import extension_of_package, python_version

KIND = "startup_log"
GAP = 40
MIB = 1024 * 1024
_NVIDIA = re.compile(r"^(NVIDIA|Tesla|Quadro|GeForce|TITAN)\b", re.I)


def _total_vram(f: Statements, m: re.Match[str], line: str, no: int, ctx: dict) -> None:
    ctx["vram"] = (int(m.group(1)) * MIB, line, no)


def _device(f: Statements, m: re.Match[str], line: str, no: int, ctx: dict) -> None:
    index, name = int(m.group(1)), m.group(2).strip()
    f.state("torch.cuda_available", True, line, no)
    if not _NVIDIA.match(name):
        return
    f.state(f"gpus.{index}.name", name, line, no)
    vram = ctx.pop("vram", None)
    if vram and "memory_bytes" not in f.gpu(index):  # "Total VRAM" is rounded to MB; a byte count wins
        f.state(f"gpus.{index}.memory_bytes", vram[0], vram[1], vram[2])
    ctx["device"] = index


def _vram_total(f: Statements, m: re.Match[str], line: str, no: int, ctx: dict) -> None:
    index = ctx.get("device")
    if index is not None:
        f.state(f"gpus.{index}.memory_bytes", int(m.group(1)), line, no)


def _torch(f: Statements, m: re.Match[str], line: str, no: int, ctx: dict) -> None:
    f.state("torch.version", m.group(1), line, no)
    f.state("torch.importable", True, line, no)


def _python(f: Statements, m: re.Match[str], line: str, no: int, ctx: dict) -> None:
    python_version(f, m.group(1), line, no)


def _webui_version(f: Statements, m: re.Match[str], line: str, no: int, ctx: dict) -> None:
    f.state("webui.version", m.group(1), line, no)


def _footer(f: Statements, m: re.Match[str], line: str, no: int, ctx: dict) -> None:
    _torch(f, m, line, no, ctx)
    if m.group(2) and m.group(2)[:1].isdigit():
        f.package("python.packages", "xformers", m.group(2), line, no)
        f.partial("python.packages", "a startup log names only a few packages")
        extension_of_package(f, "xformers", m.group(2), line, no)


def _xformers_built(f: Statements, m: re.Match[str], line: str, no: int, ctx: dict) -> None:
    exts = f.doc.setdefault("extensions", [])
    i = next((i for i, e in enumerate(exts) if e.get("name") == "xformers"), None)
    if i is None:
        exts.append({"name": "xformers"})
        i = len(exts) - 1
    f.state(f"extensions.{i}.torch_version", m.group(1), line, no)
    cuda = m.group(2)  # 1201: CUDA 12.1, 1108: CUDA 11.8 (major * 100 + minor)
    if cuda and len(cuda) >= 3:
        f.state(f"extensions.{i}.cuda_version", f"{int(cuda) // 100}.{int(cuda) % 100}", line, no)
    f.state("torch.version", m.group(3), line, no)
    f.state("torch.importable", True, line, no)


def _xformers_heading(f: Statements, m: re.Match[str], line: str, no: int, ctx: dict) -> None:
    ctx["xformers_built"] = no


def _xformers_torch(f: Statements, m: re.Match[str], line: str, no: int, ctx: dict) -> None:
    if no - ctx.get("xformers_built", -9) <= 2:
        _xformers_built(f, m, line, no, ctx)


_Rule = Tuple["re.Pattern[str]", Callable[..., None]]
RULES: List[_Rule] = [
    (re.compile(r"Total VRAM (\d{1,9}) MB, total RAM \d+ MB"), _total_vram),
    (re.compile(r"(?:^|\s|- )pytorch version: (\d\S*)"), _torch),
    (re.compile(r"Device: cuda:(\d{1,4}) (.+?)(?: : \S+)?\s*$"), _device),
    (re.compile(r"\*\*Name:\*\* cuda:(\d{1,4}) (.+?)(?: : \S+)?\s*$"), _device),
    (re.compile(r"\*\*VRAM Total:\*\* (\d{1,16})\b"), _vram_total),
    (re.compile(r"\*\*PyTorch Version:\*\* (\d\S*)"), _torch),
    (re.compile(r"(?:\*\* Python version:|\*\*Python Version:\*\*)\s*(\d.*)$"), _python),
    (re.compile(r"^Python (3\.\d+\.\d+ \(.*)$"), _python),
    (re.compile(r"^Version: (v\d+\.\d+\S*)\s*$"), _webui_version),
    (re.compile(r"torch: (\d\S*)\s+•\s+xformers: (\S+)"), _footer),
    (re.compile(r"xFormers was built for:\s*PyTorch (\S+) with CUDA (\d{3,5})? ?\(you have (\S+?)\)"), _xformers_built),
    (re.compile(r"xFormers was built for:\s*$"), _xformers_heading),
    (re.compile(r"^\s+PyTorch (\S+) with CUDA (\d{3,5})? ?\(you have (\S+?)\)"), _xformers_torch),
]


class StartupLog:
    """Fact lines of startup logs, gathered into sections of nearby lines."""

    kind = KIND

    def __init__(self, facts: Statements) -> None:
        self.facts = facts
        self.sections: List[Section] = []
        self.start: Optional[int] = None
        self.end = 0
        self.ctx: dict = {}

    def line(self, line: str, no: int) -> bool:
        """Read one line; True when it stated a fact."""
        for pattern, record in RULES:
            m = pattern.search(line)
            if m:
                if self.start is not None and no - self.end > GAP:
                    self.flush()
                if self.start is None:
                    self.start = no
                self.end = no
                record(self.facts, m, line, no, self.ctx)
                return True
        return False

    def flush(self) -> None:
        if self.start is not None:
            if len(self.sections) < MAX_SECTIONS:
                self.sections.append(Section(KIND, self.start, self.end))
            else:
                self.facts.limit(f"more than {MAX_SECTIONS} startup-log sections: the rest not listed")
        self.start = None
        self.ctx = {}
