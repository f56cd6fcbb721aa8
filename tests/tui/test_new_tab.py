"""A new tab is a pane and a `TABS` entry (docs/extend-tui-and-output.md): the pane asks for a use case with the
one generic message and gets the result, or the InputError's text, back in `use_case_done`."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from envdoctor.errors import InputError
from envdoctor.tui import app as app_module
from envdoctor.tui import messages as msg
from envdoctor.tui.app import Tab, make_app
from tests.tui.conftest import aio, recorded, settle, text_of


class RulesPane(VerticalScroll):
    """The docs' example, as written there."""

    DEFAULT_CSS = "RulesPane #rules-table { height: auto; }"

    def compose(self):
        yield Static("Loading the rules…", id="rules-table")

    def on_mount(self) -> None:
        from envdoctor.usecases.rule_catalog import rule_catalog

        self.post_message(msg.UseCaseRequested("rules", rule_catalog, (self.app.settings.rules_path,)))

    def use_case_done(self, entries, error) -> None:
        from envdoctor.present.rules_doc import rules_table

        self.query_one("#rules-table", Static).update(Text(error or rules_table(entries)))


RULES_TAB = Tab("rules", "Rules", "u", "everything envdoctor can find, and why", f"{__name__}:RulesPane")


def failing(path: str):
    raise InputError(f"{path}: no rules here")


@aio
async def test_a_tab_added_to_tabs_runs_its_use_case_and_shows_the_result(monkeypatch):
    monkeypatch.setattr(app_module, "TABS", (*app_module.TABS, RULES_TAB))
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot, app)
        shown = text_of(app.query_one("#rules-table", Static))
        assert "ED101" in shown and "NCCL" in shown
        app.post_message(msg.UseCaseRequested("rules", failing, ("/nowhere",)))
        await settle(pilot, app)
        assert "/nowhere: no rules here" in text_of(app.query_one("#rules-table", Static))
        assert app.screen is app.screen_stack[0]  # an InputError is the pane's to show, not an error screen
