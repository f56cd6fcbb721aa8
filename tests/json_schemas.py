"""The JSON Schemas of envdoctor's documents (`envdoctor/data/*.schema.json`), to validate real outputs with."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Dict, List

import jsonschema
from referencing import Registry, Resource


def load_schemas() -> Dict[str, Dict[str, Any]]:
    """$id -> schema, for every schema the package ships."""
    out = {}
    for entry in resources.files("envdoctor.data").iterdir():
        if entry.name.endswith(".schema.json"):
            schema = json.loads(entry.read_text(encoding="utf-8"))
            out[schema["$id"]] = schema
    return out


SCHEMAS = load_schemas()
# The schemas refer to each other by $id (`../envdoctor.finding/1`), so they are validated as one registry.
REGISTRY = Registry().with_resources((sid, Resource.from_contents(s)) for sid, s in SCHEMAS.items())


def errors(doc: Any, schema_id: str = "") -> List[str]:
    """Every way `doc` breaks the schema named by its own `schema` key (or `schema_id`), as 'path: message'."""
    schema = SCHEMAS[schema_id or doc["schema"]]
    validator = jsonschema.Draft202012Validator(schema, registry=REGISTRY)
    found = sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message[:200]}" for e in found]


def assert_valid(doc: Any, schema_id: str = "") -> None:
    problems = errors(doc, schema_id)
    assert not problems, "\n".join(problems[:10])
