"""Pilot drives every tab headless on recorded machine snapshots (no GPU needed)."""

from __future__ import annotations

import re

import pytest
from textual.widgets import Button, DataTable, OptionList, Static

from envdoctor.findings import sort_findings
from envdoctor.probes.base import ProbeContext
from envdoctor.probes.runner import PROBE_NAMES
from envdoctor.tui import messages as msg
from envdoctor.tui.app import make_app
from envdoctor.tui.fix_pane import FixPane
from envdoctor.tui.modals import ErrorScreen, ExportScreen
from envdoctor.tui.panes import FindingsPane, GpusPane, OverviewPane, link_cell
from envdoctor.tui.tab_bar import TabBar
from tests.conftest import diagnose_bundled
from tests.tui.conftest import aio, recorded, settle, text_of, until


@aio
async def test_overview_shows_the_machine_the_verdict_and_every_probe():
    snap = recorded("rtx5090_old_torch")
    app = make_app(snap)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        health = text_of(app.query_one("#health", Static))
        expected = sort_findings(diagnose_bundled(snap))
        assert f"{sum(f.severity == 'error' for f in expected)} error(s)" in health
        for f in expected:  # every finding, in the core's order
            assert f"{f.id} {f.title}" in health
        assert health.index(expected[0].id) < health.index(expected[-1].id)
        glance = text_of(app.query_one("#glance", Static))
        assert "2.5.1+cu124" in glance and "sm_120" in glance and "570.124.06" in glance
        overview = app.query_one(OverviewPane)
        assert [row[:2] for row in overview.probe_rows()] == [(p.name, p.status) for p in snap.probes]
        shown = text_of(app.query_one("#probe-table", Static)).splitlines()
        assert [line.split()[:2] for line in shown[1:]] == [[p.name, p.status] for p in snap.probes]
        assert app.sub_title == f"snapshot taken {snap.created}"


@pytest.mark.slow
@aio
async def test_live_probes_stream_in_after_the_first_paint():
    """Real probes of this machine: the app paints before the slow torch probe answers, then fills in."""
    seen = []
    app = make_app(probe_context=ProbeContext())
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await pilot.pause()
        overview = app.query_one(OverviewPane)
        assert "first_paint" in app.timings
        assert overview.probes["torch"].status == "running"  # the torch child takes seconds
        assert "Probing this machine" in text_of(app.query_one("#health", Static))
        await until(pilot, lambda: app.findings is not None, timeout=120)
        await settle(pilot, app)
        finished = [m.event.record.name for m in seen if isinstance(m, msg.ProbeFinished)]
        assert sorted(finished) == sorted(PROBE_NAMES)
        done_at = next(i for i, m in enumerate(seen) if isinstance(m, msg.ProbesDone))
        assert all(i < done_at for i, m in enumerate(seen) if isinstance(m, msg.ProbeFinished))
        assert app.timings["first_paint"] < app.timings["all_probes_shown"] <= app.timings["findings_shown"]
        assert all(overview.probes[n].status != "running" for n in PROBE_NAMES)
        torch_version = app.snapshot.torch.version
        assert torch_version in text_of(app.query_one("#glance", Static))


@aio
async def test_gpus_tab_colours_links_by_speed_and_shows_p2p_and_numa():
    snap = recorded("h100_8x_nvswitch")
    app = make_app(snap)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("g")
        await settle(pilot, app)
        assert app.active_tab == "gpus"
        table = app.query_one("#gpu-table", DataTable)
        assert table.row_count == len(snap.gpus) == 8
        assert "NVIDIA H100" in str(table.get_row_at(0)[1])
        links = app.query_one("#links", Static).content
        assert links.plain.count("NV18") == 8 * 7
        assert any(span.style == "bold green" for span in links.spans)
        p2p = text_of(app.query_one("#p2p", Static))
        assert p2p.count("yes") == 8 * 7
        numa = text_of(app.query_one("#numa", Static))
        assert "node 0" in numa and "node 1" in numa
    assert link_cell("SYS").style == "bold red" and link_cell("NV4").style == "bold green"
    assert link_cell("PXB").style == "yellow"


@aio
async def test_gpus_tab_without_gpus_says_so():
    app = make_app(recorded("cpu_only_this_machine"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.query_one("#tabs", TabBar).active = "gpus"
        await settle(pilot, app)
        assert app.query_one(GpusPane).query_one("#gpu-table", DataTable).row_count == 0
        assert "No NVIDIA GPUs found" in text_of(app.query_one("#links", Static))


@aio
async def test_findings_are_sorted_and_selecting_one_shows_its_detail_and_fix():
    snap = recorded("rtx5090_old_torch")
    expected = sort_findings(diagnose_bundled(snap))
    app = make_app(snap)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("f")
        await settle(pilot, app)
        ol = app.query_one("#finding-list", OptionList)
        assert ol.option_count == len(expected) >= 2
        detail = text_of(app.query_one("#finding-text", Static))
        assert expected[0].id in detail and expected[0].fix.split(":")[0] in detail
        ol.focus()
        await pilot.press("down")
        await settle(pilot, app)
        detail = text_of(app.query_one("#finding-text", Static))
        assert expected[1].id in detail and expected[1].title in detail
        assert all(ref in detail for ref in expected[1].references)
        assert "_" in expected[1].category and expected[1].category not in detail  # words, not the identifier
        assert expected[1].category.replace("_", " ") in detail


@aio
async def test_a_safe_fix_opens_the_fix_tab_with_a_plan():
    snap = recorded("rtx5090_old_torch")
    app = make_app(snap)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.query_one("#tabs", TabBar).active = "findings"
        await settle(pilot, app)
        pane = app.query_one(FindingsPane)
        assert pane.current.safety == "safe"
        button = app.query_one("#fix-finding", Button)
        assert button.display
        await pilot.click("#fix-finding")
        await settle(pilot, app)
        assert app.active_tab == "fix"
        fix = app.query_one(FixPane)
        assert fix.plan.status == "planned" and fix.plan.torch is not None
        shown = text_of(app.query_one("#plan-text", Static))
        assert fix.plan.torch.pin in shown and "Rejected candidates" in shown
        assert all(r.why in shown for r in fix.plan.rejected[:5])
        # A recorded snapshot from elsewhere: the plan is shown, but nothing can be applied here.
        assert app.query_one("#apply-button", Button).disabled
        assert "cannot be applied here" in shown


@aio
async def test_display_only_findings_offer_no_apply():
    app = make_app(recorded("l4_container_shm64"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.query_one("#tabs", TabBar).active = "findings"
        await settle(pilot, app)
        pane = app.query_one(FindingsPane)
        assert pane.findings and all(f.safety != "safe" for f in pane.findings[:1])
        assert not app.query_one("#fix-finding", Button).display


@pytest.mark.slow
@aio
async def test_a_bad_torch_spec_is_reported_in_the_fix_tab():
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("x")
        await settle(pilot, app)
        await pilot.click("#torch-spec")
        await pilot.press(*"banana", "enter")
        await settle(pilot, app)
        shown = text_of(app.query_one("#plan-text", Static))
        assert shown.startswith("Cannot plan: --torch 'banana': not a version specifier")
        assert app.query_one("#apply-button", Button).disabled


@aio
async def test_a_failing_worker_opens_an_error_dialog(tmp_path):
    # An interpreter whose answer has the wrong shape breaks the planner: an unexpected error, shown in a dialog.
    # (A missing interpreter, or one that prints no JSON, is a plan error: see below.)
    broken = tmp_path / "no-such-python"
    broken.write_text("#!/bin/sh\necho '{\"python\": 3}'\n")
    broken.chmod(0o755)
    app = make_app(recorded("cpu_only_this_machine"), fix_python=str(broken), torch="2.14.1")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, ErrorScreen)
        assert "planning failed" in text_of(app.screen.query_one("#dialog-title"))
        assert "KeyError" in text_of(app.screen.query_one("#dialog-body", Static))
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ErrorScreen)


@aio
async def test_a_missing_interpreter_is_a_plan_error_not_a_crash(tmp_path):
    app = make_app(recorded("cpu_only_this_machine"), fix_python=str(tmp_path / "no-such-python"), torch="2.14.1")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert not isinstance(app.screen, ErrorScreen)
        error = app.query_one(FixPane).plan_error
        assert error and "no-such-python: not found" in error


@aio
async def test_an_interpreter_printing_no_json_is_a_plan_error(tmp_path):
    broken = tmp_path / "garbled-python"
    broken.write_text("#!/bin/sh\necho '{not json'\n")
    broken.chmod(0o755)
    app = make_app(recorded("cpu_only_this_machine"), fix_python=str(broken), torch="2.14.1")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert not isinstance(app.screen, ErrorScreen)
        error = app.query_one(FixPane).plan_error
        assert error and "printed invalid JSON" in error


@pytest.mark.slow
@aio
async def test_export_writes_the_redacted_report_and_copies_it(tmp_path):
    snap = recorded("rtx5090_old_torch")
    app = make_app(snap, report_path=str(tmp_path / "report.md"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        await pilot.click("#save")
        await settle(pilot, app)
        text = (tmp_path / "report.md").read_text()
        assert text.startswith("## envdoctor report") and "ED102" in text
        assert str(snap.host.hostname) not in text and "alice" not in text
        await pilot.press("e")
        await pilot.pause()
        await pilot.click("#copy")
        await settle(pilot, app)
        assert app.clipboard == text


@pytest.mark.slow
@aio
async def test_export_to_an_unwritable_place_says_so(tmp_path):
    (tmp_path / "file").write_text("")
    app = make_app(recorded("rtx5090_old_torch"), report_path=str(tmp_path / "file" / "report.md"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("e")
        await pilot.pause()
        await pilot.click("#save")
        await settle(pilot, app)
        assert any("Cannot write the report" in n.message and "Not a directory" in n.message for n in app._notifications)


@pytest.mark.parametrize("key", ["q", pytest.param("ctrl+q", marks=pytest.mark.slow)])
@aio
async def test_quits_with_checks_exit_code(key):
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press(key)
        await pilot.pause()
    assert app.return_code == 1  # check's exit code: the snapshot has error findings
    healthy = make_app(recorded("cpu_only_this_machine"))
    async with healthy.run_test(size=(80, 24)) as pilot:
        await settle(pilot, healthy)
        await pilot.press("q")
        await pilot.pause()
    assert healthy.return_code == 0


@pytest.mark.slow
@aio
async def test_command_palette_jumps_to_a_finding():
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"ED405")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.active_tab == "findings"
        assert app.query_one(FindingsPane).current.id == "ED405"


@pytest.mark.parametrize("tab", ["overview", "gpus", "findings", "fix", "selftest", "diagnose"])
@aio
async def test_every_tab_fits_80x24(tab):
    app = make_app(recorded("h100_8x_nvswitch"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.query_one("#tabs", TabBar).active = tab
        await settle(pilot, app)
        pane = app.query_one(f"#{tab}")
        assert pane.region.right <= 80 and pane.region.bottom <= 23 and pane.region.height >= 3
        assert app.query_one("Footer").region.y == 23


@aio
async def test_no_color_renders_in_grey_only(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        svg = app.export_screenshot()
    assert app.no_color
    colours = set(re.findall(r"fill: #([0-9a-f]{6})", svg)) - {"c5c8c6"}  # the SVG theme's default text colour
    assert len(colours) > 3 and all(c[0:2] == c[2:4] == c[4:6] for c in colours), colours
