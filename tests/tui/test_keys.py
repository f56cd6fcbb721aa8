"""Keys that always work: global keys from every widget but a text input, text inputs take every printable key,
Escape leaves any input or list, the Diagnose tab opens in its path box, `?` lists every key and tab."""

from __future__ import annotations

import pytest
from rich.style import Style
from textual.widgets import Input, OptionList, TextArea

from envdoctor.tui.app import TABS, make_app
from envdoctor.tui.modals import HelpScreen
from envdoctor.tui.tab_bar import TabBar
from tests.tui.conftest import aio, recorded, screen_lines, settle, text_of

TEXT_INPUTS = (Input, TextArea)
PRINTABLE = "qQ/tmp/queue-?exp_r.log gfxsno"  # every global key, a path and a space


def active(app) -> str:
    return app.active_tab


@pytest.mark.slow
@aio
async def test_tab_keys_work_from_every_widget_that_is_not_a_text_input():
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        checked = 0
        for tab in TABS:
            await pilot.press(tab.key)
            await settle(pilot, app)
            assert active(app) == tab.id
            for widget in list(app.screen.focus_chain):
                if isinstance(widget, TEXT_INPUTS):
                    continue
                other = next(t for t in TABS if t.id != tab.id)
                await pilot.press(tab.key)
                await settle(pilot, app)
                widget.focus()
                await pilot.pause()
                await pilot.press(other.key)
                await settle(pilot, app)
                assert active(app) == other.id, f"{other.key} from {widget!r} on {tab.id}"
                checked += 1
        assert checked >= 12  # lists, tables, buttons, the checkbox and the tab bar, on every tab


@pytest.mark.slow
@aio
async def test_after_clicking_a_finding_every_tab_key_still_works():
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        for tab in TABS:
            await pilot.press("escape", "f")  # the Diagnose tab leaves the focus in its path box
            await settle(pilot, app)
            await pilot.click("#finding-list")
            await settle(pilot, app)
            assert isinstance(app.focused, OptionList), tab.id
            await pilot.press(tab.key)
            await settle(pilot, app)
            assert active(app) == tab.id


@pytest.mark.slow
@pytest.mark.parametrize("selector, tab", [("#diagnose-path", "diagnose"), ("#diagnose-text", "diagnose"),
                                           ("#torch-spec", "fix")])
@aio
async def test_a_text_input_takes_every_printable_key(selector, tab):
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.action_show_tab(tab)
        await settle(pilot, app)
        box = app.query_one(selector)
        box.focus()
        await pilot.pause()
        await pilot.press(*[{"/": "slash", " ": "space", "?": "question_mark"}.get(c, c) for c in PRINTABLE])
        await settle(pilot, app)
        assert (box.value if isinstance(box, Input) else box.text) == PRINTABLE
        assert active(app) == tab and app.is_running and not app.screen.is_modal  # no tab switch, quit, export, help


@pytest.mark.parametrize("selector, tab", [pytest.param("#diagnose-path", "diagnose", marks=pytest.mark.slow),
                                           pytest.param("#diagnose-text", "diagnose", marks=pytest.mark.slow),
                                           pytest.param("#torch-spec", "fix", marks=pytest.mark.slow),
                                           pytest.param("#finding-list", "findings", marks=pytest.mark.slow),
                                           ("#selftest-table", "selftest"),
                                           ("#gpu-table", "gpus")])
@aio
async def test_escape_leaves_any_input_or_list_and_the_keys_work_again(selector, tab):
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.action_show_tab(tab)
        await settle(pilot, app)
        app.query_one(selector).focus()
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.focused, TabBar)
        await pilot.press("o")
        await settle(pilot, app)
        assert active(app) == "overview"


@pytest.mark.slow
@aio
async def test_tab_leaves_the_findings_list():
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("f")
        await settle(pilot, app)
        assert isinstance(app.focused, OptionList)  # the list is the tab's entry
        await pilot.press("tab")
        await pilot.pause()
        assert not isinstance(app.focused, OptionList)


@pytest.mark.parametrize("how", ["key", "click", pytest.param("palette", marks=pytest.mark.slow)])
@aio
async def test_the_diagnose_tab_opens_with_the_path_box_focused(how):
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        if how == "key":
            await pilot.press("d")
        elif how == "click":
            bar = app.query_one("#tabs", TabBar)
            start = next(start for tab, start, _ in bar.spans() if tab.id == "diagnose")
            await pilot.click("#tabs", offset=(start + 2, 0))
        else:
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*"Go to Diagnose")
            await pilot.pause(0.5)
            await pilot.press("enter")
        await settle(pilot, app)
        assert active(app) == "diagnose"
        assert app.focused is app.query_one("#diagnose-path", Input)


@aio
async def test_question_mark_lists_every_key_and_what_each_tab_is_for():
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("question_mark")
        await settle(pilot, app)
        assert isinstance(app.screen, HelpScreen)
        shown = text_of(app.screen.query_one("#help-text"))
        for binding in app.BINDINGS:
            if binding.action != "reprobe":  # a recorded snapshot cannot be probed again
                assert (binding.key_display or binding.key) in shown
        for tab in TABS:
            assert f"{tab.key}  {tab.title}: {tab.about}" in shown
        for key in ("escape", "tab / shift+tab", "ctrl+p", "ctrl+l", "ctrl+q"):
            assert key in shown
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen) and app.is_running


@aio
async def test_the_footer_fits_80_columns_and_help_holds_the_rest():
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        footer = screen_lines(app)[-1]
        for shown in ("? Help", "e Export", "q Quit", "^p palette"):
            assert shown in footer
        for tab in TABS:  # the tab keys are underlined on the tab bar, and listed in the help screen
            drawn = tab.label.text(Style())
            span = next(s for s in drawn.spans if "underline" in str(s.style))
            assert drawn.plain[span.start:span.end].lower() == tab.key
