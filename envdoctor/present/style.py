"""Colour for terminals that want it: off when NO_COLOR is set or the stream is not a terminal."""

from __future__ import annotations

import os
from typing import TextIO

_CODES = {"red": "31", "yellow": "33", "green": "32", "blue": "34", "dim": "2", "bold": "1", "cyan": "36"}


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
        return f"\x1b[{_CODES[colour]}m{text}\x1b[0m"
