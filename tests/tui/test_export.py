"""Export holds everything the app shows (facts, findings, plan, self-tests, the diagnosis), redacted; it asks
before overwriting and falls back to the current directory when the folder is missing; so does Screenshot."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from envdoctor.nccl import diagnose_paths
from envdoctor.present.selftest import summary_line
from envdoctor.tui.app import make_app
from envdoctor.tui.modals import ConfirmScreen, ExportScreen
from tests.conftest import ROOT
from tests.tui.conftest import aio, recorded, recorded_selftests, settle, show_selftests, until

LOG = ROOT / "tests" / "fixtures" / "nccl" / "cumem_host.log"


async def save(pilot, app) -> None:
    await pilot.press("e")
    await pilot.pause()
    assert isinstance(app.screen, ExportScreen)
    await pilot.click("#save")
    await settle(pilot, app)


@pytest.mark.slow
@aio
async def test_the_report_holds_plan_self_tests_and_nccl_diagnosis_redacted(tmp_path):
    snap = recorded("rtx5090_old_torch")
    app = make_app(snap, report_path=str(tmp_path / "report.md"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        results = recorded_selftests()
        await show_selftests(pilot, app, results)
        await pilot.press("d")
        await settle(pilot, app)
        app.query_one("#diagnose-path", Input).value = str(LOG)
        await pilot.click("#diagnose-open")
        await settle(pilot, app)
        await pilot.press("escape")
        await save(pilot, app)
        text = (tmp_path / "report.md").read_text()
    assert "ED102" in text and "### Machine" in text  # facts and findings, as before
    assert "### Install plan" in text and "**ready to install**" in text and app.plan.packages[0].pin in text
    assert "### Self-tests" in text
    for r in results:
        assert f"| {r.name} | {r.status} |" in text
    allreduce = next(r for r in results if r.name == "allreduce")
    assert summary_line(allreduce) in text
    expected = diagnose_paths([str(LOG)])
    assert "### Diagnosis" in text and "NCCL diagnosis" not in text  # the tab reads any failure text
    assert f"1. **{expected.findings[0].title}**" in text
    assert str(snap.host.hostname) not in text and "alice" not in text  # redacted
    assert "nothing_to_do" not in text and "planned" not in text  # words, not identifiers


@pytest.mark.slow
@aio
async def test_an_existing_file_is_replaced_only_when_confirmed(tmp_path):
    target = tmp_path / "report.md"
    target.write_text("keep me\n")
    app = make_app(recorded("rtx5090_old_torch"), report_path=str(target))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await save(pilot, app)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.click("#no")
        await settle(pilot, app)
        assert target.read_text() == "keep me\n"
        await save(pilot, app)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.click("#yes")
        await settle(pilot, app)
        assert target.read_text().startswith("## envdoctor report")


@pytest.mark.slow
@aio
async def test_a_missing_folder_falls_back_to_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app(recorded("rtx5090_old_torch"), report_path=str(tmp_path / "no" / "such" / "report.md"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await save(pilot, app)
        assert (tmp_path / "report.md").read_text().startswith("## envdoctor report")
        assert any("does not exist" in n.message and str(tmp_path / "report.md") in n.message
                   for n in app._notifications)


@pytest.mark.slow
@aio
async def test_palette_screenshot_without_a_downloads_folder_lands_in_the_current_directory(tmp_path, monkeypatch):
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DOWNLOAD_DIR", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.chdir(work)
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Screenshot")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await until(pilot, lambda: any(work.glob("*.svg")), timeout=30)
        await settle(pilot, app)
        assert not (home / "Downloads").exists()
        assert not any("Failed" in n.message for n in app._notifications)
