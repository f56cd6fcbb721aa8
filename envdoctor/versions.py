"""Version strings as the sources write them, turned into what `packaging` and people read.

The one place that parses versions (torch, CUDA, drivers, Python series): `parse`, `major_minor`,
`require_major_minor` and `series`. Compute capabilities are not versions: see `compat.parse_cc`.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Tuple

from packaging.version import Version


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
    except (ValueError, TypeError):  # InvalidVersion, and a release part of thousands of digits
        return None


def major_minor(text: Any) -> Optional[Tuple[int, int]]:
    """'12.8.1' -> (12, 8), '2.5.1+cu124' -> (2, 5), '13' -> (13, 0); junk gives None."""
    v = parse(text)
    if v is None:
        return None
    rel = v.release + (0,)
    return rel[0], rel[1]


def require_major_minor(text: Any, what: str = "version") -> Tuple[int, int]:
    """`major_minor` for values that must be readable: raises ValueError naming `what`."""
    mm = major_minor(text)
    if mm is None:
        raise ValueError(f"not a {what}: {text!r}")
    return mm


def series(text: Any) -> Optional[str]:
    """The major.minor series of a version: '2.9.1+cu128' -> '2.9', '13' -> '13.0'; junk gives None."""
    mm = major_minor(text)
    return f"{mm[0]}.{mm[1]}" if mm else None
