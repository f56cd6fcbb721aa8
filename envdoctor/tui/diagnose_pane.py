"""The Diagnose tab: paste or open anything (a traceback, a build log, collect_env, an NCCL log, or several in one)
and see `envdoctor diagnose`'s answer: the most likely cause and its fix first, then its evidence lines
(input:line, highlighted in the text), what would confirm it, what tells it apart from the runner-up, and the
alternatives one line each. Every text that came from the input goes through `present.safe_text.safe_display`."""

from __future__ import annotations

import os
from typing import Any, List, Optional

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Static, TextArea

from envdoctor.present.safe_text import safe_display
from envdoctor.tui import messages as msg

HINT = ("Paste anything here or below (a traceback, a build log, collect_env, an NCCL log, or several) and choose "
        "Diagnose, or type a file's path and press Enter.")
_SEVERITY = {"error": "bold red", "warning": "bold yellow"}
EVIDENCE_SHOWN = 6


def _s(text: Any) -> str:
    return safe_display("" if text is None else str(text))


def view_of(text: str) -> str:
    """An input's text as the text area shows it: sanitised line for line (Windows line ends read as line ends), so
    the evidence's line numbers point at the same lines."""
    return safe_display(text.replace("\r\n", "\n"))


def diagnosis_text(shown: Any) -> Text:
    """The diagnosis for the screen: the cause and its fix first (above the fold), then the evidence, what would
    confirm it, what tells it apart from the runner-up, and the alternatives one line each."""
    from envdoctor.present.diagnose import alternatives
    from envdoctor.usecases.diagnose_text import NOTHING, confirm_of, evidence_of, versus_of

    result = shown.result
    text = Text()
    if not result.findings:
        text.append(NOTHING + "\n", style="bold green")
    else:
        top = result.findings[0]
        rival = result.findings[1] if len(result.findings) > 1 else None
        head = "Most likely cause: " if result.failed else "No failure diagnosed; worth a look: "
        text.append(head, style=_SEVERITY.get(top.severity, "bold"))
        text.append(_s(top.title) + "\n", style="bold")
        text.append("fix: ", style="bold green")
        text.append(_s(top.fix) + "\n")
        text.append(f"{top.severity}, {top.confidence or 'low'} confidence  [{_s(top.id)}]\n", style="dim")
        evidence = evidence_of(top)
        if evidence:
            text.append("\nevidence:\n", style="bold")
        for ev in evidence[:EVIDENCE_SHOWN]:
            where = f"{ev['input']}:{ev['line']}" if ev["line"] is not None else "fact"
            text.append(f"  {_s(where)}  ", style="dim")
            text.append(_s(ev["text"]) + "\n", style="black on yellow")
        if len(evidence) > EVIDENCE_SHOWN:
            text.append(f"  and {len(evidence) - EVIDENCE_SHOWN} more line(s)\n", style="dim")
        confirm = confirm_of(top)
        if confirm:
            text.append("confirm: ", style="bold")
            text.append(_s(confirm) + "\n")
        versus = versus_of(top, rival)
        if versus and rival is not None:
            text.append(f"versus {_s(rival.category)}: ", style="bold")
            text.append(_s(versus) + "\n")
        others = alternatives(result)
        if others:
            text.append("\nalternatives:\n", style="bold")
        for f in others:
            loc = f.locations[0] if f.locations else "fact"
            text.append(f"  {f.severity} {_s(f.id)} [{f.confidence or 'low'}] {_s(f.title)} ({_s(loc)})\n")
    what = f"\n{len(result.inputs)} input(s), {result.lines} line(s)"
    if result.sections:
        what += ", report sections: " + ", ".join(dict.fromkeys(_s(s.kind) for s in result.sections))
    if getattr(shown, "snapshot_used", False):
        what += "; weighed against the machine's facts on show"
    text.append(what + "\n", style="dim")
    for label, line in result.cut_lines[:3]:
        text.append(f"note: {_s(label)}:{line} is longer than the cap: read as its head and its tail\n", style="dim")
    return text


def evidence_lines(shown: Any) -> List[int]:
    """The line numbers (1-based) of the top cause's evidence in the text on show."""
    from envdoctor.usecases.diagnose_text import evidence_of

    if not shown.result.findings:
        return []
    return [ev["line"] for ev in evidence_of(shown.result.findings[0])
            if ev["line"] is not None and ev["input"] == shown.label]


def is_one_path(pasted: str) -> bool:
    """A paste that names one existing file or folder (a file dragged onto the terminal); anything else is text."""
    line = pasted.strip()
    if not line or "\n" in line:
        return False
    if len(line) > 1 and line[0] == line[-1] and line[0] in "'\"":
        line = line[1:-1]
    if safe_display(line) != line:
        return False  # a name with escapes or a secret in it is not shown in the box: it is text
    try:
        return os.path.exists(os.path.expanduser(line))
    except (OSError, ValueError):
        return False


class PathOrText(Input):
    """The path box: a paste that is one existing path stays here and opens; any other paste is text."""

    def _on_paste(self, event: events.Paste) -> None:
        event.prevent_default()  # not Input's own paste, which keeps the first line only
        event.stop()
        if is_one_path(event.text):
            self.value = event.text.strip().strip("'\"")
            self.cursor_position = len(self.value)
            self.post_message(msg.DiagnoseRequested(path=os.path.expanduser(self.value), text=None))
            return
        pane = next(a for a in self.ancestors if isinstance(a, DiagnosePane))
        pane.take_paste(event.text)


class SafeTextArea(TextArea):
    """The text area: what is pasted into it is shown sanitised (an escape sequence never reaches the screen)."""

    def _on_paste(self, event: events.Paste) -> None:
        event.prevent_default()  # not TextArea's own paste, which inserts the text as it came
        event.stop()
        if self.read_only:
            return
        result = self.replace(view_of(event.text), *self.selection)
        self.move_cursor(result.end_location)
        self.focus()


class DiagnosePane(Vertical):
    """Paste or open any failure text and see the diagnosis, the evidence highlighted in the text."""

    ENTRY = "#diagnose-path"
    BINDINGS = [Binding("ctrl+l", "clear", "Clear", tooltip="clear the path and the pasted text")]
    DEFAULT_CSS = """
    DiagnosePane #diagnose-controls { height: auto; }
    DiagnosePane #diagnose-controls Button { min-width: 6; margin-left: 1; margin-top: 1; }
    DiagnosePane #diagnose-path { width: 1fr; }
    DiagnosePane #diagnose-result-scroll { height: 3fr; min-height: 6; }
    DiagnosePane #diagnose-text { height: 2fr; min-height: 4; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.shown: Any = None  # the ShownDiagnosis on show

    @property
    def report(self) -> Any:
        """The diagnosis on show (envdoctor.usecases.diagnose_text.DiagnoseResult) for the exported report."""
        return self.shown.result if self.shown is not None else None

    def compose(self) -> ComposeResult:
        with Horizontal(id="diagnose-controls"):
            yield PathOrText(placeholder="a file's path, or paste any text", id="diagnose-path")
            yield Button("Open", id="diagnose-open", variant="primary", compact=True)
            yield Button("Diagnose", id="diagnose-paste", compact=True)
            yield Button("Clear", id="diagnose-clear", compact=True)
        with VerticalScroll(id="diagnose-result-scroll"):
            yield Static(Text(HINT, style="dim"), id="diagnose-result")
        yield SafeTextArea(id="diagnose-text", soft_wrap=True, show_line_numbers=True)

    def take_paste(self, pasted: str) -> None:
        """A paste that is text: into the text area (sanitised), and diagnosed at once as it came."""
        self.query_one("#diagnose-text", TextArea).load_text(view_of(pasted))
        self.post_message(msg.DiagnoseRequested(path=None, text=pasted))

    @on(Button.Pressed, "#diagnose-open")
    @on(Input.Submitted, "#diagnose-path")
    def _open(self) -> None:
        path = self.query_one("#diagnose-path", Input).value.strip()
        if path:
            self.post_message(msg.DiagnoseRequested(path=os.path.expanduser(path), text=None))

    @on(Button.Pressed, "#diagnose-paste")
    def _paste(self) -> None:
        self.post_message(msg.DiagnoseRequested(path=None, text=self.query_one("#diagnose-text", TextArea).text))

    @on(Button.Pressed, "#diagnose-clear")
    def action_clear(self) -> None:
        self.query_one("#diagnose-path", Input).value = ""
        self.query_one("#diagnose-text", TextArea).load_text("")
        self.query_one("#diagnose-result", Static).update(Text(HINT, style="dim"))
        self.shown = None
        self.query_one("#diagnose-path", Input).focus()

    def use_case_done(self, shown: Any, error: Optional[str]) -> None:
        """What `diagnose_input` returned (or the InputError's text)."""
        if shown is None:
            self.query_one("#diagnose-result", Static).update(Text(_s(error or "failed"), style="bold red"))
            return
        self.shown = shown
        self.query_one("#diagnose-result", Static).update(diagnosis_text(shown))
        self.query_one("#diagnose-result-scroll", VerticalScroll).scroll_home(animate=False)
        area = self.query_one("#diagnose-text", TextArea)
        if shown.text is not None:
            view = view_of(shown.text)
            if area.text != view:
                area.load_text(view)
        else:
            area.load_text(f"({_s(shown.label)} is not held here: too big, a folder or a pipe; the diagnosis "
                           "above read all of it)")
        found = evidence_lines(shown) if shown.text is not None else []
        if found:
            area.move_cursor((max(0, found[0] - 1), 0), center=True)
            area.select_line(max(0, found[0] - 1))
        area.scroll_to(x=0, animate=False)  # the start of each line in view
