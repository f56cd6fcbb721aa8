"""A validator for the subset of JSON Schema (draft 2020-12) that envdoctor's own schemas use.

`KEYWORDS` names every keyword it implements and `ANNOTATIONS` those it reads past (they validate nothing);
`unknown_keywords(schema)` lists any other, and a test fails when a schema in `envdoctor/data/` uses one, so no
keyword is ever silently ignored. `$ref` is local (`#/$defs/...`) or names another bundled schema by its `$id`
(`../envdoctor.finding/1`); its sibling keywords apply too. Errors name the JSON path, e.g.
`gpus[0].compute_capability`.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources
from typing import Any, Callable, Dict, Iterator, List, Tuple
from urllib.parse import urljoin

KEYWORDS = frozenset({
    "type", "enum", "const", "required", "properties", "additionalProperties", "items", "pattern", "$ref",
    "minimum", "exclusiveMinimum", "minItems", "maxItems", "minLength", "minProperties", "propertyNames",
    "allOf", "if", "then", "else",
})
ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "title", "description"})

_TYPES: Dict[str, Callable[[Any], bool]] = {
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


def equal(a: Any, b: Any) -> bool:
    """JSON equality: true is not 1, and 1 is 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if _TYPES["number"](a) and _TYPES["number"](b):
        return a == b
    return type(a) is type(b) and a == b


def validate(value: Any, schema: Dict[str, Any], root: Dict[str, Any], where: str = "") -> List[str]:
    """Every way `value` breaks `schema` (found in the document `root`, for its `$ref`s), as 'path: message'."""
    errors: List[str] = []
    _check(value, schema, root, where, errors)
    return errors


def _resolve(ref: str, root: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The schema a `$ref` names, and the document it lies in."""
    base, _, pointer = ref.partition("#")
    if base:
        root = schemas()[urljoin(root.get("$id", ""), base)]
    node: Any = root
    for part in pointer.lstrip("/").split("/") if pointer.strip("/") else []:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node, root


def _check(value: Any, schema: Dict[str, Any], root: Dict[str, Any], where: str, errors: List[str]) -> None:
    if "$ref" in schema:
        target, target_root = _resolve(schema["$ref"], root)
        _check(value, target, target_root, where, errors)
    label = where or "(top level)"
    if "const" in schema and not equal(value, schema["const"]):
        errors.append(f"{label}: must be {schema['const']!r}, got {value!r}")
        return
    if "enum" in schema and not any(equal(value, e) for e in schema["enum"]):
        errors.append(f"{label}: {value!r} is not one of {schema['enum']}")
        return
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else types
        if not any(_TYPES[t](value) for t in names):
            errors.append(f"{label}: expected {' or '.join(names)}, got {type(value).__name__} {_short(value)}")
            return
    if isinstance(value, str):
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{label}: {value!r} does not match {schema['pattern']}")
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(f"{label}: {value!r} is shorter than {schema['minLength']} characters")
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{label}: {value} is below the minimum {schema['minimum']}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            errors.append(f"{label}: {value} is not above {schema['exclusiveMinimum']}")
    if isinstance(value, dict):
        _check_object(value, schema, root, where, errors)
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append(f"{label}: has {len(value)} items, fewer than {schema['minItems']}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{label}: has {len(value)} items, more than {schema['maxItems']}")
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                _check(item, schema["items"], root, _path(where, i), errors)
    for sub in schema.get("allOf", ()):
        _check(value, sub, root, where, errors)
    if "if" in schema:
        branch = "then" if not validate(value, schema["if"], root, where) else "else"
        if branch in schema:
            _check(value, schema[branch], root, where, errors)


def _check_object(value: Dict[str, Any], schema: Dict[str, Any], root: Dict[str, Any], where: str,
                  errors: List[str]) -> None:
    label = where or "(top level)"
    for key in schema.get("required", []):
        if key not in value:
            errors.append(f"{_path(where, key)}: required field is missing")
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        errors.append(f"{label}: has {len(value)} fields, fewer than {schema['minProperties']}")
    if "propertyNames" in schema:
        for key in value:
            for problem in validate(key, schema["propertyNames"], root, ""):
                errors.append(f"{_path(where, key)}: the name {problem.split(': ', 1)[1]}")
    props = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, sub in value.items():
        if key in props:
            _check(sub, props[key], root, _path(where, key), errors)
        elif extra is False:
            errors.append(f"{_path(where, key)}: unknown field")
        elif isinstance(extra, dict):
            _check(sub, extra, root, _path(where, key), errors)


def _short(value: Any) -> str:
    """The value for a message: secrets scrubbed first, then cut (a cut URL loses the `@` that marks its password)."""
    from envdoctor.redact import scrub_secrets

    text = scrub_secrets(json.dumps(value))
    return text if len(text) <= 40 else text[:37] + "..."


# Keywords whose value is a schema, a list of schemas, or a map of names to schemas.
_SUBSCHEMA = ("items", "additionalProperties", "propertyNames", "if", "then", "else")
_SUBSCHEMA_LISTS = ("allOf",)
_SUBSCHEMA_MAPS = ("properties", "$defs")


def subschemas(schema: Any, where: str = "#") -> Iterator[Tuple[str, Dict[str, Any]]]:
    """Every schema object inside `schema`, itself first, with its JSON pointer."""
    if not isinstance(schema, dict):
        return
    yield where, schema
    for key in _SUBSCHEMA:
        if isinstance(schema.get(key), dict):
            yield from subschemas(schema[key], f"{where}/{key}")
    for key in _SUBSCHEMA_LISTS:
        for i, sub in enumerate(schema.get(key) or ()):
            yield from subschemas(sub, f"{where}/{key}/{i}")
    for key in _SUBSCHEMA_MAPS:
        for name, sub in (schema.get(key) or {}).items():
            yield from subschemas(sub, f"{where}/{key}/{name}")


def unknown_keywords(schema: Dict[str, Any]) -> List[str]:
    """'pointer: keyword' for every keyword in `schema` that this validator neither implements nor reads past."""
    return [f"{where}: {key}" for where, sub in subschemas(schema) for key in sub
            if key not in KEYWORDS and key not in ANNOTATIONS]


@functools.cache
def load_schema(name: str) -> Dict[str, Any]:
    return json.loads(resources.files("envdoctor.data").joinpath(name).read_text(encoding="utf-8"))


@functools.cache
def schemas() -> Dict[str, Dict[str, Any]]:
    """$id -> schema, for every schema in envdoctor/data/."""
    out = {}
    for entry in resources.files("envdoctor.data").iterdir():
        if entry.name.endswith(".schema.json"):
            schema = load_schema(entry.name)
            out[schema["$id"]] = schema
    return out


def validate_document(data: Any, schema_id: str, where: str = "") -> List[str]:
    """Every way `data` breaks the bundled schema whose `$id` is `schema_id`."""
    schema = schemas()[schema_id]
    return validate(data, schema, schema, where)


def validate_snapshot(data: Any) -> List[str]:
    schema = load_schema("snapshot.schema.json")
    return validate(data, schema, schema)

