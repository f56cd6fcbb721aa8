"""envdoctor's data files (rules, NCCL signatures, tables, the wheel index): where they are, and reading
them with one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Tuple, Union

from envdoctor.bounded_read import read_bytes

_PACKAGE = Path(__file__).resolve().parent


def data_path(name: str) -> Path:
    """`rules`, `rules/nccl` or `wheels_index.json`: the copy bundled into an installed wheel
    (`envdoctor/_bundled/`), else the checkout's top-level one."""
    bundled = _PACKAGE / "_bundled" / name
    return bundled if bundled.exists() else _PACKAGE.parent / name


def read_json(path: Path) -> Tuple[Any, Union[str, None]]:
    """(document, None), or (None, 'PATH: what is wrong') for an unreadable or malformed file."""
    try:
        data = read_bytes(path)
    except OSError as exc:
        return None, f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}"
    return decode_json(path, data)


def decode_json(path: Path, data: bytes) -> Tuple[Any, Union[str, None]]:
    """`read_json` of bytes already read from `path` (its messages name `path`)."""
    try:
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # as text mode reads it
    except UnicodeDecodeError as exc:
        return None, f"{path}: cannot read: {exc}"
    try:
        doc = json.loads(text)
        if too_deep(doc):
            return None, f"{path}: invalid JSON: nested more than {MAX_NESTING} deep"
        return doc, None
    except RecursionError:
        return None, f"{path}: invalid JSON: nested too deeply"
    except json.JSONDecodeError as exc:
        return None, f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    except ValueError:  # an integer of more than 4300 digits
        return None, f"{path}: invalid JSON: a number too long to be one"


MAX_NESTING = 64  # envdoctor's data files nest a few levels; the loaders that walk them recurse


def too_deep(doc: Any, limit: int = MAX_NESTING) -> bool:
    """Whether lists and objects nest more than `limit` deep in `doc` (walked without recursion)."""
    stack = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (list, dict)):
            if depth >= limit:
                return True
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return False


def files_key(paths: Iterable[Path]) -> Tuple[Tuple[str, int, int], ...]:
    """What a cache of data files is keyed by: each file's (path, mtime_ns, size); a missing file is (path, -1, -1)."""
    out = []
    for p in paths:
        try:
            st = p.stat()
            out.append((str(p), st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((str(p), -1, -1))
    return tuple(out)
