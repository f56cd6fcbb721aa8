"""Reading reports: the report sections inside a pasted text (collect_env, pip list, nvidia-smi, ds_report, vLLM's
collect_env, startup logs) and the partial snapshot they state, in which everything not stated is unknown.

    reader = ReportReader()
    for block, first_line in blocks:        # whole lines joined by "\\n", in order
        reader.feed_block(block, first_line)
    facts = reader.finish()                 # ReportFacts: sections, doc, evidence
    snapshot = snapshot_from_report(facts, base=None)

docs/diagnose-readers.md says which kinds are read, which fields each fills, and how a report merges into a
probed snapshot.
"""

from envdoctor.text.complete import (
    PARTIAL_LISTS,
    PARTIAL_WHY,
    complete_document,
    merge_documents,
    report_document,
    report_notes,
    snapshot_from_report,
)
from envdoctor.text.facts import Conflict, ReportFacts, Section
from envdoctor.text.reader import ReportReader, may_hold_section, read_text

# Every kind a Section may have.
KINDS = ("collect_env", "vllm_env", "pip_list", "pip_freeze", "conda_list", "nvidia_smi", "nvidia_smi_q",
         "ds_report", "startup_log")

__all__ = [
    "KINDS", "PARTIAL_LISTS", "PARTIAL_WHY", "Conflict", "ReportFacts", "ReportReader", "Section", "complete_document",
    "may_hold_section", "merge_documents", "read_text", "report_document", "report_notes", "snapshot_from_report",
]
