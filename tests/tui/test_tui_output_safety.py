"""What came from outside (pip's output, a rank's output) reaches the screen with secrets out and control
characters escaped, and the findings' commands aim at the environment the app fixes (issue 11, pts 10 and 14)."""

from __future__ import annotations

import pytest
from textual.widgets import RichLog

from envdoctor.tui.app import make_app
from tests.tui.conftest import aio, recorded, settle

RAW = "Collecting torch\x1b]0;pwned\x07 \x1b[2J from https://user:hunter2pass@mirror.example/simple ghp_" + "a" * 36


def _log_text(log: RichLog) -> str:
    return "\n".join(strip.text for strip in log.lines)


@pytest.mark.slow
@aio
async def test_install_log_lines_are_scrubbed_and_escaped():
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.action_show_tab("fix")
        await settle(pilot, app)
        pane = app.query_one("#fix-pane")
        pane.start_install()
        pane.log_line(RAW)
        await settle(pilot, app)
        shown = _log_text(app.query_one("#install-log", RichLog))
        assert "Collecting torch" in shown
        assert "\x1b" not in shown and "\x07" not in shown
        assert "hunter2pass" not in shown and "ghp_" + "a" * 36 not in shown


@aio
async def test_selftest_log_lines_are_scrubbed_and_escaped():
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        pane = app.query_one("#selftest-pane")
        pane.start(["backward"], [])
        pane.log_line("backward", RAW)
        kept = pane.logs["backward"][-1]
        assert kept.startswith("Collecting torch")
        assert "\x1b" not in kept and "\x07" not in kept
        assert "hunter2pass" not in kept and "ghp_" + "a" * 36 not in kept


@aio
async def test_findings_commands_aim_at_the_environment_the_app_fixes():
    other = "/opt/other-venv/bin/python"
    app = make_app(recorded("rtx5090_old_torch"), fix_python=other)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        fixes = [f.fix for f in app.findings or []]
        with_fix = [f for f in fixes if "envdoctor fix" in f]
        assert with_fix, fixes
        assert all(f"--python {other}" in f for f in with_fix), with_fix


@pytest.mark.slow
@aio
async def test_the_diagnose_tab_shows_a_log_without_escapes_reordering_or_secrets(tmp_path):
    """Issue 30.5: an OSC in a log retitled the terminal; SGR and U+202E rendered; tokens and user:password@ showed."""
    from textual.widgets import Input, Static, TextArea

    from tests.conftest import ROOT

    token = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123"
    log = tmp_path / "rank0.log"
    text = (ROOT / "tests" / "fixtures" / "nccl" / "cumem_host.log").read_text()
    first, rest = text.split("\n", 1)
    log.write_text(f"{first}\x1b]0;pwned\x07 \x1b[31m{token}\x1b[0m \u202eevil https://user:hunter2pass@h/x\n{rest}")
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("d")
        await settle(pilot, app)
        app.query_one("#diagnose-path", Input).value = str(log)
        await pilot.click("#diagnose-open")
        await settle(pilot, app)
        shown = app.query_one("#diagnose-result", Static).content.plain + app.query_one("#diagnose-text", TextArea).text
        assert "Most likely cause:" in shown  # the Diagnose tab's words (the NCCL tab said "most likely root cause")
        for bad in ("\x1b", "\x07", "\u202e", "pwned", token, "hunter2pass"):
            assert bad not in shown, bad
        assert app.query_one("#diagnose-text", TextArea).text.count("\n") == log.read_text().count("\n")
