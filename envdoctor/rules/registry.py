"""Load `rules/*.json` and check every rule; all problems are reported at once (file, rule, field)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import envdoctor.rules.ecosystem_predicates  # (registers the ecosystem rules' predicates)
import envdoctor.rules.predicates
import envdoctor.rules.runtime_predicates  # noqa: F401  (what torch, CUDA and DeepSpeed said)
from envdoctor.data_files import data_path, files_key, read_json
from envdoctor.errors import InputError
from envdoctor.findings import SAFETIES, SEVERITIES
from envdoctor.fixes import action_problems
from envdoctor.rules.conditions import OUTPUTS, check_condition, check_path, field_type, list_item_type, predicates_for
from envdoctor.rules.tables import Tables, load_tables
from envdoctor.snapshot import Snapshot

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
    fixtures: Dict[str, List[str]]
    source: str
    for_each: Optional[Dict[str, str]] = None
    subjects: List[str] = field(default_factory=list)
    fix_action: Optional[Dict[str, Any]] = None  # {action, arguments, changes}: envdoctor.fixes
    references: List[str] = field(default_factory=list)
    escalate: Optional[Dict[str, Any]] = None
    group_title: Optional[str] = None  # one finding for all matching items instead of one each


class RulesError(InputError):
    def __init__(self, problems: List[str]) -> None:
        self.problems = problems
        head = f"invalid rules database: {len(problems)} problem(s)"
        super().__init__(head + "\n  " + "\n  ".join(problems))


def _conditions_predicates(cond: Any) -> List[str]:
    if isinstance(cond, dict):
        out: List[str] = []
        for op, arg in cond.items():
            if op == "predicate" and isinstance(arg, str):
                out.append(arg)
            elif isinstance(arg, (dict, list)):
                out += _conditions_predicates(arg)
        return out
    if isinstance(cond, list):
        return [p for c in cond for p in _conditions_predicates(c)]
    return []


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


def validate_rule(raw: Any, where: str) -> Tuple[Optional[Rule], List[str]]:
    if not isinstance(raw, dict):
        return None, [f"{where}: a rule is an object"]
    errors: List[str] = []
    for key in REQUIRED:
        if key not in raw:
            errors.append(f"{where}: missing '{key}'")
    for key in raw:
        if key not in REQUIRED and key not in OPTIONAL:
            errors.append(f"{where}: unknown key '{key}'")
    if errors:
        return None, errors
    if not _ID.match(str(raw["id"])):
        errors.append(f"{where}: id must look like ED123")
    if not _NAME.match(str(raw["name"])):
        errors.append(f"{where}: name must be kebab-case and name the problem")
    if not _CATEGORY.match(str(raw["category"])):
        errors.append(f"{where}: category must be snake_case")
    if raw["severity"] not in SEVERITIES:
        errors.append(f"{where}: severity must be one of {', '.join(SEVERITIES)}")
    if raw["status"] not in STATUSES:
        errors.append(f"{where}: status must be one of {', '.join(STATUSES)}")
    if raw["fix_safety"] not in SAFETIES:
        errors.append(f"{where}: fix_safety must be one of {', '.join(SAFETIES)}")
    expl = raw["explanation"]
    if not isinstance(expl, dict) or any(not isinstance(expl.get(k), str) for k in EXPLANATION_SECTIONS):
        errors.append(f"{where}: explanation needs text sections {', '.join(EXPLANATION_SECTIONS)}")
    fx = raw["fixtures"]
    if not isinstance(fx, dict) or not fx.get("fires") or not fx.get("quiet"):
        errors.append(f"{where}: fixtures needs non-empty 'fires' and 'quiet' lists (snapshot fixture names)")
    roots: Dict[str, Any] = {}
    each = raw.get("for_each")
    if each is not None:
        if not isinstance(each, dict) or set(each) != {"in", "as"}:
            errors.append(f"{where}: for_each takes {{in: path, as: name}}")
        else:
            err = check_path(each["in"], {})
            if err:
                errors.append(f"{where}: for_each: {err}")
            else:
                head, *rest = each["in"].split(".")
                tp, _ = field_type(Snapshot, [head, *rest])
                item = list_item_type(tp)
                if item is None:
                    errors.append(f"{where}: for_each: '{each['in']}' is not a list")
                else:
                    roots[each["as"]] = item
    machine = predicates_for(log=False)
    when_errors = check_condition(raw["when"], roots, machine)
    errors += [f"{where}: when: {e}" for e in when_errors]
    esc = raw.get("escalate")
    if esc is not None:
        if not isinstance(esc, dict) or esc.get("to") not in SEVERITIES or "when" not in esc:
            errors.append(f"{where}: escalate takes {{to: severity, when: condition}}")
        else:
            errors += [f"{where}: escalate: {e}" for e in check_condition(esc["when"], roots, machine)]
    # Names the templates may use: snapshot paths, for_each/some names, predicate outputs.
    outputs = {o for p in _conditions_predicates(raw["when"]) if p in OUTPUTS for o in OUTPUTS[p]}
    some = _some_names(raw["when"])
    texts = [("title", raw["title"]), ("detail", raw["detail"]), ("fix", raw["fix"])]
    texts += [("subjects", s) for s in raw.get("subjects") or []]
    action_errors = action_problems(raw.get("fix_action"), raw["fix_safety"]) if "fix_action" in raw else []
    errors += [f"{where}: fix_action: {e}" for e in action_errors]
    if "fix_action" in raw and not action_errors:
        texts += [("fix_action", a) for key in ("arguments", "changes") for a in raw["fix_action"].get(key, [])]
    elif "fix_action" not in raw and raw["fix_safety"] in ("safe", "unsafe"):
        errors.append(f"{where}: a {raw['fix_safety']} fix needs a fix_action (what `envdoctor fix` would run)")
    group = raw.get("group_title")
    if group is not None:
        if each is None or not isinstance(group, str):
            errors.append(f"{where}: group_title needs for_each and must be text")
        else:
            for m in TEMPLATE_NAME.finditer(group):
                if m.group(1) not in ("count", "subjects") and check_path(m.group(1), {}):
                    errors.append(f"{where}: group_title: '{{{m.group(1)}}}' must be count, subjects or a snapshot path")
    for label, text in texts if not when_errors else []:  # a broken condition binds nothing to check against
        if not isinstance(text, str):
            errors.append(f"{where}: {label} must be text")
            continue
        for m in TEMPLATE_NAME.finditer(text):
            name = m.group(1)
            head = name.split(".")[0]
            if name in outputs:
                continue
            if head in some:
                continue
            err = check_path(name, roots)
            if err:
                errors.append(f"{where}: {label}: template '{{{name}}}': {err}")
    if errors:
        return None, errors
    rule = Rule(
        id=raw["id"], name=raw["name"], category=raw["category"], severity=raw["severity"], status=raw["status"],
        since=raw["since"], title=raw["title"], detail=raw["detail"], fix=raw["fix"], fix_safety=raw["fix_safety"],
        when=raw["when"], explanation=expl, fixtures=fx, source=where.split(":")[0], for_each=each,
        subjects=list(raw.get("subjects") or []), fix_action=raw.get("fix_action"),
        references=list(raw.get("references") or []), escalate=esc, group_title=group,
    )
    return rule, []


def load_rules_from(directory: Path) -> List[Rule]:
    """Every rule of a database, checked; its text may quote the database's tables ({table:name.key})."""
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
    for path in files:
        doc, error = read_json(path)
        if error:
            problems.append(error)
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("rules"), list):
            problems.append(f"{path}: expected an object with a 'rules' list")
            continue
        for i, raw in enumerate(doc["rules"]):
            label = raw.get("id") if isinstance(raw, dict) and isinstance(raw.get("id"), str) else f"rules[{i}]"
            refs: List[str] = []
            if tables is not None:
                raw = tables.resolve(raw, refs)
            rule, errs = validate_rule(raw, f"{path.name}: {label}")
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
    return sorted(rules, key=lambda r: r.id)


@dataclass(frozen=True)
class Rulebook:
    """A rules database: the rules and the compatibility tables they read."""

    rules: Tuple[Rule, ...]
    tables: Tables
    directory: str


_CACHE: Dict[Tuple[str, Tuple[Tuple[str, int, int], ...]], Rulebook] = {}


def load_rulebook(directory: Path) -> Rulebook:
    """Rules and tables of one directory (`rules/` or a rule author's copy); reloaded when a file changes."""
    files = sorted(directory.glob("*.json")) + sorted((directory / "tables").glob("*.json"))
    key = (str(directory), files_key(files))
    book = _CACHE.get(key)
    if book is None:
        rules = tuple(load_rules_from(directory))
        book = Rulebook(rules, load_tables(directory / "tables"), str(directory))
        if len(_CACHE) >= 8:
            _CACHE.clear()
        _CACHE[key] = book
    return book


def load_rules(directory: Optional[Path] = None) -> List[Rule]:
    """The rules of a database (default: the bundled one)."""
    return list(load_rulebook(Path(directory) if directory else data_path("rules")).rules)
