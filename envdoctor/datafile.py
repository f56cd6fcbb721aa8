"""Reading envdoctor's JSON data files (rules, signatures, tables, the wheel index) with one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Tuple, Union


def read_json(path: Path) -> Tuple[Any, Union[str, None]]:
    """(document, None), or (None, 'PATH: what is wrong') for an unreadable or malformed file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}"
    try:
        return json.loads(text), None
    except RecursionError:
        return None, f"{path}: invalid JSON: nested too deeply"
    except json.JSONDecodeError as exc:
        return None, f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
