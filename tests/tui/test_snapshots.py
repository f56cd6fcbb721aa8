"""SVG snapshots of the main tabs at fixed sizes, on recorded machines (`pytest --snapshot-update` accepts changes)."""

from __future__ import annotations

import pytest

from envdoctor.tui.app import make_app
from tests.tui.conftest import recorded, settle


def showing(*keys: str):
    async def run_before(pilot) -> None:
        await settle(pilot, pilot.app)
        for key in keys:
            await pilot.press(key)
            await settle(pilot, pilot.app)

    return run_before


@pytest.mark.parametrize("fixture, keys, size", [
    ("rtx5090_old_torch", (), (120, 40)),          # overview of a broken machine
    ("rtx5090_old_torch", (), (80, 24)),           # the smallest terminal we support
    ("h100_8x_nvswitch", ("g",), (120, 40)),       # link matrix, P2P, NUMA of an NVSwitch box
    ("rtx4090_pair", ("g",), (80, 24)),            # PCIe pair without NVLink
    ("rtx5090_old_torch", ("f",), (80, 24)),       # findings list and detail, stacked when narrow
    ("rtx5090_old_torch", ("x",), (120, 40)),      # the plan, its reasons and the rejected candidates
])
def test_main_screens(snap_compare, fixture, keys, size):
    assert snap_compare(make_app(recorded(fixture)), terminal_size=size, run_before=showing(*keys))
