"""The Diagnose tab (was the NCCL tab): paste or open anything; `envdoctor diagnose`'s cause and fix first (above the
fold), its evidence highlighted in the text, every shown text sanitised."""

from __future__ import annotations

import os

import pytest
from textual import events
from textual.widgets import Input, Static, TextArea

from envdoctor.settings import Settings
from envdoctor.tui.app import make_app
from envdoctor.usecases.diagnose_text import diagnose_text
from tests.conftest import ROOT
from tests.tui.conftest import aio, recorded, screen_lines, settle, text_of

LOG = ROOT / "tests" / "fixtures" / "nccl" / "cumem_host.log"
# A pasted issue: words, a traceback with a CUDA runtime error, and a collect_env section
MIXED = """I get this when I start training:

Traceback (most recent call last):
  File "train.py", line 12, in <module>
    model.cuda()
  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 905, in cuda
    return self._apply(lambda t: t.cuda(device))
RuntimeError: CUDA error: no kernel image is available for execution on the device
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.

Collecting environment information...
PyTorch version: 2.0.1+cu117
Is debug build: False
CUDA used to build PyTorch: 11.7
OS: Ubuntu 22.04.3 LTS (x86_64)
Python version: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0] (64-bit runtime)
Is CUDA available: True
CUDA runtime version: 12.1.105
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 5090
Nvidia driver version: 570.86.10
"""
TOKEN = "ghp_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


def knowledge():
    return Settings.from_env(os.environ).knowledge()


async def open_diagnose(pilot, app) -> None:
    await settle(pilot, app)
    await pilot.press("d")
    await settle(pilot, app)
    assert app.active_tab == "diagnose"


async def paste(pilot, app, text: str) -> None:
    """A terminal paste (bracketed) into the focused path box."""
    box = app.query_one("#diagnose-path", Input)
    assert app.focused is box
    box.post_message(events.Paste(text))
    await settle(pilot, app)


def shown(app) -> str:
    return "\n".join(screen_lines(app))


@aio
async def test_a_pasted_mixed_text_shows_the_cause_and_its_fix_without_scrolling():
    expected = diagnose_text([("pasted", MIXED)], knowledge())
    top = expected.findings[0]
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(80, 24)) as pilot:  # the smallest terminal supported
        await open_diagnose(pilot, app)
        await paste(pilot, app, MIXED)
        assert app.query_one("#diagnose-path", Input).value == ""  # not its first line: the text went below
        assert app.query_one("#diagnose-text", TextArea).text == MIXED
        screen = shown(app)
        assert app.query_one("#diagnose-result-scroll").scroll_y == 0
        assert "Most likely cause:" in screen and top.title[:40] in screen
        assert "fix: " + top.fix[:40] in screen  # above the fold
        plain = text_of(app.query_one("#diagnose-result", Static))
        assert "pasted:8" in plain and "RuntimeError: CUDA error: no kernel image" in plain  # evidence, input:line
        assert plain.index("fix:") < plain.index("evidence:")
        assert "report sections: collect_env" in plain
        area = app.query_one("#diagnose-text", TextArea)
        assert area.cursor_location[0] == 7 and "no kernel image" in area.selected_text  # the evidence line


@aio
async def test_a_paste_with_an_osc_title_a_bidi_override_and_a_token_shows_none_of_them():
    hostile = MIXED.replace("model.cuda()", f"\x1b]0;pwned\x07model.cuda() \x1b[31m{TOKEN}\x1b[0m \u202eevil\u2066x")
    hostile = hostile.replace("RuntimeError:", f"\x9b2J\x85RuntimeError: token={TOKEN} https://user:hunter2pass@h/x")
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_diagnose(pilot, app)
        await paste(pilot, app, hostile)
        result = app.query_one("#diagnose-result", Static).content.plain
        area = app.query_one("#diagnose-text", TextArea).text
        assert "Most likely cause:" in result
        for where in (result, area, shown(app)):
            for bad in ("\x1b", "\x07", "\x9b", "\x85", "\u202e", "\u2066", "pwned", TOKEN, "hunter2pass"):
                assert bad not in where, (bad, where[:200])
        assert area.count("\n") == hostile.count("\n")  # line for line: the evidence's numbers hold
        box = app.query_one("#diagnose-text", TextArea)
        box.load_text("")
        box.focus()
        await pilot.pause()
        box.post_message(events.Paste(hostile))  # pasted into the text area itself
        await settle(pilot, app)
        for bad in ("\x1b", "\x07", "\x9b", "\x85", "\u202e", "pwned", TOKEN, "hunter2pass"):
            assert bad not in box.text and bad not in shown(app), bad


@aio
async def test_a_pasted_path_opens_the_file(tmp_path):
    log = tmp_path / "build.log"
    log.write_text(MIXED)
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_diagnose(pilot, app)
        await paste(pilot, app, f"'{log}'\n")  # as a terminal pastes a dragged file
        assert app.query_one("#diagnose-path", Input).value == str(log)
        assert app.query_one("#diagnose-text", TextArea).text == MIXED
        plain = text_of(app.query_one("#diagnose-result", Static))
        assert "Most likely cause:" in plain and f"{log}:8" in plain
        assert "weighed against the machine's facts on show" in plain  # the app's snapshot went with the text


@pytest.mark.slow
@aio
async def test_open_a_log_file_shows_the_cause_first_and_highlights_evidence():
    expected = diagnose_text([str(LOG)], knowledge())
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_diagnose(pilot, app)
        app.query_one("#diagnose-path", Input).value = str(LOG)
        await pilot.click("#diagnose-open")
        await settle(pilot, app)
        result = app.query_one("#diagnose-result", Static).content
        plain = result.plain
        top = expected.findings[0]
        assert f"Most likely cause: {top.title}\n" in plain  # words: the category identifier stays in the JSON
        assert f"Most likely cause: {top.category}" not in plain
        assert plain.index(top.title) < plain.index("fix:") < plain.index("evidence:")
        evidence = top.evidence[0]
        highlighted = [plain[s.start:s.end] for s in result.spans if s.style == "black on yellow"]
        assert any(evidence in h for h in highlighted)
        area = app.query_one("#diagnose-text", TextArea)
        assert area.text == LOG.read_text()
        line = int(top.locations[0].rsplit(":", 1)[1])
        assert area.cursor_location[0] == line - 1 and area.selected_text.strip() == area.document.get_line(line - 1).strip()
        assert area.soft_wrap and area.scroll_x == 0  # the text view wraps, from column 0


@aio
async def test_pasted_text_is_diagnosed():
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_diagnose(pilot, app)
        app.query_one("#diagnose-text", TextArea).load_text(LOG.read_text())
        await pilot.click("#diagnose-paste")
        await settle(pilot, app)
        plain = text_of(app.query_one("#diagnose-result", Static))
        assert "Most likely cause: NCCL's cuMem host-buffer path needs peer access these GPUs lack" in plain
        assert "fix:" in plain


@pytest.mark.slow
@aio
async def test_a_missing_file_and_an_empty_paste_are_said_plainly(tmp_path):
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_diagnose(pilot, app)
        app.query_one("#diagnose-path", Input).value = str(tmp_path / "nope.log")
        await pilot.click("#diagnose-open")
        await settle(pilot, app)
        assert text_of(app.query_one("#diagnose-result", Static)).strip() == f"{tmp_path / 'nope.log'}: no such file"
        await pilot.click("#diagnose-paste")
        await settle(pilot, app)
        assert any("Paste a text" in n.message for n in app._notifications)


@pytest.mark.slow
@aio
async def test_the_tab_opens_with_the_path_box_focused_and_a_typed_path_stays_in_it(tmp_path):
    """Every printable key goes into the path box: q, d, n, e, r, o, / do not quit, switch tabs, re-probe or export."""
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_diagnose(pilot, app)
        path_box = app.query_one("#diagnose-path", Input)
        assert app.focused is path_box
        typed = "/tmp/queue/oops-every-key?-d.log"
        await pilot.press(*typed)
        await settle(pilot, app)
        assert path_box.value == typed
        assert app.active_tab == "diagnose" and app.is_running
        assert not app.screen.is_modal  # no export dialog, no help screen
        await pilot.press("escape")
        assert app.focused is not path_box
        await pilot.press("o")
        await settle(pilot, app)
        assert app.active_tab == "overview"


@pytest.mark.slow
@aio
async def test_clear_empties_the_path_and_the_pasted_log():
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_diagnose(pilot, app)
        app.query_one("#diagnose-text", TextArea).load_text(LOG.read_text())
        await pilot.click("#diagnose-paste")
        await settle(pilot, app)
        await pilot.click("#diagnose-path")
        await pilot.press(*"/var/log/x")
        assert app.query_one("#diagnose-path", Input).value == "/var/log/x"
        await pilot.press("ctrl+l")
        await settle(pilot, app)
        assert app.query_one("#diagnose-path", Input).value == "" and app.query_one("#diagnose-text", TextArea).text == ""
        assert "type a file's path" in text_of(app.query_one("#diagnose-result", Static))
        app.query_one("#diagnose-path", Input).value = str(LOG)
        await pilot.click("#diagnose-clear")
        await settle(pilot, app)
        assert app.query_one("#diagnose-path", Input).value == ""


@pytest.mark.slow
@aio
async def test_alternatives_with_evidence_of_their_own_are_one_line_each_and_a_clean_text_says_nothing_found():
    both = MIXED + "\n" + LOG.read_text()
    expected = diagnose_text([("pasted", both)], knowledge())
    others = [f for f in expected.findings[1:] if set(f.evidence) - set(expected.findings[0].evidence)]
    assert others  # the text has a second cause with its own lines
    app = make_app(recorded("a100_pcie_8x"))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_diagnose(pilot, app)
        await paste(pilot, app, both)
        plain = app.query_one("#diagnose-result", Static).content.plain
        block = plain.split("\nalternatives:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert len(block) == len(others)
        for line, f in zip(block, others):
            assert f.id in line and f.title in line and f"({f.locations[0]})" in line
        app.snapshot = None  # no machine facts to weigh (as while the probes run): the text alone
        await paste(pilot, app, "all good here\nthe job finished\n")
        plain = app.query_one("#diagnose-result", Static).content.plain
        assert plain.startswith("Nothing recognisable") and "alternatives" not in plain
        assert "weighed against" not in plain


def test_a_paste_is_a_path_only_when_it_is_one_existing_path_without_escapes(tmp_path):
    from envdoctor.tui.diagnose_pane import is_one_path

    log = tmp_path / "rank0.log"
    log.write_text("x\n")
    odd = tmp_path / "a\x1b]0;pwned\x07.log"
    odd.write_text("x\n")
    assert is_one_path(str(log)) and is_one_path(f"'{log}'\n") and is_one_path(f'"{tmp_path}"')
    assert not is_one_path(f"{log}\n{log}")  # two lines: text
    assert not is_one_path(str(tmp_path / "nope.log")) and not is_one_path("RuntimeError: CUDA error: out of memory")
    assert not is_one_path(str(odd))  # its name would reach the box raw: text (shown sanitised)
    assert not is_one_path("") and not is_one_path("a\x00b")
