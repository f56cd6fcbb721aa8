"""The shape of envdoctor's own data files (rules, NCCL signatures, tables, drift and fleet checks, the wheel
index), checked against their JSON Schemas in `envdoctor/data/inputs/` before any Python reads them. (The
schemas of the documents envdoctor writes are beside that folder, in `envdoctor/data/`.)

The schema says the structure (which keys, which types, which patterns); the loaders keep Python only for
what a schema cannot say (a regular expression compiles, a template names a known field, an id is unique).
Each problem names the file and the entry; a loader collects them all and raises one InputError.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

from envdoctor.jsonschema_lite import load_schema, validate

_MISSING = re.compile(r"^(?P<path>.+): required field is missing$")
_UNKNOWN = re.compile(r"^(?P<path>.+): unknown field$")
_HEAD = re.compile(r"^(?P<head>[^.\[:]+)")


FOLDER = "inputs"  # of envdoctor/data


def schema(schema_name: str) -> Dict[str, Any]:
    """The data-file schema `schema_name` (a file of envdoctor/data/inputs)."""
    return load_schema(f"{FOLDER}/{schema_name}")


def definition(schema_name: str, name: Optional[str] = None) -> Dict[str, Any]:
    """The data-file schema `schema_name`, or its `$defs/name`."""
    whole = schema(schema_name)
    return whole if name is None else whole["$defs"][name]


def problems(value: Any, schema_name: str, name: Optional[str] = None, where: str = "",
             messages: Optional[Mapping[str, str]] = None, own_words: bool = False,
             skip: Tuple[str, ...] = ()) -> List[str]:
    """Every way `value` breaks the schema (or its `$defs/name`), each as '{where}: {problem}'.

    `messages` gives a field (the first part of an error's path) the one sentence its loader has always said
    about it (a part of it missing or unknown included); a sentence is said once. Otherwise a missing field reads
    "missing 'x'", an unknown one "unknown key 'x'", and the rest as the validator words them (the path, then what
    is wrong). With `own_words`, a field's sentence also says that it is missing. Errors whose path starts with
    one of `skip` (entries the caller checks one by one, e.g. "rows[") are left out."""
    root = schema(schema_name)
    errors = validate(value, definition(schema_name, name), root)
    out: List[str] = []
    said = set()
    for error in errors:
        if error.startswith(skip) if skip else False:
            continue
        text = _reword(error, messages or {}, own_words)
        if text in said:
            continue
        said.add(text)
        out.append(f"{where}: {text}" if where else text)
    return out


def _reword(error: str, messages: Mapping[str, str], own_words: bool = False) -> str:
    head = _HEAD.match(error)
    field = head.group("head") if head and not error.startswith("(top level)") else None
    m = _MISSING.match(error) or _UNKNOWN.match(error)
    if m and ((m.group("path") == field and not own_words) or field not in messages):  # a field of the entry itself
        return f"missing '{m.group('path')}'" if _MISSING.match(error) else f"unknown key '{m.group('path')}'"
    if field in messages:
        return messages[field]
    return error


def fields(value: Any, schema_name: str, name: Optional[str] = None) -> List[str]:
    """The top-level fields of `value` that break the schema (or its `$defs/name`), in order, each once: a missing
    or bad field (or one with a bad part) by its name, an unknown one as "unknown key 'x'". An entry that is not
    even an object is '(entry)'."""
    root = schema(schema_name)
    out: List[str] = []
    for error in validate(value, definition(schema_name, name), root):
        m = _UNKNOWN.match(error)
        if m:
            field = f"unknown key '{m.group('path')}'"
        elif error.startswith("(top level)"):
            field = "(entry)"
        else:
            field = _HEAD.match(error).group("head")  # type: ignore[union-attr]
        if field not in out:
            out.append(field)
    return out
