"""SVG snapshots of every tab with data at 80x24 and 120x40, on recorded machines and recorded self-test results
(`pytest --snapshot-update` accepts changes)."""

from __future__ import annotations

import pytest
from textual.widgets import TextArea

from envdoctor.tui.app import make_app
from tests.conftest import ROOT
from tests.tui.conftest import recorded, recorded_selftests, settle, show_selftests

NCCL_LOG = ROOT / "tests" / "fixtures" / "nccl" / "firewall_blocked.log"


def showing(*keys: str):
    async def run_before(pilot) -> None:
        await settle(pilot, pilot.app)
        for key in keys:
            await pilot.press(key)
            await settle(pilot, pilot.app)

    return run_before


SLOW = pytest.mark.slow  # the fast loop draws the overview and the plan; CI every screen


@pytest.mark.parametrize("fixture, keys, size", [
    ("rtx5090_old_torch", (), (120, 40)),          # overview of a broken machine
    ("rtx5090_old_torch", (), (80, 24)),           # the smallest terminal we support
    pytest.param("h100_8x_nvswitch", ("g",), (120, 40), marks=SLOW),  # link matrix, P2P, NUMA of an NVSwitch box
    pytest.param("rtx4090_pair", ("g",), (80, 24), marks=SLOW),  # PCIe pair without NVLink
    pytest.param("rtx5090_old_torch", ("f",), (80, 24), marks=SLOW),  # findings list and detail, stacked when narrow
    pytest.param("rtx5090_old_torch", ("x",), (120, 40), marks=SLOW),  # the plan, its reasons and the rejected candidates
    pytest.param("rtx5090_old_torch", ("f",), (120, 40), marks=SLOW),  # findings list and detail side by side
    ("rtx5090_old_torch", ("x",), (80, 24)),       # the plan's controls and text at the smallest size
    pytest.param("rtx5090_old_torch", ("question_mark",), (80, 24), marks=SLOW),  # every key and what each tab is for
])
def test_main_screens(snap_compare, fixture, keys, size):
    assert snap_compare(make_app(recorded(fixture)), terminal_size=size, run_before=showing(*keys))


@pytest.mark.slow
@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_self_tests_with_results(snap_compare, size):
    async def run_before(pilot) -> None:
        await showing("s")(pilot)
        await show_selftests(pilot, pilot.app, recorded_selftests())
        table = pilot.app.query_one("#selftest-table")
        table.move_cursor(row=table.get_row_index("allreduce"))
        await settle(pilot, pilot.app)

    assert snap_compare(make_app(recorded("cpu_only_this_machine")), terminal_size=size, run_before=run_before)


@pytest.mark.slow
@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_diagnose_with_a_diagnosis(snap_compare, size):
    async def run_before(pilot) -> None:
        await showing("d")(pilot)
        pilot.app.query_one("#diagnose-text", TextArea).load_text(NCCL_LOG.read_text())
        await pilot.click("#diagnose-paste")
        await settle(pilot, pilot.app)

    assert snap_compare(make_app(recorded("a100_pcie_8x")), terminal_size=size, run_before=run_before)
