"""Predicates of torch.compile readiness that need a table: whether the installed torch's Dynamo accepts this
Python (rules/tables/dynamo_python.json, in ctx.tables). They register in the one predicate registry and
return a false value when a decisive fact is unknown."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

from packaging.version import InvalidVersion, Version

from envdoctor.rules.conditions import Context, predicate
from envdoctor.snapshot import present

Result = Union[bool, None, Dict[str, Any]]


def _python_mm(text: Any) -> Optional[Tuple[int, int]]:
    parts = str(text).split(".") if present(text) and text else []
    try:
        return (int(parts[0]), int(parts[1])) if len(parts) >= 2 else None
    except ValueError:
        return None


def _release(text: Any) -> Optional[str]:
    """torch's release number without its local or pre-release parts: '2.4.0.dev20240501+cu121' -> '2.4.0'."""
    try:
        return Version(str(text)).base_version if present(text) and text else None
    except InvalidVersion:
        return None


@predicate("python_mm", "said", "supported", "remedy", "source", reads=("dynamo_python",))
def dynamo_refuses_python(ctx: Context) -> Result:
    """torch.compile raises on this interpreter: the table's row for the installed torch release says its
    Dynamo refuses this Python X.Y (torch itself imports there). Quiet when torch's release, the Python version
    or the row for that release is unknown, and unless torch is known to import (when it does not, other rules say why)."""
    s = ctx.snapshot
    t = s.torch
    if not present(t) or t.importable is not True:
        return None
    release, py = _release(t.version), _python_mm(s.python.version)
    if release is None or py is None:
        return None
    rows = ctx.tables.dynamo_python
    row = next((r for r in rows if r.torch.contains(release, prereleases=True)), None)
    if row is None or py < row.python_below:
        return None
    first = next((r for r in rows if py < r.python_below and r.torch_from), None)
    python_mm = f"{py[0]}.{py[1]}"
    below = f"{row.python_below[0]}.{row.python_below[1]}"
    supported = f"Python below {below}"
    remedy = (f"or upgrade torch to {first.torch_from} or newer, whose torch.compile accepts Python {python_mm}"
              if first is not None else f"no torch release envdoctor knows accepts Python {python_mm} in torch.compile yet")
    return {"python_mm": python_mm, "said": row.said, "supported": supported, "remedy": remedy,
            "source": row.source,
            "evidence": [f"python: {s.python.version}; torch: {t.version}",
                         f"dynamo_python.json: torch {row.torch} compiles on {supported} ({row.source})"]}
