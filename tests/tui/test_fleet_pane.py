"""The Fleet tab: a `fleet collect` report with the odd node highlighted and the bandwidth heat map."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Input, Static

from envdoctor.fleet.collect import Collected
from envdoctor.fleet.diagnose import fleet_diagnosis
from envdoctor.fleet.endpoint import Rendezvous
from envdoctor.fleet.report import collect_document, gathered_nodes, measured
from envdoctor.fleet.thresholds import load_thresholds
from envdoctor.tui.app import make_app
from envdoctor.tui.fleet_pane import heat_style
from tests.conftest import fixture_path
from tests.tui.conftest import aio, recorded, settle


def report(tmp_path):
    """A 4-node report built by the real pipeline: node-3 runs another torch, node-1's links are slow."""
    payloads = {}
    for r in range(4):
        snap = json.loads(fixture_path("h100_8x_nvswitch").read_text())
        snap["host"]["hostname"] = f"node-{r}"
        if r == 3:
            snap["torch"]["version"] = "2.4.1+cu121"
        payloads[r] = {"hostname": f"node-{r}", "file": "", "snapshot": snap}
    rows = [[None if i == j else (1.0 if 1 in (i, j) else 20.0) for j in range(4)] for i in range(4)]
    got = Collected(Rendezvous(4, 0, "127.0.0.1", 29500), 60.0, payloads, [], backend="gloo", nbytes=1 << 20,
                    rows=rows)
    th = load_thresholds()
    names, nodes, _ = gathered_nodes(got)
    m = measured(got, names, th)
    findings = fleet_diagnosis([(n, s) for _, n, s in nodes], th, m)
    doc = collect_document(got, names, m, findings, {r: p["hostname"] for r, p in payloads.items()})
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(doc))
    return path


def styles_of(text, word):
    """The styles of the matrix cells (not the legend) that show `word`."""
    plain = text.plain
    end = plain.find("GB/s")
    return {str(s.style) for s in text.spans if s.start < end and word in plain[s.start:s.end]}


@pytest.mark.slow
@aio
async def test_fleet_tab_highlights_the_odd_nodes_and_draws_the_heat_map(tmp_path):
    path = report(tmp_path)
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot, app)
        await pilot.press("l")
        await settle(pilot, app)
        assert app.active_tab == "fleet"
        app.query_one("#fleet-path", Input).value = str(path)
        await pilot.click("#fleet-open")
        await settle(pilot, app)
        table = app.query_one("#fleet-nodes", Static).content
        names = list(table.columns[0].cells)
        style = {cell.plain: str(cell.style) for cell in names}
        assert style["node-3"] == "bold white on red"  # another torch: an error
        assert style["node-1"] == "bold black on yellow"  # the slow node: a warning
        assert style["node-0"] == style["node-2"] == ""
        heat = app.query_one("#fleet-heatmap", Static).content
        assert "1.00" in heat.plain and "20.00" in heat.plain
        assert styles_of(heat, "1.00") == {"bold white on red"} and styles_of(heat, "20.00") == {"black on green"}
        assert "bold red" in styles_of(heat, "node-1")
        found = app.query_one("#fleet-findings", Static).content.plain
        assert "ED907 node-1 is slow" in found and "torch differs on node-3" in found


@aio
async def test_a_file_that_is_not_a_fleet_report_is_said_plainly(tmp_path):
    bad = tmp_path / "check.json"
    bad.write_text(json.dumps({"schema": "envdoctor.check/1"}))
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("l")
        app.query_one("#fleet-path", Input).value = str(bad)
        await pilot.click("#fleet-open")
        await settle(pilot, app)
        assert "not an envdoctor.fleet/1 report" in app.query_one("#fleet-nodes", Static).content.plain


def test_heat_style_against_the_median():
    assert heat_style(9.0, 10.0) == "black on green"
    assert heat_style(6.0, 10.0) == "black on yellow"
    assert heat_style(1.0, 10.0) == "bold white on red"
    assert heat_style(None, 10.0) == heat_style(3.0, None) == "dim"
