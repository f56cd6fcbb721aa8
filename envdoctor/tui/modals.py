"""Modal screens: each returns its answer with `dismiss(value)`; the caller decides what happens next."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence, Tuple

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static


class ConfirmScreen(ModalScreen[bool]):
    """Yes or no; Escape is no."""

    BINDINGS = [Binding("escape", "dismiss(False)", "Cancel"), Binding("y", "dismiss(True)", "Yes", show=False),
                Binding("n", "dismiss(False)", "No", show=False)]

    def __init__(self, title: str, body: Text | str, yes: str = "Yes") -> None:
        super().__init__()
        self._title, self._body, self._yes = title, body, yes

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self._title, id="dialog-title")
            yield Static(self._body, id="dialog-body")
            with Horizontal(id="dialog-buttons"):
                yield Button(self._yes, id="yes", variant="warning")
                yield Button("Cancel", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _answer(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class ExportScreen(ModalScreen[Optional[Tuple[str, str]]]):
    """Where to write the redacted markdown report: ("save", path), ("copy", "") or None."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, default_path: str) -> None:
        super().__init__()
        self._default = default_path

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Export the report (markdown, host and user names removed)", id="dialog-title")
            yield Input(self._default, id="export-path")
            with Horizontal(id="dialog-buttons"):
                yield Button("Save", id="save", variant="primary")
                yield Button("Copy to clipboard", id="copy")
                yield Button("Cancel", id="cancel")

    @on(Button.Pressed, "#save")
    @on(Input.Submitted, "#export-path")
    def _save(self) -> None:
        path = self.query_one("#export-path", Input).value.strip()
        if path:
            self.dismiss(("save", path))

    @on(Button.Pressed, "#copy")
    def _copy(self) -> None:
        self.dismiss(("copy", ""))

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)


class OpenSnapshotScreen(ModalScreen[Optional[str]]):
    """The path of a snapshot to show instead of this machine, or None."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, default_path: str = "") -> None:
        super().__init__()
        self._default = default_path

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Open a snapshot taken elsewhere (`envdoctor snapshot -o FILE` there)", id="dialog-title")
            yield Input(self._default, placeholder="path to the snapshot file", id="snapshot-path")
            with Horizontal(id="dialog-buttons"):
                yield Button("Open", id="open", variant="primary")
                yield Button("Cancel", id="cancel")

    @on(Button.Pressed, "#open")
    @on(Input.Submitted, "#snapshot-path")
    def _open(self) -> None:
        path = self.query_one("#snapshot-path", Input).value.strip()
        if path:
            self.dismiss(str(Path(path).expanduser()))

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)


class ErrorScreen(ModalScreen[None]):
    """A worker failed: say what, and carry on."""

    BINDINGS = [Binding("escape,enter", "dismiss(None)", "Close")]

    def __init__(self, title: str, error: str) -> None:
        super().__init__()
        self._title, self._error = title, error

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="-error"):
            yield Label(self._title, id="dialog-title")
            yield Static(Text(self._error), id="dialog-body")
            with Horizontal(id="dialog-buttons"):
                yield Button("Close", id="close")

    @on(Button.Pressed)
    def _close(self) -> None:
        self.dismiss(None)


class HelpScreen(ModalScreen[None]):
    """Every key and what each tab is for; any of Escape, ? or q closes it."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss(None)", "Close")]

    def __init__(self, rows: Sequence[Tuple[str, str]]) -> None:
        super().__init__()
        self._rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="-help"):
            yield Label("envdoctor: keys and tabs", id="dialog-title")
            with VerticalScroll(id="help-scroll"):
                yield Static(help_text(self._rows), id="help-text")
            with Horizontal(id="dialog-buttons"):
                yield Button("Close", id="close", compact=True)

    @on(Button.Pressed)
    def _close(self) -> None:
        self.dismiss(None)


def help_text(rows: Sequence[Tuple[str, str]]) -> Group:
    """Headings (rows without a key) and key / meaning pairs, the meanings wrapping in their own column."""
    parts = []
    table = None
    for key, what in rows:
        if not key:
            table = Table.grid(padding=(0, 2), expand=True)
            table.add_column(style="bold cyan", no_wrap=True)
            table.add_column(ratio=1)
            parts += [Text(("\n" if parts else "") + what, style="bold"), table]
            continue
        if table is not None:
            table.add_row(key, what)
    return Group(*parts)
