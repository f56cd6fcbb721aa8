"""The text of a fleet comparison (`envdoctor fleet`) and of what `fleet collect` gathered."""

from __future__ import annotations

from typing import TYPE_CHECKING

from envdoctor.present.findings import render_findings
from envdoctor.present.style import Style

if TYPE_CHECKING:
    from envdoctor.usecases.fleet import FleetCollection, FleetComparison


def render_comparison(result: FleetComparison, style: Style) -> str:
    """The nodes compared, then the findings."""
    names = ", ".join(n for n, _ in result.nodes)
    return f"{len(result.nodes)} nodes: {names}\n\n" + render_findings(result.findings, style)


def render_collection(result: FleetCollection, style: Style) -> str:
    """Who arrived and when, who never did, the bandwidth matrix, then the findings."""
    from envdoctor.fleet.report import render_matrix

    doc = result.to_json()
    c = doc["collect"]
    arrived = [n["host"] for n in doc["nodes"] if n["arrived"]]
    out = [f"{len(arrived)}/{c['nnodes']} nodes at {c['endpoint']} in {c['seconds']:.1f}s: {', '.join(arrived)}"]
    if c["missing"]:
        out.append(f"never arrived: {', '.join(c['missing'])}")
    bw = doc.get("bandwidth")
    if bw and bw.get("matrix_gbps"):
        out.append("")
        out.append(render_matrix(bw["nodes"], bw["matrix_gbps"]).rstrip("\n"))
    elif bw and bw.get("error"):
        out.append(f"bandwidth: {bw['error']}")
    return "\n".join(out) + "\n\n" + render_findings(result.findings, style)
