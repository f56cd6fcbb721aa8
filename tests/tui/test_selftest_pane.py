"""The Self-tests tab runs the real self-tests in this interpreter (torch 2.13.0+cpu: gloo, CPU)."""

from __future__ import annotations

import asyncio
import sys

import pytest
from textual.widgets import Button, DataTable, ProgressBar, Static

from envdoctor.tui import messages as msg
from envdoctor.tui.app import make_app
from tests.tui.conftest import aio, recorded, recorded_selftests, settle, show_selftests, text_of, until


@pytest.mark.slow  # starts a real torch process
@aio
async def test_run_gpu_then_allreduce_keeps_rows_and_draws_busbw_live():
    seen = []
    app = make_app(recorded("cpu_only_this_machine"), fix_python=sys.executable)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await settle(pilot, app)
        await pilot.press("s")
        await settle(pilot, app)
        assert app.active_tab == "selftest"
        await pilot.click("#run-gpu")
        await until(pilot, lambda: any(isinstance(m, msg.SelftestsFinished) for m in seen), timeout=120)
        await settle(pilot, app)
        table = app.query_one("#selftest-table", DataTable)
        assert str(table.get_row("gpu")[1]) == "skipped"  # no CUDA here: skipped, with the reason
        assert "CUDA is not available" in str(table.get_row("gpu")[3])
        assert table.columns[table.ordered_columns[3].key].content_width >= len(str(table.get_row("gpu")[3]))  # not cut
        assert "why: CUDA is not available" in text_of(app.query_one("#selftest-detail-text", Static))
        assert not app.query_one("#busbw-chart", Static).display  # no all-reduce asked for: no empty chart
        seen.clear()
        bar = app.query_one("#selftest-progress", ProgressBar)
        drawn = []
        app.watch(bar, "progress", lambda value: drawn.append(value), init=False)
        await pilot.click("#run-allreduce")
        await pilot.pause()
        assert all(b.disabled for b in app.query("#selftest-controls Button").results(Button))
        await until(pilot, lambda: any(isinstance(m, msg.SelftestsFinished) for m in seen), timeout=240)
        await settle(pilot, app)
        result = next(m.result for m in seen if isinstance(m, msg.SelftestDone))
        assert result.status == "passed"
        assert [str(k.value) for k in table.rows] == ["gpu", "allreduce"]  # the earlier row stays
        assert str(table.get_row("allreduce")[1]) == "passed" and "busbw" in str(table.get_row("allreduce")[3])
        busbw = {int(k): v for k, v in result.metrics["busbw_gbps"].items()}
        pane = app.query_one("#selftest-pane")
        assert pane.busbw == busbw and sorted(busbw)[0] == 1024 and sorted(busbw)[-1] == 64 << 20
        size_lines = [m.line for m in seen if isinstance(m, msg.SelftestProgress) and " B " in m.line and "busbw" in m.line]
        assert len(size_lines) == len(busbw)  # one progress line per message size ...
        assert len(set(drawn)) > len(busbw) // 2  # ... and the bar moved with them, not only between tests
        assert bar.percentage == 1
        chart = text_of(app.query_one("#busbw-chart", Static))
        assert "busbw (GB/s) by message size" in chart and "message size (bytes)" in chart
        assert "1K" in chart and "64M" in chart and f"{max(busbw.values()):.3g}" in chart
        detail = text_of(app.query_one("#selftest-detail-text", Static))
        assert "allreduce: passed" in detail and "bus bandwidth at 1 KiB:" in detail and "progress" in detail
        assert "busbw gbps" not in detail
        assert "allreduce: allreduce:" not in detail  # each line said once, without a repeated prefix
        lines = [m.line for m in seen if isinstance(m, msg.SelftestProgress)]
        assert any("using gloo on the CPU instead" in line for line in lines)  # the fallback from nccl is said
        assert not any(b.disabled for b in app.query("#selftest-controls Button").results(Button))


@pytest.mark.slow
@aio
async def test_selecting_a_row_shows_its_numbers_and_the_backward_speedup_bars():
    app = make_app(recorded("cpu_only_this_machine"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("s")
        results = recorded_selftests()
        await show_selftests(pilot, app, results)
        backward = next(r for r in results if r.name == "backward")
        table = app.query_one("#selftest-table", DataTable)
        table.focus()
        table.move_cursor(row=table.get_row_index("backward"))
        await settle(pilot, app)
        detail = text_of(app.query_one("#selftest-detail-text", Static))
        assert "backward: passed" in detail
        m = backward.metrics
        assert "looped:" in detail and f"{m['looped_seconds']:.4g} s" in detail
        assert "DeepSpeed status:" in detail and "dtypes float32 tolerance:" in detail
        bars = text_of(app.query_one("#speedup", Static))
        assert "per-sample loop" in bars and "one non-scalar" in bars
        assert f"{m['looped_seconds']:.3f} s" in bars and f"x{m['looped_seconds'] / m['batched_seconds']:.2f} faster" in bars
        await pilot.press("escape")
        await pilot.press("o")  # Escape left the table; the tab keys work again
        await settle(pilot, app)
        assert app.active_tab == "overview"


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("deepspeed,expected", [
    (None, ["allreduce", "collectives", "backward", "compile", "gpu"]),
    ("0.19.8", ["allreduce", "collectives", "backward", "compile", "gpu", "zero3"]),
])
def test_run_all_runs_the_tests_selftest_all_runs(monkeypatch, capsys, deepspeed, expected):
    """Run all and `envdoctor selftest all` choose from the same records: zero3 only where DeepSpeed is installed
    (before, Run all ran zero3 everywhere, the CLI only with DeepSpeed). The tests themselves are stand-ins."""
    import json

    from envdoctor.cli import main
    from envdoctor.selftest import common, runner
    from envdoctor.selftest.common import Target
    from envdoctor.selftest.result import TestResult

    target = Target(python=sys.executable, torch="2.13.0", gloo=True, compile=True, raw={"deepspeed": deepspeed})
    monkeypatch.setattr(common, "probe_target", lambda python, *a, **k: target)
    monkeypatch.setattr(runner, "run_test", lambda name, *a, **k: TestResult(name, "passed", 0.1))

    async def tui_rows():
        seen = []
        app = make_app(recorded("cpu_only_this_machine"), fix_python=sys.executable)
        async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
            await settle(pilot, app)
            await pilot.press("s")
            await settle(pilot, app)
            await pilot.click("#run-all")
            await until(pilot, lambda: any(isinstance(m, msg.SelftestsFinished) for m in seen))
            await settle(pilot, app)
            table = app.query_one("#selftest-table", DataTable)
            assert all(str(table.get_row(k)[1]) == "passed" for k in table.rows)
            assert app.query_one("#selftest-progress", ProgressBar).percentage == 1
            return [str(k.value) for k in table.rows]

    assert asyncio.run(tui_rows()) == expected
    assert main(["selftest", "all", "--json"]) == 0
    assert [t["name"] for t in json.loads(capsys.readouterr().out)["tests"]] == expected


@pytest.mark.slow
def test_a_registered_record_gets_a_button_a_row_its_gist_and_its_steps(monkeypatch):
    """The tab reads the records: a test-only one has its button, runs, and shows its summary (no TUI edit)."""
    from envdoctor.selftest import common, registry
    from envdoctor.selftest.common import Target
    from envdoctor.selftest.kind import SelftestKind
    from envdoctor.selftest.result import TestResult

    def echo(inputs):
        inputs.progress("echo: one of two steps")
        return TestResult("echo", "passed", 0.5, {"answer": 42})

    kind = SelftestKind("echo", "an echo", 5.0, echo, steps=2, summary=lambda m: f"the answer is {m['answer']}")
    monkeypatch.setattr(registry, "KINDS", (*registry.KINDS, kind))
    monkeypatch.setattr(common, "probe_target", lambda python, *a, **k: Target(python=python, torch="2.13.0"))

    async def drive():
        seen = []
        app = make_app(recorded("cpu_only_this_machine"), fix_python=sys.executable)
        async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
            await settle(pilot, app)
            await pilot.press("s")
            await settle(pilot, app)
            bar = app.query_one("#selftest-progress", ProgressBar)
            drawn = []
            app.watch(bar, "progress", lambda value: drawn.append(value), init=False)
            await pilot.click("#run-echo")
            await until(pilot, lambda: any(isinstance(m, msg.SelftestsFinished) for m in seen))
            await settle(pilot, app)
            row = app.query_one("#selftest-table", DataTable).get_row("echo")
            assert [str(c) for c in row] == ["echo", "passed", "0.5", "the answer is 42"]
            assert 50 in drawn  # its one progress line moved the bar by 1 of its 2 steps
            assert "answer: 42" in text_of(app.query_one("#selftest-detail-text", Static))

    asyncio.run(drive())
