"""Why a ZeRO-3 offload run failed, read from its error and log, and the machine rule whose fix applies.

`classify` is pure: the worker's error text and the launcher log (compiler and ninja output included) in, a
cause and what the text says about it out. Each cause names the rule (rules/*.json) that diagnoses the same
problem from a snapshot; the finding quotes that rule's fix and links it, so the fix text lives once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from envdoctor.findings import Finding
from envdoctor.fixes import manual
from envdoctor.rules.registry import TEMPLATE_NAME, Rule, Rulebook, load_rules


@dataclass(frozen=True)
class Cause:
    key: str
    title: str
    rule: Optional[str]  # the ED rule whose fix applies; None: the fix is `fix` below
    fix: str = ""
    category: str = "deepspeed_ops_unbuildable"


CAUSES: Dict[str, Cause] = {c.key: c for c in (
    Cause("no_ninja", "ninja is not on PATH: DeepSpeed cannot JIT-build its ops", "ED307"),
    Cause("no_compiler", "no C++ compiler ({compiler} not found): DeepSpeed cannot JIT-build its ops", "ED311"),
    Cause("nvcc_mismatch", "nvcc {nvcc} does not match torch's CUDA {cuda}: DeepSpeed refuses to build its ops",
          "ED304", category="toolkit_mismatch"),
    Cause("no_cuda_toolkit", "no CUDA toolkit (CUDA_HOME): DeepSpeed cannot build its CUDA ops", "ED306"),
    Cause("libaio_missing", "libaio headers are missing: the async_io op (NVMe offload) cannot build", "ED308"),
    Cause("python_headers_missing", "Python.h is missing: op {op} does not compile", "ED311"),
    Cause("op_build_failed", "op {op} failed to build: {first_error}", None,
          fix="Read the compiler's first error (above, and in the kept log). `ds_report` lists which ops this machine "
              "can build; a DeepSpeed wheel built with DS_BUILD_OPS=1 for this torch avoids JIT builds."),
    Cause("shm_exhausted", "/dev/shm ran out of space", "ED201", category="shm_exhausted"),
    Cause("pinned_memory", "out of pinned (page-locked) host memory for the offload buffers", None,
          category="pinned_memory_exhausted",
          fix="Pinned buffers need locked host RAM: raise the memlock limit (`ulimit -l unlimited`; Docker "
              "`--ulimit memlock=-1`), or set `\"pin_memory\": false` in offload_optimizer/offload_param, or lower "
              "their buffer_count/buffer_size (NVMe) so fewer bytes are pinned."),
)}

_NINJA = re.compile(r"ninja not being installed|Ninja is required to load C\+\+ extensions")
_COMPILER = re.compile(r"(?m)(?:^/bin/sh: \d+: |^sh: )(?P<sh>c\+\+|g\+\+|gcc|cc|clang\+\+?): (?:command )?not found"
                       r"|No such file or directory: '(?P<py>c\+\+|g\+\+|gcc|cc)'")
# any program a ninja build step runs is the compiler or its linker driver (CXX=/nonexistent shows up this way)
_BUILD_STEP_NOT_FOUND = re.compile(r"(?m)^(?:/bin/sh: \d+: |sh: )(\S+): (?:command )?not found$")
_MISMATCH = re.compile(r"Installed CUDA version (\d+\.\d+) does not match the version torch was compiled with "
                       r"(\d+(?:\.\d+)*), unable to compile")
_NO_TOOLKIT = re.compile(r"CUDA_HOME does not exist, unable to compile CUDA op")
_LIBAIO = re.compile(r"libaio\.h: No such file|async_io requires the dev libaio|cannot find -laio")
_BUILD = re.compile(r"Error building extension '([\w.]+)'")
_COMPILER_ERROR = re.compile(r"(?m)^(\S+:\d+(?::\d+)?: (?:fatal )?error: .*)$")
_SHM = re.compile(r"(?s)/dev/shm.{0,300}No space left on device|No space left on device.{0,300}/dev/shm")
_PINNED = re.compile(r"(?s)(?:pin_memory|pin_tensor|cudaHostAlloc|CachingHostAllocator|pinned).{0,3000}?"
                     r"(?:out of memory|Cannot allocate memory|cudaErrorMemoryAllocation)")


def first_compiler_error(log: str) -> Optional[str]:
    m = _COMPILER_ERROR.search(log)
    return m.group(1).strip()[:300] if m else None


def classify(error: str, log: str = "") -> Optional[Tuple[str, Dict[str, str]]]:
    """The cause of a failed run and the values its title quotes; None when the text names none of them."""
    text = f"{error}\n{log}"
    if _NINJA.search(text):
        return "no_ninja", {}
    m = _COMPILER.search(text)
    if m:
        return "no_compiler", {"compiler": m.group("sh") or m.group("py")}
    m = _BUILD_STEP_NOT_FOUND.search(text)
    if m and _BUILD.search(text):
        return "no_compiler", {"compiler": m.group(1)}
    m = _MISMATCH.search(text)
    if m:
        return "nvcc_mismatch", {"nvcc": m.group(1), "cuda": m.group(2)}
    if _NO_TOOLKIT.search(text):
        return "no_cuda_toolkit", {}
    if _LIBAIO.search(text):
        return "libaio_missing", {}
    m = _BUILD.search(text)
    if m:
        first = first_compiler_error(log) or first_compiler_error(error) or "see the log"
        kind = "python_headers_missing" if "Python.h" in first else "op_build_failed"
        return kind, {"op": m.group(1), "first_error": first}
    if _SHM.search(text):
        return "shm_exhausted", {}
    if _PINNED.search(text):
        return "pinned_memory", {}
    return None


def _rule(rules: Optional[Rulebook], rule_id: str) -> Optional[Rule]:
    """The machine rule `rule_id` of the Knowledge's rulebook (None: the bundled rules)."""
    return next((r for r in (rules.rules if rules is not None else load_rules()) if r.id == rule_id), None)


def _fill(template: str, values: Dict[str, str]) -> str:
    """A rule's text with the values this run knows; the others shown as <name>."""
    return TEMPLATE_NAME.sub(lambda m: values.get(m.group(1), f"<{m.group(1)}>"), template)


def cause_finding(key: str, values: Dict[str, str], detail: str, severity: str = "error",
                  rules: Optional[Rulebook] = None) -> Finding:
    """The finding for a cause: its title, what the run showed, and the fix of the rule (in `rules`, the
    Knowledge's rulebook) that covers it."""
    cause = CAUSES[key]
    rule = _rule(rules, cause.rule) if cause.rule else None
    if rule is not None:
        fix = f"{_fill(rule.fix, values)} (rule {rule.id} {rule.name}: `envdoctor rules explain {rule.id}`)"
        references = [rule.id, *rule.references]
    else:
        fix, references = cause.fix, []
    return Finding(
        id=f"SELFTEST-ZERO3-{key.upper().replace('_', '-')}",
        severity=severity,
        category=cause.category,
        title=_fill(cause.title, values),
        detail=detail,
        remedy=manual(fix),
        subjects=["deepspeed"],
        references=references,
    )
