"""Apply -> confirm -> live progress -> verification / rollback, against the installer tests' local PEP 503
index on 127.0.0.1 and a throwaway venv (the same fixtures `fix --yes` is tested with)."""

from __future__ import annotations

import os

import pytest
from textual.widgets import Button, ProgressBar, RichLog, Static

from envdoctor.tui import messages as msg
from envdoctor.tui.app import make_app
from envdoctor.tui.fix_pane import FixPane
from envdoctor.tui.modals import ConfirmScreen
from tests.test_install import fake_torch, freeze
from tests.tui.conftest import aio, recorded, settle, text_of, until


def use_site_env(monkeypatch, site) -> None:
    """The installer runs in the app's process: give it the site's environment (its pip index, caches)."""
    for key in list(os.environ):
        if key.startswith(("PIP_", "ENVDOCTOR_", "UV_")):
            monkeypatch.delenv(key)
    for key, value in site.env.items():
        monkeypatch.setenv(key, value)


def app_for(site):
    # The recorded snapshot of this machine type: torch 2.13.0+cpu, Python 3.11, no GPU; the venv matches it.
    return make_app(recorded("cpu_only_this_machine"), fix_python=site.python, index_base=f"{site.url}/whl",
                    torch="2.14.1")


async def open_fix_and_apply(pilot, app) -> None:
    await settle(pilot, app)
    await pilot.press("x")
    await settle(pilot, app)
    assert app.active_tab == "fix"
    fix = app.query_one(FixPane)
    assert fix.plan.status == "planned" and fix.plan.torch.pin == "torch==2.14.1+cpu"
    assert site_python_in(text_of(app.query_one("#plan-text", Static)), fix.target)
    assert not app.query_one("#apply-button", Button).disabled
    await pilot.click("#apply-button")
    await pilot.pause()
    assert isinstance(app.screen, ConfirmScreen)
    body = text_of(app.screen.query_one("#dialog-body", Static))
    assert "torch==2.14.1+cpu" in body and fix.target in body


def site_python_in(text: str, python: str) -> bool:
    return f"Target environment: {python}" in text.replace("\n", "")


@pytest.mark.slow
@aio
async def test_apply_asks_first_and_cancel_changes_nothing(site, monkeypatch):
    use_site_env(monkeypatch, site)
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    before = freeze(site)
    app = app_for(site)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_fix_and_apply(pilot, app)
        await pilot.click("#no")
        await settle(pilot, app)
        assert not isinstance(app.screen, ConfirmScreen)
        assert not app.query_one(FixPane).installing
        assert not app.query_one("#install-log", RichLog).display
    assert freeze(site) == before


@pytest.mark.slow
@aio
async def test_apply_confirm_progress_then_rollback_on_failed_verification(site, monkeypatch):
    use_site_env(monkeypatch, site)
    # The wheel says 2.14.1+cpu but the module reports a CUDA build: verification fails after the install.
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", reports="2.14.1+cu130", cuda="13.0", requires=["fakedep>=2"]))
    before = freeze(site)
    seen = []
    app = app_for(site)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await open_fix_and_apply(pilot, app)
        await pilot.click("#yes")
        await pilot.pause()
        fix = app.query_one(FixPane)
        assert fix.installing and app.query_one("#apply-button", Button).disabled
        assert app.query_one("#install-progress", ProgressBar).display
        await pilot.press("q")  # refused while installing: the environment must not be left half-changed
        await pilot.pause()
        assert app.is_running and any("install is running" in n.message for n in app._notifications)
        await until(pilot, lambda: not fix.installing, timeout=240)
        await settle(pilot, app)
        log = [m.line for m in seen if isinstance(m, msg.InstallLog)]
        assert log[0].startswith("downloading") and any(line.startswith("$ ") and "install" in line for line in log)
        assert any("rolling back" in line for line in log)
        done = next(m for m in seen if isinstance(m, msg.InstallDone))
        assert done.outcome.status == "rolled_back" and done.outcome.rollback_ok is True
        outcome = text_of(app.query_one("#outcome", Static))
        assert "Failed, rolled back: verification failed" in outcome
        assert "Rollback complete: the environment is exactly as it was." in outcome
        assert "torch: 2.13.0+cpu before → 2.13.0+cpu now" in outcome
        assert app.query_one("#install-progress", ProgressBar).percentage == 1
    assert freeze(site) == before


@pytest.mark.slow
@aio
async def test_apply_installs_and_reports_verification(site, monkeypatch):
    use_site_env(monkeypatch, site)
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    app = app_for(site)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_fix_and_apply(pilot, app)
        await pilot.press("y")
        await pilot.pause()
        fix = app.query_one(FixPane)
        await until(pilot, lambda: not fix.installing, timeout=240)
        await settle(pilot, app)
        outcome = text_of(app.query_one("#outcome", Static))
        assert "Installed and verified in a fresh interpreter: installed torch==2.14.1+cpu" in outcome
        assert "torch: 2.13.0+cpu before → 2.14.1+cpu now" in outcome
        assert "fakedep: 1.0 before → 2.0 now" in outcome
    assert "torch==2.14.1+cpu" in freeze(site)
