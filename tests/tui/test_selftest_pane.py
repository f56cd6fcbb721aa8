"""The Self-tests tab runs the real self-tests in this interpreter (torch 2.13.0+cpu: gloo, CPU)."""

from __future__ import annotations

import sys

from textual.widgets import Button, DataTable, ProgressBar, Sparkline, Static, TabbedContent

from envdoctor.tui import messages as msg
from envdoctor.tui.app import make_app
from tests.tui.conftest import aio, recorded, settle, text_of, until


@aio
async def test_run_allreduce_and_gpu_shows_results_plot_and_progress():
    seen = []
    app = make_app(recorded("cpu_only_this_machine"), fix_python=sys.executable)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await settle(pilot, app)
        await pilot.press("s")
        await settle(pilot, app)
        assert app.query_one("#tabs", TabbedContent).active == "selftest"
        await pilot.click("#run-gpu")
        await until(pilot, lambda: any(isinstance(m, msg.SelftestsFinished) for m in seen), timeout=120)
        await settle(pilot, app)
        table = app.query_one("#selftest-table", DataTable)
        assert str(table.get_row("gpu")[1]) == "skipped"  # no CUDA here: skipped, with the reason
        assert "CUDA is not available" in str(table.get_row("gpu")[3])
        seen.clear()
        await pilot.click("#run-allreduce")
        await pilot.pause()
        assert all(b.disabled for b in app.query("#selftest-controls Button").results(Button))
        await until(pilot, lambda: any(isinstance(m, msg.SelftestsFinished) for m in seen), timeout=240)
        await settle(pilot, app)
        result = next(m.result for m in seen if isinstance(m, msg.SelftestDone))
        assert result.status == "passed"
        assert str(table.get_row("allreduce")[1]) == "passed" and "busbw" in str(table.get_row("allreduce")[3])
        busbw = result.metrics["busbw_gbps"]
        assert list(app.query_one("#busbw", Sparkline).data) == [busbw[k] for k in sorted(busbw, key=int)]
        assert "1K … 64M" in text_of(app.query_one("#busbw-axis", Static))
        assert app.query_one("#selftest-progress", ProgressBar).percentage == 1
        assert any(isinstance(m, msg.SelftestProgress) for m in seen)
        assert not any(b.disabled for b in app.query("#selftest-controls Button").results(Button))


@aio
async def test_a_recorded_snapshot_from_elsewhere_runs_nothing():
    app = make_app(recorded("h100_8x_nvswitch"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("s")
        await settle(pilot, app)
        await pilot.click("#run-all")
        await settle(pilot, app)
        assert any("recorded snapshot" in n.message for n in app._notifications)
        assert app.query_one("#selftest-table", DataTable).row_count == 0
