"""The one way envdoctor writes a number of bytes: '64 MiB', '1.5 GiB', '64M' on a chart axis, '3.2 MB' for a download."""

from __future__ import annotations

from typing import Mapping, Optional, Union

BINARY = (("B", 0), ("KiB", 10), ("MiB", 20), ("GiB", 30))  # GiB is the largest: 2 TiB of memory reads 2048.0 GiB
DECIMAL = (("B", 1), ("kB", 1000), ("MB", 1000 ** 2), ("GB", 1000 ** 3))
_COMPACT = {"B": "B", "KiB": "K", "MiB": "M", "GiB": "G"}


def format_bytes(n: float, *, unit: Optional[str] = None, smallest: str = "B",
                 digits: Union[None, int, Mapping[str, int]] = None, exact: bool = False, compact: bool = False,
                 decimal: bool = False) -> str:
    """`n` bytes in the largest unit it reaches (binary units, or kB/MB/GB with `decimal`).

    unit: always this one. smallest: never a smaller one (below it, this one). exact: only a unit that divides
    `n`, written as a whole number. digits: decimals, per unit when a mapping (None: as few as the value needs);
    bytes are always whole. compact: '64M', no space (binary units only)."""
    ladder = [(name, 1 << s) for name, s in BINARY] if not decimal else list(DECIMAL)
    names = [name for name, _ in ladder]
    ladder = ladder[names.index(unit if unit is not None else smallest):]
    if unit is not None:
        ladder = ladder[:1]
    name, size = ladder[0]
    for candidate, candidate_size in reversed(ladder):
        if n >= candidate_size and (not exact or n % candidate_size == 0):
            name, size = candidate, candidate_size
            break
    places = digits.get(name) if isinstance(digits, Mapping) else digits
    if exact and n % size == 0:
        text = str(int(n) // size)
    elif name == "B":
        text = f"{n:.0f}"
    elif places is None:
        text = f"{n / size:g}"
    else:
        text = f"{n / size:.{places}f}"
    return f"{text}{_COMPACT[name]}" if compact else f"{text} {name}"
