"""The NCCL tab: open a log or paste one; ranked causes with the evidence lines highlighted."""

from __future__ import annotations

from textual.widgets import Input, Static, TextArea

from envdoctor.nccl import diagnose_paths
from envdoctor.tui.app import make_app
from tests.conftest import ROOT
from tests.tui.conftest import aio, recorded, settle, text_of

LOG = ROOT / "tests" / "fixtures" / "nccl" / "cumem_host.log"


async def open_nccl(pilot, app) -> None:
    await settle(pilot, app)
    await pilot.press("n")
    await settle(pilot, app)
    assert app.active_tab == "nccl"


@aio
async def test_open_a_log_file_ranks_causes_and_highlights_evidence():
    expected = diagnose_paths([str(LOG)])
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_nccl(pilot, app)
        app.query_one("#nccl-path", Input).value = str(LOG)
        await pilot.click("#nccl-open")
        await settle(pilot, app)
        result = app.query_one("#nccl-result", Static).content
        plain = result.plain
        assert f"1. {expected.findings[0].title}\n" in plain  # words: the category identifier stays in the JSON
        assert f"1. {expected.findings[0].category}" not in plain
        assert "most likely root cause" in plain
        ranks = [plain.index(f.title) for f in expected.findings]
        assert ranks == sorted(ranks)  # the core's ranking, kept
        evidence = expected.findings[0].evidence[0]
        highlighted = [plain[s.start:s.end] for s in result.spans if s.style == "black on yellow"]
        assert any(evidence in h for h in highlighted)
        area = app.query_one("#nccl-text", TextArea)
        assert area.text == LOG.read_text()
        line = int(expected.findings[0].locations[0].rsplit(":", 1)[1])
        assert area.cursor_location[0] == line - 1 and area.selected_text.strip() == area.document.get_line(line - 1).strip()
        assert area.soft_wrap and area.scroll_x == 0  # the log view wraps, from column 0


@aio
async def test_pasted_text_is_diagnosed():
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_nccl(pilot, app)
        app.query_one("#nccl-text", TextArea).load_text(LOG.read_text())
        await pilot.click("#nccl-paste")
        await settle(pilot, app)
        plain = text_of(app.query_one("#nccl-result", Static))
        assert "1. NCCL's cuMem host-buffer path needs peer access these GPUs lack" in plain and "fix:" in plain


@aio
async def test_a_missing_file_and_an_empty_paste_are_said_plainly(tmp_path):
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_nccl(pilot, app)
        app.query_one("#nccl-path", Input).value = str(tmp_path / "nope.log")
        await pilot.click("#nccl-open")
        await settle(pilot, app)
        assert text_of(app.query_one("#nccl-result", Static)).strip() == f"{tmp_path / 'nope.log'}: no such file"
        await pilot.click("#nccl-paste")
        await settle(pilot, app)
        assert any("Paste a log" in n.message for n in app._notifications)


@aio
async def test_the_tab_opens_with_the_path_box_focused_and_a_typed_path_stays_in_it(tmp_path):
    """Every printable key goes into the path box: q, n, e, r, o, / do not quit, switch tabs, re-probe or export."""
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_nccl(pilot, app)
        path_box = app.query_one("#nccl-path", Input)
        assert app.focused is path_box
        typed = "/tmp/queue/oops-every-key?.log"
        await pilot.press(*typed)
        await settle(pilot, app)
        assert path_box.value == typed
        assert app.active_tab == "nccl" and app.is_running
        assert not app.screen.is_modal  # no export dialog, no help screen
        await pilot.press("escape")
        assert app.focused is not path_box
        await pilot.press("o")
        await settle(pilot, app)
        assert app.active_tab == "overview"


@aio
async def test_clear_empties_the_path_and_the_pasted_log():
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_nccl(pilot, app)
        app.query_one("#nccl-text", TextArea).load_text(LOG.read_text())
        await pilot.click("#nccl-paste")
        await settle(pilot, app)
        await pilot.click("#nccl-path")
        await pilot.press(*"/var/log/x")
        assert app.query_one("#nccl-path", Input).value == "/var/log/x"
        await pilot.press("ctrl+l")
        await settle(pilot, app)
        assert app.query_one("#nccl-path", Input).value == "" and app.query_one("#nccl-text", TextArea).text == ""
        assert "Type a log file's path" in text_of(app.query_one("#nccl-result", Static))
        app.query_one("#nccl-path", Input).value = str(LOG)
        await pilot.click("#nccl-clear")
        await settle(pilot, app)
        assert app.query_one("#nccl-path", Input).value == ""
