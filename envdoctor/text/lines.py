"""What every section reader shares: the reader protocol, how a pasted line is read, and the facts several kinds state
alike (a Python version string, a package that is a CUDA extension)."""

from __future__ import annotations

import re
from typing import Optional

from envdoctor.snapshot import distribution_key
from envdoctor.text.facts import Section, Statements, clean

# A pasted report is often quoted ("> " in a GitHub reply) or listed ("- " in ComfyUI's markdown).
_QUOTE = re.compile(r"^(?:>[ \t]?)+")


def unquote(line: str) -> str:
    """The line without its trailing CR and any leading markdown quote marks; full-width colons read as colons."""
    line = line.rstrip("\r")
    if "\uff1a" in line:  # a full-width colon, as a hand-edited report has it
        line = line.replace("\uff1a", ":")
    return _QUOTE.sub("", line) if line[:1] == ">" else line


class SectionReader:
    """One open section: `feed` says whether a line belongs to it (False: the section ended before this line, which
    the caller reads again); `close` gives the section, or None when it turned out to be none."""

    kind = ""

    def __init__(self, facts: Statements, start: int) -> None:
        self.facts = facts
        self.start = start
        self.end = start

    def feed(self, line: str, no: int) -> bool:  # pragma: no cover - each kind defines it
        raise NotImplementedError

    def close(self) -> Optional[Section]:
        return Section(self.kind, self.start, self.end)


# --- facts several kinds state alike --------------------------------------------------------------------------
_PY_VERSION = re.compile(r"^\s*(\d+\.\d+(?:\.\d+)?(?:[abc]\d+|rc\d+)?)")
_MSC = re.compile(r"\[MSC v\.\d+ (32|64) bit \(([A-Za-z0-9_]+)\)\]")


def python_version(facts: Statements, value: str, line: str, no: int) -> None:
    """'3.10.12 (main, ...) [GCC 11.4.0] (64-bit runtime)', '3.6 (64-bit runtime)', '3.10.6 (tags/...) [MSC v.1932
    64 bit (AMD64)]': the version, the interpreter's pointer width, and Windows where MSC built it."""
    m = _PY_VERSION.match(value)
    if not m:
        return
    facts.state("python.version", m.group(1), line, no)
    bits = re.search(r"\((32|64)-bit runtime\)", value)
    msc = _MSC.search(value)
    if bits:
        facts.state("python.pointer_bits", int(bits.group(1)), line, no)
    elif msc:
        facts.state("python.pointer_bits", int(msc.group(1)), line, no)
    if msc:
        facts.state("host.os", "windows", line, no)
        facts.state("host.arch", msc.group(2), line, no)
    if "free-threading build" in value:
        facts.state("python.free_threaded", True, line, no)
    implementation = _implementation(value)
    if implementation:
        facts.state("python.implementation", implementation, line, no)
        if implementation == "CPython":
            facts.derived["python.implementation"] = "sys.version names the C compiler that built CPython"


def _implementation(version: str) -> Optional[str]:
    """sys.version names the interpreter: "[PyPy 7.3.11 with GCC ...]", "[Graal, Oracle GraalVM ...]"; CPython's
    names only the compiler that built it ("[GCC 11.4.0]", "[Clang 15.0.0", "[MSC v.1932 64 bit (AMD64)]")."""
    if "[PyPy" in version:
        return "PyPy"
    if "[Graal" in version:
        return "GraalPy"
    if re.search(r"\[(GCC|Clang|MSC) ", version):
        return "CPython"
    return None


# Distributions whose binaries carry CUDA kernels (the probes' list, envdoctor/probes/children/python_child.py):
# a package list that names one states an installed extension and its version.
EXTENSIONS = frozenset(distribution_key(n) for n in (
    "flash-attn", "xformers", "bitsandbytes", "apex", "transformer-engine", "mamba-ssm", "causal-conv1d", "vllm",
    "torchao", "flashinfer-python", "flashinfer"))


def extension_of_package(facts: Statements, name: str, version: str, line: str, no: int) -> None:
    key = distribution_key(name)
    if key in EXTENSIONS:
        exts = facts.doc.setdefault("extensions", [])
        entry = next((e for e in exts if distribution_key(e["name"]) == key), None)
        if entry is None:
            exts.append({"name": key, "version": version})
            facts.evidence.setdefault(f"extensions.{len(exts) - 1}.version", (clean(line), no))
    elif key == "deepspeed":
        facts.state("deepspeed.version", version, line, no)
