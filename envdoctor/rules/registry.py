"""Load `rules/*.json` and check every rule; all problems are reported at once (file, rule, field)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import envdoctor.rules.compile_predicates  # (registers torch.compile readiness predicates)
import envdoctor.rules.cuda_wanted_predicates  # (what the software asked of CUDA, against the machine)
import envdoctor.rules.ecosystem_predicates  # (registers the ecosystem rules' predicates)
import envdoctor.rules.health_predicates  # (registers the GPU health rules' predicates)
import envdoctor.rules.predicates
import envdoctor.rules.runtime_predicates  # noqa: F401  (what torch, CUDA and DeepSpeed said)
from envdoctor import data_schemas
from envdoctor.bounded_read import read_bytes
from envdoctor.data_files import data_path, decode_json, files_key
from envdoctor.errors import InputError
from envdoctor.findings import SAFETIES, SEVERITIES
from envdoctor.fixes import action_problems
from envdoctor.rules.checks import Checks, checks_dir, load_checks
from envdoctor.rules.conditions import (
    OUTPUTS,
    check_condition,
    check_path,
    field_type,
    list_item_type,
    predicates_for,
    predicates_named,
    tables_read,
)
from envdoctor.rules.drift import NEEDED, READERS
from envdoctor.rules.fixtures import Fixture, base_name
from envdoctor.rules.tables import Tables, load_tables
from envdoctor.snapshot import Snapshot
from envdoctor.validation_cache import NO_CACHE, ValidationCache, file_bytes, fingerprint

REQUIRED = ("id", "name", "category", "severity", "status", "since", "title", "detail", "fix", "fix_safety",
            "when", "explanation", "fixtures")
OPTIONAL = ("for_each", "subjects", "fix_action", "references", "escalate", "group_title")
STATUSES = ("preview", "stable", "deprecated", "removed")
EXPLANATION_SECTIONS = ("what", "why")
_ID = re.compile(r"^ED\d{3}$")
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_CATEGORY = re.compile(r"^[a-z][a-z0-9_]*$")
TEMPLATE_NAME = re.compile(r"\{([A-Za-z_][\w.]*)(?:\|(gib|mib|list|count))?\}")


@dataclass
class Rule:
    id: str
    name: str
    category: str
    severity: str
    status: str
    since: str
    title: str
    detail: str
    fix: str
    fix_safety: str
    when: Dict[str, Any]
    explanation: Dict[str, str]
    fixtures: Dict[str, List[Fixture]]  # "fires" / "quiet": snapshot names, or snapshots derived from one
    source: str
    for_each: Optional[Dict[str, str]] = None
    subjects: List[str] = field(default_factory=list)
    fix_action: Optional[Dict[str, Any]] = None  # {action, arguments, changes}: envdoctor.fixes
    references: List[str] = field(default_factory=list)
    escalate: Optional[Dict[str, Any]] = None
    group_title: Optional[str] = None  # one finding for all matching items instead of one each
    tables: Tuple[str, ...] = ()  # the tables it reads ("shm") or quotes ("nccl_min_for_feature.wsl2"), for `explain`


class RulesError(InputError):
    def __init__(self, problems: List[str]) -> None:
        self.problems = problems
        head = f"invalid rules database: {len(problems)} problem(s)"
        super().__init__(head + "\n  " + "\n  ".join(problems))


def _some_names(cond: Any) -> Dict[str, str]:
    """Names bound by `some` (usable in templates when the rule fires)."""
    found: Dict[str, str] = {}
    if isinstance(cond, dict):
        for op, arg in cond.items():
            if op == "some" and isinstance(arg, dict) and isinstance(arg.get("as"), str):
                found[arg["as"]] = arg.get("in", "")
            if isinstance(arg, (dict, list)):
                found.update(_some_names(arg))
    elif isinstance(cond, list):
        for c in cond:
            found.update(_some_names(c))
    return found


SCHEMA = "rules.schema.json"  # envdoctor/data/: the shape of a rule file and of each rule
# The sentence each field has always been named with when its shape is wrong.
MESSAGES = {
    "id": "id must look like ED123",
    "name": "name must be kebab-case and name the problem",
    "category": "category must be snake_case",
    "severity": f"severity must be one of {', '.join(SEVERITIES)}",
    "status": f"status must be one of {', '.join(STATUSES)}",
    "fix_safety": f"fix_safety must be one of {', '.join(SAFETIES)}",
    "explanation": f"explanation needs text sections {', '.join(EXPLANATION_SECTIONS)}",
    "fixtures": "fixtures needs non-empty 'fires' and 'quiet' lists (snapshot fixture names)",
    "for_each": "for_each takes {in: path, as: name}",
    "escalate": "escalate takes {to: severity, when: condition}",
    "group_title": "group_title needs for_each and must be text",
    **{k: f"{k} must be text" for k in ("title", "detail", "fix")},
    **{k: f"{k} must be a list of text" for k in ("subjects", "references")},
    "fix_action": "fix_action must be an object {action, arguments, changes}",
}


def _template_problems(raw: Dict[str, Any], roots: Dict[str, Any], bad: set, texts: bool = True) -> List[str]:
    """The names a well-shaped rule's templates use that mean nothing: each must be a snapshot path, a
    for_each/some name or a predicate's output (group_title: count, subjects or a snapshot path). `texts`
    False: the group title only."""
    out: List[str] = []
    outputs = {o for p in predicates_named(raw["when"]) if p in OUTPUTS for o in OUTPUTS[p]}
    some = _some_names(raw["when"])
    named = [(k, raw[k]) for k in ("title", "detail", "fix") if k not in bad]
    named += [("subjects", s) for s in raw.get("subjects") or []] if "subjects" not in bad else []
    action = raw.get("fix_action") if "fix_action" not in bad else None
    named += [("fix_action", a) for key in ("arguments", "changes", "requirements")
              for a in (action or {}).get(key, [])]
    group = raw.get("group_title")
    if group is not None and "group_title" not in bad:
        if raw.get("for_each") is None:
            out.append(MESSAGES["group_title"])
        out += [f"group_title: '{{{m.group(1)}}}' must be count, subjects or a snapshot path"
                for m in TEMPLATE_NAME.finditer(group)
                if raw.get("for_each") is not None and m.group(1) not in ("count", "subjects") and check_path(m.group(1), {})]
    for label, text in named if texts else []:
        for m in TEMPLATE_NAME.finditer(text):
            name = m.group(1)
            err = None if name in outputs or name.split(".")[0] in some else check_path(name, roots)
            if err:
                out.append(f"{label}: template '{{{name}}}': {err}")
    return out


def validate_rule(raw: Any, where: str) -> Tuple[Optional[Rule], List[str]]:
    """One rule: its shape against rules.schema.json, then what a schema cannot say (the condition, the
    template names, for_each naming a list, non-empty fixture lists). Every problem, each prefixed by `where`."""
    if not isinstance(raw, dict):
        return None, [f"{where}: a rule is an object"]
    errors = data_schemas.problems(raw, SCHEMA, "rule", where, MESSAGES)
    if any(k not in raw for k in REQUIRED):
        return None, errors  # what is there cannot be checked against what is missing
    bad = set(data_schemas.fields(raw, SCHEMA, "rule"))
    fx = raw["fixtures"]
    if "fixtures" not in bad and (not fx["fires"] or not fx["quiet"]):
        errors.append(f"{where}: {MESSAGES['fixtures']}")
    if "fixtures" not in bad:  # a derived fixture sets snapshot fields that exist
        errors += [f"{where}: fixtures: {base_name(spec)}: {err}" for kind in ("fires", "quiet") for spec in fx[kind]
                   if isinstance(spec, dict) for path in spec["set"] for err in [check_path(path, {})] if err]
    roots: Dict[str, Any] = {}
    each = raw.get("for_each")
    if each is not None and "for_each" not in bad:
        err = check_path(each["in"], {})
        item = list_item_type(field_type(Snapshot, each["in"].split("."))[0]) if not err else None
        if err:
            errors.append(f"{where}: for_each: {err}")
        elif item is None:
            errors.append(f"{where}: for_each: '{each['in']}' is not a list")
        else:
            roots[each["as"]] = item
    machine = predicates_for(log=False)
    when_errors = check_condition(raw["when"], roots, machine)
    errors += [f"{where}: when: {e}" for e in when_errors]
    esc = raw.get("escalate")
    if esc is not None and "escalate" not in bad:
        errors += [f"{where}: escalate: {e}" for e in check_condition(esc["when"], roots, machine)]
    action_errors = action_problems(raw.get("fix_action"), raw["fix_safety"]) if "fix_action" in raw else []
    errors += [f"{where}: fix_action: {e}" for e in action_errors]
    if "fix_action" not in raw and raw["fix_safety"] in ("safe", "unsafe"):
        errors.append(f"{where}: a {raw['fix_safety']} fix needs a fix_action (what `envdoctor fix` would run)")
    # a broken condition binds nothing to check the texts' templates against
    unchecked = bad | ({"fix_action"} if action_errors else set())
    errors += [f"{where}: {e}" for e in _template_problems(raw, roots, unchecked, texts=not when_errors)]
    if errors:
        return None, errors
    return rule_of(raw, where), []


def rule_of(raw: Dict[str, Any], where: str) -> Rule:
    """The Rule of an entry that passed `validate_rule` (now, or in an earlier run over the same bytes)."""
    expl, fx, each, esc = raw["explanation"], raw["fixtures"], raw.get("for_each"), raw.get("escalate")
    return Rule(
        id=raw["id"], name=raw["name"], category=raw["category"], severity=raw["severity"], status=raw["status"],
        since=raw["since"], title=raw["title"], detail=raw["detail"], fix=raw["fix"], fix_safety=raw["fix_safety"],
        when=raw["when"], explanation=expl, fixtures=fx, source=where.split(":")[0], for_each=each,
        subjects=list(raw.get("subjects") or []), fix_action=raw.get("fix_action"),
        references=list(raw.get("references") or []), escalate=esc, group_title=raw.get("group_title"),
    )


def load_rules_from(directory: Path) -> List[Rule]:
    """Every rule of a database, checked; its text may quote the database's tables ({table:name.key})."""
    return _rules_and_tables(directory)[0]


def _rules_and_tables(directory: Path, cache: ValidationCache = NO_CACHE) -> Tuple[List[Rule], Optional[Tables]]:
    """The rules of a database and its tables (None without `tables/`); RulesError lists every problem of both.
    `cache`: where a database whose exact bytes (rule files and tables) already passed is remembered, so that
    its rules are built without checking each again."""
    problems: List[str] = []
    rules: List[Rule] = []
    files = sorted(p for p in directory.glob("*.json"))
    if not files:
        raise RulesError([f"{directory}: no rule files (*.json)"])
    tables: Optional[Tables] = None
    if (directory / "tables").is_dir():
        try:
            tables = load_tables(directory / "tables")
        except InputError as exc:
            problems.append(str(exc))
    contents: List[Tuple[str, bytes]] = []
    readable: List[Tuple[Path, bytes]] = []
    for path in files:
        try:
            data = read_bytes(path)
        except OSError as exc:  # a FIFO, /dev/zero, a file over the cap: named, never read forever
            problems.append(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}")
            continue
        contents.append((f"rules/{path.name}", data))
        readable.append((path, data))
    passed_key = fingerprint("rules", contents + file_bytes(sorted((directory / "tables").glob("*.json")), "tables"))
    trusted = not problems and cache.passed(passed_key)
    for path, data in readable:
        doc, error = decode_json(path, data)
        if error:
            problems.append(error)
            continue
        shape = [] if trusted and isinstance(doc, dict) and isinstance(doc.get("rules"), list) else \
            data_schemas.problems(doc, SCHEMA, where=str(path), skip=("rules[",))
        if shape:  # (each rule is checked below)
            problems += shape
            continue
        for i, raw in enumerate(doc["rules"]):
            label = raw.get("id") if isinstance(raw, dict) and isinstance(raw.get("id"), str) else f"rules[{i}]"
            refs: List[str] = []
            named = Tables.references(raw)
            if tables is not None:
                raw = tables.resolve(raw, refs)
            where = f"{path.name}: {label}"
            rule, errs = (rule_of(raw, where), []) if trusted and not refs else validate_rule(raw, where)
            if rule is not None:
                rule.tables = tuple(dict.fromkeys(named + tables_read([rule.when, (rule.escalate or {}).get("when")])))
            errs += [f"{path.name}: {label}: {r}" for r in refs]
            problems += [f"{path.parent.name}/{e}" for e in errs]
            if rule is not None and not refs:
                rules.append(rule)
    seen: Dict[str, str] = {}
    for r in rules:
        for key in (r.id, r.name):
            if key in seen:
                problems.append(f"rules/{r.source}: {r.id}: '{key}' is also used in {seen[key]}")
            seen[key] = f"{r.source} ({r.id})"
    if problems:
        raise RulesError(problems)
    if not trusted:
        cache.remember(passed_key)
    return sorted(rules, key=lambda r: r.id), tables


@dataclass(frozen=True)
class Rulebook:
    """A rules database: the rules, the compatibility tables they read and the drift checks (what `diagnose`
    compares with a baseline; None in a hand-made book that compares nothing)."""

    rules: Tuple[Rule, ...]
    tables: Tables
    directory: str
    checks: Optional[Checks] = None


_CACHE: Dict[Tuple[str, Tuple[Tuple[str, int, int], ...]], Rulebook] = {}


def load_rulebook(directory: Path, cache: ValidationCache = NO_CACHE) -> Rulebook:
    """Rules, tables and drift checks of one directory (`rules/` or a rule author's copy; without `checks/`, the
    bundled checks); reloaded when a file changes. `cache`: what earlier runs found valid (`_rules_and_tables`)."""
    checks = checks_dir(directory)
    files = sorted(directory.glob("*.json")) + sorted((directory / "tables").glob("*.json")) + sorted(checks.glob("*.json"))
    key = (str(directory), files_key(files))
    book = _CACHE.get(key)
    if book is None:
        rules, tables = _rules_and_tables(directory, cache)
        book = Rulebook(tuple(rules), tables if tables is not None else load_tables(directory / "tables"),
                        str(directory), load_checks(checks, tuple(READERS), NEEDED))
        if len(_CACHE) >= 8:
            _CACHE.clear()
        _CACHE[key] = book
    return book


def load_rules(directory: Optional[Path] = None) -> List[Rule]:
    """The rules of a database (default: the bundled one)."""
    return list(load_rulebook(Path(directory) if directory else data_path("rules")).rules)
