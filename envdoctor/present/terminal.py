"""Text as a terminal may safely show it: every control character that is not a line break or a tab,
and the invisible characters that reorder text, written as escapes (`\\x1b`, `\\u202e`).

Whatever the text came from (a GPU name, a host name, a log line, a snapshot from another machine) it
can neither move the cursor, retitle the window, write the clipboard nor hide what follows. Colour
survives only where `Style` put it: its marks carry a per-process nonce no input can know.
"""

from __future__ import annotations

import re
from typing import List

from envdoctor.present.style import MARK
from envdoctor.redact import scrub_secrets

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]")
_STYLE_MARK = re.compile(re.escape(MARK) + r"(\d+)m")


def _escape(ch: str) -> str:
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def printable(text: str) -> str:
    """`text` with its unsafe characters written as escapes; line breaks and tabs stay."""
    return _UNSAFE.sub(lambda m: _escape(m.group()), text)


def for_terminal(text: str) -> str:
    """What envdoctor prints for people: secrets out, unsafe characters escaped, Style's colours made real."""
    parts: List[str] = []
    pos = 0
    for m in _STYLE_MARK.finditer(text):
        parts += [printable(scrub_secrets(text[pos:m.start()])), f"\x1b[{m.group(1)}m"]
        pos = m.end()
    parts.append(printable(scrub_secrets(text[pos:])))
    return "".join(parts)
