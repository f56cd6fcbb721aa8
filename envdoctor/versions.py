"""Version strings as the sources write them, turned into what `packaging` and people read."""

from __future__ import annotations

import re
from typing import Any, Optional

from packaging.version import InvalidVersion, Version


def cudnn_human(raw: Any) -> str:
    """torch.backends.cudnn.version() as people write it: '90100' -> '9.1.0', '8902' -> '8.9.2'."""
    text = str(raw)
    m = re.fullmatch(r"(\d+)(\d\d)(\d\d)", text)
    if m and int(m.group(1)) >= 9:
        return f"{int(m.group(1))}.{int(m.group(2))}.{int(m.group(3))}"
    m = re.fullmatch(r"(\d)(\d)(\d\d)", text)
    if m:
        return f"{m.group(1)}.{m.group(2)}.{int(m.group(3))}"
    return text


def parse(text: Any) -> Optional[Version]:
    """A lenient Version: '2.5.1+cu124' keeps its local part, '550.54.14' works, junk gives None."""
    try:
        return Version(str(text).strip())
    except (InvalidVersion, TypeError):
        return None


def major_minor(text: Any) -> Optional[tuple]:
    v = parse(text)
    if v is None:
        return None
    rel = v.release + (0,)
    return rel[0], rel[1]
