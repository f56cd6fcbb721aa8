"""Byte-compile envdoctor before a bench, as `pip install .` leaves it.

torch, Textual and the other anchors were byte-compiled when pip installed them. envdoctor, imported from
this checkout, is compiled on every import where nothing may write `__pycache__` (PYTHONDONTWRITEBYTECODE,
set in this workplace), which would charge each envdoctor run with compiling its own modules.
"""

from __future__ import annotations

import compileall
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def byte_compile_envdoctor() -> None:
    compileall.compile_dir(str(ROOT / "envdoctor"), quiet=1)
