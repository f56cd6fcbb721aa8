"""The Fleet tab: open a `fleet` / `fleet collect` report (envdoctor.fleet/1) and see the nodes, the odd ones
highlighted by their worst finding, and the bandwidth matrix as a heat map against the fleet's median."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Static

from envdoctor.tui import messages as msg

ODD_STYLE = {"error": "bold white on red", "warning": "bold black on yellow", "info": "bold cyan"}
SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}
# (fraction of the median at or above which, cell style); the last one catches the rest
HEAT = ((0.8, "black on green"), (0.5, "black on yellow"), (0.0, "bold white on red"))


def odd_nodes(doc: Dict[str, Any]) -> Dict[str, str]:
    """Each node a warning or error names, with its worst severity."""
    worst: Dict[str, str] = {}
    for f in doc.get("findings", []):
        if f.get("severity") not in ("error", "warning"):
            continue
        for name in f.get("subjects", []):
            if name not in worst or SEVERITY_RANK[f["severity"]] < SEVERITY_RANK[worst[name]]:
                worst[name] = f["severity"]
    return worst


def heat_style(value: Optional[float], median: Optional[float]) -> str:
    if value is None or not median:
        return "dim"
    ratio = value / median
    return next(style for floor, style in HEAT if ratio >= floor)


def nodes_table(doc: Dict[str, Any]) -> Table:
    odd = odd_nodes(doc)
    table = Table(box=None, padding=(0, 1), header_style="bold")
    for col in ("node", "rank", "host name", "arrived", "clock vs rank 0"):
        table.add_column(col)
    for n in doc["nodes"]:
        name = str(n.get("host"))
        clock = f"{n['clock_offset_s']:+.3f} s" if isinstance(n.get("clock_offset_s"), (int, float)) else ""
        arrived = n.get("arrived", True)
        table.add_row(Text(name, style=ODD_STYLE.get(odd.get(name, ""), "")), str(n.get("rank", "")),
                      str(n.get("hostname") or n.get("file") or ""),
                      Text("yes" if arrived else "NO", style="" if arrived else "bold red"), clock)
    return table


def heatmap(names: Sequence[str], matrix: Sequence[Sequence[Optional[float]]], median: Optional[float],
            slow: Sequence[str] = ()) -> Text:
    """Row i sends to column j; each cell coloured by its share of the fleet's median (GB/s)."""
    width = max(7, *(len(n) for n in names))
    text = Text(" " * (width + 1))
    for name in names:
        text.append(f"{name[:width]:>{width}} ", style="bold red" if name in slow else "bold")
    text.append("\n")
    for name, row in zip(names, matrix):
        text.append(f"{name[:width]:<{width}} ", style="bold red" if name in slow else "bold")
        for v in row:
            cell = "-" if v is None else f"{v:.2f}"
            text.append(f"{cell:>{width}}", style=heat_style(v, median))
            text.append(" ")
        text.append("\n")
    if median:
        text.append(f"GB/s, row sends to column; median {median:.2f}: ", style="dim")
        for floor, style in HEAT:
            text.append(f" >= {floor:.0%} " if floor else " below ", style=style)
            text.append(" ")
        text.append("\n")
    return text


def findings_text(doc: Dict[str, Any]) -> Text:
    text = Text()
    for f in doc.get("findings", []):
        text.append(f"{f['severity'].upper():<8}", style=ODD_STYLE.get(f["severity"], ""))
        text.append(f" {f['id']} {f['title']}\n", style="bold")
        text.append(f"    fix: {f['fix']}\n")
    s = doc.get("summary", {})
    text.append(f"{s.get('errors', 0)} error(s), {s.get('warnings', 0)} warning(s), {s.get('infos', 0)} info(s)\n",
                style="dim")
    return text


class FleetPane(Vertical):
    """Open a fleet report; the nodes (odd ones highlighted), the bandwidth heat map, the findings."""

    ENTRY = "#fleet-path"  # the tab opens with the cursor here: a typed path is text, not shortcut keys

    DEFAULT_CSS = """
    FleetPane #fleet-controls { height: auto; }
    FleetPane #fleet-controls Button { margin-left: 1; }
    FleetPane #fleet-path { width: 1fr; }
    """

    def compose(self) -> ComposeResult:
        with Horizontal(id="fleet-controls"):
            yield Input(placeholder="a fleet report: envdoctor fleet collect ... -o fleet.json", id="fleet-path")
            yield Button("Open", id="fleet-open", variant="primary")
        with VerticalScroll():
            yield Static(Text("Open the JSON report of `envdoctor fleet collect -o FILE` (or `fleet --json`).",
                              style="dim"), id="fleet-nodes")
            yield Static("", id="fleet-heatmap")
            yield Static("", id="fleet-findings")

    @on(Button.Pressed, "#fleet-open")
    @on(Input.Submitted, "#fleet-path")
    def _open(self) -> None:
        from envdoctor.usecases.fleet import open_report

        path = self.query_one("#fleet-path", Input).value.strip()
        if path:
            self.post_message(msg.UseCaseRequested("fleet", open_report, (path,)))

    def use_case_done(self, report: Any, error: Optional[str]) -> None:
        """The report opened (envdoctor.usecases.fleet.FleetReport), or what is wrong with the file."""
        if error is not None:
            self.query_one("#fleet-nodes", Static).update(Text(error, style="bold red"))
            self.query_one("#fleet-heatmap", Static).update("")
            self.query_one("#fleet-findings", Static).update("")
        else:
            self.show(report.to_json())

    def show(self, doc: Dict[str, Any]) -> None:
        self.query_one("#fleet-nodes", Static).update(nodes_table(doc))
        bw = doc.get("bandwidth") or {}
        if bw.get("matrix_gbps"):
            heat: Any = heatmap(bw["nodes"], bw["matrix_gbps"], bw.get("median_gbps"), bw.get("slow_nodes", []))
        elif bw.get("error"):
            heat = Text(f"bandwidth: {bw['error']}", style="yellow")
        else:
            heat = Text("no bandwidth matrix (run `fleet collect --bandwidth`)", style="dim")
        self.query_one("#fleet-heatmap", Static).update(heat)
        self.query_one("#fleet-findings", Static).update(findings_text(doc))


__all__: List[str] = ["FleetPane", "heatmap", "nodes_table", "odd_nodes"]
