"""The diagnosis text cuts a long evidence line at 160 characters: it scrubs the line first, or a token the cut
runs through keeps its head visible and no longer has the shape a scrubber knows (issue 30)."""

from __future__ import annotations

import os

from envdoctor.present.diagnose import render_diagnose
from envdoctor.present.style import Style
from envdoctor.settings import Settings
from envdoctor.usecases.diagnose_text import diagnose_text

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_a_token_across_the_cut_is_scrubbed_not_half_shown() -> None:
    know = Settings.from_env({k: v for k, v in os.environ.items() if not k.startswith("ENVDOCTOR_")}).knowledge()
    line = "RuntimeError: Found no NVIDIA driver on your system " + "x" * 96 + " " + TOKEN + " tail"
    assert line.index(TOKEN) < 160 < line.index(TOKEN) + len(TOKEN)
    text = render_diagnose(diagnose_text([("paste", line + "\n")], know), Style(False))
    assert "Found no NVIDIA driver" in text
    assert TOKEN[:8] not in text and "<redacted>" in text
