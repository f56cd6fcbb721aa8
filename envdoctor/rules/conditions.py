"""The rules' condition language: small, declarative JSON, checked on load, evaluated without eval.

A condition is one of:
  {"all": [c, ...]}  {"any": [c, ...]}  {"not": c}
  {"present": "path"}  {"absent": "path"}  {"failed": "path"}
  {"eq": ["path", value]}  {"ne": [...]}  {"lt"|"le"|"gt"|"ge": ["path", number]}
  {"in": ["path", [values]]}  {"matches": ["path", "regex"]}  {"version": ["path", "specifier"]}
  {"len": ["path", "lt"|"le"|"eq"|"ge"|"gt", n]}
  {"some": {"in": "path-to-list", "as": "name", "where": c}}
  {"predicate": "name"}  (a named, tested Python function; it may bind names for the templates)
Paths are dotted: `torch.cuda`, `gpu.pcie.gen`, `env.NCCL_P2P_DISABLE`. The first part is a
snapshot section or a name bound by `for_each` / `some`. A missing or absent value never matches
a comparison; `present` / `absent` ask about it directly.
"""

from __future__ import annotations

import dataclasses
import operator
import re
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from envdoctor.snapshot import Model, ProbeFailed, Snapshot, Unavailable, is_absent, present
from envdoctor.versions import parse

if TYPE_CHECKING:
    from envdoctor.rules.tables import Tables
    from envdoctor.wheels.index import WheelIndex

_MISSING = Unavailable("no such field here")
_CMP: Dict[str, Callable[[Any, Any], bool]] = {
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq,
}


@dataclass
class Context:
    """What a machine rule sees: the snapshot, names bound by for_each/some, and the knowledge passed in."""

    snapshot: Snapshot
    bound: Dict[str, Any] = field(default_factory=dict)
    tables: Optional[Tables] = None
    index: Optional[WheelIndex] = None

    def child(self, **names: Any) -> Context:
        return Context(self.snapshot, {**self.bound, **names}, self.tables, self.index)

    def resolve(self, path: str) -> Any:
        head, *rest = path.split(".")
        if head in self.bound:
            value = self.bound[head]
        else:
            value = getattr(self.snapshot, head, _MISSING)
        for part in rest:
            value = _step(value, part)
        return value


def _step(value: Any, part: str) -> Any:
    if is_absent(value) or value is None:
        return value if is_absent(value) else _MISSING
    if isinstance(value, Model):
        return getattr(value, part, _MISSING)
    if isinstance(value, dict):
        return value.get(part, _MISSING)
    if isinstance(value, list) and part.isdigit():
        idx = int(part)
        return value[idx] if idx < len(value) else _MISSING
    return _MISSING


# --- load-time checking ---------------------------------------------------------------------


def field_type(root: Any, parts: List[str]) -> Tuple[Any, Optional[str]]:
    """Walk the model's type hints along `parts`; return (type, error)."""
    tp = root
    for i, part in enumerate(parts):
        tp = _strip(tp)
        origin = typing.get_origin(tp)
        if isinstance(tp, type) and issubclass(tp, Model):
            names = {f.name for f in dataclasses.fields(tp)} - {"extra"}
            if part not in names:
                return None, f"'{part}' is not a field of {tp.__name__} (fields: {', '.join(sorted(names))})"
            tp = typing.get_type_hints(tp)[part]
        elif origin in (dict, Dict):
            args = typing.get_args(tp)
            tp = args[1] if args else Any
        elif origin in (list, List):
            if not part.isdigit():
                return None, f"'{part}' indexes a list: use a number, or iterate it with for_each/some"
            (tp,) = typing.get_args(tp) or (Any,)
        elif tp is Any:
            return Any, None
        else:
            return None, f"'{'.'.join(parts[:i])}' is a {getattr(tp, '__name__', tp)}, it has no '{part}'"
    return _strip(tp), None


def _strip(tp: Any) -> Any:
    if typing.get_origin(tp) is Union:
        args = [a for a in typing.get_args(tp) if a not in (Unavailable, ProbeFailed, type(None))]
        return args[0] if len(args) == 1 else Any
    return tp


def list_item_type(tp: Any) -> Any:
    tp = _strip(tp)
    if typing.get_origin(tp) in (list, List):
        (item,) = typing.get_args(tp) or (Any,)
        return _strip(item)
    return None


def check_path(path: Any, roots: Dict[str, Any]) -> Optional[str]:
    if not isinstance(path, str) or not path:
        return f"a field path must be a non-empty string, got {path!r}"
    head, *rest = path.split(".")
    if head in roots:
        _, err = field_type(roots[head], rest)
    else:
        _, err = field_type(Snapshot, [head, *rest])
    return f"unknown field path '{path}': {err}" if err else None


def check_condition(cond: Any, roots: Dict[str, Any], predicates: Dict[str, Any]) -> List[str]:
    """Every problem in a condition, as 'where: what' strings."""
    errors: List[str] = []
    if not isinstance(cond, dict) or len(cond) != 1:
        return [f"a condition is an object with exactly one operator, got {cond!r}"[:200]]
    (op, arg), = cond.items()
    if op in ("all", "any"):
        if not isinstance(arg, list) or not arg:
            return [f"'{op}' takes a non-empty list"]
        for sub in arg:
            errors += check_condition(sub, roots, predicates)
    elif op == "not":
        errors += check_condition(arg, roots, predicates)
    elif op in ("present", "absent", "failed"):
        errors += _opt(check_path(arg, roots))
    elif op in ("eq", "ne", "lt", "le", "gt", "ge", "in", "matches", "version"):
        if not isinstance(arg, list) or len(arg) != 2:
            return [f"'{op}' takes [path, value]"]
        errors += _opt(check_path(arg[0], roots))
        if op in ("lt", "le", "gt", "ge") and not isinstance(arg[1], (int, float)):
            errors.append(f"'{op}' compares with a number, got {arg[1]!r}")
        if op == "in" and not isinstance(arg[1], list):
            errors.append("'in' takes a list of values")
        if op == "matches":
            try:
                re.compile(arg[1])
            except (re.error, TypeError) as exc:
                errors.append(f"bad regular expression {arg[1]!r}: {exc}")
        if op == "version":
            try:
                SpecifierSet(arg[1])
            except (InvalidSpecifier, TypeError):
                errors.append(f"bad version specifier {arg[1]!r}")
    elif op == "len":
        if not isinstance(arg, list) or len(arg) != 3 or arg[1] not in _CMP or not isinstance(arg[2], int):
            return ["'len' takes [path, lt|le|eq|ge|gt, integer]"]
        errors += _opt(check_path(arg[0], roots))
    elif op == "some":
        if not isinstance(arg, dict) or set(arg) != {"in", "as", "where"}:
            return ["'some' takes {in: path, as: name, where: condition}"]
        err = check_path(arg["in"], roots)
        if err:
            return [err]
        head, *rest = arg["in"].split(".")
        tp, _ = field_type(roots[head], rest) if head in roots else field_type(Snapshot, [head, *rest])
        item = list_item_type(tp)
        if item is None:
            return [f"'some' needs a list, and '{arg['in']}' is not one"]
        errors += check_condition(arg["where"], {**roots, arg["as"]: item}, predicates)
    elif op == "predicate":
        if arg not in predicates:
            errors.append(f"unknown predicate '{arg}' (known: {', '.join(sorted(predicates))})")
    else:
        errors.append(f"unknown operator '{op}'")
    return errors


def _opt(err: Optional[str]) -> List[str]:
    return [err] if err else []


# --- evaluation -----------------------------------------------------------------------------


def evaluate(cond: Dict[str, Any], ctx: Context, predicates: Dict[str, Any], bindings: Dict[str, Any]) -> bool:
    (op, arg), = cond.items()
    if op == "all":
        return all(evaluate(c, ctx, predicates, bindings) for c in arg)
    if op == "any":
        return any(evaluate(c, ctx, predicates, bindings) for c in arg)
    if op == "not":
        return not evaluate(arg, ctx, predicates, {})
    if op == "present":
        return present(ctx.resolve(arg))
    if op == "absent":
        value = ctx.resolve(arg)
        return is_absent(value) or value is None
    if op == "failed":
        return isinstance(ctx.resolve(arg), ProbeFailed)
    if op == "predicate":
        result = predicates[arg](ctx)
        if isinstance(result, dict):
            bindings.update(result)
            return True
        return bool(result)
    if op == "some":
        items = ctx.resolve(arg["in"])
        if not present(items):
            return False
        for item in items:
            local: Dict[str, Any] = {}
            if evaluate(arg["where"], ctx.child(**{arg["as"]: item}), predicates, local):
                bindings.update(local)
                bindings.setdefault(arg["as"], item)
                return True
        return False
    if op == "len":
        value = ctx.resolve(arg[0])
        return present(value) and _CMP[arg[1]](len(value), arg[2])
    path, expected = arg
    value = ctx.resolve(path)
    if not present(value):
        return False
    if op == "eq":
        return value == expected
    if op == "ne":
        return value != expected
    if op == "in":
        return value in expected
    if op == "matches":
        return re.search(expected, str(value), re.I) is not None
    if op == "version":
        v = parse(value)
        return v is not None and SpecifierSet(expected).contains(v.base_version, prereleases=True)
    try:
        return _CMP[op](float(value), float(expected))
    except (TypeError, ValueError):
        return False
