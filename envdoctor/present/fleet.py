"""The text of a fleet comparison (`envdoctor fleet`) and of what `fleet collect` gathered."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Sequence

from envdoctor.findings import Finding, sort_findings, summary
from envdoctor.present.style import Style

if TYPE_CHECKING:
    from envdoctor.usecases.fleet import FleetCollection, FleetComparison


MAX_LINES = 60  # what an operator reads at any fleet size; --json keeps every node
_LABEL = {"error": ("ERROR", "red"), "warning": ("WARNING", "yellow"), "info": ("INFO", "blue")}


def _cut(text: str, width: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."


def render_fleet_findings(findings: Sequence[Finding], style: Style, budget: int) -> List[str]:
    """At most `budget` lines: per finding its title, the values by node count where it compares nodes, and
    its fix; what does not fit is counted, never dropped silently."""
    from envdoctor.redact import scrub_secrets

    if not findings:
        return [style("No problems found.", "green")]
    out: List[str] = []
    for k, f in enumerate(findings):
        label, colour = _LABEL[f.severity]
        block = [f"{style(label, colour)} {style(f.id, 'bold')} {_cut(scrub_secrets(f.title), 200)}"]
        detail = scrub_secrets(f.detail)
        at = max(detail.find("Values: "), detail.find("Per node: "), detail.find("Measured against"))
        if at >= 0:
            block.append("    " + _cut(detail[at:]))
        block.append(f"    {style('fix:', 'green')} {_cut(scrub_secrets(f.fix))}")
        if len(out) + len(block) > budget - 1 and k < len(findings):
            out.append(f"... and {len(findings) - k} more finding(s): `--json` lists every one with every node")
            break
        out.extend(block)
    return out


def render_comparison(result: FleetComparison, style: Style) -> str:
    """How many nodes, the findings (bounded), then the counts: at most MAX_LINES lines at any size."""
    names = [n for n, _ in result.nodes]
    shown = ", ".join(names) if len(names) <= 8 else f"{', '.join(names[:3])}, ... {names[-1]}"
    every = sort_findings(result.node_findings + result.findings)
    s = summary(every)
    head = [f"{len(names)} nodes: {shown}", ""]
    tail = ["", f"{s['errors']} error(s), {s['warnings']} warning(s), {s['infos']} info(s)"]
    body = render_fleet_findings(every, style, MAX_LINES - len(head) - len(tail))
    return "\n".join(head + body + tail) + "\n"


def render_collection(result: FleetCollection, style: Style) -> str:
    """Who arrived and when, who never did, the bandwidth matrix (up to 16 nodes; larger in --json), then the
    findings: at most MAX_LINES lines at any size."""
    from envdoctor.fleet.report import render_matrix
    from envdoctor.rules.fleet_listing import names_text

    doc = result.to_json()
    c = doc["collect"]
    arrived = [n["host"] for n in doc["nodes"] if n["arrived"]]
    out = [f"{len(arrived)}/{c['nnodes']} nodes at {c['endpoint']} in {c['seconds']:.1f}s: {names_text(arrived)}"]
    if c["missing"]:
        out.append(f"never arrived: {names_text(c['missing'])}")
    if c.get("not_collected"):
        out.append(f"not collected (group leader lost: {names_text(c.get('leaders_lost', []))}): "
                   f"{names_text(c['not_collected'])}")
    if c.get("gather") == "hierarchical":
        out.append(f"gathered by groups of {c.get('group_size')} nodes")
    bw = doc.get("bandwidth")
    if bw and bw.get("matrix_gbps") and len(bw["nodes"]) <= 16:
        out.append("")
        out.append(render_matrix(bw["nodes"], bw["matrix_gbps"]).rstrip("\n"))
    elif bw and bw.get("matrix_gbps"):
        out.append(f"bandwidth: {len(bw['nodes'])} x {len(bw['nodes'])} matrix, median {bw.get('median_gbps')} GB/s "
                   "(in --json and -o FILE)")
    elif bw and bw.get("error"):
        out.append(f"bandwidth: {bw['error']}")
    every = sort_findings(result.node_findings + result.findings)
    s = summary(every)
    tail = ["", f"{s['errors']} error(s), {s['warnings']} warning(s), {s['infos']} info(s)"]
    out.append("")
    body = render_fleet_findings(every, style, max(8, MAX_LINES - len(out) - len(tail)))
    return "\n".join(out + body + tail) + "\n"
