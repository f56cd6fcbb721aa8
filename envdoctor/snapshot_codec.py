"""The snapshot's JSON codec and JSON Schema, both derived from the section dataclasses in `envdoctor.snapshot`.

The dataclasses are the one source of truth. From their type hints and field metadata (`fact(doc=, enum=,
pattern=, required=)`) this module derives
- `json_schema()`: the document `envdoctor/data/snapshot.schema.json` holds (`python -m envdoctor.snapshot_codec
  --write` rewrites it; a test fails when the file is not current);
- `decoders_text()`: the module `envdoctor/snapshot_decoders.py`, one decoder function per class that checks
  every value the schema describes and builds the model in one pass (`snapshot_from_json` calls it; at the first
  value the schema refuses it raises `Invalid`, and `jsonschema_lite` then lists every error for the message).

`python -m envdoctor.snapshot_codec --write` rewrites both files; a test fails when either is not current.
Nothing here runs when a snapshot is loaded: the generated module imports only `envdoctor.snapshot`.

A field's type reads as its JSON: `Field[T]` (T or a marker) and `Optional[T]` may be null, a plain `T` may not;
`str`, `int`, `bool`, `float` are string, integer, boolean, number; `List[T]` an array, `Dict[str, T]` an object
of T values (`Dict[str, Any]`: any object); a `Model` subclass an object of its fields, unknown keys allowed.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from typing import Any, Dict, List, Optional, Tuple, Union

from envdoctor import snapshot as _s

_MARKERS = (_s.Unavailable, _s.ProbeFailed, _s.Unknown)

SCHEMA_FILE = "snapshot.schema.json"
TITLE = "envdoctor machine snapshot, version 1"
DESCRIPTION = (
    "Everything envdoctor learned about one machine. Probes write it; diagnosis, planning and reports read only it. "
    "Fields named here are the stable contract: keep their names and meanings. Add fields freely "
    "(additionalProperties stays true); a field that could not be probed is null, never invented. A null with a "
    "reason in `absent` (\"unavailable: ...\") is known not to exist; a bare null is unknown (CONTRACT.md, "
    "\"Unknown is not absent\"). Versions are strings exactly as the source reports them. "
    "Generated from envdoctor/snapshot.py by `python -m envdoctor.snapshot_codec --write`: edit the types, not this file."
)
ABSENT_DESCRIPTION = "JSON path of a null field -> why it is null: 'unavailable: ...', 'failed: ...' or 'unknown: ...'"
PARTIAL_DESCRIPTION = (
    "JSON path of a list or map that holds only part of what is there -> why (rebuilt from a report that names some "
    "packages, a listing cut short): an entry it lacks is unknown, not absent. Optional: a list or map not named here "
    "is whole, as in every snapshot written before this map existed")


@dataclasses.dataclass(frozen=True)
class Kind:
    """The JSON shape of one value: `tag` is str, int, bool, number, any, model, list or dict."""

    tag: str
    nullable: bool = False
    null_is_none: bool = False  # Optional[T]: a bare null reads as None (a value), not as an unknown
    item: Optional[Kind] = None  # list and dict
    model: Optional[type] = None
    enum: Tuple[str, ...] = ()
    pattern: str = ""


_SCALARS = {str: "str", int: "int", bool: "bool", float: "number"}


def kind_of(tp: Any, meta: Optional[typing.Mapping[str, Any]] = None) -> Kind:
    """The Kind of a type hint (with a field's metadata: its enum and pattern)."""
    meta = meta or {}
    nullable = null_is_none = False
    if typing.get_origin(tp) is Union:
        args = typing.get_args(tp)
        null_is_none = type(None) in args
        nullable = null_is_none or any(a in _MARKERS for a in args)
        rest = [a for a in args if a not in _MARKERS and a is not type(None)]
        if len(rest) != 1:
            raise TypeError(f"{tp}: one type, or it with markers and None")
        (tp,) = rest
        if typing.get_origin(tp) is Union:  # Field[Optional[str]]
            inner = kind_of(tp)
            return dataclasses.replace(inner, nullable=True, null_is_none=True, enum=tuple(meta.get("enum", ())),
                                       pattern=meta.get("pattern", ""))
    enum, pattern = tuple(meta.get("enum", ())), meta.get("pattern", "")
    if tp is Any:
        return Kind("any")
    if tp in _SCALARS:
        return Kind(_SCALARS[tp], nullable, null_is_none, enum=enum, pattern=pattern)
    if isinstance(tp, type) and issubclass(tp, _s.Model):
        return Kind("model", nullable, null_is_none, model=tp)
    origin = typing.get_origin(tp)
    if origin is list:
        (item,) = typing.get_args(tp)
        return Kind("list", nullable, null_is_none, item=kind_of(item))
    if origin is dict:
        key, item = typing.get_args(tp)
        if key is not str:
            raise TypeError(f"{tp}: JSON object keys are strings")
        return Kind("dict", nullable, null_is_none, item=kind_of(item))
    raise TypeError(f"{tp}: no JSON shape for this type")


@functools.cache
def fields_of(cls: type) -> Tuple[Tuple[dataclasses.Field, Kind], ...]:
    """A model's fields (without `extra`) with the Kind of each."""
    hints = typing.get_type_hints(cls)
    return tuple((f, kind_of(hints[f.name], f.metadata)) for f in dataclasses.fields(cls) if f.name != "extra")


# --- the schema ------------------------------------------------------------------------------------------

_JSON_TYPES = {"str": "string", "int": "integer", "bool": "boolean", "number": "number", "model": "object",
               "list": "array", "dict": "object"}


def _schema_of(kind: Kind, doc: str = "") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    if kind.enum:
        out["enum"] = [*kind.enum, None] if kind.nullable else list(kind.enum)
    elif kind.tag != "any":
        name = _JSON_TYPES[kind.tag]
        out["type"] = [name, "null"] if kind.nullable else name
    if kind.pattern:
        out["pattern"] = kind.pattern
    if doc:
        out["description"] = doc
    if kind.tag == "model":
        assert kind.model is not None
        out.update(_object_schema(kind.model))
    elif kind.tag == "list":
        assert kind.item is not None
        out["items"] = _schema_of(kind.item)
    elif kind.tag == "dict" and kind.item is not None and kind.item.tag != "any":
        out["additionalProperties"] = _schema_of(kind.item)
    return out


def _object_schema(cls: type) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    required = [f.name for f, _ in fields_of(cls) if f.metadata.get("required")]
    if required:
        out["required"] = required
    out["properties"] = {f.name: _schema_of(k, f.metadata.get("doc", "")) for f, k in fields_of(cls)}
    return out


def json_schema() -> Dict[str, Any]:
    """The JSON Schema of a snapshot document, as `envdoctor/data/snapshot.schema.json` holds it."""
    body = _object_schema(_s.Snapshot)
    props = {"schema": {"const": _s.SCHEMA}, **body["properties"],
             "partial": {"type": "object", "description": PARTIAL_DESCRIPTION,
                         "additionalProperties": {"type": "string"}},
             "absent": {"type": ["object", "null"], "description": ABSENT_DESCRIPTION,
                        "additionalProperties": {"type": "string"}}}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": _s.SCHEMA, "title": TITLE,
            "description": DESCRIPTION, "type": "object", "required": ["schema", *body["required"]],
            "properties": props}


def schema_text() -> str:
    """The schema file's text."""
    import json

    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


# --- the decoders ----------------------------------------------------------------------------------------
# The generated code keeps the common case fast: a value is checked by one type test and kept as it is; a
# path is built only for a null (to find its reason in `absent`), a missing field, or an error.

DECODERS_FILE = "snapshot_decoders.py"

_TESTS = {  # the common case, and the rare one that jsonschema accepts too
    "str": ("isinstance({v}, str)", ""),
    "int": ("type({v}) is int", "_isint({v})"),
    "bool": ("({v} is True or {v} is False)", ""),
    "number": ("(type({v}) is float or type({v}) is int)", "_isnum({v})"),
}

_PLAIN = {"str": "str", "int": "int", "bool": "bool"}

_HEADER = '''"""Decoders of the snapshot's JSON, one per section class: GENERATED from envdoctor/snapshot.py by
`python -m envdoctor.snapshot_codec --write` (envdoctor/snapshot_codec.py writes them). Do not edit.

`decode(body, absent)` checks every value the schema describes and builds the model in one pass; it raises
`Invalid` at the first value the schema refuses.
"""

# ruff: noqa: E501
from __future__ import annotations

import functools
import re
from typing import Any, Dict

from envdoctor import snapshot as _s

_M = object()
_NOT_REPORTED = _s.NOT_REPORTED
_new = object.__new__
_NONE = type(None)
# Markers are immutable: one per reason text serves every snapshot of a fleet.
_marker = functools.lru_cache(maxsize=8192)(_s._marker)


class Invalid(ValueError):
    """The path of the first value the schema refuses (`gpus.1.compute_capability`)."""


class _Refused(Exception):
    pass


def _isint(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _isnum(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _null(ab: Dict[str, str], path: str, default: Any) -> Any:
    why = ab.get(path)
    return default if why is None else _marker(why)


def decode(body: Dict[str, Any], absent: Dict[str, str]) -> _s.Snapshot:
    """The Snapshot of a document's body (every key but `schema`, `partial` and `absent`, whose values are strings)."""
    try:
        return _dec_Snapshot(body, absent, "")
    except _Refused as exc:
        raise Invalid(str(exc.args[0]).rstrip(".") or "(top level)") from None
'''

_LITERALS = (type(None), bool, int, float, str)


class _Gen:
    """Writes the source of one decoder function per model class."""

    def __init__(self) -> None:
        self.names: Dict[type, str] = {}
        self.consts: Dict[str, str] = {}  # name -> source of its value
        self.funcs: List[str] = []
        self.n = 0

    def const(self, source: str) -> str:
        for name, text in self.consts.items():
            if text == source:
                return name
        name = f"_c{len(self.consts)}"
        self.consts[name] = source
        return name

    def default(self, f: dataclasses.Field) -> str:
        if f.default_factory is not dataclasses.MISSING:
            factory = f.default_factory
            if factory in (list, dict):
                return f"{factory.__name__}()"
            assert getattr(_s, factory.__name__, None) is factory, factory
            return f"_s.{factory.__name__}()"
        value = f.default
        for name in ("NOT_PROBED", "NOT_RECORDED", "NOT_REPORTED"):
            if value is getattr(_s, name):
                return f"_s.{name}"
        assert type(value) in _LITERALS, (f.name, value)
        return repr(value)

    def tmp(self, stem: str) -> str:
        self.n += 1
        return f"{stem}{self.n}"

    def decoder(self, cls: type) -> str:
        if cls not in self.names:
            assert getattr(_s, cls.__name__, None) is cls, cls
            self.names[cls] = f"_dec_{cls.__name__}"
            self._write(cls)
        return self.names[cls]

    def value(self, kind: Kind, v: str, out: str, path: str, pad: str,
              on_none: Optional[List[str]] = None) -> List[str]:
        """Lines that check `v` (a name holding a value) and assign its model value to `out`, the common case
        first. `path` is an expression for the value's path, evaluated only for a null or an error; `on_none`
        replaces the lines for a null (a field tells a null from a missing key there)."""
        if kind.tag == "any":
            return [f"{pad}{out} = {v} if {v} is not None else _null(ab, {path}, _NOT_REPORTED)"]
        fast, slow = self.tests(kind, v)
        lines = [f"{pad}if {fast}:", *self.convert(kind, v, out, path, pad + "    "), f"{pad}elif {v} is None:"]
        lines += on_none if on_none is not None else self.null(kind, out, path, pad + "    ")
        if slow:  # a subclass of int or float (not bool), as jsonschema takes it; never from json.loads
            lines += [f"{pad}elif {slow}:", f"{pad}    {out} = {v}"]
        lines += [f"{pad}else:", f"{pad}    raise _Refused({path})"]
        return lines

    @staticmethod
    def null(kind: Kind, out: str, path: str, pad: str) -> List[str]:
        if not kind.nullable:
            return [f"{pad}raise _Refused({path})"]
        default = "None" if kind.null_is_none else "_NOT_REPORTED"
        return [f"{pad}w = ab.get({path}) if ab else None", f"{pad}{out} = {default} if w is None else _marker(w)"]

    def tests(self, kind: Kind, v: str) -> Tuple[str, str]:
        """The test of the common case (an exact type), and of the rare one (a subclass) or ''."""
        if kind.tag not in _TESTS:
            return f"isinstance({v}, {'list' if kind.tag == 'list' else 'dict'})", ""
        fast, slow = _TESTS[kind.tag]
        more = ""
        if kind.enum:
            more += f" and {v} in {self.const(f'frozenset({sorted(kind.enum)!r})')}"
        if kind.pattern:
            more += f" and {self.const(f're.compile({kind.pattern!r}).search')}({v}) is not None"
        return (f"{fast.format(v=v)}{more}", f"{slow.format(v=v)}{more}" if slow else "")

    def convert(self, kind: Kind, v: str, out: str, path: str, pad: str) -> List[str]:
        if kind.tag in _TESTS:
            return [f"{pad}{out} = {v}"]
        if kind.tag == "model":
            assert kind.model is not None
            prefix = f"{path[:-1]}.'" if path.endswith("'") else f"{path} + '.'"  # pre + 'host.'
            return [f"{pad}{out} = {self.decoder(kind.model)}({v}, ab, {prefix})"]
        item = kind.item
        assert item is not None
        lines: List[str] = []
        values = v if kind.tag == "list" else f"{v}.values()"
        if item.tag in _PLAIN and not item.enum and not item.pattern:
            # Every item of an exact plain type: a copy will do, with the reason of each null looked up.
            types = [_PLAIN[item.tag]] + (["_NONE"] if item.nullable else [])
            fast = f"set(map(type, {values})) <= {self.const('{' + ', '.join(types) + '}')}"
            lines += [f"{pad}if {fast}:", f"{pad}    {out} = {v}[:]" if kind.tag == "list" else f"{pad}    {out} = dict({v})"]
            if item.nullable:
                default = "None" if item.null_is_none else "_NOT_REPORTED"
                k = self.tmp("k")
                keys = f"enumerate({v})" if kind.tag == "list" else f"{v}.items()"
                key = f"str({k})" if kind.tag == "list" else k
                lines += [f"{pad}    if {'ab and ' if item.null_is_none else ''}None in {values}:",
                          f"{pad}        for {k}, w in {keys}:",
                          f"{pad}            if w is None:",
                          f"{pad}                {out}[{k}] = _null(ab, {path} + '.' + {key}, {default})"]
            lines.append(f"{pad}else:")
            pad += "    "
        if kind.tag == "list":
            i, x, acc = self.tmp("i"), self.tmp("x"), self.tmp("l")
            lines += [f"{pad}{acc} = []", f"{pad}for {i}, {x} in enumerate({v}):"]
            lines += self.value(item, x, x, f"{path} + '.' + str({i})", pad + "    ")
            lines += [f"{pad}    {acc}.append({x})", f"{pad}{out} = {acc}"]
            return lines
        k, x, acc = self.tmp("k"), self.tmp("x"), self.tmp("m")
        lines += [f"{pad}{acc} = {{}}", f"{pad}for {k}, {x} in {v}.items():"]
        lines += self.value(item, x, x, f"{path} + '.' + {k}", pad + "    ")
        lines += [f"{pad}    {acc}[{k}] = {x}", f"{pad}{out} = {acc}"]
        return lines

    def _write(self, cls: type) -> None:
        fields = fields_of(cls)
        body = [f"def {self.names[cls]}(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.{cls.__name__}:",
                "    g = d.get", "    miss = 0"]
        for n, (f, kind) in enumerate(fields):
            var, key = f"f{n}", repr(f.name)
            path = f"pre + {key}"
            if f.metadata.get("required"):
                missing = [f"            raise _Refused({path})"]
            else:
                default = self.default(f)
                missing = ["            miss += 1", f"            {var} = _null(ab, {path}, {default}) if ab else {default}"]
            on_none = [f"        if {key} in d:", *self.null(kind, var, path, "            "), "        else:", *missing]
            body.append(f"    v = g({key})")
            body += self.value(kind, "v", var, path, "    ", on_none)
        known = self.const(f"frozenset({[f.name for f, _ in fields]!r})")
        body.append(f"    if len(d) + miss != {len(fields)}:")
        body.append(f"        ex = {{k: w for k, w in d.items() if k not in {known}}}")
        body.append("    else:")
        body.append("        ex = {}")
        body.append(f"    o = _new(_s.{cls.__name__})")
        pairs = ", ".join(f"{f.name!r}: f{n}" for n, (f, _) in enumerate(fields))
        body.append(f"    o.__dict__ = {{'extra': ex, {pairs}}}")
        body.append("    return o")
        self.funcs.append("\n".join(body))


def decoders_text() -> str:
    """The source of `envdoctor/snapshot_decoders.py`."""
    gen = _Gen()
    gen.decoder(_s.Snapshot)
    consts = "".join(f"{name} = {text}\n" for name, text in gen.consts.items())
    return _HEADER + "\n\n" + consts + "\n\n" + "\n\n\n".join(gen.funcs) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    """`--write`: rewrite the schema file and the decoders from the types; `--check`: exit 1 when either is stale."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m envdoctor.snapshot_codec", description=main.__doc__)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    here = Path(__file__).resolve().parent
    files = {here / "data" / SCHEMA_FILE: schema_text(), here / DECODERS_FILE: decoders_text()}
    stale = [path for path, text in files.items() if not path.exists() or path.read_text(encoding="utf-8") != text]
    if args.write:
        for path in stale:
            path.write_text(files[path], encoding="utf-8")
            print(f"wrote {path}")
        return 0
    for path in stale:
        print(f"{path} is not current: run python -m envdoctor.snapshot_codec --write")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())
