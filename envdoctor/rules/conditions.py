"""The one condition language of envdoctor's rules (machine rules and NCCL context rules): small,
declarative JSON, checked on load, evaluated without eval.

A condition is one of:
  {"all": [c, ...]}  {"any": [c, ...]}  {"not": c}
  {"present": "path"}  {"absent": "path"}  {"unknown": "path"}  {"failed": "path"}
  {"eq": ["path", value]}  {"ne": [...]}  {"lt"|"le"|"gt"|"ge": ["path", number]}
  {"in": ["path", [values]]}  {"contains": ["path", value]}  {"matches": ["path", "regex"]}
  {"version": ["path", "specifier"]}  {"len": ["path", "lt"|"le"|"eq"|"ge"|"gt", n]}
  {"some": {"in": "path-to-list", "as": "name", "where": c}}
  {"predicate": "name"}  (a named, tested Python function; it may bind names for the templates)
  {"signal": "id" | ["id", ...]}  (NCCL context rules: a signature matched a line of the log)
Paths are dotted: `torch.cuda`, `gpu.pcie.gen`, `env.NCCL_P2P_DISABLE`. The first part is a snapshot
section, a name bound by `for_each` / `some`, or `log` (NCCL context rules: the facts read from the log).

Unknown is not a fact. A comparison on a missing, absent or null value is *unknown*, and so is every
condition built on one: `not` of unknown is unknown, `all` is unknown unless some part is false, `any`
unless some part is true. A rule holds only when its condition is true, so an unknown never satisfies
`eq`, `ne`, `lt`, `matches`, ... nor their negation. `present` / `absent` / `unknown` / `failed` ask about
the value itself and are always known: `absent` means known not to exist (Unavailable, a missing key of a
whole mapping), `unknown` means nobody knows (not probed, not reported, the probe failed: `failed` is the
last only; a key or item a partial list or map lacks: `snapshot.PartialMap`), and an unknown value is
neither present nor absent; on a partial list `some` is true or unknown, `contains` true or unknown, `len`
known only where more items could not change it. A predicate decides for itself (it returns a false value
when it cannot tell). `matches` is case-sensitive (write `(?i)` for a case-insensitive pattern).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import operator
import re
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Collection, Dict, List, Mapping, Optional, Set, Tuple, Union

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from envdoctor.snapshot import (
    Model,
    ProbeFailed,
    Snapshot,
    Unavailable,
    Unknown,
    is_absent,
    is_unknown,
    lookup,
    partial_reason,
    present,
)
from envdoctor.versions import parse

if TYPE_CHECKING:
    from envdoctor.rules.tables import Tables
    from envdoctor.wheels.index import WheelIndex

_MISSING = Unavailable("no such field here")
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "contains", "matches", "version")
_CMP: Dict[str, Callable[[Any, Any], bool]] = {
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq,
}


@dataclass
class Context:
    """What a rule sees: the snapshot (None when there is none), names bound by for_each/some, the knowledge
    passed in, and for NCCL context rules the log's signals and facts (bound as `log`)."""

    snapshot: Optional[Snapshot]
    bound: Dict[str, Any] = field(default_factory=dict)
    tables: Optional[Tables] = None
    index: Optional[WheelIndex] = None
    signals: Mapping[str, Any] = field(default_factory=dict)  # signature id -> its hits, for matched ones
    log: Any = None  # the NcclFacts the log's lines gave

    def child(self, **names: Any) -> Context:
        return dataclasses.replace(self, bound={**self.bound, **names})

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
        return lookup(value, part)  # a key a partial map lacks is unknown, not absent
    if isinstance(value, list) and part.isdigit():
        return lookup(value, int(part))
    return _MISSING


# --- the predicate registry -----------------------------------------------------------------

PREDICATES: Dict[str, Callable[[Context], Any]] = {}
OUTPUTS: Dict[str, Tuple[str, ...]] = {}  # predicate -> names it binds (checked against the templates on load)
READS_LOG: Set[str] = set()  # predicates of NCCL context rules: they read the log's facts (ctx.log)
READS_TABLES: Dict[str, Tuple[str, ...]] = {}  # predicate -> the compatibility tables it reads (ctx.tables)


def predicate(*outputs: str, log: bool = False,
              reads: Tuple[str, ...] = ()) -> Callable[[Callable[[Context], Any]], Callable[[Context], Any]]:
    """Register a named predicate. It returns a false value (no), an `Unknown(why)` (cannot tell: the
    condition is unknown, and so is its `not`) or True, or a dict of the names it binds for the templates;
    the key "evidence" (a list of lines) says what it rests on. `reads` names the tables (rules/tables/NAME.json)
    it reads from ctx.tables: `rules explain` shows them with every rule whose condition names it."""
    clash = set(outputs) & ({f.name for f in dataclasses.fields(Snapshot)} | {"evidence"})
    if clash:  # a template name must mean one thing
        raise ValueError(f"predicate outputs {sorted(clash)} would hide snapshot sections or the evidence")

    def deco(fn: Callable[[Context], Any]) -> Callable[[Context], Any]:
        if fn.__name__ in PREDICATES:
            raise ValueError(f"predicate {fn.__name__!r} is defined twice")
        PREDICATES[fn.__name__] = fn
        OUTPUTS[fn.__name__] = outputs
        READS_TABLES[fn.__name__] = reads
        if log:
            READS_LOG.add(fn.__name__)
        return fn

    return deco


def predicates_named(cond: Any) -> List[str]:
    """The predicates a condition names, in order."""
    if isinstance(cond, dict):
        out: List[str] = []
        for op, arg in cond.items():
            if op == "predicate" and isinstance(arg, str):
                out.append(arg)
            elif isinstance(arg, (dict, list)):
                out += predicates_named(arg)
        return out
    if isinstance(cond, list):
        return [p for c in cond for p in predicates_named(c)]
    return []


def tables_read(cond: Any) -> List[str]:
    """The tables the predicates of a condition read (their `reads`), each once."""
    return list(dict.fromkeys(t for p in predicates_named(cond) for t in READS_TABLES.get(p, ())))


def predicates_for(log: bool) -> Dict[str, Callable[[Context], Any]]:
    """The predicates machine rules (log=False) or NCCL context rules (log=True) may name."""
    return {k: v for k, v in PREDICATES.items() if (k in READS_LOG) is log}


# --- load-time checking ---------------------------------------------------------------------


@functools.cache
def _hints(model: type) -> Dict[str, Any]:
    """A model's resolved field types (resolving them is most of the cost of checking a rules database)."""
    return typing.get_type_hints(model)


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
            tp = _hints(tp)[part]
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
        args = [a for a in typing.get_args(tp) if a not in (Unavailable, ProbeFailed, Unknown, type(None))]
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


def check_condition(cond: Any, roots: Dict[str, Any], predicates: Mapping[str, Any],
                    signals: Optional[Collection[str]] = None) -> List[str]:
    """Every problem in a condition, as 'where: what' strings. `signals`: the signature ids a condition
    may name (NCCL context rules); None where `signal` is not allowed."""
    errors: List[str] = []
    if not isinstance(cond, dict) or len(cond) != 1:
        return [f"a condition is an object with exactly one operator, got {cond!r}"[:200]]
    (op, arg), = cond.items()
    if op in ("all", "any"):
        if not isinstance(arg, list) or not arg:
            return [f"'{op}' takes a non-empty list"]
        for sub in arg:
            errors += check_condition(sub, roots, predicates, signals)
    elif op == "not":
        errors += check_condition(arg, roots, predicates, signals)
    elif op in ("present", "absent", "unknown", "failed"):
        errors += _opt(check_path(arg, roots))
    elif op in COMPARISONS:
        if not isinstance(arg, list) or len(arg) != 2:
            return [f"'{op}' takes [path, value]"]
        errors += _opt(check_path(arg[0], roots))
        if op in ("lt", "le", "gt", "ge") and (isinstance(arg[1], bool) or not isinstance(arg[1], (int, float))):
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
        if not isinstance(arg, list) or len(arg) != 3 or not isinstance(arg[1], str) or arg[1] not in _CMP \
                or not isinstance(arg[2], int):
            return ["'len' takes [path, lt|le|eq|ge|gt, integer]"]
        errors += _opt(check_path(arg[0], roots))
    elif op == "some":
        if not isinstance(arg, dict) or set(arg) != {"in", "as", "where"} or not isinstance(arg["as"], str):
            return ["'some' takes {in: path, as: name, where: condition}"]
        err = check_path(arg["in"], roots)
        if err:
            return [err]
        head, *rest = arg["in"].split(".")
        tp, _ = field_type(roots[head], rest) if head in roots else field_type(Snapshot, [head, *rest])
        item = list_item_type(tp)
        if item is None:
            return [f"'some' needs a list, and '{arg['in']}' is not one"]
        errors += check_condition(arg["where"], {**roots, arg["as"]: item}, predicates, signals)
    elif op == "predicate":
        if not isinstance(arg, str):
            errors.append(f"a predicate is named by a string, not {json.dumps(arg)[:40]}")
        elif arg not in predicates:
            errors.append(f"unknown predicate '{arg}' (known: {', '.join(sorted(predicates))})")
    elif op == "signal":
        names = arg if isinstance(arg, list) else [arg]
        if signals is None:
            errors.append("'signal' is for NCCL context rules (a signature matched the log)")
        elif not names or not all(isinstance(n, str) for n in names):
            errors.append("'signal' takes a signature id or a non-empty list of them")
        else:
            errors += [f"unknown signature {n!r}" for n in names if n not in signals]
    else:
        errors.append(f"unknown operator '{op}'")
    return errors


def _opt(err: Optional[str]) -> List[str]:
    return [err] if err else []


# --- evaluation -----------------------------------------------------------------------------


@dataclass
class Found:
    """What a true condition found: names for the templates and evidence lines (predicates and comparisons)."""

    bindings: Dict[str, Any] = field(default_factory=dict)
    evidence: List[str] = field(default_factory=list)

    def take(self, other: Found) -> None:
        self.bindings.update(other.bindings)
        self.evidence.extend(other.evidence)


Truth = Optional[bool]  # None: unknown


def holds(cond: Mapping[str, Any], ctx: Context, predicates: Mapping[str, Callable[[Context], Any]],
          found: Optional[Found] = None) -> bool:
    """Is a (validated) condition true? Unknown is not true. What it found goes into `found`."""
    return evaluate(cond, ctx, predicates, found if found is not None else Found()) is True


def evaluate(cond: Mapping[str, Any], ctx: Context, predicates: Mapping[str, Callable[[Context], Any]],
             found: Found) -> Truth:
    """True, False or None (unknown); `found` gains bindings and evidence only from parts that are true."""
    (op, arg), = cond.items()
    if op == "all":
        scratch, unknown = Found(), False
        for c in arg:
            t = evaluate(c, ctx, predicates, scratch)
            if t is False:
                return False
            unknown |= t is None
        if unknown:
            return None
        found.take(scratch)
        return True
    if op == "any":
        unknown = False
        for c in arg:
            scratch = Found()
            t = evaluate(c, ctx, predicates, scratch)
            if t is True:
                found.take(scratch)
                return True
            unknown |= t is None
        return None if unknown else False
    if op == "not":
        t = evaluate(arg, ctx, predicates, Found())
        return None if t is None else not t
    if op == "present":
        return present(ctx.resolve(arg))
    if op == "absent":
        return isinstance(ctx.resolve(arg), Unavailable)
    if op == "unknown":
        return is_unknown(ctx.resolve(arg))
    if op == "failed":
        return isinstance(ctx.resolve(arg), ProbeFailed)
    if op == "signal":
        return any(n in ctx.signals for n in (arg if isinstance(arg, list) else [arg]))
    if op == "predicate":
        result = predicates[arg](ctx)
        if isinstance(result, dict):
            found.evidence.extend(result.get("evidence") or [])
            found.bindings.update((k, v) for k, v in result.items() if k != "evidence")
            return True
        if is_unknown(result):
            return None  # the predicate cannot tell: `not` of it is unknown too
        return bool(result)
    if op == "some":
        items = ctx.resolve(arg["in"])
        if not present(items):
            return None
        unknown = False
        for item in items:
            local = Found()
            t = evaluate(arg["where"], ctx.child(**{arg["as"]: item}), predicates, local)
            if t is True:
                found.take(local)
                found.bindings.setdefault(arg["as"], item)
                return True
            unknown |= t is None
        return None if unknown or partial_reason(items) is not None else False
    if op == "len":
        value = ctx.resolve(arg[0])
        if not present(value):
            return None
        t = _CMP[arg[1]](len(value), arg[2])
        grows = {"ge": t, "gt": t, "lt": not t, "le": not t, "eq": len(value) > arg[2]}  # answers more items keep
        if partial_reason(value) is None or grows[arg[1]]:
            return t
        return None  # a partial list has at least the items it holds: more could change the answer
    path, expected = arg
    value = ctx.resolve(path)
    if not present(value):
        return None
    t = _compare(op, value, expected)
    if partial_reason(value) is not None and not (op == "contains" and t):
        return None  # a partial list or map: only an item it holds is a fact
    if t:
        head, _, rest = path.partition(".")
        label = f"log: {rest}" if head == "log" and "log" in ctx.bound else f"snapshot: {path}"
        found.evidence.append(f"{label} = {_show(value)}")
    return t


def _compare(op: str, value: Any, expected: Any) -> Truth:
    if op == "eq":
        return value == expected
    if op == "ne":
        return value != expected
    if op == "in":
        return value in expected
    if op == "contains":
        try:
            return expected in value
        except TypeError:
            return None
    if op == "matches":
        return re.search(expected, str(value)) is not None
    if op == "version":
        v = parse(value)
        return None if v is None else SpecifierSet(expected).contains(v.base_version, prereleases=True)
    if isinstance(value, bool):
        return None  # a yes/no is not a number
    try:
        return _CMP[op](float(value), float(expected))
    except (TypeError, ValueError):
        return None


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple, set)):
        return ", ".join(str(v) for v in value)
    return str(value)
