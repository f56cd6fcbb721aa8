"""The tab bar: keys, clicks and the pointer choose a tab; the app shows that tab's pane; a narrow terminal scrolls
the bar so the active title stays in view."""

from __future__ import annotations

import contextlib
from typing import AsyncIterator, Tuple

import pytest
from textual.pilot import Pilot
from textual.widgets import ContentSwitcher

from envdoctor.tui.app import TABS, EnvDoctorApp, make_app
from envdoctor.tui.tab_bar import TabBar, TabTitle
from tests.tui.conftest import aio, recorded, screen_lines, settle


def start_of(bar: TabBar, tab: str) -> int:
    return next(start for t, start, _ in bar.spans() if t.id == tab)


def colour_at(bar: TabBar, x: int):
    """The colour of the title drawn at column x of the bar."""
    line = bar.render().renderables[0]
    return next(span.style.color for span in line.spans if span.start <= x < span.end)


@contextlib.asynccontextmanager
async def opened(size: Tuple[int, int]) -> AsyncIterator[Tuple[Pilot, EnvDoctorApp, TabBar]]:
    """The app on a recorded snapshot, settled, with its tab bar."""
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        yield pilot, app, app.query_one("#tabs", TabBar)


@pytest.mark.slow
@aio
async def test_left_and_right_move_between_tabs_and_wrap_and_the_pane_follows():
    async with opened((120, 40)) as (pilot, app, bar):
        assert app.focused is bar and app.active_tab == "overview"
        await pilot.press("right")
        await settle(pilot, app)
        assert app.active_tab == "gpus" and app.query_one("#tab-content", ContentSwitcher).current == "gpus"
        await pilot.press("left", "left")  # past the first tab: the last
        await settle(pilot, app)
        assert app.active_tab == TABS[-1].id
        assert app.query_one("#tab-content", ContentSwitcher).current == TABS[-1].id
        assert app.query_one(f"#{TABS[-1].id}-pane").display


@pytest.mark.slow
@aio
async def test_right_crosses_every_tab_with_the_focus_on_the_bar_and_a_key_still_enters_a_tab():
    """Arrowing onto Findings or Diagnose leaves the focus on the bar (their list and path box would take the arrows);
    the tab's own key, or a click, puts it in the tab's entry widget."""
    async with opened((120, 40)) as (pilot, app, bar):
        for tab in TABS[1:]:
            await pilot.press("right")
            await settle(pilot, app)
            assert app.active_tab == tab.id and app.focused is bar
        await pilot.press("f")
        await settle(pilot, app)
        assert app.active_tab == "findings" and app.focused is app.query_one("#finding-list")


def test_a_bar_refuses_a_tab_it_does_not_have():
    bar = TabBar([TabTitle("a", "A"), TabTitle("b", "B")])
    with pytest.raises(ValueError):
        bar.active = "c"
    with pytest.raises(ValueError):
        TabBar([TabTitle("a", "A")], "c")


@pytest.mark.slow
@aio
async def test_a_click_on_a_title_opens_its_tab_and_a_click_past_the_titles_does_nothing():
    async with opened((120, 40)) as (pilot, app, bar):
        await pilot.click("#tabs", offset=(start_of(bar, "findings") + 1, 0))
        await settle(pilot, app)
        assert app.active_tab == "findings"
        await pilot.click("#tabs", offset=(start_of(bar, "gpus") + 3, 1))  # the underline under a title counts too
        await settle(pilot, app)
        assert app.active_tab == "gpus"
        await pilot.click("#tabs", offset=(bar.spans()[-1][2] + 2, 0))
        await settle(pilot, app)
        assert app.active_tab == "gpus"


@pytest.mark.slow
@aio
async def test_the_pointer_over_a_title_lights_it_until_it_leaves():
    async with opened((120, 40)) as (pilot, app, bar):
        fix, diagnose = start_of(bar, "fix") + 2, start_of(bar, "diagnose") + 2
        idle = colour_at(bar, fix)
        await pilot.hover("#tabs", offset=(fix - 1, 0))
        assert colour_at(bar, fix) != idle and colour_at(bar, diagnose) == idle
        await pilot.hover("#health")
        assert colour_at(bar, fix) == idle


@pytest.mark.slow
@aio
async def test_a_terminal_too_narrow_for_every_title_scrolls_the_active_one_into_view():
    async with opened((40, 24)) as (pilot, app, bar):
        assert "Overview" in screen_lines(app)[1]
        await pilot.press("l")  # the last tab
        await settle(pilot, app)
        bar_line = screen_lines(app)[1]
        assert bar_line.rstrip().endswith("Fleet") and "Overview" not in bar_line
        await pilot.click("#tabs", offset=(39 - len(" Fleet") + 2, 0))  # what is drawn there, scrolled
        await settle(pilot, app)
        assert bar.tab_at(39 - len(" Fleet") + 2) == "fleet" and app.active_tab == "fleet"


@pytest.mark.slow
@aio
async def test_the_lit_title_is_the_one_under_the_pointer_after_the_bar_scrolls():
    async with opened((40, 24)) as (pilot, app, bar):
        idle = colour_at(bar, start_of(bar, "diagnose") - 1)  # Self-tests: neither active nor under the pointer
        await pilot.hover("#tabs", offset=(30, 0))
        assert bar.tab_at(30) == "findings" and colour_at(bar, 30) != idle
        await pilot.press("l")  # the last tab: the bar scrolls under the pointer, which has not moved
        await settle(pilot, app)
        assert bar.tab_at(30) == "diagnose" and colour_at(bar, 30) != idle
        assert bar.tab_at(1) == "findings" and colour_at(bar, 1) == idle  # the title lit before, scrolled left


@pytest.mark.slow
@aio
async def test_titles_that_do_not_fit_are_cut_and_never_wrap_over_the_underline():
    async with opened((64, 24)) as (pilot, app, bar):  # every title but Fleet's fits (Diagnose is 4 wider than NCCL was)
        for key in ("o", "x"):  # the first tab, and one in the middle: neither scrolls the bar
            await pilot.press(key)
            await settle(pilot, app)
            titles, underline, below = screen_lines(app)[1:4]
            assert titles.startswith(" Overview  GPUs") and titles.rstrip().endswith("Diagnose")
            assert set(underline) <= set("━╸╺"), underline
            assert "Fleet" not in below


def test_a_title_underlines_its_key_and_a_bar_needs_tabs():
    text = TabTitle("selftest", "Self-tests", "s").text(style=None)
    assert text.plain == " Self-tests "
    assert [(s.start, s.end) for s in text.spans if "underline" in str(s.style)] == [(1, 2)]
    assert not [s for s in TabTitle("x", "Fix").text(style=None).spans if "underline" in str(s.style)]
    with pytest.raises(ValueError):
        TabBar([])
