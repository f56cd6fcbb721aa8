"""A validator for the subset of JSON Schema that envdoctor's own schemas use.

Keywords: type, enum, const, required, properties, additionalProperties, items, pattern, $ref
(local `#/$defs/...`), minimum. Errors name the JSON path, e.g. `gpus[0].compute_capability`.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources
from typing import Any, Dict, List

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _path(base: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{base}[{key}]"
    return f"{base}.{key}" if base else str(key)


def validate(value: Any, schema: Dict[str, Any], root: Dict[str, Any], where: str = "") -> List[str]:
    errors: List[str] = []
    _check(value, schema, root, where, errors)
    return errors


def _check(value: Any, schema: Dict[str, Any], root: Dict[str, Any], where: str, errors: List[str]) -> None:
    if "$ref" in schema:
        ref = schema["$ref"]
        node: Any = root
        for part in ref.lstrip("#/").split("/"):
            node = node[part]
        _check(value, node, root, where, errors)
        return
    label = where or "(top level)"
    if "const" in schema and value != schema["const"]:
        errors.append(f"{label}: must be {schema['const']!r}, got {value!r}")
        return
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{label}: {value!r} is not one of {schema['enum']}")
        return
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else types
        if not any(_TYPES[t](value) for t in names):
            errors.append(f"{label}: expected {' or '.join(names)}, got {type(value).__name__} {_short(value)}")
            return
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        errors.append(f"{label}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, (int, float)) and "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{label}: {value} is below the minimum {schema['minimum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{_path(where, key)}: required field is missing")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, sub in value.items():
            if key in props:
                _check(sub, props[key], root, _path(where, key), errors)
            elif extra is False:
                errors.append(f"{_path(where, key)}: unknown field")
            elif isinstance(extra, dict):
                _check(sub, extra, root, _path(where, key), errors)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _check(item, schema["items"], root, _path(where, i), errors)


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


@functools.cache
def load_schema(name: str) -> Dict[str, Any]:
    return json.loads(resources.files("envdoctor.data").joinpath(name).read_text(encoding="utf-8"))


def validate_snapshot(data: Any) -> List[str]:
    schema = load_schema("snapshot.schema.json")
    return validate(data, schema, schema)
