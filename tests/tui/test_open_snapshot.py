"""A maintainer looks at a user's snapshot in the TUI (issue 31): `envdoctor --snapshot FILE`, or the palette's
"Open snapshot…". Every tab shows that machine, the Overview names the file, the Fix tab plans a dry run as
`fix --snapshot` and Apply is refused; a bad file gets `check --snapshot`'s message (exit 2 before the app starts;
from the palette a message, and the app keeps what it showed)."""

from __future__ import annotations

import sys

import pytest
from textual.widgets import Button, Input, Static

import envdoctor.cli as cli
import envdoctor.tui.app as tui_app
from envdoctor.cli import main
from envdoctor.findings import sort_findings
from envdoctor.snapshot import load_snapshot
from envdoctor.tui import messages as msg
from envdoctor.tui.app import make_app
from envdoctor.tui.modals import ConfirmScreen, OpenSnapshotScreen
from envdoctor.tui.panes import FindingsPane, GpusPane
from tests.conftest import diagnose_bundled, fixture_path
from tests.tui.conftest import aio, recorded, settle, text_of, until

RTX = str(fixture_path("rtx5090_old_torch"))


@pytest.fixture
def in_a_terminal(monkeypatch):
    """`envdoctor` as in a terminal, with the app replaced by a recorder of what it was started on."""
    started = []
    monkeypatch.setattr(cli, "_interactive", lambda: True)
    monkeypatch.setattr(tui_app, "run_tui", lambda snap=None, source=None: started.append((snap, source)) or 0)
    return started


def _check_error(capsys, path: str) -> str:
    assert main(["check", "--snapshot", path]) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--snapshot", RTX], [f"--snapshot={RTX}"]])
def test_envdoctor_snapshot_file_starts_the_app_over_that_snapshot(in_a_terminal, argv):
    assert main(argv) == 0
    [(snap, source)] = in_a_terminal
    assert source == RTX and snap.to_json() == load_snapshot(RTX).to_json()


@pytest.mark.parametrize("content", ["", "{", '{"schema": "envdoctor.snapshot/2"}'])
def test_a_bad_file_is_exit_2_with_checks_message_before_the_app_starts(in_a_terminal, capsys, tmp_path, content):
    bad = tmp_path / "user.json"
    bad.write_text(content)
    expected = _check_error(capsys, str(bad))
    assert expected.startswith(f"envdoctor: error: {bad}")
    assert main(["--snapshot", str(bad)]) == 2
    assert capsys.readouterr().err == expected and in_a_terminal == []


def test_snapshot_needs_a_file_and_no_command_after_it(in_a_terminal, capsys):
    assert main(["--snapshot"]) == 2 and "--snapshot needs a FILE" in capsys.readouterr().err
    assert main(["--snapshot", RTX, "check"]) == 2
    assert "`envdoctor check --snapshot FILE`" in capsys.readouterr().err and in_a_terminal == []


def test_out_of_a_terminal_it_is_check_snapshot(monkeypatch, capsys):
    monkeypatch.setattr(cli, "_interactive", lambda: False)
    code = main(["--snapshot", RTX])
    out = capsys.readouterr().out
    assert (code, out) == (main(["check", "--snapshot", RTX]), capsys.readouterr().out)
    assert code == 1 and "RTX 5090" in out


def test_the_help_names_the_option(capsys):
    assert main(["--help"]) == 0
    assert "--snapshot FILE" in capsys.readouterr().out


@aio
async def test_the_app_over_a_snapshot_file_names_it_and_plans_a_dry_run():
    snap = load_snapshot(RTX)
    app = make_app(snap, source=RTX)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        health = " ".join(text_of(app.query_one("#health", Static)).split())
        assert health.startswith(f"Snapshot {RTX}, taken {snap.created}: a recorded machine, not this one")
        assert "rtx5090_old_torch.json" in app.sub_title
        await pilot.press("x")
        await settle(pilot, app)
        shown = " ".join(text_of(app.query_one("#plan-text", Static)).split())
        assert f"Dry run: the plan for the snapshot {RTX} (as `envdoctor fix --snapshot`)" in shown
        assert app.plan.status == "planned" and app.query_one("#apply-button", Button).disabled
        app.post_message(msg.ApplyRequested())  # however it is asked for: refused, with the reason
        await settle(pilot, app)
        assert not isinstance(app.screen, ConfirmScreen)
        [note] = [n.message for n in app._notifications]
        assert note.startswith(f"Not applied: this plan is for the snapshot {RTX}, not this machine")


@pytest.mark.slow
@aio
async def test_the_palette_opens_a_snapshot_and_a_bad_one_is_a_message(capsys, tmp_path):
    here = recorded("cpu_only_this_machine")
    app = make_app(here, fix_python=sys.executable)  # stands for this machine: Apply would install here
    bad = tmp_path / "empty.json"
    bad.write_text("")
    expected = _check_error(capsys, str(bad)).removeprefix("envdoctor: error: ").rstrip("\n")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)

        async def open_from_palette(path: str) -> None:
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*"Open snapshot")
            await pilot.pause(0.5)
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, OpenSnapshotScreen)
            app.screen.query_one("#snapshot-path", Input).value = path
            await pilot.press("enter")
            await settle(pilot, app)

        await open_from_palette(str(bad))
        assert app.is_running and app.snapshot is here and app.fix_target == sys.executable
        [note] = app._notifications
        assert (note.title, note.message) == ("Cannot open the snapshot", expected)

        await open_from_palette(RTX)
        snap = load_snapshot(RTX)
        assert app.snapshot.to_json() == snap.to_json() and app.source == RTX and app.fix_target is None
        assert [f.id for f in app.findings] == [f.id for f in sort_findings(diagnose_bundled(snap))]
        assert "Snapshot " + RTX in text_of(app.query_one("#health", Static)).replace("\n", "")
        assert "RTX 5090" in text_of(app.query_one("#glance", Static))
        assert app.query_one(GpusPane).snapshot is app.snapshot
        assert app.query_one(FindingsPane).findings == app.findings
        assert app.plan.torch is not None and app.plan.torch.pin.startswith("torch==") and "+cu12" in app.plan.torch.pin
        assert app.query_one("#apply-button", Button).disabled
        assert app.check_result.exit_code() == 1  # what quitting now exits with: `check --snapshot`'s code



@pytest.mark.slow  # probes this machine, torch included
@aio
async def test_a_snapshot_opened_while_probing_replaces_this_machine_until_r_probes_it_again():
    from envdoctor.probes.base import ProbeContext

    app = make_app(probe_context=ProbeContext())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        here = app.fix_target
        app.post_message(msg.SnapshotOpened(RTX, load_snapshot(RTX)))  # as the palette's Open snapshot answers
        await until(pilot, lambda: app.source == RTX and app.findings is not None, timeout=60)
        await settle(pilot, app)  # the probes that were running are stopped: their results do not come back
        assert app.snapshot.host.hostname == load_snapshot(RTX).host.hostname and app.fix_target is None
        assert "Probe this machine" in [c.title for c in app.get_system_commands(app.screen)]
        await pilot.press("escape", "r")
        await until(pilot, lambda: app.live and app.findings is not None, timeout=120)
        await settle(pilot, app)
        assert app.source is None and app.fix_target == here and app.sub_title.startswith("this machine, probed")
        assert "Snapshot " not in text_of(app.query_one("#health", Static))
        assert "Target environment: " + here in text_of(app.query_one("#plan-text", Static)).replace("\n", "")
