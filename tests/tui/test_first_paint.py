"""The first tab paints first: the other tabs' panes are mounted after the first frame, and whatever reaches the
app before a pane is mounted (a key, a finished diagnosis, a snapshot, a diagnosis of a pasted text) still arrives there."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input, Static

from envdoctor.tui import app as app_module
from envdoctor.tui import messages as msg
from envdoctor.tui.app import TABS, EnvDoctorApp
from envdoctor.tui.fix_pane import FixPane
from envdoctor.tui.panes import FindingsPane, GpusPane
from tests.conftest import diagnose_bundled
from tests.tui.conftest import aio, recorded, settle, text_of, until


class Watched(EnvDoctorApp):
    """The app, noting which tabs' panes exist when its first frame has been painted."""

    CSS_PATH = Path(app_module.__file__).with_name(EnvDoctorApp.CSS_PATH)
    at_first_paint: list = []

    def _mark(self, what: str) -> None:
        if what == "first_paint":
            self.at_first_paint = [t.id for t in TABS if self.query(f"#{t.id}-pane")]
        super()._mark(what)


@aio
async def test_only_the_first_tab_is_mounted_at_the_first_frame_and_every_tab_works_after():
    snap = recorded("rtx5090_old_torch")
    app = Watched(snapshot=snap)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "first_paint" in app.timings)
        assert app.at_first_paint == ["overview"]
        await until(pilot, lambda: app.panes_mounted)
        await settle(pilot, app)
        assert [t.id for t in TABS if app.query(f"#{t.id}-pane")] == [t.id for t in TABS]
        gpus = app.query_one("#gpu-table", DataTable)
        assert gpus.row_count == len(snap.gpus)
        findings = app.query_one(FindingsPane)
        assert [f.id for f in findings.findings] == [f.id for f in app.findings] != []
        assert app.query_one(FixPane).plan is app.plan is not None
        assert "Plan: " in text_of(app.query_one("#plan-text", Static))


@aio
async def test_a_tab_key_pressed_at_once_opens_that_tab_and_its_entry_takes_the_focus():
    app = EnvDoctorApp(snapshot=recorded("rtx5090_old_torch"))
    async with app.run_test(size=(120, 40)) as pilot:
        assert not app.panes_mounted
        await pilot.press("d")
        await until(pilot, lambda: app.panes_mounted)
        await settle(pilot, app)
        assert app.active_tab == "diagnose"
        assert app.focused is app.query_one("#diagnose-path", Input)


@aio
async def test_tab_keys_pressed_one_after_the_other_at_once_end_on_the_last_tab():
    app = EnvDoctorApp(snapshot=recorded("rtx5090_old_torch"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("x", "g", "f")
        await until(pilot, lambda: app.panes_mounted)
        await settle(pilot, app)
        assert app.active_tab == "findings"
        assert app.focused is app.query_one("#finding-list")


@aio
async def test_what_reaches_the_app_before_a_pane_is_mounted_is_shown_by_that_pane():
    snap = recorded("h100_8x_nvswitch")
    app = EnvDoctorApp(snapshot=recorded("rtx5090_old_torch"))
    findings = diagnose_bundled(snap)
    async with app.run_test(size=(120, 40)) as pilot:
        assert not app.panes_mounted
        app.post_message(msg.ProbesDone(snap))  # the probes of another machine finish before the GPUs tab exists
        app.post_message(msg.UseCaseDone("diagnose", None, "cannot read /nowhere.log"))
        await until(pilot, lambda: app.panes_mounted)
        await settle(pilot, app)
        assert app.query_one(GpusPane).snapshot is snap
        assert app.query_one("#gpu-table", DataTable).row_count == len(snap.gpus) == 8
        assert {f.id for f in app.query_one(FindingsPane).findings} == {f.id for f in findings}
        assert "cannot read /nowhere.log" in text_of(app.query_one("#diagnose-result", Static))


@aio
async def test_wishes_given_to_the_app_reach_the_fix_tab_and_its_first_plan():
    app = EnvDoctorApp(snapshot=recorded("rtx5090_old_torch"), torch="2.7", deepspeed="")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.panes_mounted)
        await settle(pilot, app)
        fix = app.query_one(FixPane)
        assert fix.wishes() == msg.PlanRequested("2.7", "")
        assert app.plan is not None and any(p.pin.startswith("torch==2.7") for p in app.plan.packages)


@aio
async def test_quit_at_once_exits_with_the_check_exit_code():
    app = EnvDoctorApp(snapshot=recorded("rtx5090_old_torch"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == (1 if app.findings is not None else 2)  # check's code, or no verdict yet
