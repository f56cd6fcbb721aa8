"""One sanitising function for every TUI view that shows input text (issue 30.5)."""

from __future__ import annotations

import pytest

from envdoctor.present.safe_text import safe_display, safe_markup

HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123"


@pytest.mark.parametrize("raw", [
    "\x1b]0;owned\x07",  # window title
    "\x1b]52;c;SGVsbG8=\x07",  # clipboard write
    "\x1b]0;owned\x1b\\",
    "\x1b[2J\x1b[H",  # clear the screen
    "\x1b[31mred\x1b[0m",
    "\x9b31m",  # 8-bit CSI
    "\x9d0;owned\x9c",  # 8-bit OSC
    "\x1bP1$qm\x1b\\",  # DCS
    "\x1b_apc\x1b\\",
    "\x1b7\x1b8",
    "a\u202eb\u2066c\u2069d\u202a",
    "bell\x07 nul\x00 del\x7f c1\x85",
])
def test_no_escape_or_reordering_character_survives(raw):
    out = safe_display(raw)
    assert not any(c in out for c in "\x1b\x07\x00\x7f\x85\x9b\x9c\x9d\u202e\u2066\u2069\u202a"), repr(out)
    assert "owned" not in out  # a title's text goes with its sequence


def test_secrets_are_scrubbed_after_the_escapes_are_gone():
    out = safe_display(f"NCCL WARN \x1b[31m{HF}\x1b[0m at https://user:hunter2@host/x")
    assert HF[3:] not in out and "hunter2" not in out and "<redacted>" in out


def test_lines_and_tabs_stay_so_log_line_numbers_hold():
    text = "one\n\ttwo\x1b[1m\nthree\r\n"
    assert safe_display(text).count("\n") == text.count("\n") and "\t" in safe_display(text)


def test_markup_brackets_are_escaped_for_widgets_that_read_markup():
    assert safe_markup("[bold red]x[/]") == "\\[bold red]x\\[/]"
