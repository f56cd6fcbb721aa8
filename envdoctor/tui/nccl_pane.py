"""The NCCL tab: open a log (or paste one) and see the ranked causes, evidence lines highlighted in the log."""

from __future__ import annotations

from typing import Any, List, Optional

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Static, TextArea

from envdoctor.present.safe_text import safe_display
from envdoctor.tui import messages as msg

HINT = "Type a log file's path and press Enter, or paste a log below and choose Diagnose."


def nccl_text(report: Any) -> Text:
    """The ranked causes, each headed by its title (the category identifier stays in the JSON)."""
    text = Text()
    f = report.facts.as_dict()
    text.append(f"{len(report.inputs)} input(s), {report.lines} line(s)", style="dim")
    if f.get("nccl_versions"):
        text.append(safe_display(f"; NCCL {', '.join(f['nccl_versions'])}"), style="dim")
    if f.get("transports"):
        text.append(safe_display(f"; transports {', '.join(f['transports'])}"), style="dim")
    text.append("\n\n")
    if not report.failed:
        text.append("No recognisable NCCL failure in the input.\n", style="bold green")
    for n, fd in enumerate(report.findings, 1):
        label = "most likely root cause" if n == 1 and report.failed else ("also possible" if report.failed else "warning")
        text.append(f"{n}. ", style="bold")
        text.append(f"{safe_display(fd.title)}\n", style="bold")
        text.append(f"   {label}, {fd.confidence} confidence  [{fd.id}]\n", style="dim")
        for i, line in enumerate(fd.evidence):
            loc = fd.locations[i] if i < len(fd.locations) else ""
            text.append(f"   {safe_display(loc)}: " if loc else "   ", style="dim")
            text.append(safe_display(line) + "\n", style="black on yellow")
        for reason in fd.why[:3]:
            text.append(f"   why: {safe_display(reason)}\n")
        text.append("   fix: ", style="bold green")
        text.append(safe_display(fd.fix) + "\n\n")
    return text


def evidence_lines(report: Any) -> List[int]:
    lines = []
    for fd in report.findings:
        for loc in fd.locations:
            lineno = loc.rsplit(":", 1)[-1] if loc else ""
            if lineno.isdigit():
                lines.append(int(lineno))
    return lines


class NcclPane(Vertical):
    """Open an NCCL / torch.distributed log (or paste it) and see the ranked causes, evidence lines highlighted."""

    ENTRY = "#nccl-path"
    BINDINGS = [Binding("ctrl+l", "clear", "Clear", tooltip="clear the path and the pasted log")]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.report: Any = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="nccl-controls"):
            yield Input(placeholder="path of a log file", id="nccl-path")
            yield Button("Open", id="nccl-open", variant="primary", compact=True)
            yield Button("Diagnose pasted", id="nccl-paste", compact=True)
            yield Button("Clear", id="nccl-clear", compact=True)
        yield TextArea(id="nccl-text", soft_wrap=True, show_line_numbers=True)
        with VerticalScroll(id="nccl-result-scroll"):
            yield Static(Text(HINT, style="dim"), id="nccl-result")

    @on(Button.Pressed, "#nccl-open")
    @on(Input.Submitted, "#nccl-path")
    def _open(self) -> None:
        path = self.query_one("#nccl-path", Input).value.strip()
        if path:
            self.post_message(msg.NcclRequested(path=path, text=None))

    @on(Button.Pressed, "#nccl-paste")
    def _paste(self) -> None:
        self.post_message(msg.NcclRequested(path=None, text=self.query_one("#nccl-text", TextArea).text))

    @on(Button.Pressed, "#nccl-clear")
    def action_clear(self) -> None:
        self.query_one("#nccl-path", Input).value = ""
        self.query_one("#nccl-text", TextArea).load_text("")
        self.query_one("#nccl-result", Static).update(Text(HINT, style="dim"))
        self.report = None
        self.query_one("#nccl-path", Input).focus()

    def show_error(self, error: str) -> None:
        self.query_one("#nccl-result", Static).update(Text(safe_display(error), style="bold red"))

    def show_report(self, report: Any, log_text: Optional[str]) -> None:
        self.report = report
        self.query_one("#nccl-result", Static).update(nccl_text(report))
        area = self.query_one("#nccl-text", TextArea)
        if log_text is not None:
            log_text = safe_display(log_text)  # line for line: the evidence's line numbers hold
        if log_text is not None and area.text != log_text:
            area.load_text(log_text)
        found = evidence_lines(report)
        if found:
            area.move_cursor((max(0, found[0] - 1), 0), center=True)
            area.select_line(max(0, found[0] - 1))
        area.scroll_to(x=0, animate=False)  # the start of each line in view
