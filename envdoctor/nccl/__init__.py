"""NCCL failure diagnosis: from a log (or one log per rank/node) to the root cause and its fix.

Public entry points (the allreduce self-test calls these when a run fails):

    diagnose_text(text, snapshot=None) -> NcclReport
    diagnose_paths(paths, snapshot=None) -> NcclReport       # "-" reads stdin; InputError names an unreadable file
    diagnose_streams([(label, binary_stream), ...], snapshot=None) -> NcclReport

`NcclReport.findings` is ranked, most likely root cause first; `.failed` says whether a failure was
diagnosed; `.to_json()` is the `envdoctor.nccl/1` document. Findings are `envdoctor.findings.Finding`s.
"""

from envdoctor.nccl.diagnose import (
    NO_FAILURE,
    SCHEMA,
    NcclReport,
    diagnose_paths,
    diagnose_streams,
    diagnose_text,
)
from envdoctor.nccl.rules import load_rules

__all__ = [
    "NO_FAILURE",
    "SCHEMA",
    "NcclReport",
    "diagnose_paths",
    "diagnose_streams",
    "diagnose_text",
    "load_rules",
]
