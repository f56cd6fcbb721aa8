"""The Fleet tab (`l`) opens with the cursor in its path box (issue 31): a path typed there stays text; before, its
letters were shortcut keys (`n` jumped to the NCCL tab, `e` wrote envdoctor-report.md into the current folder)."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from envdoctor.tui.app import make_app
from tests.tui.conftest import aio, recorded, settle

PATH = "/data/fleet/node7-report.json"


@pytest.mark.slow
@aio
async def test_the_fleet_tab_opens_in_its_path_box_and_a_typed_path_stays_text(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("l")
        await settle(pilot, app)
        box = app.query_one("#fleet-path", Input)
        assert app.focused is box
        await pilot.press(*[{"/": "slash", "-": "minus", ".": "full_stop"}.get(c, c) for c in PATH])
        await settle(pilot, app)
        assert box.value == PATH
        assert app.query_one("#tabs").active == "fleet" and not app.screen.is_modal
    assert not list(tmp_path.iterdir())  # no report exported by the letters of the path
