"""Where envdoctor's data lives: the repository's top-level `rules/` and `wheels_index.json` in a
checkout, or the copies bundled into the wheel (`envdoctor/_bundled/`) once installed."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_path(name: str) -> Path:
    """`rules` or `wheels_index.json`: the checkout's copy first, then the bundled one."""
    for candidate in (_PACKAGE.parent / name, _PACKAGE / "_bundled" / name):
        if candidate.exists():
            return candidate
    return _PACKAGE.parent / name
