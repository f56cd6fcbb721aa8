"""The text of an NCCL diagnosis (`envdoctor nccl diagnose`)."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Optional

from envdoctor.present.style import Style
from envdoctor.redact import scrub_secrets

if TYPE_CHECKING:
    from envdoctor.nccl import NcclReport

_CONF = {"high": "green", "medium": "yellow", "low": "dim"}


def render_nccl(report: NcclReport, style: Style, snapshot_used: bool = False) -> str:
    """The ranked causes as text: evidence, why (and why not), how to tell them apart, the fix."""
    out = []
    what = f"{len(report.inputs)} input(s), {report.lines} line(s)" + (", with the machine snapshot" if snapshot_used else "")
    out.append(style("NCCL diagnosis", "bold") + f" ({what})")
    facts = _facts_line(report)
    if facts:
        out.append(f"  facts: {facts}")
    if report.first_failure:
        out.append("  " + _clip(scrub_secrets(report.first_failure), 200))
    out.append("")
    if not report.failed:
        out.append(style("No recognisable NCCL failure in the input.", "green") + f" {report.no_failure_note}")
        if report.findings:
            out.append("")
    for n, fd in enumerate(report.findings, 1):
        label = "most likely root cause" if n == 1 and report.failed else ("also possible" if report.failed else "warning")
        out.append(f"{n}. {style(fd.title, 'bold')}")
        out.append(f"   {label}, {style(fd.confidence + ' confidence', _CONF.get(fd.confidence, 'dim'))}  [{fd.id}]")
        if fd.evidence:
            out.append("   evidence:")
            for i, line in enumerate(fd.evidence):
                loc = f"{fd.locations[i]}: " if i < len(fd.locations) else ""
                out.append("     " + _clip(scrub_secrets(loc + line), 160))
        # scrubbed before they are cut or wrapped: a line break between `--password` and its value hides it
        for reason in fd.why[:3]:
            out.extend(textwrap.wrap(scrub_secrets(reason), 100, initial_indent="   why: ", subsequent_indent="        "))
        for reason in fd.against[:3]:
            out.extend(textwrap.wrap(scrub_secrets(reason), 100, initial_indent="   against: ", subsequent_indent="            "))
        if fd.test:
            head = "confirm" if n == 1 else "tell apart"
            out.extend(textwrap.wrap(scrub_secrets(f"run `{fd.test['run']}`: it is this cause if {fd.test['confirms']}"), 100,
                                     initial_indent=f"   {head}: ", subsequent_indent="        "))
        out.extend(textwrap.wrap(scrub_secrets(fd.fix), 100, initial_indent="   " + style("fix:", "green") + " ",
                                 subsequent_indent="        "))
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _facts_line(report: NcclReport) -> Optional[str]:
    d = report.facts.as_dict()
    parts = []
    if d["nccl_versions"]:
        cuda = f" (CUDA {', '.join(d['cuda_versions'])})" if d["cuda_versions"] else ""
        parts.append("NCCL " + ", ".join(d["nccl_versions"]) + cuda)
    if d["ranks"]:
        parts.append(f"{d['ranks']} ranks" + (f" on {d['nodes']} node(s)" if d["nodes"] else ""))
    if d["transports"]:
        parts.append("transports " + ", ".join(d["transports"]))
    if d["interfaces"] or d["bootstrap_interfaces"]:
        parts.append("interfaces " + ", ".join(dict.fromkeys(d["bootstrap_interfaces"] + d["interfaces"])))
    if d["nvls"]["used"] or d["nvls"]["available"] is not None:
        parts.append("NVLS " + ("used" if d["nvls"]["used"] else "available" if d["nvls"]["available"] else "unavailable"))
    if d["env"]:
        parts.append("env " + " ".join(f"{k}={v}" for k, v in d["env"].items()))
    return " · ".join(parts) or None


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
