"""Text from an input (a log, a snapshot from another machine, a pasted report) as a screen may show it.

`safe_display` is the one function every TUI view calls on such text before it is shown: terminal escape sequences
(CSI such as SGR colours, OSC such as a window title or the clipboard, DCS/APC/PM/SOS strings, their 8-bit C1
forms) are removed whole, the secrets are scrubbed from what is left, and any other control character or invisible
reordering character (U+202A-U+202E, U+2066-U+2069 and their kin) is written as an escape. Line breaks and tabs
stay, so a log keeps its line numbers. The CLI's printing does the same through `present.terminal.for_terminal`."""

from __future__ import annotations

import re

from envdoctor.present.terminal import printable
from envdoctor.redact import scrub_secrets

# ESC [ ... final | ESC ] ... (BEL | ESC \ | end) | ESC P/X/^/_ ... (ESC \ | end) | ESC and one character,
# and the same with their 8-bit introducers (CSI 0x9b, OSC 0x9d, DCS 0x90, SOS 0x98, PM 0x9e, APC 0x9f).
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c\n]{0,4096}(?:\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c\n]{0,4096}(?:\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?")

_HAS_C1 = re.compile("[\x90-\x9f]")


def strip_sequences(text: str) -> str:
    """`text` without its terminal escape sequences (their content, an OSC title say, goes with them)."""
    return _SEQUENCE.sub("", text) if ("\x1b" in text or _HAS_C1.search(text)) else text


def safe_display(text: str) -> str:
    """`text` safe to show on a screen: escape sequences removed, then secrets scrubbed, then every remaining
    control or bidi character escaped (`\\x07`, `\\u202e`); line breaks and tabs kept."""
    if not isinstance(text, str):
        text = str(text)
    return printable(scrub_secrets(strip_sequences(text)))


def safe_markup(text: str) -> str:
    """`safe_display`, with Rich/Textual markup brackets escaped too: for a widget that reads markup."""
    return safe_display(text).replace("[", "\\[")
