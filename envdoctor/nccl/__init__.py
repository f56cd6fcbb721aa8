"""NCCL failure diagnosis: from a log (or one log per rank/node) to the root cause and its fix.

The NCCL view of the one evidence engine (`envdoctor.evidence`). Public entry points (the allreduce self-test
calls these when a run fails):

    diagnose_text(text, snapshot=None) -> NcclReport
    diagnose_paths(paths, snapshot=None) -> NcclReport       # "-" reads stdin; InputError names an unreadable file
    diagnose_streams([(label, binary_stream), ...], snapshot=None) -> NcclReport

`NcclReport.findings` is ranked, most likely root cause first; `.failed` says whether a failure was
diagnosed; `.to_json()` is the `envdoctor.nccl/1` document. Findings are `envdoctor.findings.Finding`s.
The names are loaded on first use, so that the engine may import this package's fact readers first.
"""

from typing import Any

_FROM_DIAGNOSE = ("NO_FAILURE", "SCHEMA", "NcclReport", "diagnose_paths", "diagnose_streams", "diagnose_text")

__all__ = [*_FROM_DIAGNOSE, "load_rules"]


def __getattr__(name: str) -> Any:
    if name in _FROM_DIAGNOSE:
        from envdoctor.nccl import diagnose

        return getattr(diagnose, name)
    if name == "load_rules":
        from envdoctor.evidence.signatures import load_rules

        return load_rules
    raise AttributeError(f"module 'envdoctor.nccl' has no attribute {name!r}")
