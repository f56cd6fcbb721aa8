"""Colour for terminals that want it: off when NO_COLOR is set or the stream is not a terminal.

Style writes marks, not escape sequences: `present.terminal.for_terminal` turns them into colours when
the text is printed, after it has escaped every control character the text itself held.
"""

from __future__ import annotations

import os
from typing import TextIO

_CODES = {"red": "31", "yellow": "33", "green": "32", "blue": "34", "dim": "2", "bold": "1", "cyan": "36"}
# A private-use character and a nonce: no snapshot, log or name can forge it.
MARK = f"\ue000{os.urandom(8).hex()}\ue001"  # (secrets.token_hex, without importing secrets and hmac)


class Style:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    @classmethod
    def for_stream(cls, stream: TextIO) -> Style:
        wants = "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"
        try:
            return cls(wants and stream.isatty())
        except (AttributeError, ValueError):
            return cls(False)

    def __call__(self, text: str, colour: str) -> str:
        if not self.enabled:
            return text
        return f"{MARK}{_CODES[colour]}m{text}{MARK}0m"
